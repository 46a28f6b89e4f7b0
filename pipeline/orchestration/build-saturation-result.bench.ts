/**
 * What the saturation benchmark (build-saturation.bench.ts) is given and what it measures, and its
 * result as Markdown: wall and CPU time, the servers' busy fraction, synthesized audio per wall and
 * per CPU second, and the main thread's CPU by step when profiled.
 */
import os from 'node:os';
import type { LoopbackWorkerServerReport } from '../services/tts/testing/loopback-worker.ts';
import type { BuildReport } from './build.ts';
import { formatStepTable, type StepSeconds } from './build-saturation-profile.bench.ts';

/** Settings of `benchmarkBuildSaturation` (build-saturation.bench.ts). */
export interface SaturationBenchmarkOptions {
  /** First N conversations of the corpus. Default 20. */
  dialogues: number;
  /** Loopback servers, one request at a time each. Default 4. */
  servers: number;
  /** Service time per answer = this x its audio duration. Default 0.02. */
  realTimeFactor: number;
  /** Server protocol. Default cosyvoice2 (FastAPI). */
  protocol: 'cosyvoice2' | 'cosyvoice2-triton';
  /** TopiOCQA JSON. Default the shared dev set. */
  corpus: string;
  /** `synthesis.concurrency` of the build (utterances in flight). Default 4 x servers. */
  concurrency: number;
  /**
   * Requests the client keeps open per server (`concurrencyPerEndpoint`); the servers still process
   * one at a time, so with 2 the next request waits at the server while the current one is served
   * (as requests queue at a FastAPI or Triton server), hiding the client's turnaround. Default 2.
   */
  requestsPerServer: number;
  /** Record a CPU profile of the build's thread and split the local cost by step. Default true. */
  profile: boolean;
  /** `synthesis.resampleQuality` of the build. Default 'speex' (the config default). */
  resampleQuality: 'best' | 'speex';
  /** `synthesis.resampleThreads` of the build. Default 0 (the config default). */
  resampleThreads: number;
  /** `audio.renderThreads` of the build. Default 0 (the config default). */
  renderThreads: number;
  /** `audio.fullBandMaster` of the build. Default true (the config default). */
  fullBandMaster: boolean;
  /** Keep the build's output folder here instead of a removed temporary one. */
  outputDirectory?: string;
}

/** What `benchmarkBuildSaturation` (build-saturation.bench.ts) measured. */
export interface SaturationBenchmarkResult {
  options: SaturationBenchmarkOptions;
  wallSeconds: number;
  /** CPU seconds of this process (the build alone: the servers run in a child process), all threads, user + system. */
  cpuSeconds: number;
  /** Audio seconds the servers synthesized (from the client's counters). */
  synthesizedAudioSeconds: number;
  /** Dialogue audio seconds written (base datasets and barge-in variants). */
  writtenAudioSeconds: number;
  utterancesSynthesized: number;
  /** Per server: busy time (capacity held) / wall time of the build. */
  serverBusyFraction: number[];
  /** Mean of serverBusyFraction. */
  meanBusyFraction: number;
  /** Busy time / (last answer end - first processing start): how busy the servers were while the synthesis ran. */
  busyFractionWhileSynthesizing: number;
  /** Seconds from the build's start to the first request processed (ingest, checks, lock, first texts). */
  leadSeconds: number;
  /** Seconds from the last answer to the build's end (the last dialogues' placement and writing, commits, summaries). */
  tailSeconds: number;
  servers: LoopbackWorkerServerReport[];
  /** CPU seconds of the loopback servers' process (what stands for the GPU hosts), all threads. */
  serverCpuSeconds: number | null;
  /** What the build used locally: cpuSeconds (kept as its own field for the report). */
  localCpuSeconds: number;
  /** CPU seconds per thread name over the build (threads that ended during it are missing). */
  threadCpuSeconds: Record<string, number>;
  /** CPU seconds of the build's (main) thread; null where not measurable. */
  mainThreadCpuSeconds: number | null;
  /**
   * The main thread's CPU seconds split by step: each step's share of the profile's non-idle samples
   * x mainThreadCpuSeconds (a sampling profile counts wall time, which includes the time the
   * thread waited for a core while other processes held them); null when not profiled.
   */
  steps: StepSeconds | null;
  stageSeconds: BuildReport['stageSeconds'];
  peakResidentMebibytes: number;
  /** Full (mark-compact) garbage collections of the build's isolate during the build (perf_hooks 'gc' entries of kind major). */
  fullCollections: number;
  /** V8's heap growing percent in effect (pipeline/run/heap-growth.ts); null: V8's own factor. */
  heapGrowingPercent: number | null;
  /** the V8 interrupt budget pipeline/run/optimization-budget.ts set; null: V8's own */
  interruptBudget: number | null;
  failedDialogues: number;
}

/** The result as Markdown. */
export function formatSaturationBenchmark(result: SaturationBenchmarkResult): string {
  const { options } = result;
  const audio = result.synthesizedAudioSeconds;
  const lines = [
    `${options.dialogues} TopiOCQA dev dialogues (English, rules rewrite, quality scoring off) against ${options.servers} loopback ${options.protocol} servers, one request at a time each, ` +
      `service time = ${options.realTimeFactor} x audio duration (capacity ${(options.servers / options.realTimeFactor).toFixed(0)} s of audio per second); synthesis.concurrency ${options.concurrency}, ${options.requestsPerServer} request(s) open per server (concurrencyPerEndpoint), resampler '${options.resampleQuality}'${options.resampleThreads > 0 ? ` in ${options.resampleThreads} worker threads` : ''}; mastering (limiter, WAV encoding) ${options.renderThreads > 0 ? `in ${options.renderThreads} worker thread(s)` : "on the build's thread"}${options.fullBandMaster ? '' : ', no full-band master (audio.fullBandMaster false)'}; heap growing factor ${result.heapGrowingPercent === null ? "V8's own" : `1 + ${result.heapGrowingPercent} % (pipeline/run/heap-growth.ts)`}; optimization (interrupt) budget ${result.interruptBudget === null ? "V8's own" : `${result.interruptBudget} (pipeline/run/optimization-budget.ts)`}; ${os.cpus().length} cores.`,
    '',
    '| measure | value |',
    '|---|---:|',
    `| wall s | ${result.wallSeconds.toFixed(2)} |`,
    `| local CPU s (the build's process, all threads) | ${result.localCpuSeconds.toFixed(2)} |`,
    `| CPU s of the loopback servers' process (same 2 cores) | ${result.serverCpuSeconds === null ? 'not measured' : result.serverCpuSeconds.toFixed(2)} |`,
    `| utterances synthesized | ${result.utterancesSynthesized} |`,
    `| synthesized audio s | ${audio.toFixed(1)} |`,
    `| dialogue audio written s (datasets + barge-in variants) | ${result.writtenAudioSeconds.toFixed(1)} |`,
    `| servers' busy fraction (of the build's wall time) | ${result.serverBusyFraction.map((share) => `${(share * 100).toFixed(1)} %`).join(', ')} (mean ${(result.meanBusyFraction * 100).toFixed(1)} %) |`,
    `| busy fraction from first request to last answer | ${(result.busyFractionWhileSynthesizing * 100).toFixed(1)} % |`,
    `| s before the first request / after the last answer | ${result.leadSeconds.toFixed(2)} / ${result.tailSeconds.toFixed(2)} |`,
    `| synthesized audio s per wall s | ${(audio / result.wallSeconds).toFixed(1)} |`,
    `| synthesized audio s per local CPU s | ${(audio / result.localCpuSeconds).toFixed(1)} |`,
    `| synthesized audio s per CPU s, servers' process included | ${(audio / (result.cpuSeconds + (result.serverCpuSeconds ?? 0))).toFixed(1)} |`,
    `| CPU s by thread | ${Object.entries(result.threadCpuSeconds)
      .filter(([, seconds]) => seconds >= 0.01)
      .sort((a, b) => b[1] - a[1])
      .map(([name, seconds]) => `${name} ${seconds.toFixed(2)}`)
      .join(', ')} |`,
    `| full garbage collections (mark-compact) | ${result.fullCollections} |`,
    `| peak RSS MiB | ${result.peakResidentMebibytes.toFixed(0)} |`,
    `| failed dialogues | ${result.failedDialogues} |`,
  ];
  if (result.steps) {
    const busy = Object.values(result.steps).reduce((sum, seconds) => sum + seconds, 0);
    lines.push(
      '',
      `Local CPU of the build's main thread (${busy.toFixed(2)} s of the build's ${result.localCpuSeconds.toFixed(2)} s; the rest is the process's other threads: V8's background threads (concurrent garbage collection, compilation) and libuv's file system pool) by step ` +
        `(share of the V8 sampling profile's busy samples x the thread's CPU time from /proc), per second of synthesized audio:`,
      '',
      formatStepTable(result.steps, audio),
    );
  }
  return lines.join('\n');
}
