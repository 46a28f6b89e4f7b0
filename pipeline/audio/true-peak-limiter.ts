/**
 * True-peak limiting of a rendered track: the inter-sample peaks of a mix may not exceed a ceiling
 * (EBU R 128 (2020): "Maximum True Peak Level ... -1 dBTP"), without changing its loudness.
 *
 * True peak is estimated as ITU-R BS.1770-4 Annex 2 prescribes: the signal oversampled by a
 * windowed-sinc interpolation filter, then the largest magnitude. The filter is libebur128's
 * (`interp_create(49, 4)`: sinc(m / 4) with a Hann window, 12 taps per phase) generalized to 32 taps per
 * phase and the factor that reaches 192 kHz as ffmpeg's `ebur128=peak=true` does ({@link oversamplingFactor}); its phase 0
 * is the input sample itself, the others are the points between samples.
 *
 * The limiter only lowers the gain around samples whose neighbourhood peaks above the ceiling: the
 * gain needed at each sample, `min(1, ceiling / peak)`, is taken as the minimum over ±`holdSeconds`
 * and then averaged over a `holdSeconds`-long window (a box filter of a min filter never exceeds the
 * needed gain at any sample, since every averaged minimum covers that sample), so it falls and
 * recovers along ramps of `holdSeconds`. Everything else keeps its exact sample values, so loudness
 * (integrated over 400 ms blocks) moves by hundredths of a LU at most and a track without overs is
 * returned unchanged.
 */
import { blockPeaks } from './audio-kernels.ts';

/** Rate the true-peak estimate oversamples to, Hz: ffmpeg's `ebur128=peak=true` resamples to 192 kHz. */
export const TRUE_PEAK_RATE = 192_000;
/** Taps per polyphase component of the interpolation filter: 32, as ffmpeg's resampler (`filter_size`); libebur128's 12 read a 4 kHz burst 0.2 dB lower than ffmpeg, 32 within 0.05 dB (measured). */
const TAPS_PER_PHASE = 32;

/** Polyphase interpolation filter: `phases[p][k]` (phase 0 is the sample itself). */
interface InterpolationFilter {
  factor: number;
  phases: Float64Array[];
  /** Input samples of delay of the polyphase form: output n of phase p lies at input time n − delay + p / factor. */
  delay: number;
  /** Largest sum of |coefficients| of a phase: |interpolated| <= bound × max |input| over the taps. */
  bound: number;
  /**
   * `reach[k]` = the largest |coefficient k| over the phases 1…factor−1: Σ_k reach[k] × |input n − k|
   * bounds every interpolated point of output n (each phase's |Σ c·x| <= Σ |c|·|x|), in one pass of 32 taps
   * instead of factor − 1 of them.
   */
  reach: Float64Array;
}

const filters = new Map<number, InterpolationFilter>();

/**
 * The oversampling factor for a sample rate: at least 4 (ITU-R BS.1770-4 Annex 2, at 48 kHz) and up to
 * 192 kHz as ffmpeg measures (12 at 16 kHz, 8 at 24 kHz), so the points between samples are those
 * ffmpeg reads.
 */
export function oversamplingFactor(sampleRate: number): number {
  return Math.max(4, Math.ceil(TRUE_PEAK_RATE / sampleRate));
}

/**
 * The windowed-sinc interpolation filter of `factor`, split into its polyphase components:
 * `32 × factor + 1` taps, sinc(m / factor) with a Hann window, m = tap − 16 × factor (libebur128's
 * `interp_create(49, 4)` is this with 12 taps per phase).
 */
function interpolationFilter(factor: number): InterpolationFilter {
  const known = filters.get(factor);
  if (known) return known;
  const tapCount = TAPS_PER_PHASE * factor + 1;
  const centre = (tapCount - 1) / 2;
  const taps = new Float64Array(tapCount);
  for (let j = 0; j < tapCount; j++) {
    const m = j - centre;
    const sinc = m === 0 ? 1 : Math.sin((Math.PI * m) / factor) / ((Math.PI * m) / factor);
    taps[j] = sinc * 0.5 * (1 - Math.cos((2 * Math.PI * j) / (tapCount - 1)));
  }
  // upsampled y[f·n + p] = Σ_j taps[j] · z[f·n + p − j], z the zero-stuffed input: only j ≡ p (mod f) hit samples
  const phases: Float64Array[] = [];
  let bound = 1;
  for (let phase = 0; phase < factor; phase++) {
    const coefficients: number[] = [];
    for (let j = phase; j < tapCount; j += factor) coefficients.push(taps[j]!);
    phases.push(Float64Array.from(coefficients));
    bound = Math.max(
      bound,
      coefficients.reduce((sum, value) => sum + Math.abs(value), 0),
    );
  }
  const reach = new Float64Array(phases[1]!.length);
  for (let phase = 1; phase < factor; phase++)
    phases[phase]!.forEach((value, k) => (reach[k] = Math.max(reach[k]!, Math.abs(value))));
  // y[f·n + p] sits at input time n − centre / f + p / f (centre = 16 f)
  const filter = { factor, phases, delay: centre / factor, bound, reach };
  filters.set(factor, filter);
  return filter;
}

/** Samples per block of the quiet-stretch test in {@link interpolatedPeaks}. */
const SKIP_BLOCK = 256;
/**
 * Relative margin under a threshold below which an interpolated point is certainly under it: the
 * bound Σ reach·|x| and the point are sums of 32 products in double precision (relative error
 * ~1e-14), and the point is then rounded to 32 bits (relative 6e-8).
 */
const BOUND_MARGIN = 1e-6;

/**
 * The estimate behind {@link samplePeaks} and the limiter: the magnitude of every sample and of the
 * interpolated points between samples, written as the larger one into `peaks` (when given) at the two
 * samples around each point, and their overall largest value.
 *
 * Two skips keep the cost of speech low, neither changing a value that can reach `keepAbove`:
 * a block of {@link SKIP_BLOCK} outputs whose ±32-sample neighbourhood cannot reach `skipBelow` (its
 * largest |sample| × the coefficient bound) is not interpolated at all (no point there reaches
 * `skipBelow`); in the other blocks, an output whose points cannot reach `keepAbove` (Σ reach × |x|,
 * {@link InterpolationFilter}) is not interpolated either. Every point that is computed is computed as
 * the full sum, term by term in tap order, so the values at or above `keepAbove` are the same numbers
 * whether or not the others were skipped. The block test reads each sample once: the largest |sample|
 * of every {@link SKIP_BLOCK} samples, so a block whose own and two neighbouring blocks' largest is
 * under the limit is skipped without scanning its neighbourhood again (that neighbourhood lies within
 * those three blocks, the filter reaching 32 < {@link SKIP_BLOCK} samples).
 * @param samples one channel, full scale = 1.0
 * @param skipBelow linear level: blocks that cannot reach it are skipped (0 = never)
 * @param keepAbove linear level (<= skipBelow): points in the other blocks that cannot reach it are skipped (0 = never)
 * @param peaks when given, filled (length = samples.length) with the estimate per sample
 * @param fillPeaks 'always': `peaks` is filled in every case; 'if-interpolated': only when some block was
 *   interpolated, else left as it was (the limiter: every block skipped means no sample reaches
 *   `skipBelow`, and it then reads only the returned value)
 * @returns the largest value of the estimate (as a 32-bit float, like `peaks`)
 */
function interpolatedPeaks(
  samples: Float32Array,
  sampleRate: number,
  skipBelow: number,
  keepAbove: number,
  peaks: Float32Array | null,
  fillPeaks: 'always' | 'if-interpolated' = 'always',
): number {
  const { factor, phases, delay, bound, reach } = interpolationFilter(oversamplingFactor(sampleRate));
  const length = samples.length;
  const half = phases[1]!.length; // taps per phase reach this many samples back
  const taps = reach.length;
  // the largest |sample| of each block of SKIP_BLOCK samples, and of all
  const blockCount = Math.ceil(length / SKIP_BLOCK);
  const blockLargest = blockLargestBuffer(blockCount);
  let largest = 0;
  // WebAssembly SIMD (audio-kernels.ts) where it runs, else the same maxima in JavaScript
  if (!blockPeaks(samples, SKIP_BLOCK, blockLargest)) {
    for (let block = 0; block < blockCount; block++) {
      let blockPeak = 0;
      const end = Math.min(length, (block + 1) * SKIP_BLOCK);
      for (let n = block * SKIP_BLOCK; n < end; n++) {
        const magnitude = Math.abs(samples[n]!);
        if (magnitude > blockPeak) blockPeak = magnitude;
      }
      blockLargest[block] = blockPeak;
    }
  }
  for (let block = 0; block < blockCount; block++) if (blockLargest[block]! > largest) largest = blockLargest[block]!;
  let filled = false;
  const fill = (target: Float32Array) => {
    for (let n = 0; n < length; n++) target[n] = Math.abs(samples[n]!);
    filled = true;
  };
  if (peaks && fillPeaks === 'always') fill(peaks);
  const keepBelow = keepAbove * (1 - BOUND_MARGIN);
  for (let blockStart = 0, block = 0; blockStart < length + delay; blockStart += SKIP_BLOCK, block++) {
    // outputs of this block read samples blockStart − half … blockStart + SKIP_BLOCK − 1: within blocks block − 1 … block
    // (and block + 1 for the exact neighbourhood below, which also reaches half samples past the block)
    let nearby = block < blockCount ? blockLargest[block]! : 0;
    if (block > 0 && block - 1 < blockCount) nearby = Math.max(nearby, blockLargest[block - 1]!);
    if (block + 1 < blockCount) nearby = Math.max(nearby, blockLargest[block + 1]!);
    if (nearby * bound < skipBelow) continue;
    // the largest |sample| within the reach of the filter
    let neighbourhood = 0;
    for (let k = Math.max(0, blockStart - half); k < Math.min(length, blockStart + SKIP_BLOCK + half); k++)
      neighbourhood = Math.max(neighbourhood, Math.abs(samples[k]!));
    if (neighbourhood * bound < skipBelow) continue;
    if (peaks && !filled) fill(peaks);
    // output n of phase p (y[4n + p]) lies at input time n − delay + p / 4: between samples n − delay and n − delay + 1
    for (let n = blockStart; n < Math.min(blockStart + SKIP_BLOCK, length + delay); n++) {
      const inside = n - taps + 1 >= 0 && n < length; // every tap reads a sample
      if (keepBelow > 0) {
        let reachable = 0;
        if (inside) for (let k = 0; k < taps; k++) reachable += reach[k]! * Math.abs(samples[n - k]!);
        else
          for (let k = 0; k < taps; k++)
            if (n - k >= 0 && n - k < length) reachable += reach[k]! * Math.abs(samples[n - k]!);
        if (reachable < keepBelow) continue;
      }
      const left = n - delay;
      for (let phase = 1; phase < factor; phase++) {
        const coefficients = phases[phase]!;
        let value = 0;
        if (inside) for (let k = 0; k < coefficients.length; k++) value += coefficients[k]! * samples[n - k]!;
        else
          for (let k = 0; k < coefficients.length; k++) {
            const index = n - k;
            if (index >= 0 && index < length) value += coefficients[k]! * samples[index]!;
          }
        const magnitude = Math.abs(value);
        if (magnitude > largest) largest = magnitude;
        if (peaks) {
          if (left >= 0 && left < length && magnitude > peaks[left]!) peaks[left] = magnitude;
          if (left + 1 >= 0 && left + 1 < length && magnitude > peaks[left + 1]!) peaks[left + 1] = magnitude;
        }
      }
    }
  }
  return Math.fround(largest);
}

let reusedBlockLargest = new Float32Array(0);

/** A scratch array of `length` values for the block maxima of {@link interpolatedPeaks}, reused across calls. */
function blockLargestBuffer(length: number): Float32Array {
  if (reusedBlockLargest.length < length) reusedBlockLargest = new Float32Array(length);
  return reusedBlockLargest.subarray(0, length);
}

/**
 * Estimated true peak around each sample: the largest magnitude of the sample itself and of the
 * interpolated points in the sample intervals on either side of it (oversampled, module comment).
 * Samples whose ±32-sample neighbourhood cannot reach `skipBelow` (by the filter's coefficient bound)
 * get their own magnitude without interpolating.
 * @param samples one channel, full scale = 1.0
 * @param skipBelow linear level below which the interpolation may be skipped (0 = never skip)
 * @returns one value per sample (linear, full scale = 1.0)
 */
export function samplePeaks(samples: Float32Array, sampleRate: number, skipBelow = 0): Float32Array {
  const peaks = new Float32Array(samples.length);
  interpolatedPeaks(samples, sampleRate, skipBelow, 0, peaks);
  return peaks;
}

/** True peak of one channel at `sampleRate` Hz, dBTP (oversampled estimate, module comment); -Infinity for silence. */
export function truePeakDbtp(samples: Float32Array, sampleRate: number): number {
  return 20 * Math.log10(interpolatedPeaks(samples, sampleRate, 0, 0, null));
}

/** Options of {@link limitTruePeakInPlace}. */
export interface TruePeakLimiterOptions {
  /** Ceiling, dBTP. Default -1 (EBU R 128 (2020) maximum true peak level). */
  ceilingDbtp?: number;
  /**
   * Headroom under the ceiling the limiter aims for, dB. Default 0.1: the estimate here and ffmpeg's
   * `ebur128=peak=true` (its own 192 kHz resampler) differ by a few hundredths of a dB, and the
   * 16-bit rounding of the written WAV adds up to 1/32768.
   */
  headroomDb?: number;
  /** Hold and ramp length of the gain reduction, seconds. Default 0.005. */
  holdSeconds?: number;
}

/** What {@link limitTruePeakInPlace} did to a channel. */
export interface TruePeakLimiting {
  /**
   * Estimated true peak before, dBTP (-Infinity for silence): exact from the ceiling − headroom down by
   * 0.0001 dB; below that, the largest of what the estimate had to compute (at least the sample peak),
   * since points that cannot reach the ceiling are skipped.
   */
  beforeDbtp: number;
  /** Estimated true peak after, dBTP (as `beforeDbtp`). */
  afterDbtp: number;
  /** Samples whose gain was lowered. */
  samplesChanged: number;
  /** Largest gain reduction, dB (0 when nothing was changed). */
  maximumReductionDb: number;
}

/**
 * Lowers the gain around the inter-sample peaks of one channel so its estimated true peak is at most
 * `ceilingDbtp − headroomDb` (module comment). MUTATES `samples`; a channel already under the
 * ceiling is left exactly as it is.
 * @param samples one channel, full scale = 1.0
 * @param sampleRate Hz (sets the hold length in samples)
 * @throws RangeError for a non-finite ceiling, a negative headroom or a non-positive hold
 */
export function limitTruePeakInPlace(
  samples: Float32Array,
  sampleRate: number,
  options: TruePeakLimiterOptions = {},
): TruePeakLimiting {
  const ceilingDbtp = options.ceilingDbtp ?? -1;
  const headroomDb = options.headroomDb ?? 0.1;
  const holdSeconds = options.holdSeconds ?? 0.005;
  if (!Number.isFinite(ceilingDbtp) || !(headroomDb >= 0) || !(holdSeconds > 0) || !(sampleRate > 0)) {
    throw new RangeError(
      `true-peak limiter: ceiling ${ceilingDbtp} dBTP, headroom ${headroomDb} dB, hold ${holdSeconds} s, rate ${sampleRate} Hz`,
    );
  }
  const target = 10 ** ((ceilingDbtp - headroomDb) / 20);
  const hold = Math.max(1, Math.round(holdSeconds * sampleRate));
  // aimed a hair (1e-5, 0.0001 dB) under the target: the 32-bit samples round the product either way
  const aim = target * (1 - 1e-5);
  // the estimate is exact wherever it can reach `aim` (the only values the gain envelope reads); the
  // buffer is reused from call to call (the estimate lives only inside this call)
  const peaks = peaksBuffer(samples.length);
  let largest = interpolatedPeaks(samples, sampleRate, target, aim, peaks, 'if-interpolated');
  const beforeDbtp = 20 * Math.log10(largest);
  let changed: Uint8Array | null = null;
  let samplesChanged = 0;
  let smallestGain = 1;
  // the gain follows the estimate of the input; a gain that moves changes the points between samples a
  // little, so the estimate is taken again and the rest lowered (each pass lowers, never raises)
  for (let pass = 0; pass < 8 && largest > target; pass++) {
    const gains = gainEnvelope(peaks, aim, hold);
    changed ??= new Uint8Array(samples.length);
    for (let n = 0; n < samples.length; n++) {
      const gain = gains[n]!;
      if (gain < 1) {
        samples[n] = samples[n]! * gain;
        if (changed[n] === 0) samplesChanged++;
        changed[n] = 1;
      }
      if (gain < smallestGain) smallestGain = gain;
    }
    largest = interpolatedPeaks(samples, sampleRate, target, aim, peaks, 'if-interpolated');
  }
  if (largest > target) {
    // cannot happen with the box-of-min envelope; kept so a bug fails loudly rather than ships an over
    throw new Error(
      `true-peak limiter: ${(20 * Math.log10(largest)).toFixed(2)} dBTP left above ${(ceilingDbtp - headroomDb).toFixed(2)} dBTP after 8 passes`,
    );
  }
  return {
    beforeDbtp,
    afterDbtp: 20 * Math.log10(largest),
    samplesChanged,
    maximumReductionDb: smallestGain < 1 ? -20 * Math.log10(smallestGain) : 0,
  };
}

let reusedPeaks = new Float32Array(0);

/** A scratch array of `length` values for the limiter's estimate, reused across calls (grown when needed). */
function peaksBuffer(length: number): Float32Array {
  if (reusedPeaks.length < length) reusedPeaks = new Float32Array(length);
  return reusedPeaks.subarray(0, length);
}

/**
 * Gain per sample: the needed gain `min(1, target / peak)`, its minimum over ±hold, then its mean over
 * a centred window of `hold + 1` samples (never above the needed gain at any sample: each minimum in
 * the mean covers that sample). 1 where no sample within 1.5 × hold needs lowering.
 */
function gainEnvelope(peaks: Float32Array, target: number, hold: number): Float64Array {
  const length = peaks.length;
  const gains = new Float64Array(length).fill(1);
  const over: number[] = [];
  for (let n = 0; n < length; n++) if (peaks[n]! > target) over.push(n);
  if (over.length === 0) return gains;
  // minimum over ±hold (only around the overs: elsewhere it is 1)
  const minimum = new Float64Array(length).fill(1);
  for (const n of over) {
    const needed = target / peaks[n]!;
    for (let k = Math.max(0, n - hold); k <= Math.min(length - 1, n + hold); k++)
      if (needed < minimum[k]!) minimum[k] = needed;
  }
  // centred moving average of hold + 1 samples (window [n − ⌊hold/2⌋, n + ⌈hold/2⌉])
  const before = Math.floor(hold / 2);
  const after = hold - before;
  const width = hold + 1;
  // a running sum of the deficits 1 − minimum, reset to exactly 0 when the window holds none (no drift)
  // beyond the ends the edge sample's deficit (its minimum covers every sample the window reaches there):
  // with 0 there, a sustained over at an end was lowered only part of the way each pass
  const deficit = (index: number) => 1 - minimum[index < 0 ? 0 : index >= length ? length - 1 : index]!;
  let sum = 0;
  let inWindow = 0;
  const add = (value: number, sign: 1 | -1) => {
    if (value > 0) {
      sum += sign * value;
      inWindow += sign;
    }
  };
  for (let k = -before; k <= after; k++) add(deficit(k), 1);
  for (let n = 0; n < length; n++) {
    if (inWindow > 0) gains[n] = Math.min(1, 1 - sum / width);
    add(deficit(n + after + 1), 1);
    add(deficit(n - before), -1);
    if (inWindow === 0) sum = 0;
  }
  return gains;
}
