/**
 * The bench's sections of the services and the queue, each a wrapper of its own benchmark module:
 * `queue` (queued build), `vad`, `dnsmos`, `chat-scoring`, `llm` (LLM clients) and `tts` (TTS service
 * clients).
 */
import os from 'node:os';
import path from 'node:path';
import { sharedDirectory } from '../pipeline/config.ts';
import {
  benchmarkDnsmos,
  formatDnsmosBenchmark,
  type DnsmosBenchmarkResult,
} from '../pipeline/services/mos/dnsmos.bench.ts';
import { formatThroughputReport, runLanguageModelThroughputBench } from '../pipeline/services/llm/llm.bench.ts';
import { benchmarkSpeechServices, formatBenchmarkResult } from '../pipeline/services/tts/tts.bench.ts';
import { benchmarkVad, formatVadBenchmark } from '../pipeline/services/vad/vad.bench.ts';
import { cpuTimes } from './bench-measure.ts';
import type { BenchOptions, SectionFindings } from './bench-section.ts';

/**
 * The queued build (pipeline/orchestration/queued-build.bench.ts): 1, 2 and 4 worker processes against
 * the one-process build, offline and against 4 loopback CosyVoice2 servers; coordinator and Redis cost
 * per dialogue. The dialogues are at most 16 (each configuration builds them from an empty cache; fewer
 * leave the ratios to the fixed costs of a build: the workers' corpus reading, the commit, the report).
 */
export async function queueSection(options: BenchOptions, findings: SectionFindings): Promise<string> {
  const dialogues = Math.min(options.limit, 16);
  const { benchmarkQueuedBuild, formatQueuedBuildBenchmark } =
    await import('../pipeline/orchestration/queued-build.bench.ts');
  const load = os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join('/');
  const runs = await benchmarkQueuedBuild({
    dialogues,
    childrenCpuSeconds: () => cpuTimes().childrenSeconds,
    ...(options.corpus ? { corpus: options.corpus } : {}),
  });
  for (const run of runs) {
    const baseline = runs.find((other) => other.engine === run.engine && other.workers === 0)!;
    findings.figures.push({
      measure: `queued build, ${run.engine}, ${run.workers === 0 ? 'one process (runBuild)' : `${run.workers} workers + coordinator`}: wall s`,
      value: run.wallSeconds.toFixed(1),
      ratio:
        run.workers === 0
          ? 'the baseline'
          : `${(baseline.wallSeconds / run.wallSeconds).toFixed(2)} (throughput / one process)`,
    });
  }
  return [
    `${dialogues} TopiOCQA dev dialogues (English, rules rewrite, speex resampling, barge-in variants, quality off), each run from an empty cache; load average at start ${load}, at end ${os
      .loadavg()
      .map((value) => value.toFixed(1))
      .join('/')} (the ratios need the cores free to mean what they say):`,
    '',
    formatQueuedBuildBenchmark(runs),
  ].join('\n');
}

/** The quality stage's per-segment scoring on real speech against the bare DNSMOS loop (stages/chat-scoring.bench.ts). */
export async function chatScoringSection(_options: BenchOptions, findings: SectionFindings): Promise<string> {
  const { benchmarkChatScoring, formatChatScoringBenchmark } = await import('../stages/chat-scoring.bench.ts');
  const runs = await benchmarkChatScoring();
  for (const stage of runs.filter((run) => run.kind === 'stage')) {
    const bare = runs.find((run) => run.kind === 'bare' && run.seconds === stage.seconds);
    findings.figures.push({
      measure: `score-quality of a ${stage.seconds} s Chat segment: CPU s per channel-second`,
      value: (stage.cpuSeconds / (2 * stage.seconds)).toFixed(3),
      ...(bare ? { ratio: `${(stage.cpuSeconds / bare.cpuSeconds).toFixed(2)} (CPU / bare DNSMOS loop)` } : {}),
    });
  }
  const stages = runs.filter((run) => run.kind === 'stage').sort((a, b) => a.seconds - b.seconds);
  const [shortest, longest] = [stages[0], stages.at(-1)];
  if (shortest && longest && shortest !== longest)
    findings.figures.push({
      measure: `score-quality of a ${longest.seconds} s Chat segment: peak RSS MiB`,
      value: longest.maxResidentMebibytes.toFixed(0),
      ratio: `${(longest.maxResidentMebibytes / shortest.maxResidentMebibytes).toFixed(2)} (/ the ${shortest.seconds} s segment's)`,
    });
  return formatChatScoringBenchmark(runs);
}

/** Silero VAD against a bare onnxruntime loop (its own baseline), on about 60 s of espeak-ng speech. */
export async function vadSection(_options: BenchOptions, findings: SectionFindings): Promise<string> {
  const result = await benchmarkVad();
  findings.figures.push(
    {
      measure: 'Silero VAD: x real time per core',
      value: result.sileroRealTimePerCore.toFixed(0),
      ratio: `${result.cpuSpeedRatioToBareOnnx.toFixed(3)} CPU, ${result.speedRatioToBareOnnx.toFixed(3)} wall (speed / bare onnxruntime loop)`,
    },
    { measure: 'WebRTC VAD (mode 3): x real time per core', value: result.webrtcRealTimePerCore.toFixed(0) },
  );
  return formatVadBenchmark(result);
}

/**
 * DNSMOS against a bare onnxruntime loop, with the shared models: 60 s at 16 kHz (what the build
 * scores: its WAVs are 16 kHz, nothing is resampled) and 30 s at 24 kHz (resampling included).
 */
export async function dnsmosSection(_options: BenchOptions, findings: SectionFindings): Promise<string> {
  const modelDirectory = path.join(sharedDirectory(), 'models', 'dnsmos');
  const results = [
    await benchmarkDnsmos({ modelDirectory, audioSeconds: 60, sampleRate: 16000 }),
    await benchmarkDnsmos({ modelDirectory, audioSeconds: 30, sampleRate: 24000, repetitions: 2 }),
  ];
  findings.figures.push(...results.map(dnsmosFigure));
  return [formatDnsmosBenchmark(results[0]!), '', formatDnsmosBenchmark(results[1]!)].join('\n');
}

/** One DNSMOS run as a figure of docs/performance.md: seconds per hour of audio against the bare loop. */
function dnsmosFigure(result: DnsmosBenchmarkResult): SectionFindings['figures'][number] {
  return {
    measure: `DNSMOS at ${result.sampleRate / 1000} kHz: s per hour of one-channel audio`,
    value: result.dnsmosSecondsPerAudioHour.toFixed(0),
    ratio: `${result.ratioToBareOnnx.toFixed(3)} wall, ${result.cpuRatioToBareOnnx.toFixed(3)} CPU (/ bare onnxruntime loop)`,
  };
}

/** Both LLM clients against a loopback server (4 requests at once x 300 ms), each with its bare-fetch baseline. */
export async function languageModelSection(_options: BenchOptions, findings: SectionFindings): Promise<string> {
  const settings = { capacity: 4, latencyMilliseconds: 300 };
  const results = [
    await runLanguageModelThroughputBench({ ...settings, backend: 'gemini' }),
    await runLanguageModelThroughputBench({ ...settings, backend: 'openai-compatible' }),
  ];
  for (const result of results)
    findings.figures.push({
      measure: `${result.backend} LLM client against a loopback server: requests/s (server maximum ${result.maximumRequestsPerSecond.toFixed(2)})`,
      value: result.achievedRequestsPerSecond.toFixed(2),
      ratio: `${(100 * result.fractionOfMaximum).toFixed(1)} % of the maximum (bare fetch: ${(100 * result.baselineFractionOfMaximum).toFixed(1)} %)`,
    });
  return formatThroughputReport(results);
}

/** The CosyVoice2 client against 4 loopback servers (1 request at a time x 300 ms); the baseline is the servers' maximum rate. */
export async function speechServiceSection(_options: BenchOptions, findings: SectionFindings): Promise<string> {
  const result = await benchmarkSpeechServices({ backend: 'cosyvoice2' });
  findings.figures.push({
    measure: `${result.options.backend} client against ${result.options.servers} loopback servers: utterances/s (servers' maximum ${result.maximumRequestsPerSecond.toFixed(2)})`,
    value: result.achievedRequestsPerSecond.toFixed(2),
    ratio: `${(result.efficiency * 100).toFixed(1)} % of the servers' maximum`,
  });
  // its own report starts with a level-1 title; this report's sections are level 2
  return formatBenchmarkResult(result).replace(/^# (.*)\n\n/, '$1:\n\n');
}
