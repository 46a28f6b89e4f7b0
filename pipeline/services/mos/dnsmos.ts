/**
 * DNSMOS P.835 (SIG, BAK, OVRL) and P.808 speech quality, computed locally with the ONNX models of
 * Microsoft's DNS-Challenge, reproducing `DNSMOS/dnsmos_local.py` of that repository (the version
 * with `model_v8.onnx`) step by step:
 *
 * 1. one channel, resampled to 16 kHz (the reference uses `librosa.resample`, whose default since
 *    librosa 0.10 is soxr "HQ"; here libsamplerate's best sinc converter, output length
 *    `ceil(n * 16000 / rate)` like librosa);
 * 2. while shorter than `int(9.01 * 16000)` = 144160 samples, the audio is appended to itself
 *    (`np.append(audio, audio)`: doubling, not tiling to an exact length);
 * 3. `num_hops = int(np.floor(len / 16000) - 9.01) + 1`; window `idx` is
 *    `audio[int(idx * 16000) : int((idx + 9.01) * 16000)]` and is skipped when shorter than 144160
 *    samples. Note: in IEEE double arithmetic `(idx + 9.01) * 16000` falls just below the integer
 *    for many `idx` (7..23, 119..., first at 7), so the reference silently skips those windows; by
 *    default this module does the same, so scores match the reference (see
 *    `DnsmosWindowOptions.referenceWindowEnds` (./dnsmos-windows.ts));
 * 4. `sig_bak_ovr.onnx` gets the window as float32 [1, 144160] and returns raw [SIG, BAK, OVRL];
 *    `model_v8.onnx` gets the log-mel spectrogram of the window minus its last 160 samples
 *    (librosa `melspectrogram(n_fft=321, hop_length=160, n_mels=120, sr=16000)`, then
 *    `(power_to_db(S, ref=np.max) + 40) / 40`, transposed) as float32 [1, 900, 120] and returns
 *    [1, 1] = P.808 MOS, used as is;
 * 5. raw P.835 values are mapped with fixed polynomials (`np.poly1d`, highest power first), see
 *    {@link DNSMOS_POLYNOMIALS};
 * 6. every value is averaged (arithmetic mean) over the scored windows.
 *
 * Sizes, polynomials and the window plan: ./dnsmos-windows.ts; the P.808 input: ./dnsmos-p808-features.ts;
 * the onnxruntime sessions and model runs: ./dnsmos-model-runs.ts; the results, the speech rule for a
 * recording's channels and the dialogue-level mean: ./dnsmos-scores.ts.
 */
import * as ort from 'onnxruntime-node';
import path from 'node:path';
import {
  DNSMOS_MODEL_FILE_NAMES,
  DnsmosModelFileError,
  requiredDnsmosModelFiles,
  verifyDnsmosModelDirectory,
} from './dnsmos-model-files.ts';
import { P808FeatureExtractor } from './dnsmos-p808-features.ts';
import {
  channelHasSpeech,
  dialogueDnsmosScores,
  type DnsmosChannelResult,
  type DnsmosRecordingOptions,
  type DnsmosRecordingScores,
  type DnsmosScores,
  type MultiChannelAudio,
} from './dnsmos-scores.ts';
import {
  DNSMOS_REFERENCE_HOP_SECONDS,
  DNSMOS_SAMPLE_RATE,
  DNSMOS_WINDOW_SAMPLES,
  P808_FRAME_COUNT,
  P808_MEL_BANDS,
  extendByDoubling,
  mapDnsmosRawScores,
  planDnsmosWindows,
  type DnsmosWindowPlan,
  type P835Values,
} from './dnsmos-windows.ts';
import type { ResampleQuality } from '../../audio/resample.ts';
import { resampleTo16k } from './dnsmos-input-resampling.ts';
import { dnsmosSessionOptions, openDnsmosSession, runP808, runP835 } from './dnsmos-model-runs.ts';

export {
  DNSMOS_HOP_SAMPLES,
  DNSMOS_INPUT_SECONDS,
  DNSMOS_REFERENCE_HOP_SECONDS,
  DNSMOS_POLYNOMIALS,
  DNSMOS_SAMPLE_RATE,
  DNSMOS_WINDOW_SAMPLES,
  P808_FFT_SIZE,
  P808_FRAME_COUNT,
  P808_HOP_LENGTH,
  P808_INPUT_SAMPLES,
  P808_MEL_BANDS,
  evaluatePolynomial,
  extendByDoubling,
  mapDnsmosRawScores,
  planDnsmosWindows,
  type DnsmosWindow,
  type DnsmosWindowOptions,
  type DnsmosWindowPlan,
  type P835Values,
} from './dnsmos-windows.ts';
export { P808FeatureExtractor, p808MelFeatures } from './dnsmos-p808-features.ts';
export { dnsmosSessionOptions } from './dnsmos-model-runs.ts';
export { resampleTo16k } from './dnsmos-input-resampling.ts';
export {
  channelHasSpeech,
  type ChannelSpeechOptions,
  type DnsmosChannelResult,
  type DnsmosDialogueScores,
  type DnsmosRecordingOptions,
  type DnsmosRecordingScores,
  type DnsmosScores,
  type MultiChannelAudio,
} from './dnsmos-scores.ts';

/** Options of {@link DnsmosScorer.load}. */
export interface DnsmosScorerOptions {
  /** Also run `p_sig_bak_ovr.onnx` and report pDNSMOS values. Default false. */
  personalized?: boolean;
  /** Passed to every `ort.InferenceSession.create` (threads, graph optimisation level, ...). Default {@link dnsmosSessionOptions}(). */
  sessionOptions?: ort.InferenceSession.SessionOptions;
  /** Resampling converter for non-16 kHz input. Default 'best' (libsamplerate SRC_SINC_BEST_QUALITY). */
  resampleQuality?: ResampleQuality;
  /** See `DnsmosWindowOptions.referenceWindowEnds` (./dnsmos-windows.ts). Default true (match the reference). */
  referenceWindowEnds?: boolean;
  /** See `DnsmosWindowOptions.hopSeconds` (./dnsmos-windows.ts). Default 1 (the reference); other values change the scores. */
  hopSeconds?: number;
  /**
   * Windows of one channel given to each model in one `session.run` (the models' batch dimension N
   * is free: input [N, 144160] / [N, 900, 120]). Default {@link DEFAULT_DNSMOS_BATCH_WINDOWS}; 1 = one run per window.
   * Scores agree with one run per window to float32 rounding of the model outputs (about 1e-6).
   */
  batchWindows?: number;
}

/**
 * Default windows per `session.run`: 4 (about 4 MB of input per batch, two batches in memory). On 2
 * cores with the CPU execution provider, batches of 4 to 8 cost about 0.85-0.95 x a bare loop of one
 * run per window in CPU time (`npm run bench`), and a channel of a minute has enough batches for the
 * next one's features to be computed while onnxruntime runs the current one.
 */
export const DEFAULT_DNSMOS_BATCH_WINDOWS = 4;

/** Settings of {@link loadDnsmosScorer}. */
export interface DnsmosRunSettings {
  /** 'cpu', 'cuda', or 'auto': CUDA when onnxruntime-node can load it, else the CPU. */
  executionProvider: 'cpu' | 'cuda' | 'auto';
  /** onnxruntime intra-op threads; null = its default. */
  intraOpThreads: number | null;
  /** Windows per model run ({@link DnsmosScorerOptions.batchWindows}). */
  batchWindows: number;
  /** Seconds between window starts ({@link DnsmosScorerOptions.hopSeconds}); default 1, the reference. */
  hopSeconds?: number;
}

/**
 * Loads a scorer with an execution provider: 'auto' tries CUDA and falls back to the CPU when
 * onnxruntime-node cannot load its CUDA provider (the usual case without a CUDA build).
 * @returns the scorer and the provider it runs on.
 * @throws as {@link DnsmosScorer.load}; for 'cuda', onnxruntime's error when CUDA cannot be loaded.
 */
export async function loadDnsmosScorer(
  modelDirectory: string,
  settings: DnsmosRunSettings,
  options: Omit<DnsmosScorerOptions, 'sessionOptions' | 'batchWindows' | 'hopSeconds'> = {},
): Promise<{ scorer: DnsmosScorer; executionProvider: 'cpu' | 'cuda' }> {
  const load = (provider: 'cpu' | 'cuda') =>
    DnsmosScorer.load(modelDirectory, {
      ...options,
      batchWindows: settings.batchWindows,
      hopSeconds: settings.hopSeconds,
      sessionOptions: dnsmosSessionOptions(provider, settings.intraOpThreads),
    });
  if (settings.executionProvider !== 'auto')
    return { scorer: await load(settings.executionProvider), executionProvider: settings.executionProvider };
  try {
    return { scorer: await load('cuda'), executionProvider: 'cuda' };
  } catch (error) {
    if (error instanceof DnsmosModelFileError) throw error;
    return { scorer: await load('cpu'), executionProvider: 'cpu' };
  }
}

/**
 * Scores speech with the DNSMOS ONNX models. Create with {@link DnsmosScorer.load}; release the
 * native sessions with {@link DnsmosScorer.close}.
 */
export class DnsmosScorer {
  readonly modelDirectory: string;
  readonly personalized: boolean;
  private readonly primarySession: ort.InferenceSession;
  private readonly p808Session: ort.InferenceSession;
  private readonly personalizedSession: ort.InferenceSession | null;
  private readonly resampleQuality: ResampleQuality;
  private readonly referenceWindowEnds: boolean;
  /** Seconds between window starts ({@link DnsmosScorerOptions.hopSeconds}). */
  readonly hopSeconds: number;
  private readonly batchWindows: number;

  private constructor(
    modelDirectory: string,
    sessions: { primary: ort.InferenceSession; p808: ort.InferenceSession; personalized: ort.InferenceSession | null },
    options: DnsmosScorerOptions,
  ) {
    this.modelDirectory = modelDirectory;
    this.personalized = sessions.personalized !== null;
    this.primarySession = sessions.primary;
    this.p808Session = sessions.p808;
    this.personalizedSession = sessions.personalized;
    this.resampleQuality = options.resampleQuality ?? 'best';
    this.referenceWindowEnds = options.referenceWindowEnds ?? true;
    this.hopSeconds = options.hopSeconds ?? DNSMOS_REFERENCE_HOP_SECONDS;
    planDnsmosWindows(1, { hopSeconds: this.hopSeconds }); // a bad hop fails here, not at the first channel
    this.batchWindows = options.batchWindows ?? DEFAULT_DNSMOS_BATCH_WINDOWS;
    if (!Number.isInteger(this.batchWindows) || this.batchWindows < 1)
      throw new RangeError(`batchWindows must be a positive integer, got ${this.batchWindows}`);
  }

  /**
   * Loads `sig_bak_ovr.onnx` and `model_v8.onnx` (and `p_sig_bak_ovr.onnx` when `personalized`)
   * from `modelDirectory`, after checking them against the folder's `SHA256SUMS` when it has one.
   * Find the folder with `resolveDnsmosModelDirectory` (dnsmos-model-files.ts).
   * @throws DnsmosModelFileError naming a missing or mismatching file; the onnxruntime error when a
   *   file is not a loadable model; Error when a model's input or output is not the expected
   *   `input_1` float32 [N, 144160] / [N, 900, 120].
   */
  static async load(modelDirectory: string, options: DnsmosScorerOptions = {}): Promise<DnsmosScorer> {
    const directory = path.resolve(modelDirectory);
    const personalized = options.personalized ?? false;
    await verifyDnsmosModelDirectory(directory, requiredDnsmosModelFiles(personalized));
    const sessionOptions = options.sessionOptions ?? dnsmosSessionOptions();
    const open = (file: string, expectedShape: readonly (number | string)[]): Promise<ort.InferenceSession> =>
      openDnsmosSession(directory, file, expectedShape, sessionOptions);
    const primary = await open(DNSMOS_MODEL_FILE_NAMES.primary, ['N', DNSMOS_WINDOW_SAMPLES]);
    const p808 = await open(DNSMOS_MODEL_FILE_NAMES.p808, ['N', P808_FRAME_COUNT, P808_MEL_BANDS]);
    const personalizedSession = personalized
      ? await open(DNSMOS_MODEL_FILE_NAMES.personalized, ['N', DNSMOS_WINDOW_SAMPLES])
      : null;
    return new DnsmosScorer(directory, { primary, p808, personalized: personalizedSession }, options);
  }

  /**
   * DNSMOS of ONE channel: `samples` in -1..1 at `sampleRate` Hz (any rate; resampled to 16 kHz).
   * Runs, per batch of up to `batchWindows` scored windows (N of them), `sig_bak_ovr.onnx` on float32
   * [N, 144160], `model_v8.onnx` on float32 [N, 900, 120] and, when personalized, `p_sig_bak_ovr.onnx`
   * on [N, 144160]; averages over windows. The 16 kHz signal (resampled once) feeds both models.
   * Deterministic: the same input gives the same scores.
   * @throws RangeError for empty audio, a bad sample rate, or non-finite samples.
   */
  async score(
    samples: Float32Array,
    sampleRate: number,
    onProgress?: (seconds: number) => void,
  ): Promise<DnsmosScores> {
    if (samples.length === 0) throw new RangeError('DNSMOS needs at least one sample, got an empty signal');
    for (let index = 0; index < samples.length; index++) {
      if (!Number.isFinite(samples[index]!))
        throw new RangeError(`sample ${index} is not a finite number (${samples[index]})`);
    }
    const audio = await resampleTo16k(samples, sampleRate, this.resampleQuality);
    const plan = planDnsmosWindows(audio.length, {
      referenceWindowEnds: this.referenceWindowEnds,
      hopSeconds: this.hopSeconds,
    });
    const extended = extendByDoubling(audio);
    const extractor = new P808FeatureExtractor();
    const batchLength = Math.min(this.batchWindows, Math.max(1, plan.windows.length));
    const featureLength = P808_FRAME_COUNT * P808_MEL_BANDS;
    // Two sets of input buffers: the next batch's samples and P.808 features are prepared (JavaScript,
    // this thread) while onnxruntime runs the current one on its own threads.
    const buffers = [0, 1].map(() => ({
      windows: new Float32Array(batchLength * DNSMOS_WINDOW_SAMPLES),
      features: new Float32Array(batchLength * featureLength),
    }));
    const raw = { sig: 0, bak: 0, ovrl: 0 };
    const mapped = { sig: 0, bak: 0, ovrl: 0 };
    const personalizedRaw = { sig: 0, bak: 0, ovrl: 0 };
    const personalizedMapped = { sig: 0, bak: 0, ovrl: 0 };
    let p808 = 0;
    type BatchResult = { raw: P835Values[]; p808: number[]; personalizedRaw: P835Values[] | null };
    const start = (first: number, buffer: (typeof buffers)[number]): Promise<BatchResult> => {
      const batch = plan.windows.slice(first, first + batchLength);
      batch.forEach((window, position) => {
        buffer.windows.set(extended.subarray(window.start, window.end), position * DNSMOS_WINDOW_SAMPLES);
        extractor.features(
          extended,
          window.start,
          buffer.features.subarray(position * featureLength, (position + 1) * featureLength),
        );
      });
      const windowTensor = new ort.Tensor('float32', buffer.windows.subarray(0, batch.length * DNSMOS_WINDOW_SAMPLES), [
        batch.length,
        DNSMOS_WINDOW_SAMPLES,
      ]);
      const featureTensor = new ort.Tensor('float32', buffer.features.subarray(0, batch.length * featureLength), [
        batch.length,
        P808_FRAME_COUNT,
        P808_MEL_BANDS,
      ]);
      return Promise.all([
        runP835(this.primarySession, windowTensor, batch.length),
        runP808(this.p808Session, featureTensor, batch.length),
        this.personalizedSession !== null
          ? runP835(this.personalizedSession, windowTensor, batch.length)
          : Promise.resolve(null),
      ]).then(([batchRaw, batchP808, batchPersonalizedRaw]) => ({
        raw: batchRaw,
        p808: batchP808,
        personalizedRaw: batchPersonalizedRaw,
      }));
    };
    let pending: Promise<BatchResult> | null = plan.windows.length > 0 ? start(0, buffers[0]!) : null;
    for (let first = 0, turn = 0; pending !== null; first += batchLength, turn++) {
      const current: Promise<BatchResult> = pending;
      current.catch(() => {}); // awaited below; a failure while the next batch is prepared must not go unhandled
      pending = first + batchLength < plan.windows.length ? start(first + batchLength, buffers[(turn + 1) % 2]!) : null;
      const result = await current;
      if (onProgress) {
        // the batch's share of the channel's duration, so the calls sum to the duration
        const doneBefore = Math.min(first, plan.windows.length) / plan.windows.length;
        const doneAfter = Math.min(first + batchLength, plan.windows.length) / plan.windows.length;
        onProgress(((doneAfter - doneBefore) * samples.length) / sampleRate);
      }
      // summed in window order, as one run per window would
      result.raw.forEach((windowRaw, position) => {
        accumulate(raw, windowRaw);
        accumulate(mapped, mapDnsmosRawScores(windowRaw, false));
        p808 += result.p808[position]!;
        if (result.personalizedRaw !== null) {
          accumulate(personalizedRaw, result.personalizedRaw[position]!);
          accumulate(personalizedMapped, mapDnsmosRawScores(result.personalizedRaw[position]!, true));
        }
      });
    }
    const count = plan.windows.length;
    const scores: DnsmosScores = {
      ovrl: mapped.ovrl / count,
      sig: mapped.sig / count,
      bak: mapped.bak / count,
      p808: p808 / count,
      raw: divide(raw, count),
      windows: count,
      hopCount: plan.hopCount,
      durationSeconds: audio.length / DNSMOS_SAMPLE_RATE,
    };
    if (this.personalizedSession !== null)
      scores.personalized = { ...divide(personalizedMapped, count), raw: divide(personalizedRaw, count) };
    return scores;
  }

  /**
   * DNSMOS of every channel of a recording, plus a dialogue-level value. Channels without speech
   * (`options.channelHasSpeech`, else {@link channelHasSpeech}) are not scored. Dialogue level =
   * arithmetic mean over the channels with speech of their per-channel scores (each channel is one
   * speaker in a dual-channel dialogue, so every speaker counts equally whatever their talk time;
   * scoring a mono mixdown instead would blend the two voices and their overlaps, which DNSMOS was
   * not trained on).
   * @throws RangeError when `options.channelHasSpeech` has the wrong length, or as {@link score}.
   */
  async scoreRecording(audio: MultiChannelAudio, options: DnsmosRecordingOptions = {}): Promise<DnsmosRecordingScores> {
    if (options.channelHasSpeech !== undefined && options.channelHasSpeech.length !== audio.channels.length) {
      throw new RangeError(
        `channelHasSpeech has ${options.channelHasSpeech.length} entries for ${audio.channels.length} channels`,
      );
    }
    const channels: DnsmosChannelResult[] = [];
    for (let channel = 0; channel < audio.channels.length; channel++) {
      const samples = audio.channels[channel]!;
      const hasSpeech = options.channelHasSpeech?.[channel] ?? channelHasSpeech(samples, audio.sampleRate);
      channels.push({
        channel,
        hasSpeech,
        scores: hasSpeech ? await this.score(samples, audio.sampleRate, options.onProgress) : null,
      });
      if (!hasSpeech) options.onProgress?.(samples.length / audio.sampleRate);
    }
    const scored = channels.flatMap((result) => (result.scores === null ? [] : [result.scores]));
    if (scored.length === 0) return { channels, dialogue: null };
    return { channels, dialogue: dialogueDnsmosScores(scored, this.personalized) };
  }

  /** The windows {@link score} would run for a channel of `sampleCount` samples at 16 kHz. */
  planWindows(sampleCount: number): DnsmosWindowPlan {
    return planDnsmosWindows(sampleCount, {
      referenceWindowEnds: this.referenceWindowEnds,
      hopSeconds: this.hopSeconds,
    });
  }

  /** Releases the onnxruntime sessions. The scorer cannot be used afterwards. */
  async close(): Promise<void> {
    await this.primarySession.release();
    await this.p808Session.release();
    if (this.personalizedSession !== null) await this.personalizedSession.release();
  }
}

function accumulate(total: P835Values, add: P835Values): void {
  total.sig += add.sig;
  total.bak += add.bak;
  total.ovrl += add.ovrl;
}

function divide(total: P835Values, count: number): P835Values {
  return { sig: total.sig / count, bak: total.bak / count, ovrl: total.ovrl / count };
}
