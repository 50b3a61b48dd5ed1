// A message the session cannot take is never silently lost: sent to a
// session archived from the recovery card after host loss, it comes back
// into the message box with the reason beside it, is not shown as sent,
// and runs once Start fresh has replaced the session. At 1280×800 and
// 390×844, synchronised on what the page shows.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { BASE_URL, VIEWPORTS, openBrowser, waitConnected } from '../lib/browser.mjs';
import { card, commandBlock as block, send, transcript, uncertainAfterReload } from '../lib/ui.mjs';

/** Resolves once the message box holds exactly `text`. */
async function boxHolds(page, text) {
  await page.waitForFunction(
    (want) => document.querySelector('textarea[aria-label="Message"]')?.value === want,
    text,
    { timeout: 30_000 },
  );
}

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  describe(`a message the session cannot take at ${viewport.width}×${viewport.height} (${vname})`, () => {
    test('sent to an archived session it comes back to the box, and runs after Start fresh', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        // Host loss: a reload mid-command leaves it uncertain, the card shown.
        await uncertainAfterReload(page, 'sleep 30');
        const c = card(page);
        await c.getByRole('button', { name: 'Archive' }).click();
        await c.getByRole('button', { name: 'Confirm archive' }).click();
        await c.getByText('This session is archived').waitFor({ timeout: 30_000 });

        // The archived session cannot take it: the text comes back, with why.
        const message = '$ echo kept >> kept.txt';
        await send(page, message);
        await page.locator('#composer-refused').getByText(/archived/).waitFor({ timeout: 30_000 });
        await boxHolds(page, message);
        assert.equal(await block(page, 'echo kept >> kept.txt').count(), 0, 'not shown as sent');
        assert.ok(
          await page.getByRole('button', { name: 'Send' }).isEnabled(),
          'it can be sent again',
        );

        // Start fresh replaces the session; the message is still in the box
        // and runs there, once.
        await c.getByRole('button', { name: 'Start fresh' }).click();
        await c.getByRole('button', { name: 'Confirm start fresh' }).click();
        await transcript(page).getByText(/^No turns yet/).waitFor({ timeout: 30_000 });
        await waitConnected(page);
        await boxHolds(page, message);
        await page.getByRole('button', { name: 'Send' }).click();
        await block(page, 'echo kept >> kept.txt')
          .getByText('completed', { exact: true })
          .waitFor({ timeout: 30_000 });
        await boxHolds(page, '');
        assert.equal(await block(page, 'echo kept >> kept.txt').count(), 1, 'it ran once');
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}
