// The bench page: it only relays tasks to dedicated workers, where the
// controller (and so the journal) runs. `cargo xtask bench` drives it through
// window.benchTask from e2e/bench/run.mjs.

let worker = null;
let next = 0;
const pending = new Map();

function spawn() {
  const w = new Worker('./bench-worker.js', { type: 'module' });
  w.onmessage = (event) => {
    const { id, result, error } = event.data;
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (error) p.reject(new Error(error));
    else p.resolve(result);
  };
  w.onerror = (event) => {
    for (const p of pending.values()) p.reject(new Error(`worker error: ${event.message}`));
    pending.clear();
  };
  return w;
}

function call(w, task) {
  const id = ++next;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.postMessage({ id, task });
  });
}

/** Runs `task` in the shared worker, or in a fresh one with `fresh: true`. */
window.benchTask = async (task, { fresh = false } = {}) => {
  if (fresh) {
    const w = spawn();
    try {
      return await call(w, task);
    } finally {
      w.terminate();
    }
  }
  worker ??= spawn();
  return call(worker, task);
};

window.benchReady = window.benchTask({ kind: 'ping' }).then(() => {
  document.getElementById('status').textContent = 'ready';
  return true;
});
