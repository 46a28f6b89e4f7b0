/**
 * DNSMOS speed: seconds of computation per hour of audio for {@link DnsmosScorer.score}, against a
 * bare onnxruntime loop that only calls `session.run` on prebuilt tensors for the same windows. The
 * ratio is the cost of everything around the models (resampling, doubling, mel front end, tensor
 * copies, averaging).
 */
import * as ort from 'onnxruntime-node';
import path from 'node:path';
import { DNSMOS_MODEL_FILE_NAMES, resolveDnsmosModelDirectory } from './dnsmos-model-files.ts';
import {
  DEFAULT_DNSMOS_BATCH_WINDOWS,
  DNSMOS_SAMPLE_RATE,
  DNSMOS_WINDOW_SAMPLES,
  DnsmosScorer,
  dnsmosSessionOptions,
  P808FeatureExtractor,
  P808_FRAME_COUNT,
  P808_MEL_BANDS,
  extendByDoubling,
  planDnsmosWindows,
  resampleTo16k,
} from './dnsmos.ts';
import { type ResampleQuality } from '../../audio/resample.ts';

/** Options of {@link benchmarkDnsmos}. */
export interface DnsmosBenchmarkOptions {
  /** Folder of the model files. Default: {@link resolveDnsmosModelDirectory} with no configuration. */
  modelDirectory?: string;
  /** Length of the synthetic test signal, seconds. Default 60 (34 windows: 51 hops, of which the reference rule skips 17). */
  audioSeconds?: number;
  /** Sampling rate of the test signal, Hz; anything but 16000 includes resampling in the DNSMOS time. Default 24000 (the TTS output rate). */
  sampleRate?: number;
  /** Also run the personalized model (in both loops). Default false. */
  personalized?: boolean;
  /** Resampling converter. Default 'best'. */
  resampleQuality?: ResampleQuality;
  /** onnxruntime session options for both loops (e.g. `intraOpNumThreads`). */
  sessionOptions?: ort.InferenceSession.SessionOptions;
  /** Windows per `session.run` of the scorer (DnsmosScorerOptions.batchWindows). Default its default. */
  batchWindows?: number;
  /** Each loop is timed this many times, alternating, and the fastest (least CPU) run kept. Default 3. */
  repetitions?: number;
}

/** Wall-clock and CPU time (all threads of this process: user + system) of one measured loop, seconds. */
export interface MeasuredTime {
  wallSeconds: number;
  cpuSeconds: number;
}

/**
 * Result of {@link benchmarkDnsmos}.
 *
 * Per-hour figures are projections, not `time * 3600 / audioSeconds`: the reference skips the
 * windows whose float64 end index rounds down (idx 7..23 and a few more), which is a large share of
 * a short clip's windows but only 21 of the 3591 windows of a one-hour clip. So the model-bound part
 * is scaled by windows (per-window time x 3570, the windows scored in one hour) and the resampling
 * part by duration.
 */
export interface DnsmosBenchmarkResult {
  audioSeconds: number;
  sampleRate: number;
  personalized: boolean;
  /** Windows scored (each runs the P.835 and P.808 models once, plus pDNSMOS when personalized). */
  windows: number;
  /** Windows a one-hour channel gets (3570 with the reference's window rule). */
  windowsPerAudioHour: number;
  /** Windows per run of the scorer. */
  batchWindows: number;
  /** Timings per loop (the least CPU kept). */
  repetitions: number;
  /** `DnsmosScorer.score` on the signal, resampling included (batched). */
  dnsmos: MeasuredTime;
  /** `DnsmosScorer.score` with one window per run (batchWindows 1). */
  dnsmosPerWindow: MeasuredTime;
  /** Largest difference of OVRL, SIG, BAK, P.808 between the batched and the per-window scorer. */
  largestScoreDifference: number;
  /** Resampling of the signal to 16 kHz alone (0 at 16 kHz). */
  resampling: MeasuredTime;
  /** The bare `session.run` loop over the same windows. */
  bareOnnx: MeasuredTime;
  /** Projected wall seconds of DNSMOS per hour of one-channel audio. */
  dnsmosSecondsPerAudioHour: number;
  /** Projected wall seconds of the bare loop per hour of one-channel audio. */
  bareOnnxSecondsPerAudioHour: number;
  /** `dnsmos.wallSeconds / bareOnnx.wallSeconds` (1 = no overhead beyond the models). */
  ratioToBareOnnx: number;
  /** The same ratio on CPU time, less sensitive to other processes on the machine. */
  cpuRatioToBareOnnx: number;
  /** dnsmosPerWindow / bareOnnx, wall and CPU: the cost around the models alone. */
  perWindowRatioToBareOnnx: number;
  perWindowCpuRatioToBareOnnx: number;
}

async function measure(run: () => Promise<void>): Promise<MeasuredTime> {
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  await run();
  const wallSeconds = (performance.now() - wallStart) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  return { wallSeconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

/**
 * A deterministic speech-like test signal: a 120-200 Hz harmonic tone whose loudness follows a
 * syllable-rate (4 Hz) envelope, with 300 ms pauses every 2 s, plus low seeded noise. Float32 in -1..1.
 */
export function syntheticSpeechLikeSignal(seconds: number, sampleRate: number): Float32Array {
  const length = Math.round(seconds * sampleRate);
  const signal = new Float32Array(length);
  let state = 12345;
  let phase = 0;
  for (let index = 0; index < length; index++) {
    const time = index / sampleRate;
    const pitch = 160 + 40 * Math.sin(2 * Math.PI * 0.7 * time);
    phase += (2 * Math.PI * pitch) / sampleRate;
    let voice = 0;
    for (let harmonic = 1; harmonic <= 12; harmonic++) voice += Math.sin(harmonic * phase) / harmonic;
    const envelope = time % 2 < 1.7 ? Math.pow(Math.abs(Math.sin(2 * Math.PI * 2 * time)), 0.5) : 0;
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const noise = (state / 4294967296 - 0.5) * 0.002;
    signal[index] = 0.15 * envelope * voice + noise;
  }
  return signal;
}

/**
 * Measures DNSMOS time per hour of audio and its ratio to a bare onnxruntime loop over the same
 * windows. Both loops are warmed up first (one window each). The bare loop's tensors (window audio
 * float32 [1, 144160] and P.808 features float32 [1, 900, 120]) are built before its timer starts.
 * Memory: about 1 MB per window for the prebuilt tensors.
 * @throws DnsmosModelFileError when the model files cannot be found (see resolveDnsmosModelDirectory).
 */
export async function benchmarkDnsmos(options: DnsmosBenchmarkOptions = {}): Promise<DnsmosBenchmarkResult> {
  const audioSeconds = options.audioSeconds ?? 60;
  const sampleRate = options.sampleRate ?? 24000;
  const personalized = options.personalized ?? false;
  const sessionOptions = options.sessionOptions ?? dnsmosSessionOptions();
  const modelDirectory = options.modelDirectory ?? (await resolveDnsmosModelDirectory({ personalized }));
  const signal = syntheticSpeechLikeSignal(audioSeconds, sampleRate);

  const resampleQuality = options.resampleQuality ?? 'best';
  const repetitions = Math.max(1, options.repetitions ?? 3);
  const batched = await DnsmosScorer.load(modelDirectory, {
    personalized,
    sessionOptions,
    resampleQuality,
    ...(options.batchWindows !== undefined ? { batchWindows: options.batchWindows } : {}),
  });
  const perWindow = await DnsmosScorer.load(modelDirectory, {
    personalized,
    sessionOptions,
    resampleQuality,
    batchWindows: 1,
  });

  let audio16k = signal;
  const resampling = await measure(async () => {
    audio16k = await resampleTo16k(signal, sampleRate, resampleQuality);
  });

  // Bare loop: the same windows, tensors prebuilt, one session.run per window and model, nothing else timed.
  const audio = extendByDoubling(audio16k);
  const plan = batched.planWindows(audio16k.length);
  const extractor = new P808FeatureExtractor();
  const inputs = plan.windows.map((window) => ({
    audio: new ort.Tensor('float32', audio.slice(window.start, window.end), [1, DNSMOS_WINDOW_SAMPLES]),
    features: new ort.Tensor('float32', extractor.features(audio, window.start), [1, P808_FRAME_COUNT, P808_MEL_BANDS]),
  }));
  const open = (file: string): Promise<ort.InferenceSession> =>
    ort.InferenceSession.create(path.join(modelDirectory, file), sessionOptions);
  const primary = await open(DNSMOS_MODEL_FILE_NAMES.primary);
  const p808 = await open(DNSMOS_MODEL_FILE_NAMES.p808);
  const personalizedSession = personalized ? await open(DNSMOS_MODEL_FILE_NAMES.personalized) : null;
  const runWindow = async (input: { audio: ort.Tensor; features: ort.Tensor }): Promise<void> => {
    await primary.run({ input_1: input.audio });
    await p808.run({ input_1: input.features });
    if (personalizedSession !== null) await personalizedSession.run({ input_1: input.audio });
  };

  let windows = 0;
  let largestScoreDifference = 0;
  const best = (current: MeasuredTime | null, next: MeasuredTime): MeasuredTime =>
    current === null || next.cpuSeconds < current.cpuSeconds ? next : current;
  let dnsmos: MeasuredTime | null = null;
  let dnsmosPerWindow: MeasuredTime | null = null;
  let bareOnnx: MeasuredTime | null = null;
  try {
    // warm-up of all three (one window's worth each)
    const warmUp = signal.subarray(0, Math.min(signal.length, 10 * sampleRate));
    await batched.score(warmUp, sampleRate);
    await perWindow.score(warmUp, sampleRate);
    if (inputs[0] !== undefined) await runWindow(inputs[0]);
    for (let repetition = 0; repetition < repetitions; repetition++) {
      let batchedScores: Awaited<ReturnType<DnsmosScorer['score']>> | null = null;
      let perWindowScores: Awaited<ReturnType<DnsmosScorer['score']>> | null = null;
      dnsmos = best(
        dnsmos,
        await measure(async () => {
          batchedScores = await batched.score(signal, sampleRate);
        }),
      );
      bareOnnx = best(
        bareOnnx,
        await measure(async () => {
          for (const input of inputs) await runWindow(input);
        }),
      );
      dnsmosPerWindow = best(
        dnsmosPerWindow,
        await measure(async () => {
          perWindowScores = await perWindow.score(signal, sampleRate);
        }),
      );
      const [a, b] = [batchedScores!, perWindowScores!] as [
        Awaited<ReturnType<DnsmosScorer['score']>>,
        Awaited<ReturnType<DnsmosScorer['score']>>,
      ];
      windows = a.windows;
      for (const key of ['ovrl', 'sig', 'bak', 'p808'] as const)
        largestScoreDifference = Math.max(largestScoreDifference, Math.abs(a[key] - b[key]));
    }
  } finally {
    await batched.close();
    await perWindow.close();
    await primary.release();
    await p808.release();
    if (personalizedSession !== null) await personalizedSession.release();
  }
  const measured = { dnsmos: dnsmos!, dnsmosPerWindow: dnsmosPerWindow!, bareOnnx: bareOnnx! };

  const windowsPerAudioHour = planDnsmosWindows(3600 * DNSMOS_SAMPLE_RATE).windows.length;
  const perHourByDuration = 3600 / audioSeconds;
  const perHourByWindows = windowsPerAudioHour / Math.max(1, windows);
  return {
    audioSeconds,
    sampleRate,
    personalized,
    windows,
    windowsPerAudioHour,
    batchWindows: options.batchWindows ?? DEFAULT_DNSMOS_BATCH_WINDOWS,
    repetitions,
    ...measured,
    largestScoreDifference,
    resampling,
    dnsmosSecondsPerAudioHour:
      resampling.wallSeconds * perHourByDuration +
      Math.max(0, measured.dnsmos.wallSeconds - resampling.wallSeconds) * perHourByWindows,
    bareOnnxSecondsPerAudioHour: measured.bareOnnx.wallSeconds * perHourByWindows,
    ratioToBareOnnx: measured.dnsmos.wallSeconds / measured.bareOnnx.wallSeconds,
    cpuRatioToBareOnnx: measured.dnsmos.cpuSeconds / measured.bareOnnx.cpuSeconds,
    perWindowRatioToBareOnnx: measured.dnsmosPerWindow.wallSeconds / measured.bareOnnx.wallSeconds,
    perWindowCpuRatioToBareOnnx: measured.dnsmosPerWindow.cpuSeconds / measured.bareOnnx.cpuSeconds,
  };
}

/** Human-readable summary of a {@link DnsmosBenchmarkResult} (Markdown lines). */
export function formatDnsmosBenchmark(result: DnsmosBenchmarkResult): string {
  const time = (measured: MeasuredTime) =>
    `${measured.wallSeconds.toFixed(2)} s wall, ${measured.cpuSeconds.toFixed(2)} s CPU`;
  return [
    `DNSMOS${result.personalized ? ' (+pDNSMOS)' : ''} on ${result.audioSeconds} s of a speech-like signal at ${result.sampleRate} Hz (${result.windows} windows; each loop timed ${result.repetitions} times alternating, the run with the least CPU kept):`,
    '',
    '| loop | time | / bare loop (wall) | / bare loop (CPU) |',
    '|---|---|---:|---:|',
    `| bare onnxruntime, one session.run per window and model, tensors prebuilt | ${time(result.bareOnnx)} | 1 | 1 |`,
    `| DnsmosScorer.score, ${result.batchWindows} windows per run${result.batchWindows === DEFAULT_DNSMOS_BATCH_WINDOWS ? ' (default)' : ''} | ${time(result.dnsmos)} | ${result.ratioToBareOnnx.toFixed(3)} | ${result.cpuRatioToBareOnnx.toFixed(3)} |`,
    `| DnsmosScorer.score, one window per run | ${time(result.dnsmosPerWindow)} | ${result.perWindowRatioToBareOnnx.toFixed(3)} | ${result.perWindowCpuRatioToBareOnnx.toFixed(3)} |`,
    '',
    `- resampling to 16 kHz: ${time(result.resampling)}${result.sampleRate === DNSMOS_SAMPLE_RATE ? ' (none: the build writes 16 kHz)' : ''}; largest score difference batched vs per window: ${result.largestScoreDifference.toExponential(1)}`,
    `- projected per hour of one-channel audio: DNSMOS ${result.dnsmosSecondsPerAudioHour.toFixed(0)} s, bare loop ${result.bareOnnxSecondsPerAudioHour.toFixed(0)} s`,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === (await import('node:url')).pathToFileURL(process.argv[1]).href) {
  const [seconds, sampleRate, batchWindows] = process.argv.slice(2);
  console.log(
    formatDnsmosBenchmark(
      await benchmarkDnsmos({
        modelDirectory: path.join((await import('../../config.ts')).sharedDirectory(), 'models', 'dnsmos'),
        audioSeconds: Number(seconds ?? 30),
        sampleRate: Number(sampleRate ?? 16000),
        ...(batchWindows ? { batchWindows: Number(batchWindows) } : {}),
      }),
    ),
  );
}
