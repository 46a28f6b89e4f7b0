/**
 * One run of the `machines` bench section (./bench-simulated-machines.ts): a build, local or queued,
 * whose every process runs in a CPU-quota cgroup of its own (./bench-cgroups.ts): redis-server, the
 * coordinator, each worker; or the one process of a local build. With `gpu`, each worker (or the one
 * process) has a loopback CosyVoice2 server process of its own (./bench-machines-gpu.ts) outside every
 * quota. The coordinator runs under GNU time (`/usr/bin/time`, where present) for its peak resident set.
 * Each run starts from an empty cache in a folder of its own, removed afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { currentStopScope } from '../pipeline/run/stop-signals.ts';
import { PACKAGE_ROOT } from '../pipeline/storage/package-files.ts';
import type { CgroupMachine, CgroupMachines } from './bench-cgroups.ts';
import { startSpeechStandIns, type SpeechStandIns } from './bench-machines-gpu.ts';

/** Cores of one simulated machine. */
export const MACHINE_CORES = 0.3;

/** GNU time, which reports a command's peak resident set (`%M`, KiB) when the command ends. */
const GNU_TIME = '/usr/bin/time';
const PEAK_RESIDENT_LINE = 'bench-machines peak resident KiB';

/** One run. */
export interface MachineRun {
  label: string;
  scored: boolean;
  /** Each worker (or the one process) synthesized through a loopback CosyVoice2 server of its own; absent: espeak-ng. */
  gpu?: boolean;
  /** 0: one process (a local build). */
  workers: number;
  dialogues: number;
  wallSeconds: number;
  /** CPU seconds of the coordinator's machine (or the one process's). */
  coordinatorCpuSeconds: number;
  /** Peak resident set of the coordinator (or the one process), KiB; null without GNU time. */
  coordinatorPeakResidentKibibytes?: number | null;
  workerCpuSeconds: number[];
  redisCpuSeconds: number;
  redisCommands: number;
  redisBytes: number;
  /** CPU seconds of the loopback CosyVoice2 server processes (all of them); absent without `gpu`. */
  speechServerCpuSeconds?: number;
  /** Mean seconds of a base dialogue (summary.json `meanSeconds` of the base dataset). */
  baseDialogueSeconds: number;
}

/** What one run builds. */
export interface MachineRunPlan {
  label: string;
  dialogues: number;
  workers: number;
  scored: boolean;
  /** TopiOCQA JSON. */
  corpus: string;
  /** A loopback CosyVoice2 server per worker (or for the one process) instead of espeak-ng. */
  gpu?: boolean;
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

/** The processes of the runs that have not ended yet. */
const running = new Set<ChildProcess>();

/** Send `signal` to the process group of `child` (GNU time and the coordinator under it; else the one process). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    child.kill(signal);
  }
}

/** End every process of the runs at once (SIGKILL; the bench is being stopped); never throws. */
export function killRunningProcesses(): void {
  for (const child of running) signalGroup(child, 'SIGKILL');
}

/**
 * A process started inside `machine` (it joins the cgroup before it execs, so all its CPU is counted),
 * in a process group of its own, which {@link signalGroup} ends whole.
 */
function spawnIn(machine: CgroupMachine, command: string, args: string[], log: string[]): ChildProcess {
  const join = machine.procsFiles.map((file) => `echo $$ > ${file}`).join(' && ');
  const child = spawn('sh', ['-c', `${join} && exec "$0" "$@"`, command, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: PACKAGE_ROOT,
    detached: true,
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
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

/**
 * The build config of a run, YAML (JSON values are YAML flow values).
 * @param tts the `tts.en` settings; default the offline engine (espeak-ng)
 */
export function machineRunConfig(
  run: Pick<MachineRunPlan, 'corpus' | 'dialogues' | 'scored'>,
  folders: { output: string; cache: string },
  tts: Record<string, unknown> = { backend: 'espeak-ng' },
): string {
  return [
    'name: machines',
    'seed: 7',
    'languages: [en]',
    `corpus: ${JSON.stringify({ path: run.corpus, limit: run.dialogues })}`,
    `output: ${JSON.stringify({ directory: folders.output, cacheDirectory: folders.cache })}`,
    'llm: { rewrite: { backend: rules }, translate: { backend: none } }',
    `tts: ${JSON.stringify({ en: tts })}`,
    run.scored ? 'quality: { enabled: true, dnsmos: { hopSeconds: 9.01 } }' : 'quality: { enabled: false }',
    '',
  ].join('\n');
}

/** The peak resident set GNU time printed into `log` (KiB), or null when it printed none. */
export function peakResidentFromLog(log: string): number | null {
  const match = new RegExp(`${PEAK_RESIDENT_LINE} (\\d+)`).exec(log);
  return match ? Number(match[1]) : null;
}

/**
 * One run in its own machines and folder (module comment).
 * @throws Error with the processes' output when a build fails or a process does not start
 */
export async function runOnMachines(machines: CgroupMachines, run: MachineRunPlan): Promise<MachineRun> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-machines-'));
  // a stop (pipeline/run/stop-signals.ts; undo actions run latest first) ends the processes, then removes the folder
  const scope = currentStopScope();
  const withdrawals = scope ? [scope.removeOnStop(scratch), scope.onStop(killRunningProcesses)] : [];
  const cli = path.join(PACKAGE_ROOT, 'scripts', 'duplexsynth-dev.js');
  const children: ChildProcess[] = [];
  let standIns: SpeechStandIns | null = null;
  try {
    const out = path.join(scratch, 'out');
    const folders = { output: out, cache: path.join(scratch, 'cache') };
    // one config per process: they differ only in the speech server's URL, which the config hash leaves out
    const configs: string[] = [];
    if (run.gpu) standIns = await startSpeechStandIns(scratch, Math.max(1, run.workers));
    for (let index = 0; index < Math.max(1, run.workers); index++) {
      const file = path.join(scratch, `build-${index + 1}.yaml`);
      await writeFile(file, machineRunConfig(run, folders, standIns?.ttsSettings(index)));
      configs.push(file);
    }
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
            [cli, 'worker', '--queue', queue, '--config', configs[index]!, '--name', `w${index + 1}`],
            log,
          ),
        );
      }
      for (const log of workerLogs) await waitFor(log, /waiting for a build/, 120);
      await redis.config('RESETSTAT');
    }
    await standIns?.resetCpu();
    const log: string[] = [];
    const build = [cli, 'build', '--config', configs[0]!, '--plain', ...(queue ? ['--queue', queue] : [])];
    const timed = existsSync(GNU_TIME);
    const started = performance.now();
    const coordinator = timed
      ? spawnIn(coordinatorMachine, GNU_TIME, ['-f', `${PEAK_RESIDENT_LINE} %M`, process.execPath, ...build], log)
      : spawnIn(coordinatorMachine, process.execPath, build, log);
    children.push(coordinator);
    const code = await exited(coordinator);
    const wallSeconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`bench machines: ${run.label}: the build exited with ${code}:\n${log.join('')}`);
    const speechServerCpuSeconds = standIns ? await standIns.cpuSeconds() : undefined;
    let redisCommands = 0;
    let redisBytes = 0;
    if (redis) {
      const stats = await redis.info('stats');
      const field = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(stats)?.[1] ?? 0);
      redisCommands = field('total_commands_processed');
      redisBytes = field('total_net_input_bytes') + field('total_net_output_bytes');
      redis.disconnect();
    }
    const others = children.filter((child) => child !== coordinator);
    // the workers first, then redis-server (the first child of a queued run)
    for (const child of others.slice(1)) signalGroup(child, 'SIGTERM');
    await Promise.all(others.slice(1).map(exited));
    if (others[0]) {
      signalGroup(others[0], 'SIGTERM');
      await exited(others[0]);
    }
    const summary = JSON.parse(await readFile(path.join(out, 'summary.json'), 'utf8')) as {
      datasets: { variant: string; meanSeconds: number }[];
    };
    return {
      label: run.label,
      scored: run.scored,
      ...(run.gpu ? { gpu: true, speechServerCpuSeconds } : {}),
      workers: run.workers,
      dialogues: run.dialogues,
      wallSeconds,
      coordinatorCpuSeconds: await coordinatorMachine.cpuSeconds(),
      coordinatorPeakResidentKibibytes: peakResidentFromLog(log.join('')),
      workerCpuSeconds: await Promise.all(workerMachines.map((machine) => machine.cpuSeconds())),
      redisCpuSeconds: redisMachine ? await redisMachine.cpuSeconds() : 0,
      redisCommands,
      redisBytes,
      baseDialogueSeconds: summary.datasets.find((dataset) => dataset.variant === 'default')!.meanSeconds,
    };
  } finally {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) signalGroup(child, 'SIGKILL');
    await standIns?.close().catch(() => {});
    await rm(scratch, { recursive: true, force: true });
    for (const withdraw of withdrawals) withdraw();
  }
}
