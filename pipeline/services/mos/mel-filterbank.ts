/**
 * The mel filterbank of librosa `filters.mel(htk=False, norm='slaney')` for ./mel-spectrogram.ts: the
 * Slaney (Auditory Toolbox) mel scale, linear below 1 kHz and logarithmic above, and each triangle
 * scaled to unit area (`2 / (upper edge - lower edge)` in Hz), weights rounded to float32 as librosa
 * stores them; with the spectrogram's parameters, named after librosa's arguments.
 */

/** Parameters of a mel spectrogram, named after librosa's arguments. */
export interface MelSpectrogramOptions {
  /** Sampling rate of the signal in Hz (librosa `sr`). */
  sampleRate: number;
  /** Length of each analysis frame and of its DFT, in samples (librosa `n_fft`). Any size >= 2. */
  fftSize: number;
  /** Distance between the centres of consecutive frames, in samples (librosa `hop_length`). */
  hopLength: number;
  /** Number of mel bands (librosa `n_mels`). */
  melBandCount: number;
  /** Lowest filterbank edge in Hz (librosa `fmin`); default 0. */
  minimumFrequency?: number;
  /** Highest filterbank edge in Hz (librosa `fmax`); default `sampleRate / 2`. */
  maximumFrequency?: number;
}

/** Slaney mel scale constants (librosa `hz_to_mel`, `htk=False`; Slaney's Auditory Toolbox). */
const SLANEY_LINEAR_HERTZ_PER_MEL = 200.0 / 3;
const SLANEY_LOG_REGION_START_HERTZ = 1000.0;
const SLANEY_LOG_REGION_START_MEL = (SLANEY_LOG_REGION_START_HERTZ - 0.0) / SLANEY_LINEAR_HERTZ_PER_MEL;
const SLANEY_LOG_STEP = Math.log(6.4) / 27.0;

/**
 * Frequency in Hz to Slaney mel, as librosa `hz_to_mel(frequency, htk=False)`: `f / (200/3)` below
 * 1000 Hz, `15 + ln(f / 1000) / (ln(6.4) / 27)` from 1000 Hz on. So 1000 Hz -> 15 mel (up to float64
 * rounding: 14.999999999999998) and 6400 Hz -> 42 mel.
 */
export function hzToMelSlaney(frequencyHz: number): number {
  if (frequencyHz >= SLANEY_LOG_REGION_START_HERTZ) {
    return SLANEY_LOG_REGION_START_MEL + Math.log(frequencyHz / SLANEY_LOG_REGION_START_HERTZ) / SLANEY_LOG_STEP;
  }
  return (frequencyHz - 0.0) / SLANEY_LINEAR_HERTZ_PER_MEL;
}

/** Slaney mel to Hz, the inverse of {@link hzToMelSlaney} (librosa `mel_to_hz(mels, htk=False)`). */
export function melToHzSlaney(mel: number): number {
  if (mel >= SLANEY_LOG_REGION_START_MEL) {
    return SLANEY_LOG_REGION_START_HERTZ * Math.exp(SLANEY_LOG_STEP * (mel - SLANEY_LOG_REGION_START_MEL));
  }
  return 0.0 + SLANEY_LINEAR_HERTZ_PER_MEL * mel;
}

/**
 * `count` frequencies in Hz equally spaced on the Slaney mel scale from `minimumHz` to `maximumHz`
 * inclusive, as librosa `mel_frequencies(count, fmin, fmax, htk=False)`. The spacing follows
 * `numpy.linspace` exactly (`start + i * step`, last value set to the end point).
 * @throws RangeError when `count` < 2.
 */
export function melFrequenciesSlaney(count: number, minimumHz: number, maximumHz: number): Float64Array {
  if (!Number.isInteger(count) || count < 2)
    throw new RangeError(`mel frequency count must be an integer >= 2, got ${count}`);
  const minimumMel = hzToMelSlaney(minimumHz);
  const maximumMel = hzToMelSlaney(maximumHz);
  const step = (maximumMel - minimumMel) / (count - 1);
  const result = new Float64Array(count);
  for (let index = 0; index < count; index++) {
    const mel = index === count - 1 ? maximumMel : index * step + minimumMel;
    result[index] = melToHzSlaney(mel);
  }
  return result;
}

/**
 * Centre frequency in Hz of each of the `1 + floor(fftSize / 2)` bins of a real DFT, as librosa
 * `fft_frequencies(sr, n_fft)` = `numpy.fft.rfftfreq(n_fft, 1 / sr)`: bin k is at
 * `k / (fftSize * (1 / sampleRate))` (same operation order as numpy). For `fftSize = 321` at 16 kHz
 * the last bin, 160, is at 7975.08 Hz (an odd size has no Nyquist bin).
 */
export function fftFrequencies(sampleRate: number, fftSize: number): Float64Array {
  const binCount = 1 + Math.floor(fftSize / 2);
  const binWidth = 1.0 / (fftSize * (1.0 / sampleRate));
  const result = new Float64Array(binCount);
  for (let bin = 0; bin < binCount; bin++) result[bin] = bin * binWidth;
  return result;
}

/**
 * A mel filterbank stored sparsely: row `band` has its non-zero weights for the DFT bins
 * `firstBin[band] .. firstBin[band] + weights[band].length - 1`.
 */
export interface MelFilterbank {
  melBandCount: number;
  /** Number of DFT bins, `1 + floor(fftSize / 2)`. */
  binCount: number;
  firstBin: Int32Array;
  /** Weights rounded to float32 values, as librosa stores them (`dtype=np.float32`). */
  weights: Float64Array[];
}

/**
 * The mel filterbank of librosa `filters.mel(sr, n_fft, n_mels, fmin, fmax, htk=False,
 * norm='slaney', dtype=np.float32)`: `n_mels` triangles over `n_mels + 2` Slaney-spaced edges;
 * triangle i rises from edge i to edge i+1 and falls to edge i+2 (weights `max(0, min(lower,
 * upper))` with `lower = (f - edge_i) / (edge_{i+1} - edge_i)` and `upper = (edge_{i+2} - f) /
 * (edge_{i+2} - edge_{i+1})`), then is multiplied by `2 / (edge_{i+2} - edge_i)` so that every
 * triangle has unit area in Hz ("Slaney" normalisation). Rounding follows librosa: the triangle is
 * stored as float32, then scaled in float64 and stored as float32 again.
 * Shape of the dense equivalent: [melBandCount, 1 + floor(fftSize / 2)].
 * @throws RangeError for non-positive sizes or an empty or inverted frequency range.
 */
export function slaneyMelFilterbank(options: MelSpectrogramOptions): MelFilterbank {
  const { sampleRate, fftSize, melBandCount } = options;
  const minimumFrequency = options.minimumFrequency ?? 0;
  const maximumFrequency = options.maximumFrequency ?? sampleRate / 2;
  if (!(sampleRate > 0)) throw new RangeError(`sampleRate must be positive, got ${sampleRate}`);
  if (!Number.isInteger(fftSize) || fftSize < 2)
    throw new RangeError(`fftSize must be an integer >= 2, got ${fftSize}`);
  if (!Number.isInteger(melBandCount) || melBandCount < 1)
    throw new RangeError(`melBandCount must be a positive integer, got ${melBandCount}`);
  if (!(minimumFrequency >= 0 && maximumFrequency > minimumFrequency)) {
    throw new RangeError(
      `mel frequency range must satisfy 0 <= minimum < maximum, got ${minimumFrequency}..${maximumFrequency}`,
    );
  }
  const frequencies = fftFrequencies(sampleRate, fftSize);
  const edges = melFrequenciesSlaney(melBandCount + 2, minimumFrequency, maximumFrequency);
  const binCount = frequencies.length;
  const firstBin = new Int32Array(melBandCount);
  const weights: Float64Array[] = [];
  const row = new Float64Array(binCount);
  for (let band = 0; band < melBandCount; band++) {
    const lowerEdge = edges[band]!;
    const centre = edges[band + 1]!;
    const upperEdge = edges[band + 2]!;
    const rising = centre - lowerEdge; // fdiff[i]
    const falling = upperEdge - centre; // fdiff[i + 1]
    const areaNormalisation = 2.0 / (upperEdge - lowerEdge); // enorm[i]
    let first = -1;
    let last = -1;
    for (let bin = 0; bin < binCount; bin++) {
      const frequency = frequencies[bin]!;
      const lower = -(lowerEdge - frequency) / rising; // -ramps[i] / fdiff[i]
      const upper = (upperEdge - frequency) / falling; // ramps[i + 2] / fdiff[i + 1]
      const triangle = Math.fround(Math.max(0, Math.min(lower, upper)));
      const weight = Math.fround(triangle * areaNormalisation);
      row[bin] = weight;
      if (weight !== 0) {
        if (first < 0) first = bin;
        last = bin;
      }
    }
    // An empty filter (possible with too many bands for the DFT size) is kept as an empty row;
    // librosa only warns about it.
    firstBin[band] = first < 0 ? 0 : first;
    weights.push(first < 0 ? new Float64Array(0) : row.slice(first, last + 1));
  }
  return { melBandCount, binCount, firstBin, weights };
}
