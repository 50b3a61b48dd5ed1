// Module worker bootstrap for the controller (see worker/controller).
import init, { run_controller } from './lifeline_controller.js';
await init();
run_controller();
