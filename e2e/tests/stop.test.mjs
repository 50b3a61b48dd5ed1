// Stop works at every moment a model turn is active: while its reply
// streams and while the stream stalls, it aborts the request at once, keeps
// the partial text, and nothing is sent again. At 1280×800 and 390×844,
// synchronised on what the page shows.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { VIEWPORTS, openApp } from '../lib/browser.mjs';
import { startStubProvider, HELLO_TEXT, PARTIAL_TEXT } from '../lib/stub-provider.mjs';
import { addProfile, send, streaming, transcript } from '../lib/ui.mjs';

let stub;
before(async () => {
  // A stream to be cut stalls after its partial text until released: the
  // stall Stop must end without the server's help.
  stub = await startStubProvider({ holdCuts: true });
});
after(async () => {
  stub?.releaseCuts();
  await stub?.close();
});

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  describe(`Stop during a model reply at ${viewport.width}×${viewport.height} (${vname})`, () => {
    test('a stalled stream is stopped at once; the partial text stays and nothing is resent', async () => {
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        await addProfile(page, stub.profile('Stub stall', 'sk-stall'));
        const before = stub.requests.length;
        await send(page, 'Please cut the stream halfway.');
        await streaming(page).getByText(PARTIAL_TEXT).waitFor({ timeout: 30_000 });
        // The stream now stalls: Stop is enabled and ends the turn.
        const stop = page.getByRole('button', { name: 'Stop' });
        assert.ok(await stop.isEnabled(), 'Stop is enabled while the reply stalls');
        await stop.click();
        await transcript(page).getByText(/stopped|cancelled/i).last().waitFor({ timeout: 10_000 });
        await transcript(page).getByText(new RegExp(PARTIAL_TEXT)).last().waitFor();
        const sent = stub.requests.slice(before).filter((r) => r.path === '/v1/chat/completions');
        assert.equal(sent.length, 1, 'nothing resent');
        // The composer is free again, and the next turn is answered.
        await send(page, 'hello again');
        await transcript(page).getByText(HELLO_TEXT).last().waitFor({ timeout: 30_000 });
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}
