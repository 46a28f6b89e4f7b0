/**
 * The signal section of the chaos run (scripts/chaos.ts): SIGTERM at seeded random moments to
 * `build`, `export`, `report` and `score`, each stop checked against the one stop path
 * (pipeline/run/stop-signals.ts):
 *
 * - the command ends with exit code 143 and exactly one `duplexsynth:` line on standard error, `{command}
 *   stopped by SIGTERM; …` (or exit 0 when it ended before the signal);
 * - what it writes is either the old one or the new one: for `export`, `report` and `score` the whole
 *   build folder hashes as before the command or as after a run to its end; for `build`, every dataset
 *   folder it left is byte-identical to the reference's, or as the commit left it before scoring (its
 *   files but the scoring ones), and a last build completes to the reference's bytes;
 * - no `.partial`, `.previous` or temporary file is left.
 *
 * Moments are uniform over the command's own time to its end (for `build`, a build from the warm
 * cache, as the stops run it), from a seeded random stream.
 */
import { spawn } from 'node:child_process';
import { cp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PROJECT_ROOT } from '../pipeline/config.ts';
import { dialogueRandomStream } from '../pipeline/model/random.ts';
import { SCORING_OUTPUT_FILES } from '../pipeline/run/stopped-build.ts';

/** What {@link runSignalChaos} needs from the chaos run. */
export interface SignalChaosSetting {
  /** The compiled command (scripts/duplexsynth.js). */
  cli: string;
  /** A folder the section may write in. */
  scratch: string;
  /** The reference build's output folder (a scored build, left unchanged). */
  referenceOut: string;
  /** A build config writing into `buildOut` with its own cache, the same build as the reference. */
  buildConfig: string;
  buildOut: string;
  /** Stops per command. */
  runs: number;
  seed: number;
  /** sha256 of every file under a folder by relative path (scripts/chaos.ts). */
  hashTree: (directory: string) => Promise<Map<string, string>>;
}

const DATASET = path.join('data', 'en', 'task', 'topiocqa');

/** The line a stop by SIGTERM prints. */
const STOP_LINE = /^duplexsynth: (build|export|report|score) stopped by SIGTERM; ./;

/**
 * Runs the section (see the file header), printing one line per stop and one per problem.
 * @returns the number of problems found (0: every stop as it should be)
 */
export async function runSignalChaos(setting: SignalChaosSetting): Promise<number> {
  const random = dialogueRandomStream(setting.seed, 'chaos', 'signal-moments');
  let problems = 0;
  const problem = (text: string) => {
    problems += 1;
    console.log(`  problem: ${text}`);
  };
  const work = path.join(setting.scratch, 'signals');
  const before = path.join(work, 'before');
  await cp(setting.referenceOut, before, { recursive: true });
  // `score` starts from the dataset as its commit left it, so its old and new states differ
  for (const name of SCORING_OUTPUT_FILES) await rm(path.join(before, DATASET, name), { force: true });
  const commands: { name: string; args: (out: string) => string[] }[] = [
    { name: 'export', args: (out) => ['export', path.join(out, DATASET), '--to', 'lhotse', '--copy-audio'] },
    { name: 'report', args: (out) => ['report', out] },
    { name: 'score', args: (out) => ['score', path.join(out, DATASET), '--no-comet'] },
  ];
  for (const command of commands) {
    const after = path.join(work, `${command.name}-after`);
    await cp(before, after, { recursive: true });
    const full = await run(setting.cli, command.args(after));
    if (full.code !== 0) {
      problem(`${command.name} failed without a signal (exit ${full.code}): ${lastLine(full.stderr)}`);
      continue;
    }
    const states = [await setting.hashTree(before), await setting.hashTree(after)];
    for (let stop = 1; stop <= setting.runs; stop++) {
      const out = path.join(work, `${command.name}-${stop}`);
      await cp(before, out, { recursive: true });
      const moment = random.uniform() * full.seconds;
      const result = await run(setting.cli, command.args(out), moment);
      console.log(`${command.name} ${stop}/${setting.runs}: SIGTERM at ${moment.toFixed(2)} s: ${outcome(result)}`);
      checkEnding(command.name, result, problem);
      const state = await setting.hashTree(out);
      if (!states.some((expected) => sameTree(expected, state)))
        problem(`${command.name}: ${out} is neither as before nor as after the command`);
      checkLeftovers(state, out, problem);
      await rm(out, { recursive: true, force: true });
    }
  }
  await buildStops(setting, random, problem);
  return problems;
}

/** The `build` part of {@link runSignalChaos}. */
async function buildStops(
  setting: SignalChaosSetting,
  random: { uniform(): number },
  problem: (text: string) => void,
): Promise<void> {
  const reference = await setting.hashTree(setting.referenceOut);
  const first = await run(setting.cli, ['build', '--config', setting.buildConfig, '--quiet']);
  if (first.code !== 0) {
    problem(`build failed without a signal (exit ${first.code}): ${lastLine(first.stderr)}`);
    return;
  }
  // the stops rebuild from the warm cache: their moments are drawn over the time of such a build
  await rm(setting.buildOut, { recursive: true, force: true });
  const warm = await run(setting.cli, ['build', '--config', setting.buildConfig, '--quiet']);
  if (warm.code !== 0) {
    problem(`build from the cache failed without a signal (exit ${warm.code}): ${lastLine(warm.stderr)}`);
    return;
  }
  for (let stop = 1; stop <= setting.runs; stop++) {
    await rm(setting.buildOut, { recursive: true, force: true });
    const moment = random.uniform() * warm.seconds;
    const result = await run(setting.cli, ['build', '--config', setting.buildConfig, '--quiet'], moment);
    console.log(`build ${stop}/${setting.runs}: SIGTERM at ${moment.toFixed(2)} s: ${outcome(result)}`);
    checkEnding('build', result, problem);
    if (!existsSync(setting.buildOut)) continue;
    const state = await setting.hashTree(setting.buildOut);
    checkLeftovers(state, setting.buildOut, problem);
    for (const dataset of new Set([...state.keys()].filter(isDatasetFile).map(datasetOf))) {
      const files = (tree: Map<string, string>) =>
        new Map([...tree].filter(([file]) => isDatasetFile(file) && datasetOf(file) === dataset));
      const left = files(state);
      const committed = new Map([...files(reference)].filter(([file]) => !isScoringFile(file)));
      if (!sameTree(left, files(reference)) && !sameTree(left, committed))
        problem(`build: ${dataset} is neither the reference's nor as committed before scoring`);
    }
  }
  const last = await run(setting.cli, ['build', '--config', setting.buildConfig, '--quiet']);
  const state = await setting.hashTree(setting.buildOut);
  if (last.code !== 0 || !sameTree(state, reference))
    problem(`build: the build after the stops (exit ${last.code}) did not end with the reference's bytes`);
}

/** Whether `file` (relative to a build folder) lies in a dataset folder `data/{lang}/{domain}/{dataset}/`. */
const isDatasetFile = (file: string) => file.split(path.sep).length > 4 && file.startsWith(`data${path.sep}`);
const datasetOf = (file: string) => file.split(path.sep).slice(0, 4).join(path.sep);
const isScoringFile = (file: string) =>
  file.split(path.sep).length === 5 && (SCORING_OUTPUT_FILES as readonly string[]).includes(path.basename(file));

/** The ending a stop must have: exit 143 and one `duplexsynth:` line naming the stop, or exit 0 (ended first). */
function checkEnding(command: string, result: RunResult, problem: (text: string) => void): void {
  const lines = result.stderr
    .trim()
    .split('\n')
    .filter((line) => line.startsWith('duplexsynth:'));
  if (result.code === 0 && lines.length === 0) return;
  if (result.signal === 'SIGTERM') {
    problem(
      `${command}: ended by SIGTERM's default action after ${result.seconds.toFixed(2)} s, with no line: the signal came before the command set its stop handlers`,
    );
    return;
  }
  if (result.code !== 143) problem(`${command}: exit ${result.code} (${result.signal ?? 'no signal'}), not 143`);
  if (lines.length !== 1 || !STOP_LINE.test(lines[0]!))
    problem(`${command}: expected one stop line, got ${JSON.stringify(lines)}`);
}

/** Reports the `.partial`, `.previous` and temporary files of `tree` (under `folder`). */
function checkLeftovers(tree: Map<string, string>, folder: string, problem: (text: string) => void): void {
  for (const file of tree.keys())
    if (/\.partial|\.previous|\.tmp$/.test(file)) problem(`left behind: ${path.join(folder, file)}`);
}

function sameTree(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([file, hash]) => b.get(file) === hash);
}

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  seconds: number;
  stderr: string;
}

const outcome = (result: RunResult) =>
  result.code === 143 ? 'stopped' : result.code === 0 ? 'ended first' : `exit ${result.code}`;

const lastLine = (text: string) => text.trim().split('\n').at(-1) ?? '';

/** Runs `node CLI ARGS`; with `signalAfterSeconds`, sends SIGTERM then. */
function run(cli: string, args: string[], signalAfterSeconds?: number): Promise<RunResult> {
  const started = performance.now();
  const child = spawn(process.execPath, [cli, ...args], { cwd: PROJECT_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer =
    signalAfterSeconds === undefined ? undefined : setTimeout(() => child.kill('SIGTERM'), signalAfterSeconds * 1000);
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, seconds: (performance.now() - started) / 1000, stderr });
    }),
  );
}
