/**
 * Loopback speech servers in a worker thread, so a benchmark's client and servers do not share one
 * event loop (real servers run elsewhere; in one thread, server work would delay the client's timers
 * and the other way round). Start it with {@link startLoopbackServersInWorker}, or in a child process
 * with {@link startLoopbackServersInProcess} (nothing of the servers in the benchmark's process).
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { startCosyVoiceLoopbackServer } from './cosyvoice-loopback-server.ts';
import {
  loopbackSpeech,
  type LoopbackServer,
  type LoopbackSpeechSource,
  type LoopbackVoice,
} from './loopback-speech.ts';
import { startOpenAiSpeechLoopbackServer } from './openai-speech-loopback-server.ts';
import { startTritonLoopbackServer } from './triton-loopback-server.ts';
import { RUNNING_COMPILED, TYPESCRIPT_LOADER_ARGUMENTS } from '../../../storage/package-files.ts';

/** What the worker is asked to start. */
export interface LoopbackWorkerOptions {
  protocol: 'cosyvoice2' | 'cosyvoice2-triton' | 'openai-speech';
  servers: number;
  /** Processing time per request, milliseconds. */
  latencyMs: number;
  /** Requests each server processes at once. */
  capacity: number;
  voice: Partial<LoopbackVoice>;
  /** Texts whose speech is made before the servers start (so no request waits for espeak-ng). */
  warmTexts: string[];
  /** Added per request to `latencyMs`: this factor x the answer's audio duration (CosyVoice2 and Triton servers). Default 0. */
  realTimeFactor?: number;
  /** What the servers speak (CosyVoice2 and Triton servers); default espeak-ng. */
  speech?: LoopbackSpeechSource;
}

/** Per server, after the run. */
export interface LoopbackWorkerServerReport {
  url: string;
  requests: number;
  /** Sum of the requests' processing times (capacity slot held), milliseconds. */
  busyMilliseconds: number;
  peakOpenRequests: number;
  /** performance.timeOrigin + performance.now() (ms since the epoch) of the first processing start and the last end since the reset; null without requests. */
  firstStartedAt: number | null;
  lastFinishedAt: number | null;
}

/** Handle of the worker's servers. */
export interface LoopbackWorkerServers {
  urls: string[];
  /** Forgets the requests so far (call after a warm-up). */
  resetCounters(): Promise<void>;
  /** Per-server counters since the last reset. */
  report(): Promise<LoopbackWorkerServerReport[]>;
  /**
   * CPU seconds (user + system) the servers' thread has used so far, from /proc/thread-self/stat;
   * null where /proc is not available. Lets a benchmark count the servers' CPU apart from the client's.
   */
  threadCpuSeconds(): Promise<number | null>;
  /** Closes the servers and ends the worker. */
  close(): Promise<void>;
}

type Command = { command: 'reset' } | { command: 'report' } | { command: 'cpu' } | { command: 'close' };

/**
 * Starts the loopback servers in a worker thread (this module is the worker's entry, loaded through
 * tsx from the sources, as is when compiled).
 *
 * @returns the server URLs and a handle to read their counters and close them.
 * @throws Error when the worker fails to start its servers.
 */
export async function startLoopbackServersInWorker(options: LoopbackWorkerOptions): Promise<LoopbackWorkerServers> {
  // From the sources the worker loads this TypeScript file through tsx's loader (a package dependency),
  // registered in the worker itself; compiled, it imports this module's .js directly.
  const bootstrap = RUNNING_COMPILED
    ? `import(${JSON.stringify(import.meta.url)})`
    : `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(bootstrap, { eval: true, workerData: options });
  const next = (): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      worker.once('message', (message: unknown) => {
        worker.off('error', onError);
        resolve(message);
      });
      worker.once('error', onError);
    });
  const ask = async (command: Command): Promise<unknown> => {
    const answer = next();
    worker.postMessage(command);
    return answer;
  };
  const { urls } = (await next()) as { urls: string[] };
  return {
    urls,
    resetCounters: async () => void (await ask({ command: 'reset' })),
    report: async () => (await ask({ command: 'report' })) as LoopbackWorkerServerReport[],
    threadCpuSeconds: async () => (await ask({ command: 'cpu' })) as number | null,
    close: async () => {
      await ask({ command: 'close' });
      await worker.terminate();
    },
  };
}

/** Environment variable that carries the options to a loopback server process ({@link startLoopbackServersInProcess}). */
const PROCESS_OPTIONS_VARIABLE = 'DUPLEXSYNTH_LOOPBACK_SERVER_OPTIONS';

/**
 * Starts the loopback servers in a child process (this module, run through tsx or compiled), so a benchmark's
 * process holds only the client: its CPU time, threads and garbage collection are the client's alone
 * (in a worker thread, the servers' garbage collection runs on the same process's V8 background
 * threads). Same handle as {@link startLoopbackServersInWorker}; `threadCpuSeconds` is then the whole
 * server process's CPU (all its threads).
 * @throws Error when the process fails to start its servers.
 */
export async function startLoopbackServersInProcess(options: LoopbackWorkerOptions): Promise<LoopbackWorkerServers> {
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: [...TYPESCRIPT_LOADER_ARGUMENTS],
    env: { ...process.env, [PROCESS_OPTIONS_VARIABLE]: JSON.stringify(options) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = (): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null): void =>
        reject(new Error(`the loopback server process ended (exit code ${code}) before answering`));
      child.once('message', (message: unknown) => {
        child.off('exit', onExit);
        resolve(message);
      });
      child.once('exit', onExit);
    });
  const ask = async (command: Command): Promise<unknown> => {
    const answer = next();
    child.send(command);
    return answer;
  };
  const { urls } = (await next()) as { urls: string[] };
  return {
    urls,
    resetCounters: async () => void (await ask({ command: 'reset' })),
    report: async () => (await ask({ command: 'report' })) as LoopbackWorkerServerReport[],
    threadCpuSeconds: async () => (await ask({ command: 'cpu' })) as number | null,
    close: async () => {
      await ask({ command: 'close' });
      child.disconnect();
    },
  };
}

/** The channel to the parent: a worker thread's port or a forked process's IPC. */
interface ParentChannel {
  on(listener: (message: Command) => void): void;
  send(message: unknown): void;
  /** CPU seconds of what runs the servers: this thread (worker) or this process (all threads). */
  cpuSeconds(): number | null;
}

async function runWorker(options: LoopbackWorkerOptions, channel: ParentChannel): Promise<void> {
  await Promise.all(options.warmTexts.map((text) => loopbackSpeech(text, 24000, options.voice)));
  const servers: LoopbackServer[] = [];
  const settings = { latencyMs: options.latencyMs, capacity: options.capacity, voice: options.voice };
  const speechSettings = { realTimeFactor: options.realTimeFactor ?? 0, speech: options.speech ?? 'espeak-ng' };
  for (let index = 0; index < options.servers; index++) {
    if (options.protocol === 'cosyvoice2')
      servers.push(await startCosyVoiceLoopbackServer({ ...settings, ...speechSettings }));
    else if (options.protocol === 'cosyvoice2-triton')
      servers.push(await startTritonLoopbackServer({ ...settings, ...speechSettings }));
    else servers.push(await startOpenAiSpeechLoopbackServer(settings));
  }
  channel.on(async (message: Command) => {
    if (message.command === 'reset') {
      for (const server of servers) server.requests.length = 0;
      channel.send('reset');
    } else if (message.command === 'cpu') {
      channel.send(channel.cpuSeconds());
    } else if (message.command === 'report') {
      channel.send(
        servers.map((server) => ({
          url: server.url,
          requests: server.requests.length,
          busyMilliseconds: server.requests.reduce((sum, request) => sum + (request.finishedAt - request.startedAt), 0),
          peakOpenRequests: server.peakOpenRequests(),
          firstStartedAt: server.requests.length
            ? performance.timeOrigin + Math.min(...server.requests.map((request) => request.startedAt))
            : null,
          lastFinishedAt: server.requests.length
            ? performance.timeOrigin + Math.max(...server.requests.map((request) => request.finishedAt))
            : null,
        })),
      );
    } else {
      await Promise.all(servers.map((server) => server.close()));
      channel.send('closed');
    }
  });
  channel.send({ urls: servers.map((server) => server.url) });
}

/** This thread's CPU seconds (utime + stime of /proc/thread-self/stat, USER_HZ ticks); null without /proc. */
function thisThreadCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .trim()
      .split(/\s+/);
    return (Number(fields[11]) + Number(fields[12])) / 100; // fields 14 and 15
  } catch {
    return null;
  }
}

if (!isMainThread && (workerData as LoopbackWorkerOptions | undefined)?.protocol) {
  void runWorker(workerData as LoopbackWorkerOptions, {
    on: (listener) => parentPort?.on('message', listener),
    send: (message) => parentPort?.postMessage(message),
    cpuSeconds: thisThreadCpuSeconds,
  });
} else if (isMainThread && process.send && process.env[PROCESS_OPTIONS_VARIABLE]) {
  const options = JSON.parse(process.env[PROCESS_OPTIONS_VARIABLE]) as LoopbackWorkerOptions;
  process.on('disconnect', () => process.exit(0));
  void runWorker(options, {
    on: (listener) => process.on('message', listener),
    send: (message) => process.send?.(message),
    cpuSeconds: () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1e6;
    },
  });
}
