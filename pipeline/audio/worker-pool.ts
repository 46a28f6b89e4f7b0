/**
 * The piscina pool behind the resampling and rendering threads (resample-pool.ts, render-pool.ts):
 * threads started on first use and ended after 2 s idle (so a build that stops early leaves none).
 */
import { Piscina } from 'piscina';
import { RUNNING_COMPILED } from '../storage/package-files.ts';

/**
 * A pool of up to `threads` worker threads running the worker module `{entry}` beside this file: the
 * compiled `{entry}.js` from dist/, or from the sources `{entry}.mjs`, which registers tsx's loader in
 * the worker and imports `{entry}.ts`.
 * @param what what the threads do, for the error message ("resampling", "rendering")
 * @throws RangeError when `threads` is not a positive integer
 */
export function startWorkerPool(entry: string, threads: number, what: string): Piscina {
  if (!Number.isInteger(threads) || threads < 1)
    throw new RangeError(`${what} threads must be a positive integer, got ${threads}`);
  return new Piscina({
    filename: new URL(`./${entry}${RUNNING_COMPILED ? '.js' : '.mjs'}`, import.meta.url).href,
    minThreads: 0,
    maxThreads: threads,
    idleTimeout: 2000,
  });
}
