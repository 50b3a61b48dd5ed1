// Requests posted to a controller worker that has died before the page
// noticed (docs/soak.md, finding 1): the page hears of a death only after
// five seconds of missed heartbeats, and whatever it posted in between
// went nowhere. The person is told plainly which action may not have
// arrived, and the card still offers it; a prompt posted in that window
// goes again to the new controller under its turn id and runs once. At
// 1280×800 and 390×844, synchronised on worker events and on what the
// page shows, never on sleeps.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { VIEWPORTS, closeWorker, openApp, waitConnected } from '../lib/browser.mjs';
import { verdictRecords } from '../lib/journal.mjs';
import { commandBlock, send, uncertainAfterReload } from '../lib/ui.mjs';
import { readWorkspaceFile } from '../lib/workspace.mjs';

const NOT_RECEIVED =
  'Your last action (Mark done) may not have reached the app before it restarted: check, and take it again if needed.';

/** The status line still says Connected: the page has not noticed yet. */
async function assertUnnoticed(page) {
  assert.equal(await page.locator('p.connection[role="status"]').textContent(), 'Connected');
}

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  describe(`a controller that died unnoticed at ${viewport.width}×${viewport.height} (${vname})`, () => {
    test('a Mark done it never received is reported, still offered, and recorded when taken again', async () => {
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        // An uncertain command: a reload (host loss) during its sleep.
        const item = await uncertainAfterReload(page, 'echo mark >> mark.txt; sleep 30');
        const markDone = item.getByRole('button', { name: 'Mark done', exact: true });

        await closeWorker(page, 'controller');
        await assertUnnoticed(page);
        await markDone.click();

        await page.getByText(NOT_RECEIVED, { exact: true }).waitFor({ timeout: 30_000 });
        await waitConnected(page);
        // Nothing was recorded: the new controller's card offers it again,
        // and taking it again records it.
        assert.equal(await verdictRecords(page), 0, 'the first click never arrived');
        await markDone.click();
        await markDone.waitFor({ state: 'detached', timeout: 30_000 });
        assert.equal(await verdictRecords(page), 1, 'the verdict is recorded once');
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test('a prompt it never received goes to the new controller and runs once', async () => {
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        await send(page, '$ echo first >> gap.txt');
        await commandBlock(page, 'echo first >> gap.txt').getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });

        await closeWorker(page, 'controller');
        await assertUnnoticed(page);
        await send(page, '$ echo after >> gap.txt');
        assert.equal(await page.getByRole('textbox', { name: 'Message' }).inputValue(), '', 'the box was sent');

        const block = commandBlock(page, 'echo after >> gap.txt');
        await block.getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
        await page.getByText(/The controller worker stopped and was restarted/).waitFor();
        assert.equal(await block.count(), 1, 'one block: the prompt ran once');
        assert.deepEqual(await readWorkspaceFile(page, 'gap.txt'), ['first\nafter\n']);
        // A prompt is not among the actions reported as maybe lost: it went again.
        assert.equal(await page.getByText(/may not have reached the app/).count(), 0);
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}
