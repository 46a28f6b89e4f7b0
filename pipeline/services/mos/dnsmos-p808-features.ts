/**
 * The P.808 model input of a DNSMOS window (step 4 of ./dnsmos.ts): librosa's log-mel spectrogram of
 * the window as `audio_melspec` of dnsmos_local.py computes it, directly (`p808MelFeatures`) or with
 * the frames that overlapping windows share cached (`P808FeatureExtractor`, bit-identical).
 */
import { MelSpectrogramComputer, powerToDb } from './mel-spectrogram.ts';
import {
  DNSMOS_SAMPLE_RATE,
  DNSMOS_WINDOW_SAMPLES,
  P808_FFT_SIZE,
  P808_FRAME_COUNT,
  P808_HOP_LENGTH,
  P808_INPUT_SAMPLES,
  P808_MEL_BANDS,
} from './dnsmos-windows.ts';

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
  for (let index = 0; index < count; index++)
    output[outputOffset + index] = 10.0 * Math.log10(Math.max(POWER_TO_DB_AMIN, power[index]!));
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
    for (let index = 0; index < decibels.length; index++)
      if (decibels[index]! > referenceDb) referenceDb = decibels[index]!;
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
