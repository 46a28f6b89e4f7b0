/**
 * Bench section `machines`: the queued build on simulated machines. Each process (redis-server, the
 * coordinator, every worker; or the one process of a local build) runs in its own CPU-quota cgroup
 * (./bench-cgroups.ts), a "machine" of a fraction of a core, so that one host shows how the build
 * scales over many machines, all in one run (every ratio against a baseline of the same run):
 *
 * - unscored, offline engine (espeak-ng): N = 1, 2, 4 worker machines against one process in one
 *   machine of the same size;
 * - scored (DNSMOS every 9.01 s): N = 3 against one machine;
 * - with a "GPU" per machine: N = 1, 2, 4 workers, each with a loopback CosyVoice2 server process of
 *   its own at a real-time factor of 0.03 outside every quota (./bench-machines-gpu.ts), against one
 *   process with one such server;
 * - flat at scale: the coordinator's CPU per dialogue and peak resident set at two build sizes
 *   (default 100 and 1,000 dialogues of a synthetic corpus of short dialogues, ./bench-machines-scale.ts).
 *
 * Each run starts from an empty cache (./bench-machines-run.ts). Reported per run: wall time,
 * throughput against one machine, CPU seconds per machine (cpuacct), the coordinator's CPU per
 * dialogue, and Redis commands and bytes per dialogue. The coordinator's marginal CPU per dialogue
 * comes from two builds of different sizes (what the fixed start-up costs leave), and from it how many
 * GPU speech servers one coordinator keeps pace with. Without root or cgroups the section says so in
 * one line; the groups are removed whatever happens (also on SIGINT and SIGTERM).
 */
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sharedDirectory } from '../pipeline/config.ts';
import { runStoppable } from '../pipeline/run/stop-signals.ts';
import { PACKAGE_ROOT } from '../pipeline/storage/package-files.ts';
import { cgroupLayout, CgroupMachines } from './bench-cgroups.ts';
import { GPU_REAL_TIME_FACTOR } from './bench-machines-gpu.ts';
import {
  killRunningProcesses,
  MACHINE_CORES,
  runOnMachines,
  type MachineRun,
  type MachineRunPlan,
} from './bench-machines-run.ts';
import {
  flatAtScale,
  formatScaleRuns,
  scaleSentence,
  scaleSizes,
  SCALE_TURNS_PER_CONVERSATION,
  SCALE_WORKERS,
  writeScaleCorpus,
} from './bench-machines-scale.ts';
import type { BenchOptions, SectionFindings } from './bench-section.ts';

export type { MachineRun } from './bench-machines-run.ts';

/**
 * How many GPU speech servers one coordinator keeps pace with: the dialogues a second its core
 * merges (1 / marginal CPU s per dialogue) over the dialogues a second one GPU synthesizes (1 /
 * (speech seconds per dialogue × real-time factor)); a dialogue's speech is taken as its base
 * dialogue's length (an upper bound: the pauses between turns are not synthesized).
 * @param coordinatorSecondsPerDialogue marginal coordinator CPU seconds per dialogue
 * @throws RangeError when an argument is not positive
 */
export function gpusPerCoordinator(
  coordinatorSecondsPerDialogue: number,
  speechSecondsPerDialogue: number,
  realTimeFactor = GPU_REAL_TIME_FACTOR,
): number {
  if (!(coordinatorSecondsPerDialogue > 0) || !(speechSecondsPerDialogue > 0) || !(realTimeFactor > 0))
    throw new RangeError('the coordinator cost, speech length and real-time factor must be positive');
  return (speechSecondsPerDialogue * realTimeFactor) / coordinatorSecondsPerDialogue;
}

/** The engine and scoring of a run, as the table names them. */
function kindOf(run: MachineRun): string {
  return `${run.scored ? 'scored' : 'unscored'}${run.gpu ? ', GPU stand-in' : ''}`;
}

/** The one-machine run of the same scoring and engine as `run` among `runs`, if there is one. */
export function baselineOf(run: MachineRun, runs: readonly MachineRun[]): MachineRun | undefined {
  return runs.find((other) => other.workers === 0 && other.scored === run.scored && !!other.gpu === !!run.gpu);
}

/** Dialogues per wall second of `run` over those of `baseline` (throughput against one machine). */
export function throughputRatio(run: MachineRun, baseline: MachineRun): number {
  return baseline.wallSeconds / baseline.dialogues / (run.wallSeconds / run.dialogues);
}

/** The section's table, one row per run, ratios against the one-machine run of the same scoring and engine. */
export function formatMachineRuns(runs: readonly MachineRun[]): string {
  const rows = runs.map((run) => {
    const baseline = baselineOf(run, runs);
    const ratio = baseline ? throughputRatio(run, baseline).toFixed(2) : '–';
    return `| ${kindOf(run)} | ${run.workers === 0 ? 'one process' : `coordinator + ${run.workers} worker${run.workers > 1 ? 's' : ''}`} | ${run.dialogues} | ${run.wallSeconds.toFixed(1)} | ${ratio} × | ${run.coordinatorCpuSeconds.toFixed(2)} | ${run.workerCpuSeconds.map((seconds) => seconds.toFixed(1)).join(', ') || '–'} | ${run.redisCpuSeconds.toFixed(2)} | ${run.speechServerCpuSeconds === undefined ? '–' : run.speechServerCpuSeconds.toFixed(1)} | ${((run.coordinatorCpuSeconds * 1000) / run.dialogues).toFixed(0)} | ${run.workers === 0 ? '–' : (run.redisCommands / run.dialogues).toFixed(0)} | ${run.workers === 0 ? '–' : (run.redisBytes / run.dialogues / 1024).toFixed(1)} |`;
  });
  return [
    '| scoring | machines | dialogues | wall s | throughput / one machine | coordinator CPU s | worker CPU s | Redis CPU s | speech servers CPU s | coordinator CPU ms / dialogue | Redis commands / dialogue | Redis KiB / dialogue |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

/** Redis's target: commands per dialogue, whatever the number of workers. */
export const REDIS_COMMANDS_PER_DIALOGUE_TARGET = 50;

/** What the scale-out page's block states. */
export interface MachinesBlockFigures {
  /** Coordinator CPU ms per added dialogue (real dialogues). */
  marginalMilliseconds: number;
  /** GPUs one coordinator keeps pace with; Infinity when the marginal cost was not positive. */
  gpus: number;
  baseDialogueSeconds: number;
  /** The queued runs of the section (not the scale builds), each beside its baseline. */
  runs: readonly MachineRun[];
  /** The scale builds' sentence ({@link scaleSentence}). */
  scale: string;
  /** The scale builds: their Redis figures. */
  scaleRuns: readonly MachineRun[];
}

/** `N worker(s) R ×` for each of `runs` against its baseline in `all`. */
function ratioList(runs: readonly MachineRun[], all: readonly MachineRun[]): string {
  return runs
    .map(
      (run) =>
        `${run.workers} worker${run.workers > 1 ? 's' : ''} ${throughputRatio(run, baselineOf(run, all)!).toFixed(2)} ×`,
    )
    .join(', ');
}

/** The text between the scale-out page's markers. */
export function machinesBlock(figures: MachinesBlockFigures): string {
  const queued = figures.runs.filter((run) => run.workers > 0 && baselineOf(run, figures.runs));
  const perDialogue = (run: MachineRun) =>
    `${(run.redisCommands / run.dialogues).toFixed(0)} commands and ${(run.redisBytes / run.dialogues / 1024).toFixed(1)} KiB`;
  const redis = [
    ...queued
      .filter((run) => !run.scored && !run.gpu)
      .map((run) => `${run.workers} worker${run.workers > 1 ? 's' : ''} ${perDialogue(run)}`),
    ...figures.scaleRuns.map(
      (run) => `${run.dialogues.toLocaleString('en')} short dialogues on ${run.workers} workers ${perDialogue(run)}`,
    ),
  ];
  return [
    `On machines of ${MACHINE_CORES} core each, with the offline engine: the coordinator spends ${figures.marginalMilliseconds.toFixed(1)} CPU ms per added dialogue, so with dialogues of ${figures.baseDialogueSeconds.toFixed(0)} s at a real-time factor of ${GPU_REAL_TIME_FACTOR} one coordinator keeps pace with **about ${Number.isFinite(figures.gpus) ? figures.gpus.toFixed(0) : 'any number of'} GPUs**.`,
    `Throughput against one machine: ${ratioList(
      queued.filter((run) => !run.scored && !run.gpu),
      figures.runs,
    )}; scored, ${ratioList(
      queued.filter((run) => run.scored),
      figures.runs,
    )}; with a GPU stand-in per machine (loopback CosyVoice2 at RTF ${GPU_REAL_TIME_FACTOR}), ${ratioList(
      queued.filter((run) => run.gpu),
      figures.runs,
    )}.`,
    `Redis per dialogue (target ≤ ${REDIS_COMMANDS_PER_DIALOGUE_TARGET} commands): ${redis.join('; ')}.`,
    figures.scale,
  ].join('\n');
}

/** The page whose measured block the section rewrites, and the block's markers. */
const SCALE_OUT_PAGE = path.join(PACKAGE_ROOT, 'docs', 'scale-out.md');
const BLOCK_START = '<!-- bench:machines -->';
const BLOCK_END = '<!-- /bench:machines -->';

/**
 * `page` with the text between the section's markers replaced by `block`.
 * @throws Error naming the page when it lacks the markers
 */
export function replaceMeasuredBlock(page: string, block: string, file = SCALE_OUT_PAGE): string {
  const start = page.indexOf(BLOCK_START);
  const end = page.indexOf(BLOCK_END);
  if (start < 0 || end < start) throw new Error(`${file}: no ${BLOCK_START} … ${BLOCK_END} block to rewrite`);
  return `${page.slice(0, start + BLOCK_START.length)}\n${block.trim()}\n${page.slice(end)}`;
}

/** The runs of the section, in order, for `dialogues` dialogues per unscored run. */
export function machinesPlan(dialogues: number): Omit<MachineRunPlan, 'corpus'>[] {
  const scoredDialogues = Math.max(3, Math.round(dialogues / 4));
  return [
    { label: 'one', dialogues, workers: 0, scored: false },
    ...[1, 2, 4].map((workers) => ({ label: `n${workers}`, dialogues, workers, scored: false })),
    { label: 'half', dialogues: Math.round(dialogues / 2), workers: 2, scored: false },
    { label: 'scored-one', dialogues: scoredDialogues, workers: 0, scored: true },
    { label: 'scored-n3', dialogues: scoredDialogues, workers: 3, scored: true },
    { label: 'gpu-one', dialogues, workers: 0, scored: false, gpu: true },
    ...[1, 2, 4].map((workers) => ({ label: `gpu-n${workers}`, dialogues, workers, scored: false, gpu: true })),
  ];
}

/** Bench section `machines` (module comment). */
export async function simulatedMachinesSection(options: BenchOptions, findings: SectionFindings): Promise<string> {
  const layout = cgroupLayout();
  if (layout.version === null) return `Skipped: ${layout.reason}.`;
  const corpus = options.corpus ?? path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');
  const dialogues = Math.max(8, options.limit);
  const sizes = scaleSizes(options.scaleDialogues);
  const machines = new CgroupMachines(layout, `duplexsynth-bench-${process.pid}`);
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-machines-corpus-'));
  const runs: MachineRun[] = [];
  const scaleRuns: MachineRun[] = [];
  // stopped (Ctrl-C, kill): the runs' processes, the groups and the folder go before the process ends
  // (pipeline/run/stop-signals.ts runs the undo actions, then exits with the signal's code)
  await runStoppable('bench', 'the report of the sections before machines', async (scope) => {
    scope.onStop(() => {
      killRunningProcesses();
      machines.removeAllNow();
      rmSync(scratch, { recursive: true, force: true });
    });
    try {
      const scaleCorpus = await writeScaleCorpus(corpus, scratch, sizes[1]);
      const plan: (MachineRunPlan & { scale?: boolean })[] = [
        ...machinesPlan(dialogues).map((run) => ({ ...run, corpus })),
        ...sizes.map((size) => ({
          label: `scale-${size}`,
          dialogues: size,
          workers: SCALE_WORKERS,
          scored: false,
          corpus: scaleCorpus,
          scale: true,
        })),
      ];
      for (const { scale, ...run } of plan) {
        console.log(
          `bench machines: ${run.label} (${run.dialogues} dialogues, ${run.workers} workers${run.scored ? ', scored' : ''}${run.gpu ? ', GPU stand-ins' : ''})`,
        );
        (scale ? scaleRuns : runs).push(await runOnMachines(machines, run));
        await machines.removeAll();
      }
    } finally {
      await machines.removeAll();
      await rm(scratch, { recursive: true, force: true });
    }
  });
  const byLabel = (label: string) => runs.find((run) => run.label === label)!;
  const half = byLabel('half');
  const full = byLabel('n2');
  const one = byLabel('one');
  const marginal = (full.coordinatorCpuSeconds - half.coordinatorCpuSeconds) / (full.dialogues - half.dialogues);
  const gpus = marginal > 0 ? gpusPerCoordinator(marginal, full.baseDialogueSeconds) : Number.POSITIVE_INFINITY;
  const flat = flatAtScale(scaleRuns[0]!, scaleRuns[1]!);
  for (const run of runs.filter((entry) => entry.workers > 0 && entry.label !== 'half')) {
    findings.figures.push({
      measure: `simulated machines (${MACHINE_CORES} core each), ${run.scored ? 'scored' : 'unscored'}${run.gpu ? `, a loopback CosyVoice2 server (RTF ${GPU_REAL_TIME_FACTOR}) per machine` : ''}, coordinator + ${run.workers} workers: dialogues per wall s`,
      value: (run.dialogues / run.wallSeconds).toFixed(3),
      ratio: `${throughputRatio(run, baselineOf(run, runs)!).toFixed(2)} × one machine`,
    });
  }
  const redisRuns = [
    ...runs
      .filter((entry) => !entry.scored && !entry.gpu && /^n\d$/.test(entry.label))
      .map((run) => ({ run, short: '' })),
    ...scaleRuns.map((run) => ({ run, short: `${SCALE_TURNS_PER_CONVERSATION}-turn ` })),
  ];
  for (const { run, short } of redisRuns)
    findings.figures.push({
      measure: `simulated machines: Redis commands per dialogue, ${run.workers} workers, ${run.dialogues} ${short}dialogues (target ≤ ${REDIS_COMMANDS_PER_DIALOGUE_TARGET})`,
      value: (run.redisCommands / run.dialogues).toFixed(0),
      ratio: `${(run.redisBytes / run.dialogues / 1024).toFixed(1)} KiB per dialogue`,
    });
  findings.figures.push({
    measure: 'simulated machines: coordinator CPU ms per added dialogue (between two build sizes)',
    value: (marginal * 1000).toFixed(1),
    ratio: `${((marginal * 1000 * one.dialogues) / one.coordinatorCpuSeconds / 1000).toFixed(3)} × a dialogue's CPU in one process`,
  });
  findings.figures.push({
    measure: `simulated machines: GPU speech servers one coordinator keeps pace with (RTF ${GPU_REAL_TIME_FACTOR})`,
    value: Number.isFinite(gpus) ? gpus.toFixed(0) : 'unbounded',
  });
  findings.figures.push(
    {
      measure: `simulated machines: coordinator CPU ms per dialogue, ${sizes[1]} against ${sizes[0]} ${SCALE_TURNS_PER_CONVERSATION}-turn dialogues`,
      value: flat.cpuMillisecondsPerDialogue[1].toFixed(1),
      ratio: `${flat.cpuPerDialogueRatio.toFixed(2)} × at ${sizes[0]} dialogues`,
    },
    {
      measure: `simulated machines: coordinator peak RSS MiB, ${sizes[1]} against ${sizes[0]} ${SCALE_TURNS_PER_CONVERSATION}-turn dialogues`,
      value: flat.peakResidentMebibytes[1] === null ? 'not measured' : flat.peakResidentMebibytes[1].toFixed(0),
      ...(flat.peakResidentRatio === null
        ? {}
        : { ratio: `${flat.peakResidentRatio.toFixed(2)} × at ${sizes[0]} dialogues` }),
    },
  );
  const block = machinesBlock({
    marginalMilliseconds: marginal * 1000,
    gpus,
    baseDialogueSeconds: full.baseDialogueSeconds,
    runs,
    scale: scaleSentence(flat, sizes),
    scaleRuns,
  });
  const page = await readFile(SCALE_OUT_PAGE, 'utf8').catch(() => null);
  if (page !== null) await writeFile(SCALE_OUT_PAGE, replaceMeasuredBlock(page, block));
  return [
    `Each process in its own cgroup of ${MACHINE_CORES} core (cgroup v${layout.version}): redis-server, the coordinator, every worker; the one-process build in one such machine. TopiOCQA dev, English, offline engine (espeak-ng), barge-in variants; scored runs with DNSMOS every 9.01 s; GPU stand-in runs with a loopback CosyVoice2 server process per worker (one for the one process) outside the quotas, sleeping ${GPU_REAL_TIME_FACTOR} × each answer's audio. Every run from an empty cache.`,
    '',
    formatMachineRuns(runs),
    '',
    `Coordinator CPU per added dialogue: (${full.coordinatorCpuSeconds.toFixed(2)} − ${half.coordinatorCpuSeconds.toFixed(2)}) s / (${full.dialogues} − ${half.dialogues}) = ${(marginal * 1000).toFixed(1)} ms. ` +
      `GPUs one coordinator keeps pace with = speech seconds per dialogue × RTF / coordinator CPU s per dialogue = ${full.baseDialogueSeconds.toFixed(1)} × ${GPU_REAL_TIME_FACTOR} / ${marginal.toFixed(4)} ≈ ${Number.isFinite(gpus) ? gpus.toFixed(0) : 'unbounded'} (a base dialogue's length taken as its speech).`,
    '',
    `Flat at scale: a synthetic corpus of the dev conversations over and over, each cut to its first ${SCALE_TURNS_PER_CONVERSATION} turns, coordinator + ${SCALE_WORKERS} workers, offline engine, unscored; the coordinator under GNU time for its peak resident set.`,
    '',
    formatScaleRuns(scaleRuns),
    '',
    scaleSentence(flat, sizes),
  ].join('\n');
}
