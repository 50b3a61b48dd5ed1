// A profile chosen while the agent works is not ignored: the running turn
// goes on with the profile it has, the page says when the new one applies,
// and once the turn has ended the session starts again with the chosen
// profile, so the next message goes to its model (aimock), not to the
// built-in agent. A profile chosen for a session that ran and is idle
// starts its new execution at once, and that start is no recovery: the
// status line stays Connected and no card is shown. At 1280×800 and 390×844, synchronised on what the page
// shows and on what aimock received.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { VIEWPORTS, openApp } from '../lib/browser.mjs';
import { addProfile, commandBlock, send, transcript, watchPage, watched } from '../lib/ui.mjs';
import { startAimock } from '../lib/aimock.mjs';

const REPLY = 'The chosen model answers.';

let aimock;
before(async () => {
  aimock = await startAimock();
});
after(async () => {
  await aimock?.close();
});

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  describe(`a profile chosen while the agent works at ${viewport.width}×${viewport.height} (${vname})`, () => {
    test('applies once the turn ends, before the next message', async () => {
      const message = `${vname}: the first message after the switch`;
      aimock.mock.onMessage(message, { content: REPLY });
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        await send(page, '$ sleep 3');
        const block = commandBlock(page, 'sleep 3');
        await block.getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
        // Said in the dialog at once: the turn goes on with its profile.
        await addProfile(page, aimock.profile(`aimock ${vname}`, 'sk-mock'), async (dialog) => {
          await dialog.getByText(/the new profile applies once you stop it or it ends/).waitFor();
        });
        await block.getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
        await send(page, message);
        await transcript(page).getByText(REPLY).last().waitFor({ timeout: 30_000 });
        const asked = aimock.requests().filter((r) => JSON.stringify(r.body).includes(message));
        assert.equal(asked.length, 1, 'the chosen model was asked, once');
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test('chosen for a session that ran, its new execution starts with the line Connected and no recovery card', async () => {
      const message = `${vname}: the first message to the chosen model`;
      aimock.mock.onMessage(message, { content: REPLY });
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        await send(page, '$ echo ran');
        await commandBlock(page, 'echo ran').getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
        // Everything the page shows from here to the new execution's end:
        // the start replaces a runtime, and is no recovery.
        await watchPage(page);
        await addProfile(page, aimock.profile(`aimock ran ${vname}`, 'sk-mock'));
        await send(page, message);
        await transcript(page).getByText(REPLY).last().waitFor({ timeout: 30_000 });
        assert.deepEqual(await watched(page), { connecting: false, summaries: [], sendDisabled: false });
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}
