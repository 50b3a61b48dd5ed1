// Reading the journal straight from IndexedDB in the page context, not
// through the app: what the soak and the end-to-end tests check the app's
// claims against.

/** Every journal row of the entry stores, raw, and how many values the app
 * set aside in quarantine. Read-only, without a version, so it never creates
 * or upgrades the database (store names: worker/controller/src/journal.rs). */
export async function readJournalRows(page) {
  return page.evaluate(async () => {
    const db = await new Promise((ok, fail) => {
      const r = indexedDB.open('lifeline');
      r.onsuccess = () => ok(r.result);
      r.onerror = () => fail(r.error);
    });
    const all = (store) =>
      new Promise((ok, fail) => {
        const r = db.transaction(store, 'readonly').objectStore(store).getAll();
        r.onsuccess = () => ok(r.result);
        r.onerror = () => fail(r.error);
      });
    try {
      const rows = [];
      for (const store of ['commands', 'events', 'evidence', 'records']) {
        for (const value of await all(store)) rows.push({ store, position: value?.position, json: value?.json });
      }
      const quarantined = db.objectStoreNames.contains('quarantine') ? (await all('quarantine')).length : 0;
      return { rows, quarantined };
    } finally {
      db.close();
    }
  });
}

/** How many journal records carry a user's verdict on an uncertain command. */
export async function verdictRecords(page) {
  const { rows } = await readJournalRows(page);
  return rows.filter((r) => r.store === 'records' && /verdict/i.test(r.json)).length;
}

/** The journal's provider records (`provider_retried`, `provider_failed`,
 * …) in journal order, parsed, wherever they sit inside a row. */
export async function providerRecords(page) {
  const { rows } = await readJournalRows(page);
  const found = [];
  const visit = (value) => {
    if (!value || typeof value !== 'object') return;
    if (typeof value.type === 'string' && value.type.startsWith('provider_')) found.push({ ...value });
    for (const child of Object.values(value)) visit(child);
  };
  const ordered = rows.filter((r) => r.store === 'records').sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
  for (const row of ordered) {
    try {
      visit(typeof row.json === 'string' ? JSON.parse(row.json) : row.json);
    } catch {
      // A row that is not JSON is the quarantine's business, not this one's.
    }
  }
  return found;
}
