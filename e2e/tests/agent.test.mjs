// Agent sessions end to end: the built-in agent for a new user, then real
// provider wire formats (OpenAI-compatible and Anthropic) against a local
// stub server, a lost stream, a refused key and Resume, and a scan of every
// place a planted secret could leak to. Synchronised on what the page shows
// and on what the stub received, never on sleeps.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { VIEWPORTS, openApp, waitConnected } from '../lib/browser.mjs';
import { addProfile, card, commandBlock, loadDetails, send, streaming, transcript } from '../lib/ui.mjs';
import { readWorkspaceFile } from '../lib/workspace.mjs';
import {
  startStubProvider,
  GREETING_PATH,
  GREETING_CONTENT,
  DONE_TEXT,
  HELLO_TEXT,
  PARTIAL_TEXT,
} from '../lib/stub-provider.mjs';

const OPENAI_KEY = 'sk-lifeline-PLANTED-openai-7f3a9c';
const ANTHROPIC_KEY = 'sk-ant-lifeline-PLANTED-41be02';

let stub;
before(async () => {
  stub = await startStubProvider({ holdCuts: true });
});
after(async () => {
  await stub?.close();
});

/** The app in a fresh profile, Connected, with every console line of the
 * page and its workers recorded from the start, for the secret scan. */
async function openRecorded(viewport) {
  const consoleLines = [];
  const browser = await openApp(viewport, ({ page }) => {
    page.on('console', (m) => consoleLines.push(m.text()));
    page.on('worker', (w) => w.on('console', (m) => consoleLines.push(m.text())));
  });
  return { browser, consoleLines };
}

/** Everything in every IndexedDB database of the origin, as text; binary
 * values are decoded byte for byte so a plaintext secret in a buffer shows. */
async function dumpIndexedDb(page) {
  return page.evaluate(async () => {
    const text = (v) =>
      JSON.stringify(v, (_, x) => {
        if (x instanceof ArrayBuffer) x = new Uint8Array(x);
        if (ArrayBuffer.isView(x)) return String.fromCharCode(...new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
        if (typeof CryptoKey !== 'undefined' && x instanceof CryptoKey) return `CryptoKey(${x.algorithm.name}, extractable=${x.extractable})`;
        return x;
      });
    const out = [];
    for (const { name } of await indexedDB.databases()) {
      const db = await new Promise((ok, fail) => {
        const r = indexedDB.open(name);
        r.onsuccess = () => ok(r.result);
        r.onerror = () => fail(r.error);
      });
      for (const store of db.objectStoreNames) {
        const rows = await new Promise((ok, fail) => {
          const r = db.transaction(store).objectStore(store).getAll();
          r.onsuccess = () => ok(r.result);
          r.onerror = () => fail(r.error);
        });
        out.push(`${name}/${store}: ${text(rows)}`);
      }
      db.close();
    }
    return out.join('\n');
  });
}

function assertNoSecret(where, haystack, secret) {
  assert.ok(haystack.length > 0, `${where} is empty; the scan would prove nothing`);
  assert.ok(!haystack.includes(secret), `the planted secret appears in ${where}`);
}

/** The secret scan: storage, the page, and every console line. */
async function scanForSecret(page, consoleLines, secret) {
  assertNoSecret('IndexedDB', await dumpIndexedDb(page), secret);
  assertNoSecret('the page', await page.content(), secret);
  assert.ok(!consoleLines.join('\n').includes(secret), 'the planted secret appears in the console');
}

describe('the built-in agent for a new user (1280×800)', () => {
  test('a prompt with `$ ` lines runs commands; any other prompt gets a reply listing what it can do', async () => {
    const browser = await openApp(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await send(page, '$ echo hello > note.txt\n$ cat note.txt');
      await commandBlock(page, 'cat note.txt').getByText('completed', { exact: true }).waitFor();
      await transcript(page).getByText(/Ran 2 commands/).waitFor();
      await send(page, 'what can you do?');
      await transcript(page).getByText(/note\.txt/).last().waitFor();
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });
});

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  describe(`an OpenAI-compatible endpoint at ${viewport.width}×${viewport.height} (${vname})`, () => {
    test('a tool-using turn writes the file through the command journal and the model answers', async () => {
      const { browser, consoleLines } = await openRecorded(viewport);
      try {
        const { page } = browser;
        const before = stub.requests.length;
        await addProfile(page, stub.profile('Stub OpenAI', OPENAI_KEY));
        await send(page, 'Please write a greeting into a file.');
        await transcript(page).getByText(DONE_TEXT).last().waitFor({ timeout: 30_000 });
        // The tool call ran as a journalled command, once.
        const blocks = transcript(page).getByRole('group', { name: /^Command: echo -n/ });
        assert.equal(await blocks.count(), 1);
        await blocks.first().getByText('completed', { exact: true }).waitFor();
        assert.deepEqual(await readWorkspaceFile(page, GREETING_PATH), [GREETING_CONTENT]);

        const mine = stub.requests.slice(before).filter((r) => r.path === '/v1/chat/completions');
        assert.equal(mine.length, 2, 'one request for the tool call, one with its result');
        for (const r of mine) assert.equal(r.headers.authorization, `Bearer ${OPENAI_KEY}`);
        const last = mine[1].body.messages.at(-1);
        assert.equal(last.role, 'tool');
        assert.ok(mine[1].body.tools.some((t) => t.function.name === 'write_file'));
        // The stub reports 42 prompt tokens per request: the turn and the
        // session count both replies.
        await transcript(page).getByText(/^Tokens: 84 in · \d+ out$/).waitFor();
        await loadDetails(page);
        assert.match(await page.locator('[data-field="tokens"]').textContent(), /^84 in · \d+ out$/);

        await scanForSecret(page, consoleLines, OPENAI_KEY);
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}

for (const [vname, viewport] of Object.entries(VIEWPORTS)) {
  describe(`profile presets at ${viewport.width}×${viewport.height} (${vname})`, () => {
    test('choosing a preset fills the wire format and base URL, and says how to allow this origin', async () => {
      const browser = await openApp(viewport);
      try {
        const { page } = browser;
        await page.getByRole('button', { name: 'Profiles' }).click();
        const dialog = page.getByRole('dialog', { name: 'Profiles' });
        const preset = dialog.getByLabel('Preset', { exact: true });
        await preset.selectOption({ label: 'Anthropic' });
        assert.equal(await dialog.getByLabel('Base URL', { exact: true }).inputValue(), 'https://api.anthropic.com');
        assert.equal(await dialog.getByLabel('Provider', { exact: true }).inputValue(), 'anthropic');
        await preset.selectOption({ label: 'Ollama' });
        await dialog.getByText(/^Start Ollama with OLLAMA_ORIGINS=http/).waitFor();
        // Still editable: another URL makes the choice custom again.
        await dialog.getByLabel('Base URL', { exact: true }).fill('http://127.0.0.1:9/v1');
        assert.equal(await preset.inputValue(), '');
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}

describe('an Anthropic endpoint (1280×800)', () => {
  test('a tool-using turn works over the Messages API', async () => {
    const { browser, consoleLines } = await openRecorded(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      const before = stub.requests.length;
      await addProfile(page, stub.profile('Stub Anthropic', ANTHROPIC_KEY, 'Anthropic'));
      await send(page, 'Please write a greeting into a file.');
      await transcript(page).getByText(DONE_TEXT).last().waitFor({ timeout: 30_000 });
      assert.deepEqual(await readWorkspaceFile(page, GREETING_PATH), [GREETING_CONTENT]);
      const mine = stub.requests.slice(before).filter((r) => r.path === '/v1/messages');
      assert.equal(mine.length, 2);
      for (const r of mine) {
        assert.equal(r.headers['x-api-key'], ANTHROPIC_KEY);
        assert.equal(r.headers['anthropic-version'], '2023-06-01');
      }
      await scanForSecret(page, consoleLines, ANTHROPIC_KEY);
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });
});

describe('when a reply is lost or refused (1280×800)', () => {
  test('a stream cut mid-reply keeps its partial text, interrupts the turn and is not resent', async () => {
    const browser = await openApp(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await addProfile(page, stub.profile('Stub cut', 'sk-cut'));
      const before = stub.requests.length;
      await send(page, 'Please cut the stream halfway.');
      // Barrier: the page shows the streamed text (so the controller read
      // it) before the stub cuts the stream.
      await streaming(page).getByText(PARTIAL_TEXT).waitFor({ timeout: 30_000 });
      stub.releaseCuts();
      await transcript(page).getByText(/interrupted/).last().waitFor({ timeout: 30_000 });
      await transcript(page).getByText(new RegExp(PARTIAL_TEXT)).last().waitFor();
      const sent = stub.requests.slice(before).filter((r) => r.path === '/v1/chat/completions');
      assert.equal(sent.length, 1, 'nothing resent');
    } finally {
      await browser.close();
    }
  });

  test('a provider worker that ends mid-reply interrupts the turn, resends nothing, and the next message starts a new one', async () => {
    const browser = await openApp(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await addProfile(page, stub.profile('Stub worker end', 'sk-worker-end'));
      const before = stub.requests.length;
      await send(page, 'Please cut the stream halfway.');
      // Barrier: the partial text is on the page, so the request is out
      // and its reply has begun, and the stub holds the rest.
      await streaming(page).getByText(PARTIAL_TEXT).waitFor({ timeout: 30_000 });
      const providers = page.workers().filter((w) => w.url().endsWith('/provider.js'));
      assert.equal(providers.length, 1, 'the controller started one provider worker');
      // Test-only: the worker closes itself, as a crash would end it.
      const ended = new Promise((resolve) => providers[0].once('close', resolve));
      await providers[0].evaluate(() => setTimeout(() => self.close(), 0));
      await ended;
      await transcript(page).getByText(/interrupted/).last().waitFor({ timeout: 30_000 });
      await transcript(page).getByText(new RegExp(PARTIAL_TEXT)).last().waitFor();
      stub.releaseCuts();
      const sent = stub.requests.slice(before).filter((r) => r.path === '/v1/chat/completions');
      assert.equal(sent.length, 1, 'nothing resent');

      await send(page, 'hello again');
      await transcript(page).getByText(HELLO_TEXT).last().waitFor({ timeout: 30_000 });
      const now = page.workers().filter((w) => w.url().endsWith('/provider.js'));
      assert.equal(now.length, 1, 'a new provider worker answered');
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });

  test('a refused key fails the turn with what to do; the workspace is kept and Resume brings the session back', async () => {
    const browser = await openApp(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await send(page, '$ echo kept > kept.txt');
      await commandBlock(page, 'echo kept > kept.txt').getByText('completed', { exact: true }).waitFor();
      await addProfile(page, stub.profile('Stub bad key', 'bad-key'));
      await send(page, 'hello');
      const recovery = card(page);
      await recovery.getByText('The last turn failed. The workspace and keys are kept.').waitFor({ timeout: 30_000 });
      // What to do is in the card's details: the class's advice.
      await recovery.getByRole('button', { name: 'Details' }).click();
      await recovery.getByText(/API key/).first().waitFor();
      assert.ok(!(await page.content()).includes('bad-key'), 'the key is not echoed');
      await recovery.getByRole('button', { name: 'Resume' }).click();
      await recovery.waitFor({ state: 'detached', timeout: 30_000 });
      await waitConnected(page);
      assert.deepEqual(await readWorkspaceFile(page, 'kept.txt'), ['kept\n']);
    } finally {
      await browser.close();
    }
  });
});
