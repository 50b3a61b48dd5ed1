// Module worker bootstrap for a runtime (see worker/runtime). The module's
// bytes are asked for beside its glue, not after it (see controller.js).
const bytes = fetch(new URL('./lifeline_runtime_bg.wasm', import.meta.url));
bytes.catch(() => {});
const { default: init, run_runtime } = await import('./lifeline_runtime.js');
await init({ module_or_path: bytes });
run_runtime();
