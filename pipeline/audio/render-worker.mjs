// Worker entry of the render pool (render-pool.ts) when running from the TypeScript sources: registers
// tsx's loader in this worker and hands the tasks to render-worker.ts. Plain JavaScript because a
// worker's entry is loaded before any loader is registered. Compiled code (dist/) starts
// render-worker.js instead.
import { register } from 'tsx/esm/api';

register();
const { default: renderTask } = await import('./render-worker.ts');

export default renderTask;
