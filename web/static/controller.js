// Module worker bootstrap for the controller (see worker/controller).
import init, { run_controller } from './lifeline_controller.js';
// Local models are loaded only when a local profile is used (see
// local-model.js); the controller's wasm reaches the module through this.
self.lifelineLocalModel = () => import('./local-model.js');
await init();
run_controller();
