/**
 * Loopback speech servers in a worker thread, so a benchmark's client and servers do not share one
 * event loop (real servers run elsewhere; in one thread, server work would delay the client's timers
 * and the other way round). Start it with {@link startLoopbackServersInWorker}.
 */
import { readFileSync } from 'node:fs';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { startCosyVoiceLoopbackServer } from './cosyvoice-loopback-server.ts';
import { loopbackSpeech, type LoopbackServer, type LoopbackSpeechSource, type LoopbackVoice } from './loopback-speech.ts';
import { startOpenAiSpeechLoopbackServer } from './openai-speech-loopback-server.ts';
import { startTritonLoopbackServer } from './triton-loopback-server.ts';

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
 * tsx).
 *
 * @returns the server URLs and a handle to read their counters and close them.
 * @throws Error when the worker fails to start its servers.
 */
export async function startLoopbackServersInWorker(options: LoopbackWorkerOptions): Promise<LoopbackWorkerServers> {
  // The worker loads this TypeScript file through tsx's loader (a package dependency), registered in the worker itself.
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
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

async function runWorker(options: LoopbackWorkerOptions): Promise<void> {
  await Promise.all(options.warmTexts.map((text) => loopbackSpeech(text, 24000, options.voice)));
  const servers: LoopbackServer[] = [];
  const settings = { latencyMs: options.latencyMs, capacity: options.capacity, voice: options.voice };
  const speechSettings = { realTimeFactor: options.realTimeFactor ?? 0, speech: options.speech ?? 'espeak-ng' };
  for (let index = 0; index < options.servers; index++) {
    if (options.protocol === 'cosyvoice2') servers.push(await startCosyVoiceLoopbackServer({ ...settings, ...speechSettings }));
    else if (options.protocol === 'cosyvoice2-triton') servers.push(await startTritonLoopbackServer({ ...settings, ...speechSettings }));
    else servers.push(await startOpenAiSpeechLoopbackServer(settings));
  }
  parentPort?.on('message', async (message: Command) => {
    if (message.command === 'reset') {
      for (const server of servers) server.requests.length = 0;
      parentPort?.postMessage('reset');
    } else if (message.command === 'cpu') {
      let seconds: number | null = null;
      try {
        const stat = readFileSync('/proc/thread-self/stat', 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).trim().split(/\s+/);
        seconds = (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime (fields 14, 15) in USER_HZ ticks
      } catch {
        // not Linux
      }
      parentPort?.postMessage(seconds);
    } else if (message.command === 'report') {
      parentPort?.postMessage(
        servers.map((server) => ({
          url: server.url,
          requests: server.requests.length,
          busyMilliseconds: server.requests.reduce((sum, request) => sum + (request.finishedAt - request.startedAt), 0),
          peakOpenRequests: server.peakOpenRequests(),
          firstStartedAt: server.requests.length ? performance.timeOrigin + Math.min(...server.requests.map((request) => request.startedAt)) : null,
          lastFinishedAt: server.requests.length ? performance.timeOrigin + Math.max(...server.requests.map((request) => request.finishedAt)) : null,
        })),
      );
    } else {
      await Promise.all(servers.map((server) => server.close()));
      parentPort?.postMessage('closed');
    }
  });
  parentPort?.postMessage({ urls: servers.map((server) => server.url) });
}

if (!isMainThread && (workerData as LoopbackWorkerOptions | undefined)?.protocol) {
  void runWorker(workerData as LoopbackWorkerOptions);
}
