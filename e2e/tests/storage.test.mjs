// Storage faults in a real browser: the journal's database wiped or deleted
// while the app is open, and a damaged `meta` writer record. No message is
// dropped silently, the page says what happened and offers the way on, and
// that way works. Everything waits on what the page shows, never on sleeps.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { BASE_URL, VIEWPORTS, openBrowser, waitConnected } from '../lib/browser.mjs';
import { commandBlock, send } from '../lib/ui.mjs';

const DATABASE = 'lifeline';

async function completed(page, line) {
  await commandBlock(page, line).getByText('completed', { exact: true }).first().waitFor({ timeout: 30_000 });
}

/** Connected again after a way on was taken (the status line said "Not connected" before). */
async function connectedAgain(page) {
  await page.getByRole('status').filter({ hasText: /^Connected$/ }).waitFor({ timeout: 30_000 });
}

function banner(page) {
  return page.getByRole('alert');
}

/** `indexedDB.deleteDatabase` from the page, as another context would. */
async function deleteJournal(page) {
  await page.evaluate(
    (name) =>
      new Promise((resolve, reject) => {
        const request = indexedDB.deleteDatabase(name);
        request.onsuccess = () => resolve();
        request.onerror = () => reject(request.error);
      }),
    DATABASE,
  );
}

/** Raw IndexedDB on the journal's database, as another context or a
 * damaged disk would touch it, in one transaction. `op` names what is done
 * (a function cannot cross into the page, so they are all here):
 * - `damageWriter`: an undecodable writer epoch in `meta`;
 * - `damageEvent`: the stored JSON of the `events` value whose text holds
 *   `marker` cut short, as a torn write leaves it (the value is still there
 *   but no longer reads as a journal entry);
 * - `quarantine`: what the quarantine store holds, and how many `events`
 *   values are left. */
async function rawJournal(page, op, marker) {
  return page.evaluate(
    ([name, op, marker]) =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open(name);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const stores = { damageWriter: ['meta'], damageEvent: ['events'], quarantine: ['quarantine', 'events'] }[op];
          const tx = db.transaction(stores, op === 'quarantine' ? 'readonly' : 'readwrite');
          let result = () => null;
          if (op === 'damageWriter') {
            tx.objectStore('meta').put({ key: 'writer', epoch: 'not a number' });
          } else if (op === 'damageEvent') {
            const store = tx.objectStore('events');
            const all = store.getAll();
            all.onsuccess = () => {
              const value = all.result.find((v) => v.json.includes(marker));
              if (!value) return tx.abort();
              value.json = value.json.slice(0, 40);
              store.put(value);
            };
          } else {
            const held = tx.objectStore('quarantine').getAll();
            const events = tx.objectStore('events').count();
            result = () => ({ held: held.result, events: events.result });
          }
          tx.oncomplete = () => {
            db.close();
            resolve(result());
          };
          tx.onabort = () => reject(tx.error ?? new Error(`${op}: no stored event holds ${marker}`));
        };
      }),
    [DATABASE, op, marker ?? null],
  );
}

const damageWriterRecord = (page) => rawJournal(page, 'damageWriter');
const damageEvent = (page, marker) => rawJournal(page, 'damageEvent', marker);
const quarantine = (page) => rawJournal(page, 'quarantine');

for (const [name, viewport] of Object.entries(VIEWPORTS)) {
  const phone = viewport.width < 640;

  describe(`storage faults at ${viewport.width}×${viewport.height} (${name})`, () => {
    test('site data cleared while open: the message stays, the page says so, a new journal takes it', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        await send(page, '$ echo before');
        await completed(page, 'echo before');

        const box = page.getByRole('textbox', { name: 'Message' });
        await box.fill('$ echo after');
        // DevTools' "Clear site data" for IndexedDB; the page keeps running.
        const cdp = await page.context().newCDPSession(page);
        await cdp.send('Storage.clearDataForOrigin', {
          origin: new URL(BASE_URL).origin,
          storageTypes: 'indexeddb',
        });
        // Sent at once, before or after the controller heard of it: either
        // way the text must come back to (or stay in) the box.
        await box.press('Enter');

        await page.getByRole('status').filter({ hasText: /^Not connected/ }).waitFor();
        await banner(page).getByText(/the stored history is gone|stored history cannot be reached/).waitFor();
        assert.equal(await box.inputValue(), '$ echo after');
        assert.equal(await page.getByRole('button', { name: 'Send' }).isDisabled(), true);

        await banner(page).getByRole('button', { name: 'Start a new journal' }).click();
        await connectedAgain(page);
        await banner(page).waitFor({ state: 'detached' });
        assert.equal(await box.inputValue(), '$ echo after', 'the message waited in the box');
        await page.getByRole('button', { name: 'Send' }).click();
        await completed(page, 'echo after');
        assert.equal(await commandBlock(page, 'echo before').count(), 0, 'the wiped history is not shown as if it were kept');

        // Recorded in the new journal: a reload shows it.
        await page.reload();
        await waitConnected(page);
        await completed(page, 'echo after');
        assert.equal(await commandBlock(page, 'echo after').count(), 1);
      } finally {
        await browser.close();
      }
    });

    test('the journal deleted from another context: said at once, and again after a reload', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        await send(page, '$ echo kept once');
        await completed(page, 'echo kept once');

        await deleteJournal(page);
        await banner(page).getByText(/the stored history is gone/).waitFor();
        await banner(page).getByRole('button', { name: 'Start a new journal' }).waitFor();

        // localStorage survived the deletion, so the next visit can tell.
        await page.reload();
        await waitConnected(page);
        await page.getByText(/The history Lifeline stored in this browser before is gone/).waitFor();
        assert.equal(await commandBlock(page, 'echo kept once').count(), 0);
        await send(page, '$ echo fresh');
        await completed(page, 'echo fresh');
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test('an unreadable journal entry: set aside in quarantine, said, the rest loads and work goes on', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        await send(page, '$ echo first');
        await completed(page, 'echo first');
        await send(page, '$ echo second');
        await completed(page, 'echo second');
        const before = await quarantine(page);
        assert.deepEqual(before.held, []);

        // The output event of the second command.
        await damageEvent(page, '"inline":"second\\n"');
        await page.reload();
        await waitConnected(page);

        const notices = page.locator('.notices');
        await notices.getByText('1 journal record could not be read and was set aside in quarantine, where it is kept; the rest of the history loaded').waitFor();
        // What came after it in the same command cannot be believed either;
        // the record set aside is not counted twice.
        await notices
          .getByText(/^the journal entry at position \d+ is missing or could not be replayed, and is not believed; nothing was deleted$/)
          .waitFor();
        await completed(page, 'echo first');
        await commandBlock(page, 'echo first').getByText('first', { exact: true }).waitFor();
        // Its record says it completed; its row says why it shows no output.
        await commandBlock(page, 'echo second')
          .getByText(/some of this command's records could not be read back from the journal/)
          .waitFor();
        assert.equal(await commandBlock(page, 'echo first').locator('.evidence').count(), 0);

        // Moved, not deleted: kept whole with the reason, out of the journal.
        const after = await quarantine(page);
        assert.equal(after.held.length, 1);
        assert.equal(after.held[0].store, 'events');
        assert.match(after.held[0].reason, /not a readable journal entry/);
        assert.equal(after.held[0].value.json.length, 40);
        assert.equal(after.events, before.events - 1);

        // The journal goes on writing after the hole, and what it writes loads.
        await send(page, '$ echo third');
        await completed(page, 'echo third');
        await page.reload();
        await waitConnected(page);
        await completed(page, 'echo third');
        await completed(page, 'echo first');
        assert.equal((await quarantine(page)).held.length, 1, 'set aside once');
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });

    test('a damaged writer record: history read-only, Export works, Repair journal writes again', async () => {
      const browser = await openBrowser(viewport);
      try {
        const { page } = browser;
        await page.goto(BASE_URL);
        await waitConnected(page);
        await send(page, '$ echo recorded');
        await completed(page, 'echo recorded');

        await damageWriterRecord(page);
        await page.reload();

        // The rest of the history loads.
        await completed(page, 'echo recorded');
        await banner(page).getByText(/writer record is unreadable/).waitFor();
        await page.getByRole('status').filter({ hasText: /read-only, the journal is damaged/ }).waitFor();
        const box = page.getByRole('textbox', { name: 'Message' });
        await box.fill('$ echo waits');
        assert.equal(await page.getByRole('button', { name: 'Send' }).isDisabled(), true);

        if (phone) await page.getByRole('button', { name: 'Session details' }).click();
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: 'Export evidence' }).click(),
        ]);
        assert.match(download.suggestedFilename(), /^lifeline-evidence-.*\.tar$/);
        const stream = await download.createReadStream();
        const chunks = [];
        for await (const chunk of stream) chunks.push(chunk);
        const archive = Buffer.concat(chunks);
        assert.ok(archive.includes(Buffer.from('session.jsonl')), 'the archive holds session.jsonl');
        assert.ok(archive.includes(Buffer.from('echo recorded')), 'the export holds the recorded command');
        if (phone) await page.getByRole('button', { name: 'Session details' }).click();

        await banner(page).getByRole('button', { name: 'Repair journal' }).click();
        await connectedAgain(page);
        await banner(page).waitFor({ state: 'detached' });
        await completed(page, 'echo recorded');
        assert.equal(await box.inputValue(), '$ echo waits');
        await page.getByRole('button', { name: 'Send' }).click();
        await completed(page, 'echo waits');

        await page.reload();
        await waitConnected(page);
        await completed(page, 'echo recorded');
        await completed(page, 'echo waits');
        assert.equal(await banner(page).count(), 0);
        assert.deepEqual(browser.errors, []);
      } finally {
        await browser.close();
      }
    });
  });
}
