// Provider faults the engine survives, against a maintained third-party mock
// server (@copilotkit/aimock, e2e/lib/aimock.mjs) for both wire formats,
// and against the project's own stub (e2e/lib/stub-provider.mjs) for the
// two faults aimock cannot produce: a stream that ends cleanly without a
// finish reason, and one bad chunk inside an otherwise good stream. Each
// test checks what the page shows and what the server received (attempt
// count, timing), synchronised on page state and server events, never on
// sleeps.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { VIEWPORTS, openApp } from '../lib/browser.mjs';
import { addProfile, explainFailure, send, streaming, transcript } from '../lib/ui.mjs';
import { startAimock } from '../lib/aimock.mjs';
import { providerRecords } from '../lib/journal.mjs';
import { startStubProvider, HELLO_TEXT, PARTIAL_TEXT } from '../lib/stub-provider.mjs';

const REPLY = 'The mock model answers.';
const WORDS = 'Alpha bravo charlie delta echo foxtrot golf hotel india juliett.';

let aimock;
let stub;
before(async () => {
  [aimock, stub] = await Promise.all([startAimock(), startStubProvider()]);
});
after(async () => {
  await Promise.all([aimock?.close(), stub?.close()]);
});

const FORMATS = [
  { name: 'OpenAI-compatible', provider: 'OpenAI-compatible', path: '/v1/chat/completions' },
  { name: 'Anthropic', provider: 'Anthropic', path: '/v1/messages' },
];

/** The model requests aimock received whose last user text has `text`. */
const received = (format, text) =>
  aimock.requests().filter((r) => r.path === format.path && JSON.stringify(r.body.messages).includes(text));

/** Opens the app with a profile on aimock (or `server`), runs `body(page)`,
 * and checks the page logged no errors. */
async function withProfile(format, name, body, server = aimock, fields = {}) {
  const browser = await openApp(VIEWPORTS.desktop);
  try {
    const { page } = browser;
    await addProfile(page, { ...server.profile(name, 'sk-mock', format.provider), ...fields });
    try {
      await body(page);
    } catch (failure) {
      // What the page and the journal said, for the one reading the failure.
      const shown = await transcript(page).innerText().catch(() => '(no transcript)');
      const records = await providerRecords(page).catch(() => []);
      console.log(`transcript:\n${shown}\nprovider records: ${JSON.stringify(records)}`);
      throw await explainFailure(browser, failure, { records });
    }
    assert.deepEqual(browser.errors, []);
  } finally {
    await browser.close();
  }
}

/** Scripts `message`: `first` answers its first request, the reply text
 * the second. */
function refuseOnce(message, first) {
  aimock.mock.on({ userMessage: message, sequenceIndex: 0 }, first);
  aimock.mock.on({ userMessage: message, sequenceIndex: 1 }, { content: REPLY });
}

/** Scripts `message`: five chunks at once (the first words in both
 * formats), then silence, well inside the default 60 s idle timeout.
 * aimock's timers outlive the page's abort, so its disconnect at 15 s ends
 * them: the test process is not kept alive by a stream nobody reads. */
function stallAfterFirstWords(message) {
  aimock.mock.onMessage(
    message,
    { content: WORDS },
    {
      chunkSize: 6,
      recordedTimings: { ttftMs: 0, interChunkDelaysMs: [0, 0, 0, 0, 60_000] },
      disconnectAfterMs: 15_000,
    },
  );
}

const error = (status, type, extra = {}) => ({ error: { message: `mock ${type}`, type }, status, ...extra });

/** The journal's retries and failures, reduced to what the tests check. */
async function journal(page) {
  const records = await providerRecords(page);
  return {
    retried: records.filter((r) => r.type === 'provider_retried').map((r) => `${r.attempt}:${r.class}`),
    failed: records.filter((r) => r.type === 'provider_failed'),
    waits: records.filter((r) => r.type === 'provider_retried').map((r) => r.wait_ms),
  };
}

/** Text the transcript shows (the recovery card also holds the cause, in
 * a part that is hidden until opened). */
const shown = (page, text) => transcript(page).getByText(text).filter({ visible: true }).first();

const turnFailed = (page) => page.getByText('The last turn failed. The workspace and keys are kept.');

for (const format of FORMATS) {
  describe(`provider faults from aimock, ${format.name} (1280×800)`, () => {
    const tag = format.name === 'Anthropic' ? 'anthropic' : 'openai';

    test('a 429 with Retry-After is retried after the wait it names, and the reply arrives', async () => {
      const message = `${tag}: rate limit once`;
      refuseOnce(message, error(429, 'rate_limit_error', { retryAfter: 2 }));
      await withProfile(format, 'aimock 429', async (page) => {
        await send(page, message);
        await page.getByText(/rate limited — retrying in \d+ s/).first().waitFor({ timeout: 30_000 });
        await transcript(page).getByText(REPLY).last().waitFor({ timeout: 30_000 });
        await page.getByText(/retrying in/).waitFor({ state: 'detached' });
        const sent = received(format, message);
        assert.deepEqual(sent.map((r) => r.response.status), [429, 200], 'the refusal, then one retry');
        // Retry-After: 2 was honoured (the backoff alone would be ≤ 1 s).
        const gap = sent[1].timestamp - sent[0].timestamp;
        assert.ok(gap >= 1_950, `retried after ${gap} ms`);
        const records = await journal(page);
        assert.deepEqual(records.retried, ['1:rate_limit']);
        assert.deepEqual(records.waits, [2_000]);
        assert.deepEqual(records.failed, []);
      });
    });

    test('Retry now ends a long Retry-After wait at once', async () => {
      const message = `${tag}: rate limit long`;
      refuseOnce(message, error(429, 'rate_limit_error', { retryAfter: 30 }));
      await withProfile(format, 'aimock 429 long', async (page) => {
        await send(page, message);
        const waiting = page.getByText(/rate limited — retrying in \d+ s/).first();
        await waiting.waitFor({ timeout: 30_000 });
        // The countdown changes every second; the button it sits beside
        // stays the same element, so the focus on it is kept and a
        // keyboard's Enter reaches it.
        const retry = page.getByRole('button', { name: 'Retry now' });
        await retry.focus();
        const before = await waiting.textContent();
        await page.waitForFunction(
          (text) => [...document.querySelectorAll('.notice p')].every((p) => p.textContent !== text),
          before,
        );
        assert.ok(await retry.evaluate((button) => button === document.activeElement), 'Retry now kept the focus');
        await page.keyboard.press('Enter');
        await transcript(page).getByText(REPLY).last().waitFor({ timeout: 15_000 });
        const sent = received(format, message);
        assert.deepEqual(sent.map((r) => r.response.status), [429, 200]);
        assert.ok(sent[1].timestamp - sent[0].timestamp < 25_000, 'well before the 30 s asked for');
        assert.deepEqual((await journal(page)).retried, ['1:rate_limit']);
      });
    });

    for (const [status, type] of [
      [503, 'api_error'],
      [529, 'overloaded_error'],
    ]) {
      test(`a ${status} (${type}) is retried with backoff, and the reply arrives`, async () => {
        const message = `${tag}: overloaded ${status} once`;
        refuseOnce(message, error(status, type));
        await withProfile(format, `aimock ${status}`, async (page) => {
          await send(page, message);
          await transcript(page).getByText(REPLY).last().waitFor({ timeout: 30_000 });
          const sent = received(format, message);
          assert.deepEqual(sent.map((r) => r.response.status), [status, 200]);
          // The first backoff is between half and all of a second.
          const gap = sent[1].timestamp - sent[0].timestamp;
          assert.ok(gap >= 450, `retried after ${gap} ms`);
          await assertNoFailure(page);
          const records = await journal(page);
          assert.deepEqual(records.retried, ['1:overloaded']);
          assert.deepEqual(records.failed, []);
        });
      });
    }

    test('a connection dropped before any response byte is retried', async () => {
      const message = `${tag}: drop the connection once`;
      aimock.mock.addFixture({
        match: { userMessage: message, sequenceIndex: 0 },
        response: { content: REPLY },
        chaos: { disconnectRate: 1 },
      });
      aimock.mock.on({ userMessage: message, sequenceIndex: 1 }, { content: REPLY });
      await withProfile(format, 'aimock reset', async (page) => {
        await send(page, message);
        await transcript(page).getByText(REPLY).last().waitFor({ timeout: 30_000 });
        const sent = received(format, message);
        assert.equal(sent.length, 2, 'the dropped attempt, then one retry');
        assert.equal(sent[1].response.status, 200);
        const records = await journal(page);
        assert.deepEqual(records.retried, ['1:transport'], 'the app retried, not the browser');
        assert.deepEqual(records.failed, []);
      });
    });

    test('rate limited on every attempt: the failure is worded and the attempts stop at the bound', async () => {
      const message = `${tag}: rate limit always`;
      aimock.mock.onMessage(message, error(429, 'rate_limit_error', { retryAfter: 1 }));
      await withProfile(format, 'aimock 429 always', async (page) => {
        await send(page, message);
        await turnFailed(page).waitFor({ timeout: 30_000 });
        // The request's failure, worded from its class; the turn's end says
        // where to look (no English reply is shown in its place).
        await shown(page, /rate limited: HTTP 429/).waitFor();
        await shown(page, /The model request failed, as shown above/).waitFor();
        await shown(page, /raise the provider account's limits/).waitFor();
        // The profile's bound: 4 attempts.
        assert.equal(received(format, message).length, 4);
        const records = await journal(page);
        assert.deepEqual(records.retried, ['1:rate_limit', '2:rate_limit', '3:rate_limit']);
        assert.deepEqual(records.failed.map((r) => r.class), ['rate_limit']);
      });
    });

    test('a refused key (401) is not retried, and the advice is shown', async () => {
      const message = `${tag}: refuse the key`;
      aimock.mock.onMessage(message, error(401, 'authentication_error'));
      await withProfile(format, 'aimock 401', async (page) => {
        await send(page, message);
        await turnFailed(page).waitFor({ timeout: 30_000 });
        // The request's failure, worded from its class; the turn's end says
        // where to look (no English reply is shown in its place).
        await shown(page, /authentication failed: HTTP 401/).waitFor();
        await shown(page, /The model request failed, as shown above/).waitFor();
        await shown(page, /Check the API key/).waitFor();
        assert.equal(received(format, message).length, 1, 'never retried');
        const records = await journal(page);
        assert.deepEqual(records.retried, []);
        assert.deepEqual(records.failed.map((r) => r.class), ['auth']);
      });
    });

    test('a conversation too long for the model is not retried, and the advice is shown', async () => {
      const message = `${tag}: too long for the context`;
      // What each server says: OpenAI's code, Anthropic's wording.
      const refusal =
        format.name === 'Anthropic'
          ? error(400, 'invalid_request_error', { error: { message: 'prompt is too long: 210000 tokens > 200000 maximum', type: 'invalid_request_error' } })
          : error(400, 'invalid_request_error', {
              error: {
                message: "This model's maximum context length is 8192 tokens.",
                type: 'invalid_request_error',
                code: 'context_length_exceeded',
              },
            });
      aimock.mock.onMessage(message, refusal);
      await withProfile(format, 'aimock context', async (page) => {
        await send(page, message);
        await turnFailed(page).waitFor({ timeout: 30_000 });
        // The request's failure, worded from its class; the turn's end says
        // where to look (no English reply is shown in its place).
        await shown(page, /conversation too long: HTTP 400/).waitFor();
        await shown(page, /The model request failed, as shown above/).waitFor();
        await shown(page, /larger context window/).waitFor();
        assert.equal(received(format, message).length, 1, 'never retried');
        const records = await journal(page);
        assert.deepEqual(records.retried, []);
        assert.deepEqual(records.failed.map((r) => r.class), ['context_length']);
      });
    });

    test('a stream dropped mid-reply keeps its partial text, is shown as cut off and is never resent', async () => {
      const message = `${tag}: drop the stream`;
      // One word every 150 ms; the connection is destroyed at 700 ms.
      aimock.mock.onMessage(message, { content: WORDS }, { chunkSize: 6, latency: 150, disconnectAfterMs: 700 });
      await withProfile(format, 'aimock cut', async (page) => {
        await send(page, message);
        await shown(page, /dropped mid-reply/).waitFor({ timeout: 30_000 });
        await transcript(page).getByText(/Alpha/).last().waitFor();
        const sent = received(format, message);
        assert.equal(sent.length, 1, 'nothing resent after the first byte');
        assert.equal(sent[0].response.interruptReason, 'disconnectAfterMs');
        const records = await journal(page);
        assert.deepEqual(records.retried, []);
        assert.deepEqual(records.failed.map((r) => r.class), ['cut']);
        assert.match(records.failed[0].partial_text, /^Alpha/);
      });
    });

    test('a 200 whose body is not an event stream ends the turn with a cause, and is not resent', async () => {
      const message = `${tag}: garble the reply`;
      aimock.mock.addFixture({ match: { userMessage: message }, response: { content: REPLY }, chaos: { malformedRate: 1 } });
      await withProfile(format, 'aimock garbled', async (page) => {
        await send(page, message);
        // aimock answers `{malformed json: <<<chaos>>>` as application/json:
        // read as an event stream it holds no event at all, which the
        // decoder calls not understood (not "ended unfinished").
        await shown(page, /reply not understood/).waitFor({ timeout: 30_000 });
        assert.equal(received(format, message).length, 1);
        const records = await journal(page);
        assert.deepEqual(records.retried, []);
        assert.equal(records.failed.length, 1);
        assert.equal(records.failed[0].class, 'malformed');
        assert.equal(records.failed[0].partial_text, '');
      });
    });

    test('Stop during a stalled stream ends the turn at once and keeps the partial text', async () => {
      const message = `${tag}: stall the stream`;
      stallAfterFirstWords(message);
      await withProfile(format, 'aimock stall', async (page) => {
        await send(page, message);
        await streaming(page).getByText(/Alpha/).waitFor({ timeout: 30_000 });
        await page.getByRole('button', { name: 'Stop' }).click();
        await transcript(page).getByText(/stopped|cancelled/i).last().waitFor({ timeout: 10_000 });
        await transcript(page).getByText(/Alpha/).last().waitFor();
        assert.equal(received(format, message).length, 1);
        const records = await journal(page);
        assert.deepEqual(records.failed.map((r) => r.class), ['cancelled']);
        assert.match(records.failed[0].partial_text, /^Alpha/);
      });
    });

    test("a stream silent past the profile's idle time ends as stalled, keeps its text and is not resent", async () => {
      const message = `${tag}: stall past the idle time`;
      stallAfterFirstWords(message);
      await withProfile(
        format,
        'aimock idle',
        async (page) => {
          await send(page, message);
          // The form's idle time (2 s) is the engine's timer: the turn ends
          // without anyone pressing Stop.
          await shown(page, /reply stalled/).waitFor({ timeout: 30_000 });
          await transcript(page).getByText(/Alpha/).last().waitFor();
          assert.equal(received(format, message).length, 1, 'never resent');
          const records = await journal(page);
          assert.deepEqual(records.failed.map((r) => r.class), ['idle_timeout']);
          assert.match(records.failed[0].partial_text, /^Alpha/);
        },
        aimock,
        { idleSeconds: 2 },
      );
    });

    test('Stop during a retry wait ends the turn without another attempt', async () => {
      const message = `${tag}: rate limit and stop`;
      aimock.mock.onMessage(message, error(429, 'rate_limit_error', { retryAfter: 30 }));
      await withProfile(format, 'aimock 429 stop', async (page) => {
        await send(page, message);
        await page.getByText(/rate limited — retrying in \d+ s/).first().waitFor({ timeout: 30_000 });
        await page.getByRole('button', { name: 'Stop' }).click();
        await transcript(page).getByText(/stopped|cancelled/i).last().waitFor({ timeout: 10_000 });
        await page.getByText(/retrying in/).waitFor({ state: 'detached' });
        assert.equal(received(format, message).length, 1, 'no attempt after Stop');
        const records = await journal(page);
        assert.deepEqual(records.retried, ['1:rate_limit']);
        assert.deepEqual(records.failed.map((r) => r.class), ['cancelled']);
      });
    });
  });

  describe(`provider faults aimock cannot produce, from the project's stub, ${format.name} (1280×800)`, () => {
    const stubReceived = (text) =>
      stub.requests.filter((r) => r.path === format.path && JSON.stringify(r.body.messages).includes(text));

    test('a stream that ends without a finish reason keeps its text and says so', async () => {
      const message = `${format.name}: end unfinished`;
      await withProfile(
        format,
        'stub unfinished',
        async (page) => {
          await send(page, message);
          await shown(page, /reply ended unfinished/).waitFor({ timeout: 30_000 });
          await transcript(page).getByText(new RegExp(PARTIAL_TEXT)).last().waitFor();
          assert.equal(stubReceived(message).length, 1, 'never resent');
          const records = await journal(page);
          assert.deepEqual(records.failed.map((r) => [r.class, r.partial_text]), [['no_finish', PARTIAL_TEXT]]);
        },
        stub,
      );
    });

    test('a chunk that is not JSON ends the reply, keeps the text before it and shows the cause', async () => {
      const message = `${format.name}: send a malformed chunk`;
      await withProfile(
        format,
        'stub malformed',
        async (page) => {
          await send(page, message);
          await shown(page, /reply not understood/).waitFor({ timeout: 30_000 });
          await transcript(page).getByText(new RegExp(PARTIAL_TEXT)).last().waitFor();
          // The text after the bad chunk is never shown.
          assert.equal(await transcript(page).getByText(/and more/).count(), 0);
          assert.equal(stubReceived(message).length, 1, 'never resent');
          assert.equal(await page.getByText(HELLO_TEXT).count(), 0);
          const records = await journal(page);
          assert.deepEqual(records.failed.map((r) => [r.class, r.partial_text]), [['malformed', PARTIAL_TEXT]]);
        },
        stub,
      );
    });
  });
}

describe('the provider worker (1280×800)', () => {
  const WASM = '**/lifeline_provider_worker_bg.wasm';

  test('a provider worker that cannot load ends the turn worded, sends nothing, and the next message is answered once it loads', async () => {
    const format = FORMATS[0];
    const refused = 'worker: its code cannot be fetched';
    const answered = 'worker: its code can be fetched again';
    aimock.mock.onMessage(answered, { content: REPLY });
    // Its module's top-level `await init()` rejects: the worker ends
    // before it ever says Ready, which only its error event tells.
    const browser = await openApp(VIEWPORTS.desktop, ({ context }) =>
      context.route(WASM, (route) => route.abort('internetdisconnected')),
    );
    try {
      const { page, context } = browser;
      await addProfile(page, aimock.profile('aimock, no worker', 'sk-mock', format.provider));
      await send(page, refused);
      await turnFailed(page).waitFor({ timeout: 30_000 });
      await shown(page, /the worker calling the model stopped/).waitFor();
      assert.equal(received(format, refused).length, 0, 'nothing reached the model');
      const records = await journal(page);
      // Never handed over, so known unsent: retried to the bound, each
      // time with a new worker.
      assert.deepEqual(records.retried, ['1:transport', '2:transport', '3:transport']);
      assert.deepEqual(records.failed.map((r) => r.class), ['transport']);

      await context.unroute(WASM);
      await send(page, answered);
      await transcript(page).getByText(REPLY).last().waitFor({ timeout: 30_000 });
      assert.equal(received(format, answered).length, 1);
    } catch (failure) {
      throw await explainFailure(browser, failure, { records: await providerRecords(browser.page).catch(() => []) });
    } finally {
      await browser.close();
    }
  });
});

/** Nothing on the page says the turn failed. */
async function assertNoFailure(page) {
  assert.equal(await turnFailed(page).count(), 0);
}
