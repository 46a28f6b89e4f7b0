/**
 * The benchmark's measuring helpers: CPU time of this process and of its child processes (which
 * `process.cpuUsage` does not see), and the load average. The benchmarks themselves are not run here.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { childrenCpuSecondsFromProcStat, describeRuns, formatMeasurement, measure, totalCpuSeconds } from './bench.ts';

const run = promisify(execFile);

describe('childrenCpuSecondsFromProcStat', () => {
  it('reads cutime + cstime (fields 16 and 17), even when the command name holds spaces and parentheses', () => {
    const line =
      '4242 (tsx (worker) 1) S 1 4242 4242 0 -1 4194560 500 9000 0 0 120 30 250 75 20 0 11 0 100 1000 200 18446744073709551615\n';
    expect(childrenCpuSecondsFromProcStat(line)).toBeCloseTo(3.25, 10);
    expect(() => childrenCpuSecondsFromProcStat('garbage')).toThrow(RangeError);
  });
});

describe('measure', () => {
  it.runIf(existsSync('/proc/self/stat'))(
    "counts a child process's CPU time, which process.cpuUsage misses",
    async () => {
      // the child burns 1 s of CPU; this process's own CPU is not compared with it: the unit tests run in
      // worker threads, and process.cpuUsage counts every thread of the process, the other test files' too
      const busy = 'const until = 1000000; while (process.cpuUsage().user < until) {}';
      const { measurement } = await measure(() => run(process.execPath, ['-e', busy]));
      expect(measurement.cpuChildrenSeconds).toBeGreaterThanOrEqual(0.99);
      expect(totalCpuSeconds(measurement)).toBeCloseTo(
        measurement.cpuSelfSeconds + measurement.cpuChildrenSeconds!,
        10,
      );
      expect(measurement.loadAverageStart).toHaveLength(3);
      expect(measurement.loadAverageEnd).toHaveLength(3);
      expect(formatMeasurement(measurement)).toMatch(
        /s wall; CPU .* s this process \+ .* s child processes; load average \(1\/5\/15 min\) .* at start, .* at end/,
      );
    },
  );
});

describe('describeRuns', () => {
  const percent = (share: number) => `${(share * 100).toFixed(1)} %`;

  it('gives the best (largest) of repeated runs, their median and every run in run order', () => {
    expect(describeRuns([0.85, 0.899, 0.81], percent)).toBe(
      'best 89.9 % of 3 runs (median 85.0 %; 85.0 %, 89.9 %, 81.0 %)',
    );
    expect(describeRuns([120, 180, 150, 130], (value) => value.toFixed(1))).toBe(
      'best 180.0 of 4 runs (median 140.0; 120.0, 180.0, 150.0, 130.0)',
    );
  });

  it('gives a single run as it is', () => {
    expect(describeRuns([0.5], percent)).toBe('50.0 %');
  });
});
