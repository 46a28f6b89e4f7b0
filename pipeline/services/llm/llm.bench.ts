/**
 * LLM throughput benchmark: N dialogue translations through the whole client stack (text layer →
 * retry → endpoint queue → the real @google/genai or openai client) against a loopback server with a
 * fixed service latency and capacity. The server can serve at most `capacity / latency` requests per
 * second; the benchmark reports the achieved rate as a fraction of that (goal ≥ 95 %) and the peak
 * memory. A measurement, nothing asserted.
 *
 * Baseline, measured in the same run: bare `fetch` calls with the same bodies through a p-queue of the
 * same concurrency (no SDK, no text layer), so the machine's own per-request cost (loopback HTTP, which
 * slows when the cores are shared) is told apart from the stack's. With `queueConcurrency` above the server capacity,
 * one request per slot waits at the server, hiding the client's per-request cost (as a server with a
 * request queue, e.g. vLLM, allows).
 *
 * Run alone: `npx tsx pipeline/services/llm/llm.bench.ts [requests] [capacity] [latencyMilliseconds]`;
 * from `npm run bench`: call {@link runLanguageModelThroughputBench} and print {@link formatThroughputReport}.
 */
import { pathToFileURL } from 'node:url';
import PQueue from 'p-queue';
import { createDialogueTextBackend } from './backend-settings.ts';
import { EndpointPools } from '../endpoint-pool.ts';
import { GEMINI_LOOPBACK_API_KEY, startGeminiLoopbackServer } from './testing/gemini-loopback-server.ts';
import { startOpenAILoopbackServer } from './testing/openai-loopback-server.ts';

/** Options of {@link runLanguageModelThroughputBench}. */
export interface ThroughputBenchOptions {
  /** Which client; default `gemini`. */
  backend?: 'gemini' | 'openai-compatible';
  /** Requests (one translation each); default 120. */
  requests?: number;
  /** Requests the server serves at once; the queue's concurrency is set to the same. Default 4. */
  capacity?: number;
  /** Service time per request, milliseconds; default 300. */
  latencyMilliseconds?: number;
  /** Turns per dialogue (request size); default 8. */
  turnsPerDialogue?: number;
  /** The endpoint queue's concurrency; default `capacity`. */
  queueConcurrency?: number;
}

/** What {@link runLanguageModelThroughputBench} measured. */
export interface ThroughputBenchResult {
  backend: 'gemini' | 'openai-compatible';
  requests: number;
  capacity: number;
  latencyMilliseconds: number;
  queueConcurrency: number;
  /** Wall-clock time of all requests, seconds. */
  elapsedSeconds: number;
  /** Requests per second achieved. */
  achievedRequestsPerSecond: number;
  /** `capacity / latency`, requests per second. */
  maximumRequestsPerSecond: number;
  /** achieved / maximum. */
  fractionOfMaximum: number;
  /** The bare-fetch baseline's achieved / maximum. */
  baselineFractionOfMaximum: number;
  /** Most requests the server saw at once. */
  serverPeakConcurrency: number;
  /** Peak resident set size during the run, bytes. */
  peakResidentBytes: number;
  /** Peak JavaScript heap in use during the run, bytes. */
  peakHeapUsedBytes: number;
}

/**
 * Runs the benchmark once.
 *
 * @param options backend, request count, server capacity and latency (milliseconds), dialogue size.
 * @returns the measurements.
 * @throws when a request fails (none should: the server answers every request correctly).
 */
export async function runLanguageModelThroughputBench(
  options: ThroughputBenchOptions = {},
): Promise<ThroughputBenchResult> {
  const backendName = options.backend ?? 'gemini';
  const requests = options.requests ?? 120;
  const capacity = options.capacity ?? 4;
  const latencyMilliseconds = options.latencyMilliseconds ?? 300;
  const turnsPerDialogue = options.turnsPerDialogue ?? 8;
  const queueConcurrency = options.queueConcurrency ?? capacity;
  const turns = Array.from({ length: turnsPerDialogue }, (_, index) => ({
    turnNumber: index + 1,
    question: `What happened in the part number ${index + 1} of the story?`.replace(/\d+/g, 'seven'),
    answer: index % 5 === 4 ? null : 'It was a long and rather interesting part of the story, with many people in it.',
  }));

  const serverOptions = { latencyMs: latencyMilliseconds, capacity };
  const server =
    backendName === 'gemini'
      ? await startGeminiLoopbackServer(serverOptions)
      : await startOpenAILoopbackServer(serverOptions);
  const environment = {
    baseDirectory: process.cwd(),
    environmentVariables: { GEMINI_API_KEY: GEMINI_LOOPBACK_API_KEY },
    endpointPools: new EndpointPools(),
  };
  const shared = {
    throughput: { concurrency: queueConcurrency },
    retry: { maxRetries: 2, initialDelaySeconds: 0.05, maxDelaySeconds: 1 },
  };
  const backend =
    backendName === 'gemini'
      ? createDialogueTextBackend({ backend: 'gemini', baseUrl: server.url, ...shared }, environment)
      : createDialogueTextBackend(
          { backend: 'openai-compatible', baseUrl: `${server.url}/v1`, model: 'loopback-model', ...shared },
          environment,
        );

  let peakResidentBytes = 0;
  let peakHeapUsedBytes = 0;
  const sample = (): void => {
    const usage = process.memoryUsage();
    peakResidentBytes = Math.max(peakResidentBytes, usage.rss);
    peakHeapUsedBytes = Math.max(peakHeapUsedBytes, usage.heapUsed);
  };
  const sampler = setInterval(sample, 20);
  try {
    // Warm-up, not timed: one round of requests through the whole stack, so lazily loaded modules,
    // JIT compilation and the first connections are not billed to the measured run (the baseline
    // below runs after the stack, already warm, and gets its own untimed round too).
    const warmUp = Array.from({ length: queueConcurrency }, (_, index) => ({
      dialogueId: `warm_up_${index}`,
      sourceLanguage: 'en' as const,
      targetLanguage: 'ja' as const,
      turns,
    }));
    await Promise.all(warmUp.map((input) => backend.translate(input)));
    const warmUpRequests = server.requests.length;
    sample();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: requests }, (_, index) =>
        backend.translate({ dialogueId: `bench_${index}`, sourceLanguage: 'en', targetLanguage: 'ja', turns }),
      ),
    );
    const elapsedSeconds = (performance.now() - started) / 1000;
    sample();
    const serverPeakConcurrency = server.statistics.peakConcurrency;

    // Baseline: the recorded request bodies again, by bare fetch, same concurrency.
    const sent = server.requests
      .slice(warmUpRequests, warmUpRequests + requests)
      .map((request) => JSON.stringify(request.body));
    const path = backendName === 'gemini' ? '/v1beta/models/gemma-4-31b-it:generateContent' : '/v1/chat/completions';
    const queue = new PQueue({ concurrency: queueConcurrency });
    const post = (body: string) =>
      queue.add(async () => {
        const response = await fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-goog-api-key': GEMINI_LOOPBACK_API_KEY },
          body,
        });
        await response.json();
      });
    await Promise.all(sent.slice(0, queueConcurrency).map(post));
    const baselineStarted = performance.now();
    await Promise.all(sent.map(post));
    const baselineSeconds = (performance.now() - baselineStarted) / 1000;
    const maximumRequestsPerSecond = capacity / (latencyMilliseconds / 1000);
    const achievedRequestsPerSecond = requests / elapsedSeconds;
    return {
      backend: backendName,
      requests,
      capacity,
      latencyMilliseconds,
      queueConcurrency,
      elapsedSeconds,
      achievedRequestsPerSecond,
      maximumRequestsPerSecond,
      fractionOfMaximum: achievedRequestsPerSecond / maximumRequestsPerSecond,
      baselineFractionOfMaximum: sent.length / baselineSeconds / maximumRequestsPerSecond,
      serverPeakConcurrency,
      peakResidentBytes,
      peakHeapUsedBytes,
    };
  } finally {
    clearInterval(sampler);
    await server.close();
  }
}

/**
 * Formats results as a Markdown table.
 *
 * @param results one or more runs.
 * @returns the Markdown text.
 */
export function formatThroughputReport(results: readonly ThroughputBenchResult[]): string {
  const mebibytes = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
  return [
    '| client | requests | server capacity × latency | queue concurrency | achieved requests/s | maximum requests/s | fraction | bare-fetch baseline fraction | server peak concurrency | peak RSS MiB | peak heap MiB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (result) =>
        `| ${result.backend} | ${result.requests} | ${result.capacity} × ${result.latencyMilliseconds} ms | ${result.queueConcurrency} | ${result.achievedRequestsPerSecond.toFixed(2)} | ` +
        `${result.maximumRequestsPerSecond.toFixed(2)} | ${(100 * result.fractionOfMaximum).toFixed(1)} % | ${(100 * result.baselineFractionOfMaximum).toFixed(1)} % | ${result.serverPeakConcurrency} | ` +
        `${mebibytes(result.peakResidentBytes)} | ${mebibytes(result.peakHeapUsedBytes)} |`,
    ),
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [requests, capacity, latencyMilliseconds] = process.argv.slice(2).map(Number);
  const options = {
    ...(requests !== undefined && Number.isFinite(requests) ? { requests } : {}),
    ...(capacity !== undefined && Number.isFinite(capacity) ? { capacity } : {}),
    ...(latencyMilliseconds !== undefined && Number.isFinite(latencyMilliseconds) ? { latencyMilliseconds } : {}),
  };
  const capacityUsed = options.capacity ?? 4;
  const results = [
    await runLanguageModelThroughputBench({ ...options, backend: 'gemini' }),
    await runLanguageModelThroughputBench({ ...options, backend: 'openai-compatible' }),
    await runLanguageModelThroughputBench({ ...options, backend: 'gemini', queueConcurrency: capacityUsed + 1 }),
  ];
  console.log(formatThroughputReport(results));
}
