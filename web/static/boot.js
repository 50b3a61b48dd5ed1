// Loads the UI's wasm; #[wasm_bindgen(start)] mounts the app.
import init from './lifeline_web.js';
init();
