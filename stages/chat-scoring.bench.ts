/**
 * Cost of scoring a Chat-track segment: what stages/score-quality.ts does per dialogue (DNSMOS of
 * both channels, `DnsmosScorer.scoreRecording`, and the signal checks with ffmpeg's loudness,
 * `checkDialogueSignal`), on real two-party speech (the shared Japanese J-Moshi recordings, 32 kHz
 * stereo, joined and cut to length by sox), against the bare DNSMOS loop on the same windows (the
 * P.835 and P.808 `session.run` calls alone, tensors built outside the timing), each run in its own
 * process so its peak resident set is its own: CPU per channel-second of audio, and peak RSS at two
 * segment lengths (memory flat in segment length: the ratio near 1).
 *
 *     node --import tsx/esm stages/chat-scoring.bench.ts stage|bare SECONDS   # one run, one JSON line
 *
 * `benchmarkChatScoring` runs both at each length and is the `chat-scoring` section of `npm run bench`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import * as ort from 'onnxruntime-node';
import { decodeWav } from '../pipeline/audio/wav.ts';
import { sharedDirectory } from '../pipeline/config.ts';
import { checkDialogueSignal } from '../pipeline/quality/signal-checks.ts';
import { resolveQualityThresholds } from '../pipeline/quality/thresholds.ts';
import {
  DEFAULT_DNSMOS_BATCH_WINDOWS,
  DNSMOS_WINDOW_SAMPLES,
  extendByDoubling,
  loadDnsmosScorer,
  P808_FRAME_COUNT,
  P808_MEL_BANDS,
  P808FeatureExtractor,
  resampleTo16k,
} from '../pipeline/services/mos/dnsmos.ts';
import { DNSMOS_MODEL_FILE_NAMES } from '../pipeline/services/mos/dnsmos-model-files.ts';
import { runnableModule, TYPESCRIPT_LOADER_ARGUMENTS } from '../pipeline/storage/package-files.ts';

/** One measured run (one process). */
export interface ChatScoringRun {
  kind: 'stage' | 'bare';
  /** Segment length, seconds (two channels). */
  seconds: number;
  /** DNSMOS windows scored, both channels. */
  windows: number;
  /** CPU seconds of the measured work (this process, all threads). */
  cpuSeconds: number;
  wallSeconds: number;
  /** Peak resident set of the whole process, MiB. */
  maxResidentMebibytes: number;
}

/** A two-channel 32 kHz recording of real speech lasting `seconds`: the shared Japanese recordings joined end to end by sox, then trimmed. */
async function realSpeech(seconds: number, folder: string): Promise<string> {
  const sources = ['prompt-62.wav', 'prompt-159.wav'].map((name) =>
    path.join(sharedDirectory(), 'corpora', 'reference-audio', 'ja', name),
  );
  const file = path.join(folder, `speech-${seconds}.wav`);
  const inputs = Array.from({ length: Math.ceil(seconds / 20) }, () => sources).flat();
  await execa('sox', [...inputs, file, 'trim', '0', String(seconds)]);
  return file;
}

const cpuSince = (start: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
};

/** What {@link bareDnsmosLoop} measured. */
export interface BareDnsmosLoop {
  /** DNSMOS windows run, every channel of every recording. */
  windows: number;
  /** CPU seconds of the `session.run` calls alone (this process, all threads). */
  cpuSeconds: number;
  wallSeconds: number;
}

/**
 * The bare DNSMOS loop, the baseline of the scoring benches: for every channel of every recording,
 * the P.835 and P.808 models (plain `ort.InferenceSession`s with onnxruntime's default options) run
 * on each window of the scorer's own window plan, one window per run; only the `session.run` calls
 * are timed (sessions, resampling to 16 kHz and the P.808 log-mel features are made outside).
 * @param recordings two-channel (or any) recordings, `channels[c][n]`, any sample rate
 * @param modelDirectory the DNSMOS ONNX files (DNSMOS_MODEL_FILE_NAMES)
 */
export async function bareDnsmosLoop(
  recordings: readonly { channels: readonly Float32Array[]; sampleRate: number }[],
  modelDirectory: string,
): Promise<BareDnsmosLoop> {
  const primary = await ort.InferenceSession.create(path.join(modelDirectory, DNSMOS_MODEL_FILE_NAMES.primary));
  const p808 = await ort.InferenceSession.create(path.join(modelDirectory, DNSMOS_MODEL_FILE_NAMES.p808));
  const { scorer } = await loadDnsmosScorer(modelDirectory, {
    executionProvider: 'cpu',
    intraOpThreads: null,
    batchWindows: 1,
  }); // its window plan only
  try {
    const extractor = new P808FeatureExtractor();
    let cpuSeconds = 0;
    let wallSeconds = 0;
    let windows = 0;
    for (const recording of recordings) {
      for (const samples of recording.channels) {
        const audio16k = await resampleTo16k(samples, recording.sampleRate);
        const extended = extendByDoubling(audio16k);
        for (const window of scorer.planWindows(audio16k.length).windows) {
          const input = new ort.Tensor('float32', extended.slice(window.start, window.end), [1, DNSMOS_WINDOW_SAMPLES]);
          const features = new ort.Tensor('float32', extractor.features(extended, window.start), [
            1,
            P808_FRAME_COUNT,
            P808_MEL_BANDS,
          ]);
          const start = process.cpuUsage();
          const wall = performance.now();
          await primary.run({ input_1: input });
          await p808.run({ input_1: features });
          cpuSeconds += cpuSince(start);
          wallSeconds += (performance.now() - wall) / 1000;
          windows += 1;
        }
      }
    }
    return { windows, cpuSeconds, wallSeconds };
  } finally {
    await primary.release();
    await p808.release();
    await scorer.close();
  }
}

/** One run in this process (the script mode). */
async function runOnce(kind: 'stage' | 'bare', seconds: number): Promise<ChatScoringRun> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-chat-scoring-'));
  try {
    const file = await realSpeech(seconds, folder);
    const audio = decodeWav(await readFile(file), file);
    const models = path.join(sharedDirectory(), 'models', 'dnsmos');
    if (kind === 'stage') {
      const { scorer } = await loadDnsmosScorer(models, {
        executionProvider: 'cpu',
        intraOpThreads: null,
        batchWindows: DEFAULT_DNSMOS_BATCH_WINDOWS,
      });
      try {
        await scorer.score((audio.channels[0] as Float32Array).subarray(0, 10 * audio.sampleRate), audio.sampleRate); // warm-up: one window
        const start = process.cpuUsage();
        const wall = performance.now();
        const scores = await scorer.scoreRecording(audio);
        await checkDialogueSignal(
          { file, audio, language: 'ja', events: { 0: [], 1: [] }, utterances: [] },
          resolveQualityThresholds(),
          { measureLoudness: true },
        );
        const windows = scores.channels.reduce((sum, channel) => sum + (channel.scores?.windows ?? 0), 0);
        return {
          kind,
          seconds,
          windows,
          cpuSeconds: cpuSince(start),
          wallSeconds: (performance.now() - wall) / 1000,
          maxResidentMebibytes: process.resourceUsage().maxRSS / 1024,
        };
      } finally {
        await scorer.close();
      }
    }
    const bare = await bareDnsmosLoop([audio], models);
    return { kind, seconds, ...bare, maxResidentMebibytes: process.resourceUsage().maxRSS / 1024 };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** One run in a child process (its own peak RSS). */
function runInChild(kind: 'stage' | 'bare', seconds: number): Promise<ChatScoringRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...TYPESCRIPT_LOADER_ARGUMENTS, runnableModule('stages/chat-scoring.bench.ts'), kind, String(seconds)],
      { maxBuffer: 16 * 2 ** 20 },
      (error, stdout) =>
        error ? reject(error) : resolve(JSON.parse(stdout.trim().split('\n').at(-1) as string) as ChatScoringRun),
    );
  });
}

/**
 * The stage's per-segment scoring and the bare DNSMOS loop at each length, each in its own process.
 * @param lengths segment lengths, seconds (default 20 and 80: a fourfold length).
 */
export async function benchmarkChatScoring(lengths: readonly number[] = [20, 80]): Promise<ChatScoringRun[]> {
  const runs: ChatScoringRun[] = [];
  for (const seconds of lengths) {
    runs.push(await runInChild('stage', seconds));
    runs.push(await runInChild('bare', seconds));
  }
  return runs;
}

/** The runs as a Markdown table with the ratios (CPU against the bare loop; peak RSS of the longest against the shortest). */
export function formatChatScoringBenchmark(runs: readonly ChatScoringRun[]): string {
  const rows = runs.map(
    (run) =>
      `| ${run.kind === 'stage' ? 'score-quality per dialogue' : 'bare DNSMOS loop'} | ${run.seconds} | ${run.windows} | ${run.cpuSeconds.toFixed(1)} | ${(run.cpuSeconds / (2 * run.seconds)).toFixed(3)} | ${run.wallSeconds.toFixed(1)} | ${run.maxResidentMebibytes.toFixed(0)} |`,
  );
  const lines = [
    'Real two-party speech (the shared Japanese recordings joined by sox, 32 kHz stereo), each run in its own process; CPU is the measured work only (model loading and a warm-up window outside).',
    '',
    '| run | segment s | DNSMOS windows | CPU s | CPU s per channel-second | wall s | peak RSS MiB |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
  ];
  const lengths = [...new Set(runs.map((run) => run.seconds))].sort((a, b) => a - b);
  for (const seconds of lengths) {
    const stage = runs.find((run) => run.kind === 'stage' && run.seconds === seconds);
    const bare = runs.find((run) => run.kind === 'bare' && run.seconds === seconds);
    if (stage && bare)
      lines.push(
        `- ${seconds} s: score-quality CPU / bare DNSMOS CPU = ${(stage.cpuSeconds / bare.cpuSeconds).toFixed(2)}`,
      );
  }
  const [shortest, longest] = [lengths[0], lengths.at(-1)];
  for (const kind of ['stage', 'bare'] as const) {
    const a = runs.find((run) => run.kind === kind && run.seconds === shortest);
    const b = runs.find((run) => run.kind === kind && run.seconds === longest);
    if (a && b && a !== b)
      lines.push(
        `- peak RSS, ${longest} s / ${shortest} s segment, ${kind === 'stage' ? 'score-quality' : 'bare loop'} = ${(b.maxResidentMebibytes / a.maxResidentMebibytes).toFixed(2)} (flat: near 1)`,
      );
  }
  return lines.join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const [kind, seconds] = [process.argv[2], Number(process.argv[3])];
  if ((kind !== 'stage' && kind !== 'bare') || !(seconds > 0)) {
    process.stderr.write('usage: chat-scoring.bench.ts stage|bare SECONDS\n');
    process.exitCode = 2;
  } else {
    runOnce(kind, seconds).then(
      (run) => process.stdout.write(`${JSON.stringify(run)}\n`),
      (error: unknown) => {
        process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
        process.exitCode = 1;
      },
    );
  }
}
