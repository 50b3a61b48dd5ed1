// Runs in a dedicated worker, like the controller. Times the candidate
// (lifeline_bench → Journal::write_batch) and two baselines on the very same
// entries: raw IndexedDB and Dexie's bulkPut, with the same value shapes,
// the same `events` store layout (key [command_id, seq], index `position`)
// and the same transaction durability.
import init, * as bench from './lifeline_bench.js';
import Dexie from './dexie.mjs';

const ready = init({ module_or_path: './lifeline_bench_bg.wasm' });

function deleteDatabase(name) {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error(`deleting ${name} is blocked`));
  });
}

/** The stored value, exactly as the journal shapes an Event entry. */
function value(entry) {
  return {
    position: entry.position,
    command_id: entry.record.command,
    seq: entry.record.seq,
    json: JSON.stringify(entry),
  };
}

function openRaw(name) {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(name, 1);
    request.onupgradeneeded = () => {
      const events = request.result.createObjectStore('events', { keyPath: ['command_id', 'seq'] });
      events.createIndex('position', 'position');
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function rawAppend(name, batches, durability) {
  const db = await openRaw(name);
  const start = performance.now();
  for (const batch of batches) {
    const tx = db.transaction(['events'], 'readwrite', { durability });
    const store = tx.objectStore('events');
    for (const entry of batch) store.put(value(entry));
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve;
      tx.onabort = () => reject(tx.error);
    });
  }
  const elapsed = performance.now() - start;
  db.close();
  return elapsed;
}

async function dexieAppend(name, batches, durability) {
  const db = new Dexie(name, { chromeTransactionDurability: durability });
  db.version(1).stores({ events: '[command_id+seq], position' });
  await db.open();
  const start = performance.now();
  for (const batch of batches) await db.events.bulkPut(batch.map(value));
  const elapsed = performance.now() - start;
  db.close();
  return elapsed;
}

const batchCache = new Map();

function batchesFor(size, total, strict) {
  const key = `${size}/${total}/${strict}`;
  if (!batchCache.has(key)) {
    batchCache.set(key, JSON.parse(bench.event_batches_json(size, total, strict)));
  }
  return batchCache.get(key);
}

async function run(task) {
  await ready;
  switch (task.kind) {
    case 'ping':
      return 'pong';
    case 'append': {
      const { impl, size, total, strict, name } = task;
      const durability = bench.event_batches_durability(strict);
      await deleteDatabase(name);
      let ms;
      if (impl === 'journal') {
        ms = await bench.journal_append(name, size, total, strict);
      } else {
        const batches = batchesFor(size, total, strict);
        ms = impl === 'raw' ? await rawAppend(name, batches, durability) : await dexieAppend(name, batches, durability);
      }
      await deleteDatabase(name);
      return { ms, durability };
    }
    case 'recovery-prepare':
      await deleteDatabase(task.name);
      return JSON.parse(await bench.recovery_prepare(task.name, task.events));
    case 'recovery-measure':
      return JSON.parse(await bench.recovery_measure(task.name));
    case 'delete':
      await deleteDatabase(task.name);
      return true;
    default:
      throw new Error(`unknown task ${task.kind}`);
  }
}

self.onmessage = async (event) => {
  const { id, task } = event.data;
  try {
    postMessage({ id, result: await run(task) });
  } catch (error) {
    postMessage({ id, error: String(error && error.stack ? error.stack : error) });
  }
};
