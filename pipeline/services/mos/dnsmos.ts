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
 *    {@link DnsmosWindowOptions.referenceWindowEnds});
 * 4. `sig_bak_ovr.onnx` gets the window as float32 [1, 144160] and returns raw [SIG, BAK, OVRL];
 *    `model_v8.onnx` gets the log-mel spectrogram of the window minus its last 160 samples
 *    (librosa `melspectrogram(n_fft=321, hop_length=160, n_mels=120, sr=16000)`, then
 *    `(power_to_db(S, ref=np.max) + 40) / 40`, transposed) as float32 [1, 900, 120] and returns
 *    [1, 1] = P.808 MOS, used as is;
 * 5. raw P.835 values are mapped with fixed polynomials (`np.poly1d`, highest power first), see
 *    {@link DNSMOS_POLYNOMIALS};
 * 6. every value is averaged (arithmetic mean) over the scored windows.
 */
import * as ort from 'onnxruntime-node';
import path from 'node:path';
import { DNSMOS_MODEL_FILE_NAMES, DnsmosModelFileError, requiredDnsmosModelFiles, verifyDnsmosModelDirectory } from './dnsmos-model-files.ts';
import { MelSpectrogramComputer, powerToDb } from './mel-spectrogram.ts';
import { resample, type ResampleQuality } from '../../audio/resample.ts';


/** Sampling rate the models expect, Hz (`SAMPLING_RATE` in dnsmos_local.py). */
export const DNSMOS_SAMPLE_RATE = 16000;
/** Window length in seconds (`INPUT_LENGTH` in dnsmos_local.py). */
export const DNSMOS_INPUT_SECONDS = 9.01;
/** Window length in samples: `int(9.01 * 16000)` = 144160. */
export const DNSMOS_WINDOW_SAMPLES = Math.trunc(DNSMOS_INPUT_SECONDS * DNSMOS_SAMPLE_RATE);
/** Hop between windows in samples (`hop_len_samples = fs` in dnsmos_local.py): one second. */
export const DNSMOS_HOP_SAMPLES = DNSMOS_SAMPLE_RATE;
/** The P.808 front end drops the last 160 samples of the window (`audio_seg[:-160]`): 144000 samples. */
export const P808_INPUT_SAMPLES = DNSMOS_WINDOW_SAMPLES - 160;
/** P.808 front end (`audio_melspec` in dnsmos_local.py): n_fft = frame_size + 1 = 321. */
export const P808_FFT_SIZE = 321;
/** P.808 front end hop length in samples. */
export const P808_HOP_LENGTH = 160;
/** P.808 front end mel band count. */
export const P808_MEL_BANDS = 120;
/** Frames of the P.808 input: 1 + floor((144000 + 2 * 160 - 321) / 160) = 900 (model input [N, 900, 120]). */
export const P808_FRAME_COUNT = 1 + Math.floor((P808_INPUT_SAMPLES + 2 * Math.floor(P808_FFT_SIZE / 2) - P808_FFT_SIZE) / P808_HOP_LENGTH);

/**
 * Polynomials mapping raw model outputs to MOS, highest power first (`np.poly1d` coefficient order),
 * copied from `get_polyfit_val` in DNS-Challenge `dnsmos_local.py`. `standard` goes with
 * `sig_bak_ovr.onnx`, `personalized` with the pDNSMOS model (`p_sig_bak_ovr.onnx`).
 */
export const DNSMOS_POLYNOMIALS = {
  standard: {
    ovrl: [-0.06766283, 1.11546468, 0.04602535],
    sig: [-0.08397278, 1.22083953, 0.0052439],
    bak: [-0.13166888, 1.60915514, -0.39604546],
  },
  personalized: {
    ovrl: [-0.00533021, 0.005101, 1.18058466, -0.11236046],
    sig: [-0.01019296, 0.02751166, 1.19576786, -0.24348726],
    bak: [-0.04976499, 0.44276479, -0.1644611, 0.96883132],
  },
} as const;

/**
 * Evaluates a polynomial given highest power first, by Horner's rule in float64, the way
 * `numpy.polyval` / `np.poly1d.__call__` does (`y = y * x + c` for each coefficient).
 */
export function evaluatePolynomial(coefficientsHighestFirst: readonly number[], x: number): number {
  let y = 0;
  for (const coefficient of coefficientsHighestFirst) y = y * x + coefficient;
  return y;
}

/** Raw or mapped P.835 values of one window or one clip. */
export interface P835Values {
  sig: number;
  bak: number;
  ovrl: number;
}

/**
 * Maps raw `sig_bak_ovr` outputs to MOS with {@link DNSMOS_POLYNOMIALS} (`get_polyfit_val` of
 * dnsmos_local.py). `personalized` selects the pDNSMOS polynomials.
 */
export function mapDnsmosRawScores(raw: P835Values, personalized: boolean): P835Values {
  const polynomials = personalized ? DNSMOS_POLYNOMIALS.personalized : DNSMOS_POLYNOMIALS.standard;
  return {
    sig: evaluatePolynomial(polynomials.sig, raw.sig),
    bak: evaluatePolynomial(polynomials.bak, raw.bak),
    ovrl: evaluatePolynomial(polynomials.ovrl, raw.ovrl),
  };
}

/** Options of the window plan. */
export interface DnsmosWindowOptions {
  /**
   * true (default): window ends are `Math.trunc((idx + 9.01) * 16000)` in float64, exactly like the
   * reference's `int((idx + INPUT_LENGTH) * hop_len_samples)`, so the windows the reference skips
   * (that expression rounds to 144159 samples for idx 7..23, 119.., and others) are skipped here too
   * and scores match published DNSMOS numbers. false: every window is `[idx * 16000, idx * 16000 +
   * 144160)` and only windows running past the end are skipped.
   */
  referenceWindowEnds?: boolean;
}

/** One analysed window, in samples of the extended (doubled) 16 kHz signal: `[start, end)`. */
export interface DnsmosWindow {
  index: number;
  start: number;
  end: number;
}

/** The length handling and windowing of dnsmos_local.py for one signal. */
export interface DnsmosWindowPlan {
  /** Length of the 16 kHz signal before doubling, samples. */
  originalLength: number;
  /** Length after doubling (`while len(audio) < 144160: audio = np.append(audio, audio)`), samples. */
  extendedLength: number;
  /** How many times the signal was doubled. */
  doublings: number;
  /** `num_hops = trunc(floor(extendedLength / 16000) - 9.01) + 1`. */
  hopCount: number;
  /** The windows that are scored, each exactly 144160 samples long. */
  windows: DnsmosWindow[];
  /** Indices `idx < hopCount` whose slice was shorter than 144160 samples, hence skipped. */
  skippedWindowIndices: number[];
}

/**
 * The windows dnsmos_local.py scores for a 16 kHz signal of `sampleCount` samples (see the module
 * comment, steps 2 and 3). Example: 3 s = 48000 samples doubles to 96000 then 192000 (12 s),
 * `num_hops = trunc(12 - 9.01) + 1 = 3`, windows start at 0, 16000, 32000.
 * @throws RangeError when `sampleCount` is not a positive integer (the reference loops forever on
 *   empty audio).
 */
export function planDnsmosWindows(sampleCount: number, options: DnsmosWindowOptions = {}): DnsmosWindowPlan {
  if (!Number.isInteger(sampleCount) || sampleCount < 1) {
    throw new RangeError(`DNSMOS needs at least one sample, got ${sampleCount}`);
  }
  const referenceWindowEnds = options.referenceWindowEnds ?? true;
  let extendedLength = sampleCount;
  let doublings = 0;
  while (extendedLength < DNSMOS_WINDOW_SAMPLES) {
    extendedLength *= 2;
    doublings++;
  }
  const hopCount = Math.trunc(Math.floor(extendedLength / DNSMOS_SAMPLE_RATE) - DNSMOS_INPUT_SECONDS) + 1;
  const windows: DnsmosWindow[] = [];
  const skippedWindowIndices: number[] = [];
  for (let index = 0; index < hopCount; index++) {
    const start = Math.trunc(index * DNSMOS_HOP_SAMPLES);
    const nominalEnd = referenceWindowEnds
      ? Math.trunc((index + DNSMOS_INPUT_SECONDS) * DNSMOS_HOP_SAMPLES)
      : start + DNSMOS_WINDOW_SAMPLES;
    const end = Math.min(nominalEnd, extendedLength);
    if (end - start < DNSMOS_WINDOW_SAMPLES) skippedWindowIndices.push(index);
    else windows.push({ index, start, end: start + DNSMOS_WINDOW_SAMPLES });
  }
  return { originalLength: sampleCount, extendedLength, doublings, hopCount, windows, skippedWindowIndices };
}

/**
 * Appends the signal to itself until it has at least 144160 samples, as dnsmos_local.py does
 * (`np.append(audio, audio)` in a loop). Returns the input itself when it is long enough already.
 * @throws RangeError for an empty signal.
 */
export function extendByDoubling(samples: Float32Array): Float32Array {
  if (samples.length === 0) throw new RangeError('DNSMOS needs at least one sample, got an empty signal');
  if (samples.length >= DNSMOS_WINDOW_SAMPLES) return samples;
  let length = samples.length;
  while (length < DNSMOS_WINDOW_SAMPLES) length *= 2;
  const extended = new Float32Array(length);
  extended.set(samples, 0);
  for (let filled = samples.length; filled < length; filled *= 2) extended.copyWithin(filled, 0, filled);
  return extended;
}

function newMelComputer(): MelSpectrogramComputer {
  return new MelSpectrogramComputer({
    sampleRate: DNSMOS_SAMPLE_RATE,
    fftSize: P808_FFT_SIZE,
    hopLength: P808_HOP_LENGTH,
    melBandCount: P808_MEL_BANDS,
  });
}

/** `(power_to_db(S, ref=np.max) + 40) / 40`, cast to float32, as `audio_melspec` of dnsmos_local.py. */
function melPowerToP808Input(melPower: Float64Array, output: Float32Array): Float32Array {
  const decibels = powerToDb(melPower, { reference: 'max', amin: 1e-10, topDb: 80 });
  for (let index = 0; index < decibels.length; index++) output[index] = (decibels[index]! + 40) / 40;
  return output;
}

/**
 * The P.808 model input for one window, computed directly (no caching): `audio_melspec(audio_seg[:-160])`
 * of dnsmos_local.py, i.e. the librosa mel spectrogram (n_fft 321, hop 160, 120 Slaney bands,
 * 16 kHz, centred zero-padded frames, periodic Hann, power 2) of the first 144000 samples, then
 * `(power_to_db(ref=max, amin=1e-10, top_db=80) + 40) / 40`. Returns float32 of shape [900, 120],
 * frame-major (`[frame * 120 + band]`), ready for a [1, 900, 120] tensor.
 * @throws RangeError when `windowSamples` has fewer than 144160 samples.
 */
export function p808MelFeatures(windowSamples: ArrayLike<number>): Float32Array {
  if (windowSamples.length < DNSMOS_WINDOW_SAMPLES) {
    throw new RangeError(`a DNSMOS window has ${DNSMOS_WINDOW_SAMPLES} samples, got ${windowSamples.length}`);
  }
  const input = new Float64Array(P808_INPUT_SAMPLES);
  for (let index = 0; index < P808_INPUT_SAMPLES; index++) input[index] = windowSamples[index]!;
  const spectrogram = newMelComputer().melPowerSpectrogram(input);
  return melPowerToP808Input(spectrogram.data, new Float32Array(spectrogram.data.length));
}

/** librosa `power_to_db` default `amin`: powers are floored at 1e-10 before the logarithm. */
const POWER_TO_DB_AMIN = 1e-10;
/** librosa `power_to_db` default `top_db`: values more than 80 dB below the maximum are raised to it. */
const POWER_TO_DB_TOP_DB = 80.0;

/** `10 * log10(max(amin, power))` for each of `count` values, the first step of librosa `power_to_db`. */
function powerToUnreferencedDb(power: Float64Array, count: number, output: Float64Array, outputOffset: number): void {
  for (let index = 0; index < count; index++) output[outputOffset + index] = 10.0 * Math.log10(Math.max(POWER_TO_DB_AMIN, power[index]!));
}

/**
 * P.808 features for consecutive DNSMOS windows of one signal, reusing the work on frames that
 * overlapping windows share. A frame's mel power depends only on the 321 samples it covers; the
 * first and last frame of each window (which reach into the zero padding) are computed per window,
 * the 898 interior ones are cached by their absolute position, as `10 * log10(max(1e-10, power))`
 * (the window-independent part of `power_to_db`). Per window only the reference (the window's
 * maximum, `ref=np.max`), the 80 dB floor and `(x + 40) / 40` remain. The result is bit-identical
 * to {@link p808MelFeatures} (same floating-point operations on the same values: `log10` is
 * monotonic, so the largest cached value is `10 * log10(max(1e-10, max power))` exactly); caching
 * turns ~900 frame transforms and 108000 logarithms per window into ~100 and 12000 (one-second hop).
 * Holds scratch buffers: use one instance per signal at a time.
 */
export class P808FeatureExtractor {
  private readonly computer = newMelComputer();
  private readonly cache = new Map<number, Float64Array>();
  private cachedSignal: Float32Array | null = null;
  private readonly decibels = new Float64Array(P808_FRAME_COUNT * P808_MEL_BANDS);
  private readonly framePower = new Float64Array(P808_MEL_BANDS);

  /**
   * Features of the window starting at sample `windowStart` of `signal` (16 kHz, already extended
   * by doubling): float32 [900, 120] frame-major, written to `output` when given.
   * @throws RangeError when the window runs past the end of `signal`.
   */
  features(signal: Float32Array, windowStart: number, output?: Float32Array): Float32Array {
    if (!Number.isInteger(windowStart) || windowStart < 0 || windowStart + DNSMOS_WINDOW_SAMPLES > signal.length) {
      throw new RangeError(`window at ${windowStart} does not fit in a signal of ${signal.length} samples`);
    }
    if (signal !== this.cachedSignal) {
      this.cache.clear();
      this.cachedSignal = signal;
    }
    const segment = signal.subarray(windowStart, windowStart + P808_INPUT_SAMPLES);
    const decibels = this.decibels;
    const bands = P808_MEL_BANDS;
    const lastInteriorFrame = P808_FRAME_COUNT - 2;
    for (let frame = 0; frame < P808_FRAME_COUNT; frame++) {
      const centre = frame * P808_HOP_LENGTH;
      if (frame === 0 || frame > lastInteriorFrame) {
        this.computer.melPowerFrame(segment, centre, this.framePower, 0);
        powerToUnreferencedDb(this.framePower, bands, decibels, frame * bands);
        continue;
      }
      const key = windowStart + centre;
      let row = this.cache.get(key);
      if (row === undefined) {
        this.computer.melPowerFrame(segment, centre, this.framePower, 0);
        row = new Float64Array(bands);
        powerToUnreferencedDb(this.framePower, bands, row, 0);
        this.cache.set(key, row);
      }
      decibels.set(row, frame * bands);
    }
    // Windows advance; frames centred before this window's first interior frame are not needed again
    // when windows are requested in increasing order.
    const keep = windowStart + P808_HOP_LENGTH;
    for (const key of this.cache.keys()) if (key < keep) this.cache.delete(key);

    // power_to_db(ref=np.max): subtract 10 log10(max(amin, max power)), floor at (max - top_db).
    let referenceDb = -Infinity;
    for (let index = 0; index < decibels.length; index++) if (decibels[index]! > referenceDb) referenceDb = decibels[index]!;
    let maximum = -Infinity;
    for (let index = 0; index < decibels.length; index++) {
      const value = decibels[index]! - referenceDb;
      decibels[index] = value;
      if (value > maximum) maximum = value;
    }
    const floor = maximum - POWER_TO_DB_TOP_DB;
    const result = output ?? new Float32Array(decibels.length);
    for (let index = 0; index < decibels.length; index++) result[index] = (Math.max(decibels[index]!, floor) + 40) / 40;
    return result;
  }
}

/**
 * Resamples one channel to 16 kHz with the project's resampler (../../audio/resample.ts, libsamplerate
 * `SRC_SINC_BEST_QUALITY` by default). The output has `ceil(n * 16000 / sampleRate)` samples, the
 * length `librosa.resample` produces (the last one from the zeros after the signal). Returns the input
 * array itself when it is at 16 kHz already.
 * @throws RangeError for a non-positive or non-integer sample rate.
 */
export async function resampleTo16k(samples: Float32Array, sampleRate: number, quality: ResampleQuality = 'best'): Promise<Float32Array> {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) throw new RangeError(`sample rate must be a positive integer in Hz, got ${sampleRate}`);
  if (sampleRate === DNSMOS_SAMPLE_RATE) return samples;
  if (samples.length === 0) return new Float32Array(0);
  return (await resample({ channels: [samples], sampleRate }, DNSMOS_SAMPLE_RATE, quality, { length: 'ceil' })).channels[0]!;
}

/** DNSMOS of one channel. All MOS values are on the 1..5 scale (the mapping may exceed it slightly). */
export interface DnsmosScores {
  /** P.835 overall quality, mean over windows of the mapped values. */
  ovrl: number;
  /** P.835 speech signal quality. */
  sig: number;
  /** P.835 background noise quality. */
  bak: number;
  /** P.808 MOS (`model_v8.onnx` output, used as is). */
  p808: number;
  /** Means over windows of the raw (unmapped) `sig_bak_ovr.onnx` outputs (`OVRL_raw` etc. of the reference). */
  raw: P835Values;
  /** pDNSMOS values (personalized model and polynomials), present when the scorer was loaded with `personalized: true`. */
  personalized?: P835Values & { raw: P835Values };
  /** Number of windows scored. */
  windows: number;
  /** `num_hops` of the reference (windows considered, including skipped ones). */
  hopCount: number;
  /** Duration of the channel in seconds (16 kHz samples before doubling / 16000, `len_in_sec`). */
  durationSeconds: number;
}

/** Options of {@link DnsmosScorer.load}. */
export interface DnsmosScorerOptions {
  /** Also run `p_sig_bak_ovr.onnx` and report pDNSMOS values. Default false. */
  personalized?: boolean;
  /** Passed to every `ort.InferenceSession.create` (threads, graph optimisation level, ...). */
  sessionOptions?: ort.InferenceSession.SessionOptions;
  /** Resampling converter for non-16 kHz input. Default 'best' (libsamplerate SRC_SINC_BEST_QUALITY). */
  resampleQuality?: ResampleQuality;
  /** See {@link DnsmosWindowOptions.referenceWindowEnds}. Default true (match the reference). */
  referenceWindowEnds?: boolean;
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

/**
 * onnxruntime session options for DNSMOS from an execution provider and an intra-op thread count:
 * 'cpu' (default) or 'cuda' (onnxruntime-node's CUDA provider; needs the CUDA build of its shared
 * libraries, which `npm install` does not fetch here, and a GPU). `intraOpThreads` null: onnxruntime's
 * default (one per physical core).
 */
export function dnsmosSessionOptions(executionProvider: 'cpu' | 'cuda' = 'cpu', intraOpThreads: number | null = null): ort.InferenceSession.SessionOptions {
  return { executionProviders: [executionProvider], ...(intraOpThreads !== null ? { intraOpNumThreads: intraOpThreads } : {}) };
}

/** Settings of {@link loadDnsmosScorer}. */
export interface DnsmosRunSettings {
  /** 'cpu', 'cuda', or 'auto': CUDA when onnxruntime-node can load it, else the CPU. */
  executionProvider: 'cpu' | 'cuda' | 'auto';
  /** onnxruntime intra-op threads; null = its default. */
  intraOpThreads: number | null;
  /** Windows per model run ({@link DnsmosScorerOptions.batchWindows}). */
  batchWindows: number;
}

/**
 * Loads a scorer with an execution provider: 'auto' tries CUDA and falls back to the CPU when
 * onnxruntime-node cannot load its CUDA provider (the usual case without a CUDA build).
 * @returns the scorer and the provider it runs on.
 * @throws as {@link DnsmosScorer.load}; for 'cuda', onnxruntime's error when CUDA cannot be loaded.
 */
export async function loadDnsmosScorer(modelDirectory: string, settings: DnsmosRunSettings, options: Omit<DnsmosScorerOptions, 'sessionOptions' | 'batchWindows'> = {}): Promise<{ scorer: DnsmosScorer; executionProvider: 'cpu' | 'cuda' }> {
  const load = (provider: 'cpu' | 'cuda') => DnsmosScorer.load(modelDirectory, { ...options, batchWindows: settings.batchWindows, sessionOptions: dnsmosSessionOptions(provider, settings.intraOpThreads) });
  if (settings.executionProvider !== 'auto') return { scorer: await load(settings.executionProvider), executionProvider: settings.executionProvider };
  try {
    return { scorer: await load('cuda'), executionProvider: 'cuda' };
  } catch (error) {
    if (error instanceof DnsmosModelFileError) throw error;
    return { scorer: await load('cpu'), executionProvider: 'cpu' };
  }
}

/** A recording with any number of channels: `channels[c][i]` is sample i of channel c, in -1..1. */
export interface MultiChannelAudio {
  channels: Float32Array[];
  sampleRate: number;
}

/** Options of {@link DnsmosScorer.scoreRecording}. */
export interface DnsmosRecordingOptions {
  /**
   * Which channels contain speech (e.g. from a voice activity detector). Default: decided per channel
   * by {@link channelHasSpeech}.
   */
  channelHasSpeech?: boolean[];
}

/** Per-channel result of {@link DnsmosScorer.scoreRecording}. */
export interface DnsmosChannelResult {
  channel: number;
  hasSpeech: boolean;
  /** null for a channel without speech (not scored: DNSMOS of silence is meaningless). */
  scores: DnsmosScores | null;
}

/** Dialogue-level DNSMOS: per-channel values averaged over the channels with speech. */
export interface DnsmosDialogueScores {
  ovrl: number;
  sig: number;
  bak: number;
  p808: number;
  personalized?: P835Values;
  /** Number of channels averaged. */
  channelCount: number;
}

/** Result of {@link DnsmosScorer.scoreRecording}. */
export interface DnsmosRecordingScores {
  channels: DnsmosChannelResult[];
  /** null when no channel has speech. */
  dialogue: DnsmosDialogueScores | null;
}

/** Options of {@link channelHasSpeech}. */
export interface ChannelSpeechOptions {
  /** Level a 30 ms frame's RMS must exceed, dB relative to full scale. Default -50. */
  thresholdDbfs?: number;
  /** Total duration of such frames needed, seconds. Default 0.3. */
  minimumSeconds?: number;
}

/**
 * Energy rule deciding whether a channel holds speech worth scoring: at least `minimumSeconds`
 * (0.3 s) of non-overlapping 30 ms frames whose RMS level is above `thresholdDbfs` (-50 dBFS).
 * Synthetic dialogue channels are digital silence (or a low noise floor) while the other side talks,
 * so this separates talking from silent channels; pass VAD results to
 * {@link DnsmosScorer.scoreRecording} instead when you have them.
 */
export function channelHasSpeech(samples: Float32Array, sampleRate: number, options: ChannelSpeechOptions = {}): boolean {
  const threshold = Math.pow(10, (options.thresholdDbfs ?? -50) / 20);
  const thresholdSquared = threshold * threshold;
  const frameLength = Math.max(1, Math.round(0.03 * sampleRate));
  const framesNeeded = Math.ceil(((options.minimumSeconds ?? 0.3) * sampleRate) / frameLength);
  let loudFrames = 0;
  for (let start = 0; start + frameLength <= samples.length; start += frameLength) {
    let energy = 0;
    for (let index = start; index < start + frameLength; index++) energy += samples[index]! * samples[index]!;
    if (energy / frameLength > thresholdSquared && ++loudFrames >= framesNeeded) return true;
  }
  return false;
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
    this.batchWindows = options.batchWindows ?? DEFAULT_DNSMOS_BATCH_WINDOWS;
    if (!Number.isInteger(this.batchWindows) || this.batchWindows < 1) throw new RangeError(`batchWindows must be a positive integer, got ${this.batchWindows}`);
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
    const sessionOptions = options.sessionOptions ?? {};
    const open = async (file: string, expectedShape: readonly (number | string)[]): Promise<ort.InferenceSession> => {
      const session = await ort.InferenceSession.create(path.join(directory, file), sessionOptions);
      const input = session.inputMetadata[0];
      if (session.inputNames.length !== 1 || session.inputNames[0] !== 'input_1' || input === undefined) {
        throw new Error(`${file}: expected one input named input_1, got ${JSON.stringify(session.inputNames)}`);
      }
      if (input.isTensor) {
        const shape = input.shape.slice(1);
        if (input.type !== 'float32' || JSON.stringify(shape) !== JSON.stringify(expectedShape.slice(1))) {
          throw new Error(`${file}: expected input_1 float32 [N, ${expectedShape.slice(1).join(', ')}], got ${input.type} ${JSON.stringify(input.shape)}`);
        }
      }
      return session;
    };
    const primary = await open(DNSMOS_MODEL_FILE_NAMES.primary, ['N', DNSMOS_WINDOW_SAMPLES]);
    const p808 = await open(DNSMOS_MODEL_FILE_NAMES.p808, ['N', P808_FRAME_COUNT, P808_MEL_BANDS]);
    const personalizedSession = personalized ? await open(DNSMOS_MODEL_FILE_NAMES.personalized, ['N', DNSMOS_WINDOW_SAMPLES]) : null;
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
  async score(samples: Float32Array, sampleRate: number): Promise<DnsmosScores> {
    if (samples.length === 0) throw new RangeError('DNSMOS needs at least one sample, got an empty signal');
    for (let index = 0; index < samples.length; index++) {
      if (!Number.isFinite(samples[index]!)) throw new RangeError(`sample ${index} is not a finite number (${samples[index]})`);
    }
    const audio = await resampleTo16k(samples, sampleRate, this.resampleQuality);
    const plan = planDnsmosWindows(audio.length, { referenceWindowEnds: this.referenceWindowEnds });
    const extended = extendByDoubling(audio);
    const extractor = new P808FeatureExtractor();
    const batchLength = Math.min(this.batchWindows, Math.max(1, plan.windows.length));
    const featureLength = P808_FRAME_COUNT * P808_MEL_BANDS;
    // Two sets of input buffers: the next batch's samples and P.808 features are prepared (JavaScript,
    // this thread) while onnxruntime runs the current one on its own threads.
    const buffers = [0, 1].map(() => ({ windows: new Float32Array(batchLength * DNSMOS_WINDOW_SAMPLES), features: new Float32Array(batchLength * featureLength) }));
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
        extractor.features(extended, window.start, buffer.features.subarray(position * featureLength, (position + 1) * featureLength));
      });
      const windowTensor = new ort.Tensor('float32', buffer.windows.subarray(0, batch.length * DNSMOS_WINDOW_SAMPLES), [batch.length, DNSMOS_WINDOW_SAMPLES]);
      const featureTensor = new ort.Tensor('float32', buffer.features.subarray(0, batch.length * featureLength), [batch.length, P808_FRAME_COUNT, P808_MEL_BANDS]);
      return Promise.all([
        runP835(this.primarySession, windowTensor, batch.length),
        runP808(this.p808Session, featureTensor, batch.length),
        this.personalizedSession !== null ? runP835(this.personalizedSession, windowTensor, batch.length) : Promise.resolve(null),
      ]).then(([batchRaw, batchP808, batchPersonalizedRaw]) => ({ raw: batchRaw, p808: batchP808, personalizedRaw: batchPersonalizedRaw }));
    };
    let pending: Promise<BatchResult> | null = plan.windows.length > 0 ? start(0, buffers[0]!) : null;
    for (let first = 0, turn = 0; pending !== null; first += batchLength, turn++) {
      const current: Promise<BatchResult> = pending;
      current.catch(() => {}); // awaited below; a failure while the next batch is prepared must not go unhandled
      pending = first + batchLength < plan.windows.length ? start(first + batchLength, buffers[(turn + 1) % 2]!) : null;
      const result = await current;
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
    if (this.personalizedSession !== null) scores.personalized = { ...divide(personalizedMapped, count), raw: divide(personalizedRaw, count) };
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
      throw new RangeError(`channelHasSpeech has ${options.channelHasSpeech.length} entries for ${audio.channels.length} channels`);
    }
    const channels: DnsmosChannelResult[] = [];
    for (let channel = 0; channel < audio.channels.length; channel++) {
      const samples = audio.channels[channel]!;
      const hasSpeech = options.channelHasSpeech?.[channel] ?? channelHasSpeech(samples, audio.sampleRate);
      channels.push({ channel, hasSpeech, scores: hasSpeech ? await this.score(samples, audio.sampleRate) : null });
    }
    const scored = channels.flatMap((result) => (result.scores === null ? [] : [result.scores]));
    if (scored.length === 0) return { channels, dialogue: null };
    const mean = (pick: (scores: DnsmosScores) => number): number => scored.reduce((sum, scores) => sum + pick(scores), 0) / scored.length;
    const dialogue: DnsmosDialogueScores = {
      ovrl: mean((scores) => scores.ovrl),
      sig: mean((scores) => scores.sig),
      bak: mean((scores) => scores.bak),
      p808: mean((scores) => scores.p808),
      channelCount: scored.length,
    };
    if (this.personalized) {
      dialogue.personalized = {
        ovrl: mean((scores) => scores.personalized!.ovrl),
        sig: mean((scores) => scores.personalized!.sig),
        bak: mean((scores) => scores.personalized!.bak),
      };
    }
    return { channels, dialogue };
  }

  /** The windows {@link score} would run for a channel of `sampleCount` samples at 16 kHz. */
  planWindows(sampleCount: number): DnsmosWindowPlan {
    return planDnsmosWindows(sampleCount, { referenceWindowEnds: this.referenceWindowEnds });
  }

  /** Releases the onnxruntime sessions. The scorer cannot be used afterwards. */
  async close(): Promise<void> {
    await this.primarySession.release();
    await this.p808Session.release();
    if (this.personalizedSession !== null) await this.personalizedSession.release();
  }
}

/** Raw [SIG, BAK, OVRL] of each of the `windows` windows of a [windows, 144160] input (output [windows, 3]). */
async function runP835(session: ort.InferenceSession, input: ort.Tensor, windows: number): Promise<P835Values[]> {
  const output = await session.run({ input_1: input });
  const tensor = output[session.outputNames[0]!]!;
  const data = tensor.data as Float32Array;
  if (data.length !== 3 * windows) throw new Error(`P.835 model returned ${data.length} values for ${windows} windows, expected ${3 * windows} (SIG, BAK, OVRL each)`);
  return Array.from({ length: windows }, (_, window) => ({ sig: data[3 * window]!, bak: data[3 * window + 1]!, ovrl: data[3 * window + 2]! }));
}

/** P.808 MOS of each of the `windows` windows of a [windows, 900, 120] input (output [windows, 1]). */
async function runP808(session: ort.InferenceSession, input: ort.Tensor, windows: number): Promise<number[]> {
  const output = await session.run({ input_1: input });
  const data = output[session.outputNames[0]!]!.data as Float32Array;
  if (data.length !== windows) throw new Error(`P.808 model returned ${data.length} values for ${windows} windows, expected ${windows}`);
  return Array.from(data);
}

function accumulate(total: P835Values, add: P835Values): void {
  total.sig += add.sig;
  total.bak += add.bak;
  total.ovrl += add.ovrl;
}

function divide(total: P835Values, count: number): P835Values {
  return { sig: total.sig / count, bak: total.bak / count, ovrl: total.ovrl / count };
}
