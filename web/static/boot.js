// The workers start here, before the page's own wasm, so that their modules
// download and compile while the page's does. The page adopts each and
// replays, in order, the events it sent before the page listened
// (web/src/io/mod.rs, `adopt_early`):
// - the controller, the largest module, as the page's first controller;
// - a runtime, which says it is ready and waits, with no identity, until
//   the page starts it as the first runtime the controller asks for; a tab
//   that follows another ends it unused.
function early(url) {
  const worker = new Worker(url, { type: 'module' });
  const said = [];
  worker.onmessage = (event) => said.push(event);
  worker.onerror = (event) => {
    event.preventDefault();
    said.push(event);
  };
  return { worker, said };
}
globalThis.lifelineEarlyController = early('./controller.js');
globalThis.lifelineEarlyRuntime = early('./runtime.js');

// Loads the UI's wasm; #[wasm_bindgen(start)] mounts the app. Imported,
// not a static import: a static import is fetched, with its own import,
// before this file runs, and the workers above waited for both. The
// module's bytes and the glue's import are asked for at once, beside the
// glue (see controller.js).
const bytes = fetch(new URL('./lifeline_web_bg.wasm', import.meta.url));
bytes.catch(() => {});
import('./split-page/__wasm_split.js').catch(() => {});
const { default: init } = await import('./lifeline_web.js');
init({ module_or_path: bytes });
