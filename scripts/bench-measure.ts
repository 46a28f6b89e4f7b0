/**
 * The benchmark's measuring helpers: wall-clock and CPU time of a piece of work (this process, all
 * threads, and its finished child processes from /proc/self/stat, which `process.cpuUsage` does not
 * see), the fastest of repeated runs, a command run to its end, and the small formatters the
 * sections share (Markdown rows, ratios, repeated runs).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { median } from 'simple-statistics';
import { PACKAGE_ROOT } from '../pipeline/storage/package-files.ts';

/** Clock ticks per second of the times in /proc/<pid>/stat (USER_HZ: 100 on every Linux architecture node runs on). */
const PROC_TICKS_PER_SECOND = 100;

/** CPU seconds used so far. */
export interface CpuTimes {
  /** This process, all threads, user + system (`process.cpuUsage`). */
  selfSeconds: number;
  /**
   * Its terminated, waited-for child processes (and theirs), user + system: cutime + cstime of
   * /proc/self/stat. null where /proc is not available. Children still running are not included.
   */
  childrenSeconds: number | null;
}

/**
 * The children's CPU seconds (cutime + cstime, fields 16 and 17) from the text of a /proc/<pid>/stat file.
 * @throws RangeError when the text does not have those fields
 */
export function childrenCpuSecondsFromProcStat(text: string, ticksPerSecond = PROC_TICKS_PER_SECOND): number {
  // the command name (field 2) is in parentheses and may hold spaces or parentheses: split after the last ')'
  const fields = text
    .slice(text.lastIndexOf(')') + 2)
    .trim()
    .split(/\s+/);
  const [cutime, cstime] = [Number(fields[13]), Number(fields[14])]; // fields[0] is field 3 (state)
  if (!Number.isFinite(cutime) || !Number.isFinite(cstime)) throw new RangeError('not a /proc/<pid>/stat line');
  return (cutime + cstime) / ticksPerSecond;
}

/** CPU seconds used so far by this process and its finished child processes. */
export function cpuTimes(): CpuTimes {
  const usage = process.cpuUsage();
  let childrenSeconds: number | null = null;
  try {
    childrenSeconds = childrenCpuSecondsFromProcStat(readFileSync('/proc/self/stat', 'utf8'));
  } catch {
    // not Linux: children's CPU is not measured
  }
  return { selfSeconds: (usage.user + usage.system) / 1e6, childrenSeconds };
}

/** What {@link measure} records about one piece of work. */
export interface Measurement {
  wallSeconds: number;
  /** CPU seconds of this process (all threads). */
  cpuSelfSeconds: number;
  /** CPU seconds of child processes that finished during the work; null where not measurable. */
  cpuChildrenSeconds: number | null;
  /** `os.loadavg()` (1, 5, 15 minutes) before and after. */
  loadAverageStart: number[];
  loadAverageEnd: number[];
}

/** Self + children CPU seconds of a measurement (self only where children are not measurable). */
export function totalCpuSeconds(measurement: Measurement): number {
  return measurement.cpuSelfSeconds + (measurement.cpuChildrenSeconds ?? 0);
}

/** Run `work` and record its wall-clock time, CPU time (this process and its children) and the load average. */
export async function measure<T>(work: () => Promise<T>): Promise<{ value: T; measurement: Measurement }> {
  const loadAverageStart = os.loadavg();
  const cpuStart = cpuTimes();
  const started = performance.now();
  const value = await work();
  const wallSeconds = (performance.now() - started) / 1000;
  const cpuEnd = cpuTimes();
  return {
    value,
    measurement: {
      wallSeconds,
      cpuSelfSeconds: cpuEnd.selfSeconds - cpuStart.selfSeconds,
      cpuChildrenSeconds:
        cpuStart.childrenSeconds === null || cpuEnd.childrenSeconds === null
          ? null
          : cpuEnd.childrenSeconds - cpuStart.childrenSeconds,
      loadAverageStart,
      loadAverageEnd: os.loadavg(),
    },
  };
}

/** The three load averages, `1.00 / 0.80 / 0.50`. */
export function loadAverage(values: number[]): string {
  return values.map((value) => value.toFixed(2)).join(' / ');
}

/** One line: wall, CPU (self + children) and load average of a measurement. */
export function formatMeasurement(measurement: Measurement): string {
  const children =
    measurement.cpuChildrenSeconds === null
      ? 'child processes not measured'
      : `+ ${measurement.cpuChildrenSeconds.toFixed(2)} s child processes`;
  return (
    `${measurement.wallSeconds.toFixed(2)} s wall; CPU ${measurement.cpuSelfSeconds.toFixed(2)} s this process ${children}; ` +
    `load average (1/5/15 min) ${loadAverage(measurement.loadAverageStart)} at start, ${loadAverage(measurement.loadAverageEnd)} at end`
  );
}

/** A Markdown table row. */
export function formatRow(cells: (string | number)[]): string {
  return `| ${cells.join(' | ')} |`;
}

/** `numerator / denominator` to `digits` decimals; `n/a` when the denominator is not positive. */
export function ratio(numerator: number, denominator: number, digits = 2): string {
  return denominator > 0 ? (numerator / denominator).toFixed(digits) : 'n/a';
}

/**
 * Repeated measurements of one setting for a headline: `best B of N runs (median M; v1, v2, ...)`,
 * best = the largest (a busy share, audio per CPU second: another process's load only lowers them).
 * @param values one per run, in run order (at least one)
 */
export function describeRuns(values: readonly number[], format: (value: number) => string): string {
  if (values.length === 1) return format(values[0]!);
  return `best ${format(Math.max(...values))} of ${values.length} runs (median ${format(median(values as number[]))}; ${values.map(format).join(', ')})`;
}

/** Runs a command to its end (any exit code) and returns its standard output. */
export function runToEnd(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  timeoutMilliseconds = 0,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: PACKAGE_ROOT, env, maxBuffer: 256 * 2 ** 20, timeout: timeoutMilliseconds },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** The fastest of `repetitions` runs (by CPU: the least disturbed by other processes on a shared machine). */
export async function fastestOf(repetitions: number, work: () => Promise<unknown>): Promise<Measurement> {
  let best: Measurement | null = null;
  for (let index = 0; index < repetitions; index++) {
    const { measurement } = await measure(work);
    if (best === null || totalCpuSeconds(measurement) < totalCpuSeconds(best)) best = measurement;
  }
  return best!;
}
