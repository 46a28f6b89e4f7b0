/**
 * How far V8 lets the heap grow between full (mark-compact) collections in a process that builds
 * audio, set once when the command line starts.
 *
 * Why: V8 (src/heap/heap.h `OldGenerationSpaceAvailable`, Node 20's V8 11.3) counts the external memory
 * allocated since the last mark-compact (ArrayBuffer backing stores: every decoded clip, track and WAV
 * buffer) as if it were old-generation bytes. Once the old generation's allocation limit minus those
 * bytes falls to the new space's capacity, `Heap::IncrementalMarkingLimitReached` reports the soft limit
 * and a task starts a full collection: it marks the whole heap (about 50 MB of code, strings and build
 * state, almost all of it live) to free the few audio buffers that outlived a scavenge. The limit is
 * the live heap times a growing factor V8 picks from its GC and mutator speeds (1.1 to 4), about 1.7 here, so a 20-dialogue saturation build, which allocates about 2 GB of
 * audio buffers, started a full collection every 30-35 MB of them: 62-97 per build
 * (`node dist/pipeline/orchestration/build-saturation.bench.js 20 4 0.02`; `npm run bench`, section
 * saturation, prints the count), their concurrent marking about 6 of the build's 19-30 CPU seconds.
 * With the factor fixed at 4 (`--heap-growing-percent=300`) there are 18-24; in runs paired one after
 * the other the build's process used 17-28 % less CPU (e.g. 15.7-16.0 s against 18.9-19.3 s) and its
 * peak resident set grew by 35-50 MiB (about 460 against 415 MiB). 100 % gave 30 collections, 200 % 24,
 * 400 % 23 (README, Throughput).
 */
import v8 from 'node:v8';

/** The heap growing factor the build's process uses, as V8's `--heap-growing-percent`: factor = 1 + percent / 100. */
export const HEAP_GROWING_PERCENT = 300;

/**
 * Set V8's heap growing factor for this process to 1 + `percent` / 100, unless the
 * process was started with its own `--heap-growing-percent` (or `--predictable-gc-schedule`), which is
 * kept. V8 reads the flag each time it recomputes the allocation limit after a full collection, so
 * setting it after start takes effect from the next one. Process-wide: call it from a command's entry,
 * never from library code a host application imports.
 *
 * @param options.execArgv the Node options the process was started with (default `process.execArgv`)
 * @param options.percent the growth in percent (default {@link HEAP_GROWING_PERCENT}), a positive integer
 * @returns true when the factor was set, false when the process's own flag was kept
 * @throws RangeError when `percent` is not a positive integer
 */
export function widenHeapGrowth(options: { execArgv?: readonly string[]; percent?: number } = {}): boolean {
  const { execArgv = process.execArgv, percent = HEAP_GROWING_PERCENT } = options;
  if (!Number.isInteger(percent) || percent <= 0)
    throw new RangeError(`widenHeapGrowth: percent must be a positive integer, got ${percent}`);
  if (execArgv.some((argument) => /^--(heap[-_]growing[-_]percent|predictable[-_]gc[-_]schedule)\b/.test(argument)))
    return false;
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
  widened = percent;
  return true;
}

/** The percent {@link widenHeapGrowth} set in this process, or null. */
let widened: number | null = null;

/** The heap growing percent {@link widenHeapGrowth} set in this process; null when it was not called or kept the process's own flag (V8's factor or the user's). */
export function widenedHeapGrowthPercent(): number | null {
  return widened;
}
