// After a reload mid-command: the workspace can be looked at before any
// decision, a re-issue is an ordinary command (shown with its origin,
// stoppable), and Archive is reversible, at 1280×800 and 390×844.
// Synchronised on what the page shows, never on sleeps.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { BASE_URL, VIEWPORTS, openBrowser, waitConnected } from '../lib/browser.mjs';
import { card, commandBlock as block, send, waitRunning } from '../lib/ui.mjs';

/** A command is running when the page reloads: it becomes uncertain. */
async function reloadMidCommand(page, line) {
  await send(page, `$ echo start >> marks.txt\n$ ${line}`);
  await block(page, line).getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
  await page.reload();
  await waitConnected(page);
  const item = card(page).getByRole('group', { name: `Uncertain: ${line}` });
  await item.waitFor({ timeout: 30_000 });
  return item;
}

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  describe(`re-issue and archive at ${viewport.width}×${viewport.height} (${vname})`, () => {
    test('Verify opens the workspace read-only; Re-issue runs it once more as a stoppable, linked command', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        const line = 'echo again >> marks.txt; sleep 30';
        const item = await reloadMidCommand(page, line);
        // The session came back with a new runtime: Verify is still possible.
        await item.getByRole('button', { name: 'Verify' }).click();
        const workspace = page.getByRole('region', { name: 'Workspace' });
        await workspace.getByText('marks.txt').first().waitFor({ timeout: 30_000 });

        await item.getByRole('button', { name: 'Re-issue' }).click();
        await item.getByRole('button', { name: 'Confirm re-issue' }).click();
        // Two blocks now share the line: the original and its re-issue.
        const blocks = block(page, line);
        await blocks.nth(1).waitFor({ timeout: 30_000 });
        const reissued = blocks.filter({ hasText: 'You re-issued' });
        await reissued.getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
        await blocks
          .filter({ hasText: 'Re-issued below.' })
          .waitFor();
        await card(page).getByText('re-issued').first().waitFor();

        // An ordinary command: Stop is enabled and ends it.
        const stop = page.getByRole('button', { name: 'Stop' });
        await assert.doesNotReject(stop.click({ timeout: 10_000 }));
        await reissued.getByText('cancelled', { exact: true }).waitFor({ timeout: 30_000 });
        assert.equal(await blocks.count(), 2, 'the original never ran again');

        // After another reload the link is still there (it is in the journal).
        await page.reload();
        await waitConnected(page);
        await block(page, line).filter({ hasText: 'You re-issued' }).getByText('cancelled', { exact: true }).waitFor({ timeout: 30_000 });
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test('Archive is reversible: an archived session offers Unarchive and Start fresh, and comes back', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        const line = 'sleep 30';
        await reloadMidCommand(page, line);
        const c = card(page);
        await c.getByRole('button', { name: 'Archive' }).click();
        await c.getByRole('button', { name: 'Confirm archive' }).click();
        await c.getByText('This session is archived').waitFor({ timeout: 30_000 });
        await c.getByRole('button', { name: 'Unarchive' }).waitFor();
        await c.getByRole('button', { name: 'Start fresh' }).waitFor();
        for (const gone of ['Resume', 'Archive', 'Inspect workspace']) {
          assert.equal(await c.getByRole('button', { name: gone, exact: true }).count(), 0, `${gone} is not offered`);
        }
        const uncertain = c.getByRole('group', { name: `Uncertain: ${line}` });
        assert.ok(await uncertain.getByRole('button', { name: 'Re-issue' }).isDisabled(), 'Re-issue says why not');

        // A reload keeps it archived, and Unarchive still works.
        await page.reload();
        await waitConnected(page);
        await c.getByText('This session is archived').waitFor({ timeout: 30_000 });
        await c.getByRole('button', { name: 'Unarchive' }).click();
        await c.getByText('This session is archived').waitFor({ state: 'detached', timeout: 30_000 });
        await c.getByRole('button', { name: 'Resume' }).click();
        await waitRunning(page);
        await send(page, '$ cat marks.txt');
        await block(page, 'cat marks.txt').getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
        assert.equal(await block(page, line).count(), 1, 'nothing re-ran');
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}
