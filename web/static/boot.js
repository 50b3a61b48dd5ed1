// The controller's module is the largest of the app's three: started here,
// its download and compile overlap the page's own. The page adopts this
// worker as its first controller (web/src/io/supervisor.rs) and replays, in
// order, the events it sent before the page listened.
const worker = new Worker('./controller.js', { type: 'module' });
const said = [];
worker.onmessage = (event) => said.push(event);
worker.onerror = (event) => {
  event.preventDefault();
  said.push(event);
};
globalThis.lifelineEarlyController = { worker, said };

// Loads the UI's wasm; #[wasm_bindgen(start)] mounts the app.
import init from './lifeline_web.js';
init();
