// Module worker bootstrap for the first-visit baseline's worker.
import init, { run_minimal_worker } from './lifeline_bench_minimal_worker.js';
await init();
run_minimal_worker();
