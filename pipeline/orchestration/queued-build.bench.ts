/**
 * Benchmark of the queued build (`npm run bench -- --sections queue`): the same build made by one
 * process (`runBuild`, the baseline, measured in the same run) and through a redis-server started
 * here with 1, 2 and 4 `duplexsynth worker` processes, with the offline engine (espeak-ng) and against
 * 4 loopback CosyVoice2 servers. Each run starts from an empty cache. Reported per run: wall time and
 * its ratio to the one-process build, and the coordinator's and Redis's cost per dialogue: the
 * coordinator process's CPU ms (its polling and its local pass from the cache), its main thread's CPU
 * (the local pass, run alongside the workers, reads their renderings from the cache and writes them:
 * what bounds the coordinator's rate), the wall seconds left after the last job was done, Redis commands (`INFO commandstats`, reset before the run) and bytes in and
 * out of Redis (`INFO stats`), the 1-minute load average at the run's end, and what the shared cache
 * folder holds afterwards per stage (bytes per hour of dialogue audio, beside the datasets' own).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { loadConfigFile, sharedDirectory } from '../config.ts';
import { PACKAGE_ROOT } from '../storage/package-files.ts';
import { startLoopbackServersInWorker } from '../services/tts/testing/loopback-worker.ts';
import { writePromptFixture } from '../services/tts/testing/prompt-fixtures.ts';
import { runBuild, type BuildReport } from './build.ts';
import { mainThreadCpuSeconds } from './build-saturation.bench.ts';
import { runQueuedBuild } from './queued-build.ts';

/** One run of the benchmark. */
export interface QueuedRun {
  engine: string;
  /** 0: the one-process build. */
  workers: number;
  wallSeconds: number;
  /** CPU seconds of the coordinator's process (this one), all threads (for the CosyVoice2 runs the loopback servers' thread too). */
  coordinatorCpuSeconds: number;
  /** CPU seconds of every process of the run: this one, its engine processes and the workers (with theirs); null without /proc. */
  allCpuSeconds: number | null;
  /**
   * CPU seconds of the coordinator's main thread over the whole build (/proc/self/task): its local
   * pass runs alongside the workers; for the one-process build, the whole build. null without /proc.
   */
  localPassCpuSeconds: number | null;
  /** Wall seconds from "queue: every job is done" to the build's end (the commit and what is left of the local pass); 0 for the one-process build. */
  tailSeconds: number;
  /** Wall seconds from spawning the worker processes until each waits for a build (not in wallSeconds); 0 for the one-process build. */
  workerStartSeconds: number;
  /** 1-minute load average at the run's end. */
  loadAverage: number;
  /** Seconds of dialogue audio written (base and barge-in variant). */
  audioSeconds: number;
  /** Bytes in the cache folder per stage folder (`synthesize-speech`, `place-timeline`, …) after the run, and the datasets' bytes (`data/`). */
  cacheBytes: Record<string, number>;
  outputBytes: number;
  /** Redis commands (calls summed over INFO commandstats). */
  redisCommands: number;
  /** Bytes into and out of Redis (INFO stats total_net_input_bytes + total_net_output_bytes). */
  redisBytes: number;
  dialogues: number;
}

/**
 * Resolves once the worker process says it waits for a build (its stderr line "waiting for a build");
 * keeps reading its stderr afterwards so the pipe never fills.
 * @throws Error when the worker ends first or does not say so within 180 s
 */
function workerWaiting(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let said = '';
    const timer = setTimeout(
      () => reject(new Error(`worker ${child.pid} did not wait for a build within 180 s: ${said.slice(-500)}`)),
      180_000,
    );
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => {
      if (said.length < 10_000) said += text;
      if (said.includes('waiting for a build')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker ${child.pid} ended (${code}) before waiting for a build: ${said.slice(-500)}`));
    });
  });
}

/** A free loopback TCP port (for the bench's and the tests' own redis-server). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function sumCommandStats(info: string): number {
  return [...info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
}

/** Bytes of the files below `directory` (0 when it does not exist). */
async function folderBytes(directory: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true }).catch(() => [])) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}

function netBytes(info: string): number {
  return (
    Number(/total_net_input_bytes:(\d+)/.exec(info)?.[1] ?? 0) +
    Number(/total_net_output_bytes:(\d+)/.exec(info)?.[1] ?? 0)
  );
}

/**
 * Run the benchmark.
 * @param options dialogues of the real TopiOCQA dev set (default 8), worker counts (default 1, 2, 4)
 */
export async function benchmarkQueuedBuild(
  options: {
    dialogues?: number;
    workerCounts?: number[];
    corpus?: string;
    /** CPU seconds so far of the finished child processes (espeak-ng, the workers once ended), null where not measurable (scripts/bench.ts reads /proc/self/stat). */
    childrenCpuSeconds?: () => number | null;
  } = {},
): Promise<QueuedRun[]> {
  const childrenCpu = options.childrenCpuSeconds ?? (() => null);
  const dialogues = options.dialogues ?? 8;
  const workerCounts = options.workerCounts ?? [1, 2, 4];
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-queue-bench-'));
  const port = await freePort();
  const redis = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', scratch, '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}/0`;
  const servers = await startLoopbackServersInWorker({
    protocol: 'cosyvoice2',
    servers: 4,
    latencyMs: 0,
    capacity: 1,
    voice: {},
    warmTexts: [],
    realTimeFactor: 0.02,
    speech: 'speech-like',
  });
  const runs: QueuedRun[] = [];
  try {
    let client: Redis | null = null;
    for (let tries = 0; tries < 50 && client === null; tries += 1) {
      const candidate = new Redis({ port, lazyConnect: true, retryStrategy: () => null });
      candidate.on('error', () => {});
      try {
        await candidate.connect();
        client = candidate;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    if (!client) throw new Error('redis-server did not start');
    const transcripts = [
      'I grew up near the sea and I still love the sound of waves.',
      'My favourite season is autumn because the light is so soft.',
    ];
    const prompts = await Promise.all(
      transcripts.map((transcript, index) =>
        writePromptFixture(scratch, transcript, { pitch: 30 + 40 * index, minimumSeconds: 3 }),
      ),
    );
    const corpus = options.corpus ?? path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');
    const engines: [string, unknown][] = [
      ['offline (espeak-ng)', { en: { backend: 'espeak-ng' } }],
      [
        '4 loopback CosyVoice2 servers (RTF 0.02)',
        {
          en: {
            backend: 'cosyvoice2',
            service: { urls: servers.urls, sampleRate: 24000, concurrencyPerEndpoint: 1 },
            voices: {
              user: { mode: 'zero-shot', promptWav: prompts[0]!.path, promptText: transcripts[0] },
              system: { mode: 'zero-shot', promptWav: prompts[1]!.path, promptText: transcripts[1] },
            },
          },
        },
      ],
    ];
    let serial = 0;
    for (const [engine, tts] of engines) {
      for (const workers of [0, ...workerCounts]) {
        serial += 1;
        const file = path.join(scratch, `config-${serial}.yaml`);
        // JSON is YAML: the workers read the same file
        await writeFile(
          file,
          JSON.stringify({
            name: `bench-${serial}`,
            seed: 1,
            languages: ['en'],
            corpus: { path: corpus, limit: dialogues },
            output: {
              directory: path.join(scratch, `out-${serial}`),
              cacheDirectory: path.join(scratch, `cache-${serial}`),
            },
            datasets: { en: 'topiocqa', bargeIn: true },
            llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
            tts,
            synthesis: { concurrency: 4, resampleQuality: 'speex' },
            quality: { enabled: false },
          }),
        );
        const config = await loadConfigFile(file);
        await client.flushall();
        await client.config('RESETSTAT');
        const children: ChildProcess[] = [];
        for (let index = 0; index < workers; index += 1) {
          children.push(
            spawn(
              process.execPath,
              [
                path.join(PACKAGE_ROOT, 'scripts', 'duplexsynth-dev.js'),
                'worker',
                '--queue',
                url,
                '--config',
                file,
                '--concurrency',
                '2',
              ],
              { stdio: ['ignore', 'ignore', 'pipe'] },
            ),
          );
        }
        // Workers are long-lived (started once per machine, before or after the build): their start
        // (loading the TypeScript sources) is timed apart, and the build's clock starts once every
        // worker waits for a build.
        const startedWorkers = performance.now();
        await Promise.all(children.map((child) => workerWaiting(child))).catch((error: unknown) => {
          for (const child of children) child.kill('SIGKILL');
          throw error;
        });
        const workerStartSeconds = (performance.now() - startedWorkers) / 1000;
        const cpuBefore = process.cpuUsage();
        const childrenBefore = childrenCpu();
        const mainBefore = mainThreadCpuSeconds();
        const started = performance.now();
        let lastJobDoneAt = Number.NaN;
        let report: BuildReport;
        if (workers === 0) report = await runBuild(config);
        else {
          report = await runQueuedBuild(config, {
            queue: url,
            log: (line) => {
              if (line.startsWith('queue: every job is done')) lastJobDoneAt = performance.now();
            },
          });
        }
        const wallSeconds = (performance.now() - started) / 1000;
        const cpu = process.cpuUsage(cpuBefore);
        const mainAfter = mainThreadCpuSeconds();
        const localPassCpuSeconds = mainAfter !== null && mainBefore !== null ? mainAfter - mainBefore : null;
        const tailSeconds = workers === 0 ? 0 : (performance.now() - lastJobDoneAt) / 1000;
        const cacheBytes: Record<string, number> = {};
        for (const stage of await readdir(config.output.cacheDirectory))
          cacheBytes[stage] = await folderBytes(path.join(config.output.cacheDirectory, stage));
        const outputBytes = await folderBytes(path.join(config.output.directory, 'data'));
        const commands = sumCommandStats(await client.info('commandstats'));
        const bytes = netBytes(await client.info('stats'));
        for (const child of children) child.kill('SIGTERM');
        await Promise.all(
          children.map(
            (child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.on('exit', resolve))),
          ),
        );
        // the ended workers and every engine process, all of whose CPU counts from here (the workers idled after the build)
        const childrenAfter = childrenCpu();
        const allCpuSeconds =
          childrenBefore === null || childrenAfter === null
            ? null
            : (cpu.user + cpu.system) / 1e6 + childrenAfter - childrenBefore;
        runs.push({
          engine,
          workers,
          wallSeconds,
          coordinatorCpuSeconds: (cpu.user + cpu.system) / 1e6,
          allCpuSeconds,
          localPassCpuSeconds,
          tailSeconds,
          workerStartSeconds,
          loadAverage: os.loadavg()[0]!,
          audioSeconds: report.audioSeconds,
          cacheBytes,
          outputBytes,
          redisCommands: commands,
          redisBytes: bytes,
          dialogues,
        });
      }
    }
    client.disconnect();
  } finally {
    redis.kill('SIGTERM');
    await servers.close();
    await rm(scratch, { recursive: true, force: true });
  }
  return runs;
}

/**
 * The runs as a Markdown table: throughput ratio to the one-process build of the same engine,
 * coordinator (process, and its main thread) and Redis cost per dialogue, the seconds after the last job, load average;
 * then the shared cache's bytes per hour of dialogue audio, by stage, beside the datasets'.
 */
export function formatQueuedBuildBenchmark(runs: QueuedRun[]): string {
  const lines = [
    '| engine | processes | wall s | throughput / one process | CPU s, all processes | cores busy (CPU s / wall s) | worker start s (before the clock) | load (1 min) at end | coordinator CPU ms per dialogue | coordinator main-thread CPU ms per dialogue | wall s after the last job | Redis commands per dialogue | Redis bytes per dialogue |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const perDialogue = (seconds: number | null, run: QueuedRun) =>
    seconds === null ? 'n/a' : ((seconds * 1000) / run.dialogues).toFixed(0);
  for (const run of runs) {
    const baseline = runs.find((other) => other.engine === run.engine && other.workers === 0)!;
    lines.push(
      `| ${run.engine} | ${run.workers === 0 ? 'one process (runBuild)' : `${run.workers} workers + coordinator`} | ${run.wallSeconds.toFixed(1)} | ${(baseline.wallSeconds / run.wallSeconds).toFixed(2)} | ${run.allCpuSeconds === null ? 'n/a' : run.allCpuSeconds.toFixed(1)} | ${run.allCpuSeconds === null ? 'n/a' : (run.allCpuSeconds / run.wallSeconds).toFixed(2)} | ${run.workers === 0 ? '–' : run.workerStartSeconds.toFixed(1)} | ${run.loadAverage.toFixed(1)} | ${run.workers === 0 ? '(all work)' : perDialogue(run.coordinatorCpuSeconds, run)} | ${run.workers === 0 ? `(whole build: ${perDialogue(run.localPassCpuSeconds, run)})` : perDialogue(run.localPassCpuSeconds, run)} | ${run.workers === 0 ? '–' : run.tailSeconds.toFixed(1)} | ${run.workers === 0 ? '–' : (run.redisCommands / run.dialogues).toFixed(0)} | ${run.workers === 0 ? '–' : Math.round(run.redisBytes / run.dialogues)} |`,
    );
  }
  // what N processes can give on this machine at best: its cores over the cores one process already keeps busy
  lines.push('');
  for (const baseline of runs.filter((run) => run.workers === 0 && run.allCpuSeconds !== null)) {
    const busy = baseline.allCpuSeconds! / baseline.wallSeconds;
    const best = runs
      .filter((run) => run.engine === baseline.engine && run.workers > 0)
      .sort((a, b) => a.wallSeconds - b.wallSeconds)[0];
    lines.push(
      `- ${baseline.engine}: the one-process build keeps ${busy.toFixed(2)} of this machine's ${os.availableParallelism()} cores busy (its threads and engine processes), so any number of workers here can give at most ${(os.availableParallelism() / busy).toFixed(2)} × its throughput${best ? `; the best queued run gave ${(baseline.wallSeconds / best.wallSeconds).toFixed(2)} × (${best.workers} workers)` : ''}; on machines of their own, N workers add N × the one-process throughput, less the coordinator (its main-thread CPU per dialogue against the one-process build's, above).`,
    );
  }
  lines.push(
    '',
    '| engine | audio h | MB per audio hour: synthesized speech (cache) | rendered dialogues (cache, place-timeline) | datasets (data/) |',
    '|---|---:|---:|---:|---:|',
  );
  for (const run of runs.filter((candidate) => candidate.workers === 0)) {
    const hours = run.audioSeconds / 3600;
    const perHour = (bytes: number | undefined) => ((bytes ?? 0) / 1e6 / hours).toFixed(0);
    lines.push(
      `| ${run.engine} | ${hours.toFixed(3)} | ${perHour(run.cacheBytes['synthesize-speech'])} | ${perHour(run.cacheBytes['place-timeline'])} | ${perHour(run.outputBytes)} |`,
    );
  }
  return lines.join('\n');
}
