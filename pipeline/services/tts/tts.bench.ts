/**
 * Throughput of the remote TTS clients: N utterances through the real client (endpoint pool,
 * retries, checks) against loopback servers of fixed latency and capacity (e.g. 4 servers x 1
 * request at a time x 300 ms), compared with what those servers can serve at most
 * (servers x capacity / latency). Goal: >= 95 % of the maximum. Also reports the peak resident memory.
 *
 * Run: `npx tsx pipeline/services/tts/tts.bench.ts [utterances] [servers] [latencyMs] [backend]`
 * (defaults 240, 4, 300, cosyvoice2). The loopback servers run in a worker thread (their own event
 * loop, as remote servers would); their speech comes from espeak-ng, prepared before the clock starts,
 * so each server spends `latencyMs` per request, parsing included. Resident memory covers both threads.
 */
import { rm } from 'node:fs/promises';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import PQueue from 'p-queue';
import { createCosyVoice2Synthesizer } from './cosyvoice2-fastapi.ts';
import { createCosyVoice2TritonSynthesizer } from './cosyvoice2-triton.ts';
import { createOpenAiSpeechSynthesizer } from './openai-speech.ts';
import type { RemoteSpeechSynthesizer, RemoteSynthesisStatistics } from './remote-synthesizer.ts';
import { startLoopbackServersInWorker } from './testing/loopback-worker.ts';
import { fixtureDirectory, writePromptFixture } from './testing/prompt-fixtures.ts';

/** Backends the benchmark can drive. */
export type BenchmarkBackend = 'cosyvoice2' | 'cosyvoice2-triton' | 'openai-speech';

/** Settings of {@link benchmarkSpeechServices}. */
export interface SpeechServiceBenchmarkOptions {
  backend: BenchmarkBackend;
  /** Utterances synthesized. Default 240. */
  utterances: number;
  /** Loopback servers. Default 4. */
  servers: number;
  /** Requests each server processes at once (and the client's concurrency per endpoint). Default 1. */
  capacity: number;
  /** Processing time per request, milliseconds. Default 300. */
  latencyMilliseconds: number;
  /**
   * Utterances the caller keeps in flight (as the synthesize stage's queue does); default twice the
   * servers' total capacity. Below the total capacity the servers cannot be kept busy.
   */
  callerConcurrency: number;
}

/** What {@link benchmarkSpeechServices} measured. */
export interface SpeechServiceBenchmarkResult {
  options: SpeechServiceBenchmarkOptions;
  /** Wall-clock seconds from the first request to the last answer. */
  wallSeconds: number;
  /** Utterances per second achieved. */
  achievedRequestsPerSecond: number;
  /** servers x capacity / latency, utterances per second. */
  maximumRequestsPerSecond: number;
  /** achieved / maximum. */
  efficiency: number;
  /** Each server's busy share of the wall-clock time (its requests' processing time / capacity / wall time). */
  serverUtilization: number[];
  /** Each server's most requests open at once (at most `capacity` when the client keeps to it). */
  serverPeakOpenRequests: number[];
  /** Peak resident set size during the run, MiB, and before it. */
  peakResidentMebibytes: number;
  residentBeforeMebibytes: number;
  /** Seconds of audio returned. */
  audioSeconds: number;
  /** The client's counters at the end. */
  statistics: RemoteSynthesisStatistics;
}

const TEXTS = [
  'Hello there, how are you today?',
  'Could you tell me more about its history, please?',
  'It was written by Jane Austen and published a long time ago.',
  'Sure, it started as a small village by the river.',
  'Yes, that is right.',
  'The tower was completed in the spring, after two years of work.',
  'I think so, but honestly I am not completely sure.',
  'Who designed the bridge over the harbour?',
  'The museum opens at nine in the morning and closes at six.',
  'Well, that depends on the season and on the weather.',
  'Many people visit the old town every summer.',
  'What else would you like to know about it?',
  'The river flows through three countries before it reaches the sea.',
  'That is an interesting question.',
  'She studied music in Vienna before moving to Paris.',
  'The library holds more than a million books.',
];

const DEFAULT_OPTIONS: Omit<SpeechServiceBenchmarkOptions, 'callerConcurrency'> = {
  backend: 'cosyvoice2',
  utterances: 240,
  servers: 4,
  capacity: 1,
  latencyMilliseconds: 300,
};

/**
 * Runs the benchmark (see the file comment).
 *
 * @param options backend, utterances, servers, capacity, latency (milliseconds), caller concurrency.
 * @returns measured rates (utterances per second), server utilization, memory (MiB) and client counters.
 * @throws Error when espeak-ng is missing or a synthesis is quarantined (there are no faults here).
 */
export async function benchmarkSpeechServices(
  options: Partial<SpeechServiceBenchmarkOptions> = {},
): Promise<SpeechServiceBenchmarkResult> {
  const base = { ...DEFAULT_OPTIONS, ...options };
  const resolved: SpeechServiceBenchmarkOptions = { callerConcurrency: 2 * base.servers * base.capacity, ...base };
  const directory = await fixtureDirectory();
  const servers = await startLoopbackServersInWorker({
    protocol: resolved.backend,
    servers: resolved.servers,
    latencyMs: resolved.latencyMilliseconds,
    capacity: resolved.capacity,
    voice: { pitch: 50 },
    warmTexts: TEXTS,
  });
  try {
    const transcript = 'This is the voice of the benchmark speaker, reading one sentence.';
    const prompt = await writePromptFixture(directory, transcript);
    const settings = { urls: servers.urls, concurrencyPerEndpoint: resolved.capacity };
    let synthesizer: RemoteSpeechSynthesizer<unknown>;
    let voice: Record<string, string>;
    if (resolved.backend === 'cosyvoice2') {
      synthesizer = (await createCosyVoice2Synthesizer(settings)) as RemoteSpeechSynthesizer<unknown>;
      voice = { mode: 'zero-shot', promptWav: prompt.path, promptText: transcript };
    } else if (resolved.backend === 'cosyvoice2-triton') {
      synthesizer = (await createCosyVoice2TritonSynthesizer(settings)) as RemoteSpeechSynthesizer<unknown>;
      voice = { promptWav: prompt.path, promptText: transcript };
    } else {
      synthesizer = (await createOpenAiSpeechSynthesizer(settings)) as RemoteSpeechSynthesizer<unknown>;
      voice = { voice: 'alloy' };
    }
    // Warm the client and servers (prompt loading, compiled code, connections) outside the clock.
    await Promise.all(TEXTS.map((text) => synthesizer.synthesize({ text, language: 'en', voice })));
    await servers.resetCounters();

    global.gc?.();
    const residentBefore = process.memoryUsage().rss;
    let peakResident = residentBefore;
    const sampler = setInterval(() => {
      peakResident = Math.max(peakResident, process.memoryUsage().rss);
    }, 20);
    const caller = new PQueue({ concurrency: resolved.callerConcurrency });
    const before = synthesizer.statistics();
    const started = performance.now();
    // The audio is dropped as it arrives (a build writes it out), so the heap holds only what is in flight.
    await Promise.all(
      Array.from({ length: resolved.utterances }, (_, index) =>
        caller.add(async () => {
          await synthesizer.synthesize({ text: TEXTS[index % TEXTS.length] as string, language: 'en', voice });
        }),
      ),
    );
    const wallMilliseconds = performance.now() - started;
    clearInterval(sampler);
    peakResident = Math.max(peakResident, process.memoryUsage().rss);
    const statistics = synthesizer.statistics();
    const reports = await servers.report();

    const achieved = resolved.utterances / (wallMilliseconds / 1000);
    const maximum = (resolved.servers * resolved.capacity) / (resolved.latencyMilliseconds / 1000);
    return {
      options: resolved,
      wallSeconds: wallMilliseconds / 1000,
      achievedRequestsPerSecond: achieved,
      maximumRequestsPerSecond: maximum,
      efficiency: achieved / maximum,
      serverUtilization: reports.map((report) => report.busyMilliseconds / resolved.capacity / wallMilliseconds),
      serverPeakOpenRequests: reports.map((report) => report.peakOpenRequests),
      peakResidentMebibytes: peakResident / 2 ** 20,
      residentBeforeMebibytes: residentBefore / 2 ** 20,
      audioSeconds: statistics.audioSeconds - before.audioSeconds,
      statistics,
    };
  } finally {
    await servers.close();
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * The result as Markdown lines.
 */
export function formatBenchmarkResult(result: SpeechServiceBenchmarkResult): string {
  const { options } = result;
  return [
    `# TTS service client throughput (${options.backend}, loopback)`,
    '',
    `${options.utterances} utterances; ${options.servers} servers x ${options.capacity} at a time x ${options.latencyMilliseconds} ms; caller keeps ${options.callerConcurrency} in flight; ${os.cpus().length} cores.`,
    '',
    `- achieved: ${result.achievedRequestsPerSecond.toFixed(2)} utterances/s in ${result.wallSeconds.toFixed(2)} s (${result.audioSeconds.toFixed(0)} s of audio)`,
    `- servers' maximum: ${result.maximumRequestsPerSecond.toFixed(2)} utterances/s`,
    `- efficiency: ${(result.efficiency * 100).toFixed(1)} % (goal >= 95 %)`,
    `- server utilization: ${result.serverUtilization.map((share) => `${(share * 100).toFixed(1)} %`).join(', ')}; most requests open at once per server: ${result.serverPeakOpenRequests.join(', ')}`,
    `- attempts ${result.statistics.attempts}, retries ${result.statistics.retries}, quarantined ${result.statistics.quarantined}; peak running ${result.statistics.pool.peakRunning}`,
    `- resident memory: ${result.residentBeforeMebibytes.toFixed(0)} MiB before, peak ${result.peakResidentMebibytes.toFixed(0)} MiB`,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [utterances, servers, latency, backend] = process.argv.slice(2);
  const result = await benchmarkSpeechServices({
    ...(utterances ? { utterances: Number(utterances) } : {}),
    ...(servers ? { servers: Number(servers) } : {}),
    ...(latency ? { latencyMilliseconds: Number(latency) } : {}),
    ...(backend ? { backend: backend as BenchmarkBackend } : {}),
  });
  console.log(formatBenchmarkResult(result));
}
