// Module worker bootstrap for the provider worker (see worker/provider),
// which the controller starts when a session first asks a model. The
// module's bytes are asked for beside its glue (see controller.js).
const bytes = fetch(new URL('./lifeline_provider_worker_bg.wasm', import.meta.url));
bytes.catch(() => {});
const { default: init, run_provider } = await import('./lifeline_provider_worker.js');
// Local models run here; the wasm reaches local-model.js through this.
self.lifelineLocalModel = () => import('./local-model.js');
await init({ module_or_path: bytes });
run_provider();
