// Module worker bootstrap for a runtime (see worker/runtime).
import init, { run_runtime } from './lifeline_runtime.js';
await init();
run_runtime();
