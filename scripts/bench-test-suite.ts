/**
 * The bench's `tests` section: the suite as `npm test` runs it against one worker process, one file
 * after another; wall, CPU, the ten slowest files.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../pipeline/storage/package-files.ts';
import { measure, runToEnd, totalCpuSeconds, type Measurement } from './bench-measure.ts';
import type { BenchFigure } from './bench-section.ts';

/** vitest's JSON report (the fields used here). */
interface VitestJsonReport {
  numTotalTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: { name: string; startTime: number; endTime: number; status: string }[];
}

/** One `vitest run` of the suite with the JSON reporter. */
async function runSuite(
  serial: boolean,
  files: readonly string[],
): Promise<{ report: VitestJsonReport | null; measurement: Measurement; exitCode: number }> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-bench-tests-'));
  try {
    const outputFile = path.join(scratch, 'report.json');
    const vitest = path.join(PACKAGE_ROOT, 'node_modules', 'vitest', 'vitest.mjs');
    const env = { ...process.env, ...(serial ? { DUPLEXSYNTH_TEST_SERIAL: '1' } : {}) };
    const { value, measurement } = await measure(() =>
      runToEnd(process.execPath, [vitest, 'run', '--reporter=json', `--outputFile=${outputFile}`, ...files], env),
    );
    const report = await readFile(outputFile, 'utf8').then(
      (text) => JSON.parse(text) as VitestJsonReport,
      () => null,
    );
    return { report, measurement, exitCode: value.code };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The `tests` section: the suite as `npm test` runs it against one worker, one file at a time.
 * @param files only these test files (default: the whole suite)
 */
export async function testSuiteSection(
  files: readonly string[] = [],
): Promise<{ markdown: string; headline: string; figures: BenchFigure[] }> {
  const parallel = await runSuite(false, files);
  const serial = await runSuite(true, files);
  const describe = (label: string, run: Awaited<ReturnType<typeof runSuite>>) => {
    const report = run.report;
    const tests = report
      ? `${report.numTotalTests} tests, ${report.numFailedTests} failed, ${report.numPendingTests} skipped`
      : `no report (exit code ${run.exitCode})`;
    return `| ${label} | ${run.measurement.wallSeconds.toFixed(0)} | ${totalCpuSeconds(run.measurement).toFixed(0)} | ${tests} |`;
  };
  const seconds = (result: VitestJsonReport['testResults'][number]) => (result.endTime - result.startTime) / 1000;
  const slowest = [...(parallel.report?.testResults ?? [])].sort((a, b) => seconds(b) - seconds(a)).slice(0, 10);
  const serialSeconds = new Map((serial.report?.testResults ?? []).map((result) => [result.name, seconds(result)]));
  const relative = (file: string) => path.relative(PACKAGE_ROOT, file);
  const load = `load average (1 min) ${parallel.measurement.loadAverageStart[0]!.toFixed(1)} → ${serial.measurement.loadAverageEnd[0]!.toFixed(1)}`;
  return {
    markdown: [
      `\`vitest run\`${files.length > 0 ? ` of ${files.length} files` : ' of the whole suite'} (the type check and layering of \`npm test\` not included); CPU = the test processes' user + system; ${load}.`,
      '',
      '| run | wall s | CPU s | tests |',
      '|---|---:|---:|---|',
      describe('as `npm test` runs it: end-to-end and unit projects at once (vitest.config.ts)', parallel),
      describe('baseline: one worker, one file at a time (`DUPLEXSYNTH_TEST_SERIAL=1`)', serial),
      '',
      `- wall, npm test / baseline = ${(parallel.measurement.wallSeconds / serial.measurement.wallSeconds).toFixed(2)}; CPU = ${(totalCpuSeconds(parallel.measurement) / totalCpuSeconds(serial.measurement)).toFixed(2)}`,
      '',
      'The ten slowest files (wall s in the parallel run, where files share the cores; alone in the baseline run):',
      '',
      '| file | s (npm test) | s (one worker) |',
      '|---|---:|---:|',
      ...slowest.map(
        (result) =>
          `| ${relative(result.name)} | ${seconds(result).toFixed(1)} | ${serialSeconds.get(result.name)?.toFixed(1) ?? 'n/a'} |`,
      ),
    ].join('\n'),
    headline: `test suite: ${(parallel.measurement.wallSeconds / 60).toFixed(1)} min wall, ${totalCpuSeconds(parallel.measurement).toFixed(0)} CPU s; baseline (one worker) ${(serial.measurement.wallSeconds / 60).toFixed(1)} min, ${totalCpuSeconds(serial.measurement).toFixed(0)} CPU s`,
    figures: [
      {
        measure: `\`vitest run\`${files.length > 0 ? ` of ${files.length} files` : ' of the whole suite'} as \`npm test\` runs it: wall s`,
        value: parallel.measurement.wallSeconds.toFixed(0),
        ratio: `${(parallel.measurement.wallSeconds / serial.measurement.wallSeconds).toFixed(2)} (/ one worker, one file at a time, wall)`,
      },
    ],
  };
}
