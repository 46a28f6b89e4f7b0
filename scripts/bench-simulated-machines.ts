/**
 * Bench section `machines`: the queued build on simulated machines. Each process (redis-server, the
 * coordinator, every worker; or the one process of a local build) runs in its own CPU-quota cgroup
 * (./bench-cgroups.ts), a "machine" of a fraction of a core, so that one host shows how the build
 * scales over many machines: N = 1, 2, 4 worker machines against one process in one machine of the
 * same size (unscored), and N = 3 against one machine with quality scoring on (DNSMOS every 9.01 s).
 * Each run starts from an empty cache. Reported per run: wall time, throughput against one machine,
 * CPU seconds per machine (cpuacct), the coordinator's CPU per dialogue, and Redis commands and bytes
 * per dialogue. The coordinator's marginal CPU per dialogue comes from two builds of different sizes
 * (what the fixed start-up costs leave), and from it how many GPU speech servers one coordinator
 * keeps pace with. Without root or cgroups the section says so in one line; the groups are removed
 * whatever happens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { sharedDirectory } from '../pipeline/config.ts';
import { PACKAGE_ROOT } from '../pipeline/storage/package-files.ts';
import { cgroupLayout, CgroupMachines, type CgroupMachine } from './bench-cgroups.ts';
import type { BenchOptions, SectionFindings } from './bench-section.ts';

/** Cores of one simulated machine. */
const MACHINE_CORES = 0.3;
/** A CosyVoice2 server's real-time factor on a GPU (synthesis seconds per second of speech), for the GPU estimate. */
const GPU_REAL_TIME_FACTOR = 0.03;

/** One run. */
export interface MachineRun {
  label: string;
  scored: boolean;
  /** 0: one process (a local build). */
  workers: number;
  dialogues: number;
  wallSeconds: number;
  /** CPU seconds of the coordinator's machine (or the one process's). */
  coordinatorCpuSeconds: number;
  workerCpuSeconds: number[];
  redisCpuSeconds: number;
  redisCommands: number;
  redisBytes: number;
  /** Mean seconds of a base dialogue (summary.json `meanSeconds` of the base dataset). */
  baseDialogueSeconds: number;
}

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

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** A process started inside `machine` (it joins the cgroup before it execs, so all its CPU is counted). */
function spawnIn(machine: CgroupMachine, command: string, args: string[], log: string[]): ChildProcess {
  const join = machine.procsFiles.map((file) => `echo $$ > ${file}`).join(' && ');
  const child = spawn('sh', ['-c', `${join} && exec "$0" "$@"`, command, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: PACKAGE_ROOT,
  });
  child.stdout!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  return child;
}

const exited = (child: ChildProcess) =>
  new Promise<number>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.on('exit', (code) => resolve(code ?? 1)),
  );

async function waitFor(log: string[], pattern: RegExp, seconds: number): Promise<void> {
  const until = Date.now() + seconds * 1000;
  while (!pattern.test(log.join(''))) {
    if (Date.now() > until) throw new Error(`bench machines: no ${pattern} within ${seconds} s:\n${log.join('')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One run in its own machines and folder. @throws Error with the processes' output when a build fails */
async function runOnMachines(
  machines: CgroupMachines,
  run: { label: string; dialogues: number; workers: number; scored: boolean; corpus: string },
): Promise<MachineRun> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-machines-'));
  const cli = path.join(PACKAGE_ROOT, 'scripts', 'duplexsynth-dev.js');
  const children: ChildProcess[] = [];
  try {
    const config = path.join(scratch, 'build.yaml');
    const out = path.join(scratch, 'out');
    await writeFile(
      config,
      [
        'name: machines',
        'seed: 7',
        'languages: [en]',
        `corpus: { path: ${run.corpus}, limit: ${run.dialogues} }`,
        `output: { directory: ${out}, cacheDirectory: ${path.join(scratch, 'cache')} }`,
        'llm: { rewrite: { backend: rules }, translate: { backend: none } }',
        'tts: { en: { backend: espeak-ng } }',
        run.scored ? 'quality: { enabled: true, dnsmos: { hopSeconds: 9.01 } }' : 'quality: { enabled: false }',
        '',
      ].join('\n'),
    );
    const coordinatorMachine = await machines.machine(`${run.label}-coordinator`, MACHINE_CORES);
    const workerMachines: CgroupMachine[] = [];
    let redisMachine: CgroupMachine | null = null;
    let redis: Redis | null = null;
    let queue: string | null = null;
    if (run.workers > 0) {
      redisMachine = await machines.machine(`${run.label}-redis`, MACHINE_CORES);
      const port = await freePort();
      const redisLog: string[] = [];
      children.push(
        spawnIn(
          redisMachine,
          'redis-server',
          ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'],
          redisLog,
        ),
      );
      await waitFor(redisLog, /Ready to accept connections/, 30);
      redis = new Redis({ port, host: '127.0.0.1' });
      queue = `redis://127.0.0.1:${port}/0`;
      const workerLogs: string[][] = [];
      for (let index = 0; index < run.workers; index++) {
        const machine = await machines.machine(`${run.label}-worker${index + 1}`, MACHINE_CORES);
        workerMachines.push(machine);
        const log: string[] = [];
        workerLogs.push(log);
        children.push(
          spawnIn(
            machine,
            process.execPath,
            [cli, 'worker', '--queue', queue, '--config', config, '--name', `w${index + 1}`],
            log,
          ),
        );
      }
      for (const log of workerLogs) await waitFor(log, /waiting for a build/, 120);
      await redis.config('RESETSTAT');
    }
    const log: string[] = [];
    const started = performance.now();
    const coordinator = spawnIn(
      coordinatorMachine,
      process.execPath,
      [cli, 'build', '--config', config, '--plain', ...(queue ? ['--queue', queue] : [])],
      log,
    );
    children.push(coordinator);
    const code = await exited(coordinator);
    const wallSeconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`bench machines: ${run.label}: the build exited with ${code}:\n${log.join('')}`);
    let redisCommands = 0;
    let redisBytes = 0;
    if (redis) {
      const stats = await redis.info('stats');
      const field = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(stats)?.[1] ?? 0);
      redisCommands = field('total_commands_processed');
      redisBytes = field('total_net_input_bytes') + field('total_net_output_bytes');
      redis.disconnect();
    }
    for (const child of children.slice(1)) child.kill('SIGTERM');
    await Promise.all(children.slice(1).map(exited));
    children[0]?.kill('SIGTERM');
    await exited(children[0]!);
    const summary = JSON.parse(await readFile(path.join(out, 'summary.json'), 'utf8')) as {
      datasets: { variant: string; meanSeconds: number }[];
    };
    return {
      label: run.label,
      scored: run.scored,
      workers: run.workers,
      dialogues: run.dialogues,
      wallSeconds,
      coordinatorCpuSeconds: await coordinatorMachine.cpuSeconds(),
      workerCpuSeconds: await Promise.all(workerMachines.map((machine) => machine.cpuSeconds())),
      redisCpuSeconds: redisMachine ? await redisMachine.cpuSeconds() : 0,
      redisCommands,
      redisBytes,
      baseDialogueSeconds: summary.datasets.find((dataset) => dataset.variant === 'default')!.meanSeconds,
    };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The section's table, one row per run, ratios against the one-machine run of the same scoring. */
export function formatMachineRuns(runs: readonly MachineRun[]): string {
  const rows = runs.map((run) => {
    const baseline = runs.find((other) => other.scored === run.scored && other.workers === 0);
    const ratio = baseline
      ? (baseline.wallSeconds / baseline.dialogues / (run.wallSeconds / run.dialogues)).toFixed(2)
      : '–';
    return `| ${run.scored ? 'scored' : 'unscored'} | ${run.workers === 0 ? 'one process' : `coordinator + ${run.workers} worker${run.workers > 1 ? 's' : ''}`} | ${run.dialogues} | ${run.wallSeconds.toFixed(1)} | ${ratio} × | ${run.coordinatorCpuSeconds.toFixed(2)} | ${run.workerCpuSeconds.map((seconds) => seconds.toFixed(1)).join(', ') || '–'} | ${run.redisCpuSeconds.toFixed(2)} | ${((run.coordinatorCpuSeconds * 1000) / run.dialogues).toFixed(0)} | ${run.workers === 0 ? '–' : (run.redisCommands / run.dialogues).toFixed(0)} | ${run.workers === 0 ? '–' : (run.redisBytes / run.dialogues / 1024).toFixed(1)} |`;
  });
  return [
    '| scoring | machines | dialogues | wall s | throughput / one machine | coordinator CPU s | worker CPU s | Redis CPU s | coordinator CPU ms / dialogue | Redis commands / dialogue | Redis KiB / dialogue |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
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

/** Bench section `machines` (module comment). */
export async function simulatedMachinesSection(options: BenchOptions, findings: SectionFindings): Promise<string> {
  const layout = cgroupLayout();
  if (layout.version === null) return `Skipped: ${layout.reason}.`;
  const corpus = options.corpus ?? path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');
  const dialogues = Math.max(8, options.limit);
  const scoredDialogues = Math.max(6, Math.round(dialogues / 4));
  const machines = new CgroupMachines(layout, `duplexsynth-bench-${process.pid}`);
  // stopped (Ctrl-C, kill): the groups go, then the process ends as the signal would have ended it
  const removeOnExit = (signal: NodeJS.Signals) =>
    void machines.removeAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  process.once('SIGINT', removeOnExit);
  process.once('SIGTERM', removeOnExit);
  const runs: MachineRun[] = [];
  try {
    const plan = [
      { label: 'one', dialogues, workers: 0, scored: false },
      ...[1, 2, 4].map((workers) => ({ label: `n${workers}`, dialogues, workers, scored: false })),
      { label: 'half', dialogues: Math.round(dialogues / 2), workers: 2, scored: false },
      { label: 'scored-one', dialogues: scoredDialogues, workers: 0, scored: true },
      { label: 'scored-n3', dialogues: scoredDialogues, workers: 3, scored: true },
    ];
    for (const run of plan) {
      console.log(
        `bench machines: ${run.label} (${run.dialogues} dialogues, ${run.workers} workers${run.scored ? ', scored' : ''})`,
      );
      runs.push(await runOnMachines(machines, { ...run, corpus }));
      await machines.removeAll();
    }
  } finally {
    await machines.removeAll();
    process.off('SIGINT', removeOnExit);
    process.off('SIGTERM', removeOnExit);
  }
  const half = runs.find((run) => run.label === 'half')!;
  const full = runs.find((run) => run.label === 'n2')!;
  const marginal = (full.coordinatorCpuSeconds - half.coordinatorCpuSeconds) / (full.dialogues - half.dialogues);
  const gpus = marginal > 0 ? gpusPerCoordinator(marginal, full.baseDialogueSeconds) : Number.POSITIVE_INFINITY;
  const one = runs.find((run) => run.label === 'one')!;
  for (const run of runs.filter((entry) => entry.workers > 0 && entry.label !== 'half')) {
    const baseline = runs.find((other) => other.scored === run.scored && other.workers === 0)!;
    findings.figures.push({
      measure: `simulated machines (${MACHINE_CORES} core each), ${run.scored ? 'scored' : 'unscored'}, coordinator + ${run.workers} workers: dialogues per wall s`,
      value: (run.dialogues / run.wallSeconds).toFixed(3),
      ratio: `${(baseline.wallSeconds / baseline.dialogues / (run.wallSeconds / run.dialogues)).toFixed(2)} × one machine`,
    });
  }
  findings.figures.push({
    measure: 'simulated machines: coordinator CPU ms per added dialogue (between two build sizes)',
    value: (marginal * 1000).toFixed(1),
    ratio: `${((marginal * 1000 * one.dialogues) / one.coordinatorCpuSeconds / 1000).toFixed(3)} × a dialogue's CPU in one process`,
  });
  findings.figures.push({
    measure: `simulated machines: GPU speech servers one coordinator keeps pace with (RTF ${GPU_REAL_TIME_FACTOR})`,
    value: Number.isFinite(gpus) ? gpus.toFixed(0) : 'unbounded',
  });
  const scored = runs.find((run) => run.label === 'scored-n3')!;
  const scoredOne = runs.find((run) => run.label === 'scored-one')!;
  const ratioOf = (run: MachineRun, baseline: MachineRun) =>
    (baseline.wallSeconds / baseline.dialogues / (run.wallSeconds / run.dialogues)).toFixed(2);
  const block = [
    `On machines of ${MACHINE_CORES} core each, with the offline engine: the coordinator spends ${(marginal * 1000).toFixed(1)} CPU ms per added dialogue, so with dialogues of ${full.baseDialogueSeconds.toFixed(0)} s at a real-time factor of ${GPU_REAL_TIME_FACTOR} one coordinator keeps pace with **about ${Number.isFinite(gpus) ? gpus.toFixed(0) : 'any number of'} GPUs**.`,
    `Throughput against one machine: ${runs
      .filter((run) => !run.scored && run.workers > 0 && run.label !== 'half')
      .map((run) => `${run.workers} worker${run.workers > 1 ? 's' : ''} ${ratioOf(run, one)} ×`)
      .join(
        ', ',
      )}; scored, 3 workers ${ratioOf(scored, scoredOne)} ×. Redis: ${(full.redisCommands / full.dialogues).toFixed(0)} commands and ${(full.redisBytes / full.dialogues / 1024).toFixed(1)} KiB per dialogue.`,
  ].join('\n');
  const page = await readFile(SCALE_OUT_PAGE, 'utf8').catch(() => null);
  if (page !== null) await writeFile(SCALE_OUT_PAGE, replaceMeasuredBlock(page, block));
  return [
    `Each process in its own cgroup of ${MACHINE_CORES} core (cgroup v${layout.version}): redis-server, the coordinator, every worker; the one-process build in one such machine. TopiOCQA dev, English, offline engine (espeak-ng), barge-in variants; scored runs with DNSMOS every 9.01 s. Every run from an empty cache.`,
    '',
    formatMachineRuns(runs),
    '',
    `Coordinator CPU per added dialogue: (${full.coordinatorCpuSeconds.toFixed(2)} − ${half.coordinatorCpuSeconds.toFixed(2)}) s / (${full.dialogues} − ${half.dialogues}) = ${(marginal * 1000).toFixed(1)} ms. ` +
      `GPUs one coordinator keeps pace with = speech seconds per dialogue × RTF / coordinator CPU s per dialogue = ${full.baseDialogueSeconds.toFixed(1)} × ${GPU_REAL_TIME_FACTOR} / ${marginal.toFixed(4)} ≈ ${Number.isFinite(gpus) ? gpus.toFixed(0) : 'unbounded'} (a base dialogue's length taken as its speech).`,
  ].join('\n');
}
