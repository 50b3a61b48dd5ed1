// Module worker bootstrap for the provider worker (see worker/provider),
// which the controller starts when a session first asks a model.
import init, { run_provider } from './lifeline_provider_worker.js';
// Local models run here; the wasm reaches local-model.js through this.
self.lifelineLocalModel = () => import('./local-model.js');
await init();
run_provider();
