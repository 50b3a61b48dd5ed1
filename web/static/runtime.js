// Module worker bootstrap for a runtime (see worker/runtime). The module's
// bytes are asked for beside its glue, not after it (see controller.js).
const bytes = fetch(new URL('./lifeline_runtime_bg.wasm', import.meta.url));
bytes.catch(() => {});
// The workspaces' folder in the private file system, asked for while the
// module loads: its first lookup in a browser session takes milliseconds a
// runtime's start would wait for (`Ahead` in worker/opfs, which checks the
// answer and asks again when it is not usable).
const workspaces = Promise.resolve()
  .then(() => navigator.storage.getDirectory())
  .then((root) => root.getDirectoryHandle('workspaces', { create: true }));
workspaces.catch(() => {});
const { default: init, run_runtime } = await import('./lifeline_runtime.js');
await init({ module_or_path: bytes });
run_runtime(workspaces);
