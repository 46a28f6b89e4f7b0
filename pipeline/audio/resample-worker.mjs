// Worker entry of the resampling pool (resample-pool.ts) when running from the TypeScript sources:
// registers tsx's loader in this worker and hands the tasks to resample-worker.ts. Plain JavaScript
// because a worker's entry is loaded before any loader is registered. Compiled code (dist/) starts
// resample-worker.js instead.
import { register } from 'tsx/esm/api';

register();
const { default: resampleTask } = await import('./resample-worker.ts');

export default resampleTask;
