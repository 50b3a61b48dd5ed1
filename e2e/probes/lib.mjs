// Helpers the recovery probes share. Everything here reads the app from the
// outside: the accessible UI (roles and names of DESIGN.md), IndexedDB and
// OPFS read in the page context, and the workers Playwright can see. Nothing
// in the bundle is a probe hook.

export const UNCERTAIN = /^(may have started|lost)$/;
export const ANY_OUTCOME =
  /^(admitted|not dispatched|dispatched|running|completed|failed|cancelled|timed out|may have started|lost)$/;
export const SETTLED = /^(completed|failed|cancelled|timed out|may have started|lost|not dispatched)$/;

export function transcript(page) {
  return page.getByRole('log', { name: 'Transcript' });
}

export function command(page, line) {
  return transcript(page).getByRole('group', { name: `Command: ${line}` });
}

export async function send(page, text) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

export async function waitOutcome(block, pattern, timeout = 30_000) {
  await block.getByText(pattern, { exact: true }).first().waitFor({ timeout });
}

/** Waits for a pattern; returns true if it appeared, false on timeout. */
export async function appears(locator, timeout, state = 'visible') {
  try {
    await locator.first().waitFor({ timeout, state });
    return true;
  } catch (error) {
    if (error?.name === 'TimeoutError' || /Timeout/.test(String(error))) return false;
    throw error;
  }
}

/** The outcome text a command block shows now (null if there is no block). */
export async function outcomeOf(block) {
  if ((await block.count()) === 0) return null;
  return (await block.first().locator('.outcome').textContent())?.trim() ?? null;
}

export async function outputOf(block) {
  if ((await block.count()) === 0) return null;
  return (await block.first().locator('pre').first().textContent()) ?? '';
}

export async function evidenceOf(block) {
  if ((await block.count()) === 0) return [];
  return (await block.first().locator('.evidence').allTextContents()).map((t) => t.trim());
}

/** What the page shows about itself right now: the connection status line,
 * notices, the session's lifecycle line and alert, the details pane. */
export async function observeUi(page) {
  const text = async (locator) => ((await locator.count()) ? (await locator.first().textContent())?.trim() ?? '' : '');
  const details = page.getByRole('complementary', { name: 'Session details' });
  const field = (name) => text(details.locator(`[data-field="${name}"]`));
  return {
    status: await text(page.locator('p.connection[role="status"]')),
    notices: (await page.locator('.notices .notice > p:first-child').allTextContents()).map((t) => t.trim()).filter(Boolean),
    lifecycle: await text(page.locator('.lifecycle [role="status"]')),
    // The recovery card is the one place that explains and acts.
    lifecycleAlert: await text(page.getByRole('region', { name: 'Recovery' }).locator('.recovery-summary')),
    resumeButton: (await page.getByRole('region', { name: 'Recovery' }).getByRole('button', { name: 'Resume' }).count()) > 0,
    refused: await text(page.locator('#composer-refused')),
    sendDisabled: await page.getByRole('button', { name: 'Send' }).isDisabled(),
    messageDisabled: await page.getByRole('textbox', { name: 'Message' }).isDisabled(),
    runtime: await field('runtime'),
    journal: await field('journal'),
    position: await field('position'),
    restarts: await field('restarts'),
    role: await field('role'),
  };
}

export function workersEndingWith(page, suffix) {
  return page.workers().filter((w) => new URL(w.url()).pathname.endsWith(suffix));
}

/** Closes a worker from the outside, as a crash would end it. The close runs
 * in a later task so the evaluate call itself returns. */
export async function closeWorker(worker) {
  await worker.evaluate(() => setTimeout(() => self.close(), 0));
}

export { readWorkspaceFile } from '../lib/workspace.mjs';

export async function countWorkspaces(page) {
  return page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    let n = 0;
    try {
      const workspaces = await root.getDirectoryHandle('workspaces');
      for await (const [, handle] of workspaces.entries()) if (handle.kind === 'directory') n += 1;
    } catch {
      // none
    }
    return n;
  });
}

export const JOURNAL_DB = 'lifeline';

/** Reads the journal read-only in the page: the database version, the number
 * of values per store, and the runtime records (assigned, retired, gone) and
 * session records, decoded from their JSON. Opens without a version so it
 * never creates or upgrades anything; returns `{ exists: false }` if the
 * database is not there. */
export async function readJournal(page) {
  return page.evaluate(async (name) => {
    const listed = (await indexedDB.databases()).find((d) => d.name === name);
    if (!listed) return { exists: false };
    const db = await new Promise((ok, fail) => {
      const r = indexedDB.open(name);
      r.onsuccess = () => ok(r.result);
      r.onerror = () => fail(r.error);
    });
    try {
      const out = { exists: true, version: db.version, counts: {}, types: {}, runtime: [], session: [] };
      for (const store of db.objectStoreNames) {
        const rows = await new Promise((ok, fail) => {
          const r = db.transaction(store, 'readonly').objectStore(store).getAll();
          r.onsuccess = () => ok(r.result);
          r.onerror = () => fail(r.error);
        });
        out.counts[store] = rows.length;
        if (store !== 'records' && store !== 'commands') continue;
        for (const row of rows) {
          let entry;
          try {
            entry = JSON.parse(row.json);
          } catch {
            continue;
          }
          const record = entry?.record ?? {};
          const type = record.type ?? '';
          out.types[type] = (out.types[type] ?? 0) + 1;
          if (type.startsWith('runtime_')) out.runtime.push({ position: entry.position, ...record });
          else if (type === 'session') out.session.push({ position: entry.position, ...record.record });
        }
      }
      return out;
    } finally {
      db.close();
    }
  }, JOURNAL_DB);
}

/** Waits in the page until the journal holds more `runtime_assigned` records
 * than `known`, polling read-only transactions back to back (no timers: each
 * poll starts when the previous one completes). Returns the new records. */
export async function waitRuntimeAssigned(page, known, timeoutMs) {
  return page.evaluate(
    async ({ name, known, timeoutMs }) => {
      const started = performance.now();
      const db = await new Promise((ok, fail) => {
        const r = indexedDB.open(name);
        r.onsuccess = () => ok(r.result);
        r.onerror = () => fail(r.error);
      });
      try {
        let polls = 0;
        for (;;) {
          polls += 1;
          const rows = await new Promise((ok, fail) => {
            const r = db.transaction('records', 'readonly').objectStore('records').getAll();
            r.onsuccess = () => ok(r.result);
            r.onerror = () => fail(r.error);
          });
          const assigned = [];
          for (const row of rows) {
            try {
              const entry = JSON.parse(row.json);
              if (entry?.record?.type === 'runtime_assigned') assigned.push({ position: entry.position, ...entry.record });
            } catch {
              // not ours to judge
            }
          }
          if (assigned.length > known) return { assigned, polls, ms: performance.now() - started };
          if (performance.now() - started > timeoutMs) return { assigned, polls, ms: performance.now() - started, timedOut: true };
        }
      } finally {
        db.close();
      }
    },
    { name: JOURNAL_DB, known, timeoutMs },
  );
}

export function short(id) {
  return typeof id === 'string' ? id.slice(0, 8) : String(id);
}
