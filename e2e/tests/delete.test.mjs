// Archive, Unarchive and Delete of any session, as a user meets them at
// both viewports: archive → unarchive → send works; Delete asks first,
// names the session and removes it for good (gone from the list, after a
// reload too, its workspace gone from OPFS and its text from the journal),
// another session unaffected; never while it runs; the Details pane shows
// each session's storage. Synchronised on what the page shows, on OPFS and
// on IndexedDB, never on sleeps.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import AxeBuilder from '@axe-core/playwright';
import { VIEWPORTS, onlyRefusedFetches, openApp, waitConnected } from '../lib/browser.mjs';
import {
  closeSessionList as closeList,
  commandBlock,
  openSessionList as openList,
  runCommand as run,
  send,
  sessionLink as link,
  sessionList as list,
} from '../lib/ui.mjs';
import { readWorkspaceFile } from '../lib/workspace.mjs';
import { readJournalRows } from '../lib/journal.mjs';

const row = (page, name) => list(page).getByRole('listitem').filter({ has: page.getByRole('link', { name, exact: true }) });
const details = (page) => page.getByRole('complementary', { name: 'Session details' });

async function openDetails(page, phone) {
  if (phone && !(await details(page).isVisible())) {
    await page.getByRole('button', { name: 'Session details' }).click();
  }
  await details(page).waitFor();
}

async function closeDetails(page, phone) {
  if (phone && (await details(page).isVisible())) {
    await page.getByRole('button', { name: 'Close details' }).click();
    await details(page).waitFor({ state: 'hidden' });
  }
}

/** Polls `read` until `check` holds: OPFS and IndexedDB change after the
 * page does. */
async function until(read, check, what) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) assert.fail(`${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const KEEP = '$ echo keep > keep.txt';
const GONE = '$ echo secret-words > gone.txt';

/** KEEP run in the first session, GONE in a new one, left open. */
async function twoSessions(page, phone) {
  await run(page, KEEP.slice(2));
  await openList(page, phone);
  await list(page).getByRole('button', { name: 'New session' }).click();
  await closeList(page, phone);
  await commandBlock(page, KEEP.slice(2)).waitFor({ state: 'detached' });
  await run(page, GONE.slice(2));
}

for (const [name, viewport] of Object.entries(VIEWPORTS)) {
  const phone = name === 'phone';
  describe(`archive and delete at ${viewport.width}×${viewport.height} (${name})`, () => {
    let browser;
    before(async () => {
      browser = await openApp(viewport);
    });
    after(async () => browser?.close());

    test('two sessions with their own files', async () => {
      const { page } = browser;
      await twoSessions(page, phone);
      assert.deepEqual(await readWorkspaceFile(page, 'gone.txt'), ['secret-words\n']);
    });

    test('Archive and Unarchive from the list, for a session that is not open; then it runs again', async () => {
      const { page } = browser;
      await openList(page, phone);
      await row(page, KEEP).getByRole('button', { name: 'Archive' }).click();
      await row(page, KEEP).getByText(/^archived/).waitFor();
      // Not a dead end: the archived row offers Unarchive.
      await row(page, KEEP).getByRole('button', { name: 'Unarchive' }).click();
      await row(page, KEEP).getByRole('button', { name: 'Archive' }).waitFor();
      await link(page, KEEP).click();
      await closeList(page, phone);
      await commandBlock(page, KEEP.slice(2)).waitFor();
      await run(page, 'cat keep.txt');
      await commandBlock(page, 'cat keep.txt').getByText('keep').first().waitFor();
    });

    test('the Details pane shows the open session\'s storage and its actions', async () => {
      const { page } = browser;
      await openDetails(page, phone);
      const storage = details(page).locator('[data-field="session-storage"]');
      await storage.filter({ hasText: /^\d[\d.,]* (B|kB)$/ }).waitFor();
      await details(page).getByRole('button', { name: 'Archive' }).waitFor();
      await details(page).getByRole('button', { name: 'Delete' }).waitFor();
      await closeDetails(page, phone);
    });

    test('Delete asks first, naming the session; Cancel keeps it', async () => {
      const { page } = browser;
      await openList(page, phone);
      await row(page, GONE).getByRole('button', { name: 'Delete' }).click();
      const dialog = page.getByRole('dialog', { name: `Delete “${GONE}”?` });
      await dialog.waitFor();
      await dialog.getByText(/removed for good. A folder you opened is never touched/).waitFor();
      const { violations } = await new AxeBuilder({ page }).include('#delete-session').analyze();
      assert.deepEqual(violations.map((v) => v.id), []);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await link(page, GONE).waitFor();
      await closeList(page, phone);
    });

    test('Delete removes a session for good; the other is unaffected', async () => {
      const { page } = browser;
      const before = (await readJournalRows(page)).rows.filter((r) => /secret-words/.test(r.json ?? ''));
      assert.ok(before.length > 0, 'the session is in the journal before');
      await openList(page, phone);
      await row(page, GONE).getByRole('button', { name: 'Delete' }).click();
      const dialog = page.getByRole('dialog', { name: `Delete “${GONE}”?` });
      await dialog.getByRole('button', { name: 'Delete session' }).click();
      await link(page, GONE).waitFor({ state: 'detached' });
      await link(page, KEEP).waitFor();
      await closeList(page, phone);

      await until(() => readWorkspaceFile(page, 'gone.txt'), (f) => f.length === 0, 'the workspace is gone from OPFS');
      assert.deepEqual(await readWorkspaceFile(page, 'keep.txt'), ['keep\n']);
      await until(
        async () => (await readJournalRows(page)).rows.filter((r) => /secret-words|gone\.txt/.test(r.json ?? '')).length,
        (n) => n === 0,
        'nothing of it is left in the journal',
      );

      await page.reload();
      await waitConnected(page);
      await commandBlock(page, 'cat keep.txt').waitFor();
      await openList(page, phone);
      await link(page, KEEP).waitFor();
      assert.equal(await link(page, GONE).count(), 0, 'still gone after a reload');
      assert.equal(await list(page).getByRole('link').count(), 1);
      await closeList(page, phone);
      // The other session still runs.
      await run(page, 'cat keep.txt > copy.txt');
      assert.deepEqual(await readWorkspaceFile(page, 'copy.txt'), ['keep\n']);
    });

    test('a session is not deleted while it runs: the page says why', async () => {
      const { page } = browser;
      await send(page, '$ sleep 30');
      await commandBlock(page, 'sleep 30').getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
      await openDetails(page, phone);
      await details(page).getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete session' }).click();
      await closeDetails(page, phone);
      await page.getByText('the agent is working on a message; stop it first').waitFor();
      await page.getByRole('button', { name: 'Stop' }).click();
      await commandBlock(page, 'sleep 30').getByText('cancelled', { exact: true }).waitFor({ timeout: 30_000 });
      await openList(page, phone);
      await link(page, KEEP).waitFor();
      await closeList(page, phone);
    });

    test('no errors in the console', () => {
      assert.deepEqual(browser.errors, []);
    });
  });
}

describe('a history whose snapshot cannot be read for want of its code (1280×800)', () => {
  test('the page says the history was not opened; nothing is lost, and with the code it opens', async () => {
    // The snapshot's reader is a module of the controller's own
    // (worker/controller/src/shell/load.rs), fetched only when the journal
    // holds a snapshot. A delete writes one, in the tombstone's transaction.
    const refused = '**/split_snapshot.wasm';
    const browser = await openApp(VIEWPORTS.desktop, ({ context }) =>
      context.route(refused, (route) => route.abort('internetdisconnected')),
    );
    try {
      const { page, context } = browser;
      await twoSessions(page, false);
      await openList(page, false);
      await row(page, GONE).getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog', { name: `Delete “${GONE}”?` }).getByRole('button', { name: 'Delete session' }).click();
      await link(page, GONE).waitFor({ state: 'detached' });
      // The tab goes on with the session before it, not a new empty one.
      assert.equal(await list(page).getByRole('link').count(), 1);
      await closeList(page, false);
      await commandBlock(page, KEEP.slice(2)).waitFor();
      await until(
        async () => (await readJournalRows(page)).rows.filter((r) => /secret-words/.test(r.json ?? '')).length,
        (n) => n === 0,
        'the delete is in the journal',
      );

      await page.reload();
      await page.getByText(/the part of the app that reads the saved history could not be loaded/).first().waitFor();
      assert.equal(await commandBlock(page, KEEP.slice(2)).count(), 0, 'no history is shown without it');

      await context.unroute(refused);
      await page.reload();
      await waitConnected(page);
      await commandBlock(page, KEEP.slice(2)).waitFor();
      await openList(page, false);
      await link(page, KEEP).waitFor();
      assert.equal(await list(page).getByRole('link').count(), 1, 'the delete held, and nothing was added');
      await closeList(page, false);
      await run(page, 'cat keep.txt');
      await commandBlock(page, 'cat keep.txt').getByText('keep').first().waitFor();
      // The refused fetch, as the browser and the loader log it, and nothing else.
      assert.ok(onlyRefusedFetches(browser.errors), browser.errors.join('\n'));
    } finally {
      await browser.close();
    }
  });
});
