/**
 * The bench's `cli` section: the start of `duplexsynth --version` and `--help` against a bare Node
 * start and against the whole pipeline loaded at start.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT, TYPESCRIPT_LOADER_ARGUMENTS } from '../pipeline/storage/package-files.ts';
import { fastestOf, runToEnd, totalCpuSeconds, type Measurement } from './bench-measure.ts';
import type { BenchFigure } from './bench-section.ts';

/**
 * The modules behind the command's subcommands, which scripts/cli.ts imports lazily (when a command
 * runs): loaded all at once, they are the baseline of a start that loads the whole pipeline.
 */
const EAGER_START_MODULES = [
  'pipeline/config',
  'pipeline/orchestration/build',
  'pipeline/orchestration/plan-build',
  'pipeline/run/verify-dataset',
  'pipeline/run/progress',
  'pipeline/events/index',
  'pipeline/events/evaluable-events',
  'scripts/commands/quality',
  'scripts/commands/measure',
  'scripts/commands/export',
  'scripts/commands/report',
  'scripts/commands/status',
  'scripts/commands/prompts',
  'scripts/commands/chat',
  'pipeline/export/index',
  'pipeline/report/build-report',
  'pipeline/orchestration/build-status',
  'stages/score-quality',
  'stages/split-dev-test',
];

/** The `cli` section: start of `duplexsynth --version` and `--help` against its baselines. */
export async function cliStartSection(
  repetitions = 5,
): Promise<{ markdown: string; headline: string; figures: BenchFigure[] }> {
  // scripts/build-dist.js is plain JavaScript beside the sources, never compiled into dist/: found from the package root
  const { distState } = (await import(pathToFileURL(path.join(PACKAGE_ROOT, 'scripts', 'build-dist.js')).href)) as {
    distState: () => { fresh: boolean };
  };
  const compiled = distState().fresh;
  const command = compiled
    ? [path.join(PACKAGE_ROOT, 'scripts', 'duplexsynth.js')]
    : [path.join(PACKAGE_ROOT, 'scripts', 'duplexsynth-dev.js')];
  const moduleUrl = (module: string) =>
    pathToFileURL(compiled ? path.join(PACKAGE_ROOT, 'dist', `${module}.js`) : path.join(PACKAGE_ROOT, `${module}.ts`))
      .href;
  const eager = `await Promise.all(${JSON.stringify(EAGER_START_MODULES.map(moduleUrl))}.map((url) => import(url)));`;
  const loader = compiled ? [] : [...TYPESCRIPT_LOADER_ARGUMENTS];
  const rows: [string, Measurement][] = [
    [
      '`duplexsynth --version`',
      await fastestOf(repetitions, () => runToEnd(process.execPath, [...command, '--version'])),
    ],
    ['`duplexsynth --help`', await fastestOf(repetitions, () => runToEnd(process.execPath, [...command, '--help']))],
    ['baseline: bare `node -e 0`', await fastestOf(repetitions, () => runToEnd(process.execPath, ['-e', '0']))],
    [
      'baseline: the whole pipeline loaded at start (every module the commands import)',
      await fastestOf(repetitions, () => runToEnd(process.execPath, [...loader, '--input-type=module', '-e', eager])),
    ],
  ];
  const cpu = (measurement: Measurement) => totalCpuSeconds(measurement).toFixed(3);
  const [version, help, bareNode, wholePipeline] = rows.map(([, measurement]) => measurement) as [
    Measurement,
    Measurement,
    Measurement,
    Measurement,
  ];
  return {
    markdown: [
      `${compiled ? 'The compiled command (dist/, what `npm install` users run)' : 'From the sources through tsx (dist/ is missing or stale: run `npm run build` to measure the compiled command)'}; fastest of ${repetitions} runs each, by CPU.`,
      '',
      '| run | wall s | CPU s (user + system) |',
      '|---|---:|---:|',
      ...rows.map(
        ([label, measurement]) => `| ${label} | ${measurement.wallSeconds.toFixed(3)} | ${cpu(measurement)} |`,
      ),
      '',
      `- \`--help\` CPU / eager start CPU = ${(totalCpuSeconds(help) / totalCpuSeconds(wholePipeline)).toFixed(2)} (goal: under 0.5 s with the cores free, where wall ≈ CPU)`,
    ].join('\n'),
    headline: `CLI start: \`--version\` ${version.wallSeconds.toFixed(2)} s wall / ${cpu(version)} s CPU, \`--help\` ${help.wallSeconds.toFixed(2)} s / ${cpu(help)} s CPU; baseline (the whole pipeline loaded at start) ${wholePipeline.wallSeconds.toFixed(2)} s / ${cpu(wholePipeline)} s CPU`,
    figures: [
      {
        measure: '`duplexsynth --version` start: wall s',
        value: version.wallSeconds.toFixed(3),
        ratio: `${(version.wallSeconds / bareNode.wallSeconds).toFixed(2)} (/ bare \`node -e 0\`, wall)`,
      },
      {
        measure: '`duplexsynth --help` start: CPU s',
        value: cpu(help),
        ratio: `${(totalCpuSeconds(help) / totalCpuSeconds(wholePipeline)).toFixed(2)} (/ the whole pipeline loaded at start, CPU)`,
      },
    ],
  };
}
