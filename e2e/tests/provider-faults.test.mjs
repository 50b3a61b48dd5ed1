// Provider faults the engine survives: a 429 with Retry-After is retried
// after the wait the server asked for (and at once with Retry now), under
// the same request, and the reply arrives. Synchronised on what the page
// shows and what the stub received, never on sleeps.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { VIEWPORTS, openApp } from '../lib/browser.mjs';
import { addProfile, send, transcript } from '../lib/ui.mjs';
import { startStubProvider, HELLO_TEXT } from '../lib/stub-provider.mjs';

let stub;
before(async () => {
  stub = await startStubProvider();
});
after(async () => {
  await stub?.close();
});

const sentWith = (text, before) =>
  stub.requests
    .slice(before)
    .filter((r) => r.path === '/v1/chat/completions')
    .filter((r) => JSON.stringify(r.body.messages.at(-1)).includes(text));

describe('a rate-limited OpenAI-compatible endpoint (1280×800)', () => {
  test('a 429 with Retry-After is retried after the wait, and the reply arrives', async () => {
    const browser = await openApp(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await addProfile(page, stub.profile('Stub limited', 'sk-limited'));
      const before = stub.requests.length;
      await send(page, 'Please rate limit once.');
      await page.getByText(/rate limited — retrying in \d+ s/).first().waitFor({ timeout: 30_000 });
      await transcript(page).getByText(HELLO_TEXT).last().waitFor({ timeout: 30_000 });
      const sent = sentWith('rate limit once', before);
      assert.equal(sent.length, 2, 'the refused attempt, then one retry');
      // Retry-After: 1 was honoured (the jittered backoff alone could be
      // shorter).
      assert.ok(sent[1].at - sent[0].at >= 950, `retried after ${sent[1].at - sent[0].at} ms`);
      await page.getByText(/rate limited — retrying/).waitFor({ state: 'detached' });
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });

  test('Retry now ends a long wait at once', async () => {
    const browser = await openApp(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await addProfile(page, stub.profile('Stub limited long', 'sk-limited'));
      const before = stub.requests.length;
      await send(page, 'Please rate limit long.');
      await page.getByText(/rate limited — retrying in \d+ s/).first().waitFor({ timeout: 30_000 });
      await page.getByRole('button', { name: 'Retry now' }).click();
      // Well before the 30 s the server asked for.
      await transcript(page).getByText(HELLO_TEXT).last().waitFor({ timeout: 15_000 });
      const sent = sentWith('rate limit long', before);
      assert.equal(sent.length, 2);
      assert.ok(sent[1].at - sent[0].at < 25_000);
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });
});
