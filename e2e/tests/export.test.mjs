// Evidence export and import: run a session with the built-in agent (one
// command's output big enough to become an artifact), export it, read the
// archive in Node, run the real DuckDB on session.jsonl with read_json_auto,
// scan for a planted secret, then import the archive in a fresh browser
// profile and check the transcript shows the same command blocks read-only.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE_URL, VIEWPORTS, openApp, openBrowser, waitConnected } from '../lib/browser.mjs';
import { send, transcript } from '../lib/ui.mjs';

const KEY = 'sk-lifeline-PLANTED-export-90e1d4';
const PYTHON = process.env.LIFELINE_DUCKDB_PYTHON ?? 'python3';

/** Saves a profile with an API key (not selected: the built-in agent runs). */
async function plantKey(page) {
  await page.getByRole('button', { name: 'Profiles' }).click();
  const dialog = page.getByRole('dialog', { name: 'Profiles' });
  await dialog.getByLabel('Name', { exact: true }).fill('Planted');
  await dialog.getByLabel('Provider', { exact: true }).selectOption({ label: 'OpenAI-compatible' });
  await dialog.getByLabel('Base URL', { exact: true }).fill('http://127.0.0.1:9/v1');
  await dialog.getByLabel('Model', { exact: true }).fill('m');
  await dialog.getByLabel('API key', { exact: true }).fill(KEY);
  await dialog.getByRole('button', { name: 'Save profile' }).click();
  await dialog
    .getByRole('list', { name: 'Saved profiles' })
    .getByRole('listitem')
    .filter({ hasText: 'Planted' })
    .getByText('API key set')
    .waitFor();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
}

/** The regular files of a ustar archive, by name. */
function untar(buffer) {
  const files = new Map();
  for (let at = 0; at + 512 <= buffer.length; ) {
    const header = buffer.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const field = (from, to) => header.subarray(from, to).toString('latin1').replace(/\0.*$/s, '').trim();
    const name = field(0, 100);
    const size = parseInt(field(124, 136), 8);
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : header[i];
    assert.equal(parseInt(field(148, 156), 8), sum, `checksum of ${name}`);
    files.set(name, buffer.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

function duckdb(sql) {
  const script = 'import duckdb, json, sys\nprint(json.dumps(duckdb.sql(sys.argv[1]).fetchall()))';
  return JSON.parse(execFileSync(PYTHON, ['-c', script, sql], { encoding: 'utf8' }));
}

describe('evidence export and import (1280×800)', () => {
  test("an export whose code cannot be fetched is said, nothing is saved, and the next export works", async () => {
    // The export is a module of the controller's own, fetched the first time.
    const browser = await openApp(VIEWPORTS.desktop, ({ context }) =>
      context.route('**/split_export.wasm', (route) => route.abort('internetdisconnected')),
    );
    try {
      const { page, context } = browser;
      await send(page, '$ echo exported');
      await transcript(page).getByRole('group', { name: 'Command: echo exported' }).getByText('completed', { exact: true }).waitFor();
      let downloads = 0;
      page.on('download', () => downloads++);
      const exportButton = page.getByRole('button', { name: 'Export evidence' });
      await exportButton.click();
      await page.getByText(/part of the app could not be loaded, so nothing was done/i).waitFor();
      // The control is free again: the failed export ended.
      assert.equal(await exportButton.isEnabled(), true);
      await context.unroute('**/split_export.wasm');
      const [download] = await Promise.all([page.waitForEvent('download'), exportButton.click()]);
      assert.match(download.suggestedFilename(), /^lifeline-evidence-.*\.tar$/);
      assert.equal(downloads, 1, 'nothing was saved by the export that failed');
    } finally {
      await browser.close();
    }
  });

  test('an exported session is read by DuckDB as it is, holds no secret, and imports read-only elsewhere', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lifeline-export-'));
    let archive;
    let shownCommands;
    const browser = await openBrowser(VIEWPORTS.desktop);
    try {
      const { page } = browser;
      await page.goto(BASE_URL);
      await waitConnected(page);
      await plantKey(page);
      await send(page, '$ echo hi > a.txt\n$ seq 1 100000');
      const log = transcript(page);
      await log.getByRole('group', { name: 'Command: seq 1 100000' }).getByText('completed', { exact: true }).waitFor();
      await log.getByText(/Ran 2 commands/).waitFor();
      shownCommands = await log.getByRole('group', { name: /^Command: / }).count();
      assert.equal(shownCommands, 2);

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export evidence' }).click(),
      ]);
      assert.match(download.suggestedFilename(), /^lifeline-evidence-.*\.tar$/);
      const path = join(dir, download.suggestedFilename());
      await download.saveAs(path);
      archive = await readFile(path);
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
    }

    // The archive: session.jsonl and at least one artifact, each named by
    // its content's digest.
    const files = untar(archive);
    assert.ok(files.has('session.jsonl'), [...files.keys()].join(', '));
    const artifacts = [...files.keys()].filter((n) => n.startsWith('artifacts/'));
    assert.ok(artifacts.length >= 1, 'seq 1 100000 left output in an artifact');
    const { createHash } = await import('node:crypto');
    for (const name of artifacts) {
      assert.equal(createHash('sha256').update(files.get(name)).digest('hex'), name.slice('artifacts/'.length));
    }
    assert.ok(!archive.includes(Buffer.from(KEY)), 'the planted key is not in the archive');

    // DuckDB reads the extracted file as it is.
    await mkdir(join(dir, 'x'));
    const jsonl = join(dir, 'x', 'session.jsonl');
    await writeFile(jsonl, files.get('session.jsonl'));
    const lines = files.get('session.jsonl').toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
    const from = `read_json_auto('${jsonl}')`;
    const columns = duckdb(`select column_name from (describe select * from ${from})`).map((r) => r[0]);
    assert.deepEqual(columns, ['position', 'at_ms', 'kind', 'session', 'turn', 'command', 'outcome', 'text', 'artifact', 'record']);
    const counts = Object.fromEntries(duckdb(`select kind, count(*) from ${from} group by kind`));
    assert.equal(duckdb(`select count(*) from ${from}`)[0][0], lines.length);
    // What the page showed: one session, one turn, two commands that completed.
    assert.equal(counts.session_opened, 1);
    assert.equal(counts.turn_recorded, 1);
    assert.equal(counts.turn_finished, 1);
    assert.equal(counts.command_admitted, shownCommands);
    assert.ok(counts.artifact_stored >= 1);
    const lineTexts = duckdb(`select text from ${from} where kind = 'command_admitted' order by position`).map((r) => r[0]);
    assert.deepEqual(lineTexts, ['echo hi > a.txt', 'seq 1 100000']);
    const terminal = duckdb(`select count(*) from ${from} where kind = 'event' and outcome = 'completed'`)[0][0];
    assert.equal(terminal, 2);
    const named = duckdb(`select count(distinct artifact) from ${from} where kind = 'event' and artifact is not null`)[0][0];
    assert.equal(named, artifacts.length);

    // A fresh browser profile imports it read-only.
    const other = await openBrowser(VIEWPORTS.desktop);
    try {
      const { page } = other;
      await page.goto(BASE_URL);
      await waitConnected(page);
      await page.getByLabel('Import evidence').setInputFiles({
        name: 'evidence.tar',
        mimeType: 'application/x-tar',
        buffer: archive,
      });
      const log = transcript(page);
      await log.getByText('Imported evidence (read-only)').waitFor();
      for (const line of ['echo hi > a.txt', 'seq 1 100000']) {
        await log.getByRole('group', { name: `Command: ${line}` }).getByText('completed', { exact: true }).waitFor();
      }
      assert.equal(await log.getByRole('group', { name: /^Command: / }).count(), shownCommands);
      await log.getByText(/Ran 2 commands/).waitFor();
      await page.getByRole('textbox', { name: 'Message' }).fill('$ echo nope');
      assert.equal(await page.getByRole('button', { name: 'Send' }).isDisabled(), true);
      await page.getByRole('button', { name: 'Back to my session' }).click();
      await log.getByText('Imported evidence (read-only)').waitFor({ state: 'detached' });
      assert.equal(await log.getByRole('group', { name: /^Command: / }).count(), 0, 'this profile ran nothing');
      assert.equal(await page.getByRole('button', { name: 'Send' }).isDisabled(), false);
      // A file that is not an archive is refused by what is wrong with it,
      // in the page's words (the parser's go to the worker's log).
      await page.getByLabel('Import evidence').setInputFiles({
        name: 'notes.tar',
        mimeType: 'application/x-tar',
        buffer: Buffer.from('these are notes, not an archive'),
      });
      await page.getByText('Import of notes.tar failed: it is not a Lifeline evidence archive', { exact: true }).waitFor();
      assert.deepEqual(other.errors, []);
    } finally {
      await other.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
