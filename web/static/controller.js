// Module worker bootstrap for the controller (see worker/controller).
//
// Nothing here is a static import, so this runs as soon as this file
// arrives and asks for the module's bytes, its glue and the glue's own
// import (the split modules' loader) all at once. Static imports made
// them a chain, each found only once the one before had arrived: one
// round trip per link before the module was even asked for
// (docs/benchmarks.md, "Twenty-fifth stop").
const bytes = fetch(new URL('./lifeline_controller_bg.wasm', import.meta.url));
// A failed fetch is reported by `init`, not also as unhandled here.
bytes.catch(() => {});
// Only to start its download: the glue imports it, and reports its failure.
import('./split-controller/__wasm_split.js').catch(() => {});
const { default: init, run_controller } = await import('./lifeline_controller.js');
// Local models are loaded only when a local profile is used (see
// local-model.js); the controller's wasm reaches the module through this.
self.lifelineLocalModel = () => import('./local-model.js');
await init({ module_or_path: bytes });
run_controller();
