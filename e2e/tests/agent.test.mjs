// Agent sessions end to end: the built-in agent for a new user, then real
// provider wire formats (OpenAI-compatible and Anthropic) against a local
// stub server, a lost stream, a refused key and Resume, and a scan of every
// place a planted secret could leak to. Synchronised on what the page shows
// and on what the stub received, never on sleeps.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE_URL, VIEWPORTS, openBrowser, waitConnected } from '../lib/browser.mjs';
import { readWorkspaceFile } from '../lib/workspace.mjs';
import {
  startStubProvider,
  GREETING_PATH,
  GREETING_CONTENT,
  DONE_TEXT,
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

function transcript(page) {
  return page.getByRole('log', { name: 'Transcript' });
}

async function send(page, text) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** Every console line of the page and its workers, for the secret scan. */
function recordConsole(browser) {
  const lines = [];
  browser.page.on('console', (m) => lines.push(m.text()));
  browser.page.on('worker', (w) => w.on('console', (m) => lines.push(m.text())));
  return lines;
}

async function addProfile(page, { name, provider, baseUrl, model, key }) {
  await page.getByRole('button', { name: 'Profiles' }).click();
  const dialog = page.getByRole('dialog', { name: 'Profiles' });
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('Provider', { exact: true }).selectOption({ label: provider });
  await dialog.getByLabel('Base URL', { exact: true }).fill(baseUrl);
  await dialog.getByLabel('Model', { exact: true }).fill(model);
  await dialog.getByLabel('API key', { exact: true }).fill(key);
  await dialog.getByRole('button', { name: 'Save profile' }).click();
  const item = dialog.getByRole('list', { name: 'Saved profiles' }).getByRole('listitem').filter({ hasText: name });
  await item.getByText('API key set').waitFor();
  await item.getByRole('button', { name: 'Use for this session' }).click();
  await item.getByText('(selected)').waitFor();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
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

describe('the built-in agent for a new user (1280×800)', () => {
  test('a prompt with `$ ` lines runs commands; any other prompt gets a reply listing what it can do', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      await send(page, '$ echo hello > note.txt\n$ cat note.txt');
      await transcript(page).getByRole('group', { name: 'Command: cat note.txt' }).getByText('completed', { exact: true }).waitFor();
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
      const browser = await openBrowser(viewport);
      const consoleLines = recordConsole(browser);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        const before = stub.requests.length;
        await addProfile(page, {
          name: 'Stub OpenAI',
          provider: 'OpenAI-compatible',
          baseUrl: `${stub.url}/v1`,
          model: 'stub-model',
          key: OPENAI_KEY,
        });
        await waitConnected(page);
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

        // The secret scan: storage, the page, and every console line.
        assertNoSecret('IndexedDB', await dumpIndexedDb(page), OPENAI_KEY);
        assertNoSecret('the page', await page.content(), OPENAI_KEY);
        assert.ok(!consoleLines.join('\n').includes(OPENAI_KEY), 'the planted secret appears in the console');
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}

describe('an Anthropic endpoint (1280×800)', () => {
  test('a tool-using turn works over the Messages API', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    const consoleLines = recordConsole(browser);
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      const before = stub.requests.length;
      await addProfile(page, {
        name: 'Stub Anthropic',
        provider: 'Anthropic',
        baseUrl: stub.url,
        model: 'stub-claude',
        key: ANTHROPIC_KEY,
      });
      await waitConnected(page);
      await send(page, 'Please write a greeting into a file.');
      await transcript(page).getByText(DONE_TEXT).last().waitFor({ timeout: 30_000 });
      assert.deepEqual(await readWorkspaceFile(page, GREETING_PATH), [GREETING_CONTENT]);
      const mine = stub.requests.slice(before).filter((r) => r.path === '/v1/messages');
      assert.equal(mine.length, 2);
      for (const r of mine) {
        assert.equal(r.headers['x-api-key'], ANTHROPIC_KEY);
        assert.equal(r.headers['anthropic-version'], '2023-06-01');
      }
      assertNoSecret('IndexedDB', await dumpIndexedDb(page), ANTHROPIC_KEY);
      assert.ok(!consoleLines.join('\n').includes(ANTHROPIC_KEY));
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }
  });
});

describe('when a reply is lost or refused (1280×800)', () => {
  test('a stream cut mid-reply keeps its partial text, interrupts the turn and is not resent', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      await addProfile(page, {
        name: 'Stub cut',
        provider: 'OpenAI-compatible',
        baseUrl: `${stub.url}/v1`,
        model: 'stub-model',
        key: 'sk-cut',
      });
      await waitConnected(page);
      const before = stub.requests.length;
      await send(page, 'Please cut the stream halfway.');
      // Barrier: the page shows the streamed text (so the controller read
      // it) before the stub cuts the stream.
      await page.getByRole('group', { name: 'Streaming (not yet saved)' }).getByText(PARTIAL_TEXT).waitFor({ timeout: 30_000 });
      stub.releaseCuts();
      await transcript(page).getByText(/interrupted/).last().waitFor({ timeout: 30_000 });
      await transcript(page).getByText(new RegExp(PARTIAL_TEXT)).last().waitFor();
      const sent = stub.requests.slice(before).filter((r) => r.path === '/v1/chat/completions');
      assert.equal(sent.length, 1, 'nothing resent');
    } finally {
      await browser.close();
    }
  });

  test('a refused key fails the turn with what to do; the workspace is kept and Resume brings the session back', async () => {
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      await send(page, '$ echo kept > kept.txt');
      await transcript(page).getByRole('group', { name: 'Command: echo kept > kept.txt' }).getByText('completed', { exact: true }).waitFor();
      await addProfile(page, {
        name: 'Stub bad key',
        provider: 'OpenAI-compatible',
        baseUrl: `${stub.url}/v1`,
        model: 'stub-model',
        key: 'bad-key',
      });
      await waitConnected(page);
      await send(page, 'hello');
      const card = transcript(page).getByRole('region', { name: 'Recovery' });
      await card.getByText('The last turn failed. The workspace and keys are kept.').waitFor({ timeout: 30_000 });
      // What to do is in the card's details: the class's advice.
      await card.getByRole('button', { name: 'Details' }).click();
      await card.getByText(/API key/).first().waitFor();
      assert.ok(!(await page.content()).includes('bad-key'), 'the key is not echoed');
      await card.getByRole('button', { name: 'Resume' }).click();
      await card.waitFor({ state: 'detached', timeout: 30_000 });
      await waitConnected(page);
      assert.deepEqual(await readWorkspaceFile(page, 'kept.txt'), ['kept\n']);
    } finally {
      await browser.close();
    }
  });
});
