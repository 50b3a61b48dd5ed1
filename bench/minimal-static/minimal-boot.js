// Loads the baseline page's wasm; #[wasm_bindgen(start)] mounts it.
import init from './lifeline_bench_minimal_page.js';
init();
