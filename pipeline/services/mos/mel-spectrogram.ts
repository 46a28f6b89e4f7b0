/**
 * librosa-compatible mel spectrogram, written for the DNSMOS P.808 front end.
 *
 * It reproduces, in float64, what these librosa (0.10 and later) calls compute:
 *
 *   S = librosa.feature.melspectrogram(y, sr, n_fft, hop_length, n_mels)
 *   librosa.power_to_db(S, ref=np.max)
 *
 * with librosa's defaults: `window='hann'` (scipy's periodic Hann, `get_window('hann', n_fft,
 * fftbins=True)`), `center=True` with zero padding of `n_fft // 2` samples on both sides
 * (`pad_mode='constant'`, the default since librosa 0.10; librosa 0.9 and older padded by
 * reflection), `power=2.0`, and a mel filterbank from `librosa.filters.mel(htk=False,
 * norm='slaney')`: the Slaney (Auditory Toolbox) mel scale, linear below 1 kHz and logarithmic above,
 * and each triangle scaled to unit area (`2 / (upper edge - lower edge)` in Hz).
 *
 * Precision: librosa builds the filterbank in float64 and stores it as float32; this module rounds
 * the filterbank weights to float32 the same way (`Math.fround`), so its weights equal librosa's
 * bit for bit up to the last-place rounding of `Math.cos`/`Math.log`. Everything else runs in
 * float64, like librosa does for a float64 input signal (DNS-Challenge `dnsmos_local.py` feeds it
 * the float64 array it got from `soundfile`).
 *
 * The discrete Fourier transform: fft.js only transforms power-of-two sizes, and the DNSMOS P.808
 * front end uses `n_fft = 321` (= 3 x 107). Power-of-two sizes use fft.js's real transform directly;
 * every other size uses Bluestein's chirp-z algorithm, which rewrites a DFT of any length N as a
 * circular convolution evaluated with two fft.js transforms of a power-of-two size M >= 2N - 1
 * (1024 for N = 321). It is exact in exact arithmetic; in float64 its error is around 1e-13 of the
 * largest bin, far below what the decibel conversion and the float32 model input can show. The test
 * suite checks it against a direct O(N^2) DFT.
 */
import FFT from 'fft.js';

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

/**
 * A mel spectrogram stored frame-major: `data[frame * melBandCount + band]`, i.e. the shape
 * [frameCount, melBandCount]. librosa returns the transpose, [n_mels, frames]; DNSMOS transposes it
 * (`mel_spec.T`) before the model, so frame-major is the layout the model wants.
 */
export interface MelSpectrogram {
  frameCount: number;
  melBandCount: number;
  data: Float64Array;
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
  if (!Number.isInteger(count) || count < 2) throw new RangeError(`mel frequency count must be an integer >= 2, got ${count}`);
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
  if (!Number.isInteger(fftSize) || fftSize < 2) throw new RangeError(`fftSize must be an integer >= 2, got ${fftSize}`);
  if (!Number.isInteger(melBandCount) || melBandCount < 1) throw new RangeError(`melBandCount must be a positive integer, got ${melBandCount}`);
  if (!(minimumFrequency >= 0 && maximumFrequency > minimumFrequency)) {
    throw new RangeError(`mel frequency range must satisfy 0 <= minimum < maximum, got ${minimumFrequency}..${maximumFrequency}`);
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

/**
 * Periodic ("DFT-even") Hann window of `length` samples, as scipy `get_window('hann', length,
 * fftbins=True)` used by librosa's `stft`: `w[n] = 0.5 - 0.5 cos(2 pi n / length)`. Computed the way
 * scipy does (`0.5 + 0.5 cos(x)` with `x = linspace(-pi, pi, length + 1)`, last point dropped), so
 * values agree to the last bit up to `Math.cos` rounding.
 */
export function periodicHannWindow(length: number): Float64Array {
  if (!Number.isInteger(length) || length < 1) throw new RangeError(`window length must be a positive integer, got ${length}`);
  const window = new Float64Array(length);
  if (length === 1) {
    window[0] = 1;
    return window;
  }
  const step = (Math.PI - -Math.PI) / length; // linspace(-pi, pi, length + 1)
  for (let index = 0; index < length; index++) window[index] = 0.5 + 0.5 * Math.cos(index * step + -Math.PI);
  return window;
}

/**
 * Number of frames librosa's `stft(center=True)` yields for `sampleCount` samples:
 * `1 + floor((sampleCount + 2 * floor(fftSize / 2) - fftSize) / hopLength)`. Frame t is centred on
 * sample `t * hopLength` and covers samples `t * hopLength - floor(fftSize / 2)` up to
 * `t * hopLength - floor(fftSize / 2) + fftSize - 1` (zeros outside the signal).
 * For DNSMOS: 144000 samples, fftSize 321, hop 160 -> 900 frames.
 * @throws RangeError when the padded signal is shorter than one frame.
 */
export function centredFrameCount(sampleCount: number, fftSize: number, hopLength: number): number {
  const padded = sampleCount + 2 * Math.floor(fftSize / 2);
  if (padded < fftSize) throw new RangeError(`signal of ${sampleCount} samples is too short for frames of ${fftSize} samples`);
  return 1 + Math.floor((padded - fftSize) / hopLength);
}

/**
 * Power spectrum `|X[k]|^2`, k = 0 .. floor(N / 2), of a real frame of any length N >= 2.
 * Power-of-two lengths use fft.js's real transform; other lengths use Bluestein's algorithm on a
 * power-of-two fft.js transform (see the module comment). Not thread-safe: it owns scratch buffers.
 */
export class RealPowerSpectrum {
  readonly size: number;
  readonly binCount: number;
  private readonly fft: FFT;
  private readonly input: Float64Array;
  private readonly spectrum: Float64Array;
  private readonly product: Float64Array;
  /** Bluestein chirp conj(w[n]) = exp(-i pi n^2 / N), interleaved re/im; empty for powers of two. */
  private readonly chirp: Float64Array;
  /** DFT of the Bluestein convolution kernel, interleaved re/im; empty for powers of two. */
  private readonly kernelSpectrum: Float64Array;
  private readonly powerOfTwo: boolean;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 2) throw new RangeError(`DFT size must be an integer >= 2, got ${size}`);
    this.size = size;
    this.binCount = 1 + Math.floor(size / 2);
    this.powerOfTwo = (size & (size - 1)) === 0 && size >= 4;
    if (this.powerOfTwo) {
      this.fft = new FFT(size);
      this.input = new Float64Array(size);
      this.spectrum = new Float64Array(2 * size);
      this.product = new Float64Array(0);
      this.chirp = new Float64Array(0);
      this.kernelSpectrum = new Float64Array(0);
      return;
    }
    let transformSize = 4;
    while (transformSize < 2 * size - 1) transformSize *= 2;
    this.fft = new FFT(transformSize);
    this.input = new Float64Array(2 * transformSize);
    this.spectrum = new Float64Array(2 * transformSize);
    this.product = new Float64Array(2 * transformSize);
    this.chirp = new Float64Array(2 * size);
    const kernel = new Float64Array(2 * transformSize);
    for (let n = 0; n < size; n++) {
      // n^2 mod 2N keeps the angle small, so it stays accurate for large n.
      const angle = (Math.PI * ((n * n) % (2 * size))) / size;
      const real = Math.cos(angle);
      const imaginary = Math.sin(angle);
      this.chirp[2 * n] = real;
      this.chirp[2 * n + 1] = -imaginary;
      kernel[2 * n] = real;
      kernel[2 * n + 1] = imaginary;
      if (n > 0) {
        kernel[2 * (transformSize - n)] = real;
        kernel[2 * (transformSize - n) + 1] = imaginary;
      }
    }
    this.kernelSpectrum = new Float64Array(2 * transformSize);
    this.fft.transform(this.kernelSpectrum, kernel);
  }

  /**
   * Writes `|X[k]|^2` for k = 0 .. binCount - 1 into `output[outputOffset + k]`.
   * `frame` must hold `size` samples (a longer array is read from index 0).
   */
  compute(frame: ArrayLike<number>, output: Float64Array, outputOffset = 0): void {
    const size = this.size;
    if (this.powerOfTwo) {
      for (let n = 0; n < size; n++) this.input[n] = frame[n]!;
      this.fft.realTransform(this.spectrum, this.input);
      for (let k = 0; k < this.binCount; k++) {
        const real = this.spectrum[2 * k]!;
        const imaginary = this.spectrum[2 * k + 1]!;
        output[outputOffset + k] = real * real + imaginary * imaginary;
      }
      return;
    }
    const input = this.input;
    input.fill(0);
    const chirp = this.chirp;
    for (let n = 0; n < size; n++) {
      const value = frame[n]!;
      input[2 * n] = value * chirp[2 * n]!;
      input[2 * n + 1] = value * chirp[2 * n + 1]!;
    }
    this.fft.transform(this.spectrum, input);
    const spectrum = this.spectrum;
    const kernel = this.kernelSpectrum;
    const product = this.product;
    for (let index = 0; index < product.length; index += 2) {
      const aReal = spectrum[index]!;
      const aImaginary = spectrum[index + 1]!;
      const bReal = kernel[index]!;
      const bImaginary = kernel[index + 1]!;
      product[index] = aReal * bReal - aImaginary * bImaginary;
      product[index + 1] = aReal * bImaginary + aImaginary * bReal;
    }
    // X[k] = conj(w[k]) * convolution[k]; |conj(w[k])| = 1, so the power is |convolution[k]|^2.
    this.fft.inverseTransform(spectrum, product);
    for (let k = 0; k < this.binCount; k++) {
      const real = spectrum[2 * k]!;
      const imaginary = spectrum[2 * k + 1]!;
      output[outputOffset + k] = real * real + imaginary * imaginary;
    }
  }
}

/**
 * Computes librosa-compatible mel power spectra, frame by frame or for a whole signal. Holds the
 * window, the filterbank and DFT scratch space, so build one and reuse it. Not safe to share between
 * concurrently running callers (it has scratch buffers), which in single-threaded JavaScript only
 * matters across worker threads.
 */
export class MelSpectrogramComputer {
  readonly options: Readonly<Required<MelSpectrogramOptions>>;
  readonly filterbank: MelFilterbank;
  readonly window: Float64Array;
  private readonly dft: RealPowerSpectrum;
  private readonly frame: Float64Array;
  private readonly power: Float64Array;

  /** @throws RangeError for invalid options (see {@link slaneyMelFilterbank}). */
  constructor(options: MelSpectrogramOptions) {
    if (!Number.isInteger(options.hopLength) || options.hopLength < 1) {
      throw new RangeError(`hopLength must be a positive integer, got ${options.hopLength}`);
    }
    this.options = {
      sampleRate: options.sampleRate,
      fftSize: options.fftSize,
      hopLength: options.hopLength,
      melBandCount: options.melBandCount,
      minimumFrequency: options.minimumFrequency ?? 0,
      maximumFrequency: options.maximumFrequency ?? options.sampleRate / 2,
    };
    this.filterbank = slaneyMelFilterbank(this.options);
    this.window = periodicHannWindow(options.fftSize);
    this.dft = new RealPowerSpectrum(options.fftSize);
    this.frame = new Float64Array(options.fftSize);
    this.power = new Float64Array(this.dft.binCount);
  }

  /**
   * Mel power (librosa `melspectrogram`, power 2) of the one frame centred on sample `centre` of
   * `samples`, treating every index outside `0 .. samples.length - 1` as zero (librosa's
   * `center=True, pad_mode='constant'`). Writes `melBandCount` values to
   * `output[outputOffset ..]`. The result depends only on the samples the frame covers, which lets
   * callers cache frames shared by overlapping signals.
   */
  melPowerFrame(samples: ArrayLike<number>, centre: number, output: Float64Array, outputOffset = 0): void {
    const { fftSize } = this.options;
    const start = centre - Math.floor(fftSize / 2);
    const frame = this.frame;
    const window = this.window;
    const length = samples.length;
    if (start >= 0 && start + fftSize <= length) {
      for (let n = 0; n < fftSize; n++) frame[n] = samples[start + n]! * window[n]!;
    } else {
      for (let n = 0; n < fftSize; n++) {
        const index = start + n;
        frame[n] = index >= 0 && index < length ? samples[index]! * window[n]! : 0;
      }
    }
    this.dft.compute(frame, this.power, 0);
    const power = this.power;
    const { firstBin, weights, melBandCount } = this.filterbank;
    for (let band = 0; band < melBandCount; band++) {
      const row = weights[band]!;
      const first = firstBin[band]!;
      let sum = 0;
      for (let offset = 0; offset < row.length; offset++) sum += row[offset]! * power[first + offset]!;
      output[outputOffset + band] = sum;
    }
  }

  /**
   * Mel power spectrogram of a whole signal, as librosa `feature.melspectrogram(y=samples, sr,
   * n_fft, hop_length, n_mels)` with its defaults, transposed to shape [frames, melBandCount]
   * (see {@link MelSpectrogram}). Frame count: {@link centredFrameCount}.
   * @throws RangeError when the signal is shorter than one padded frame.
   */
  melPowerSpectrogram(samples: ArrayLike<number>): MelSpectrogram {
    const { fftSize, hopLength, melBandCount } = this.options;
    const frameCount = centredFrameCount(samples.length, fftSize, hopLength);
    const data = new Float64Array(frameCount * melBandCount);
    for (let frame = 0; frame < frameCount; frame++) {
      this.melPowerFrame(samples, frame * hopLength, data, frame * melBandCount);
    }
    return { frameCount, melBandCount, data };
  }
}

/**
 * One-shot mel power spectrogram (librosa `feature.melspectrogram` defaults, see the module
 * comment), shape [frames, melBandCount]. Builds a {@link MelSpectrogramComputer} each call; reuse
 * one for repeated calls.
 * @throws RangeError for invalid options or a signal shorter than one padded frame.
 */
export function melSpectrogram(samples: ArrayLike<number>, options: MelSpectrogramOptions): MelSpectrogram {
  return new MelSpectrogramComputer(options).melPowerSpectrogram(samples);
}

/** Options of {@link powerToDb}, named after librosa `power_to_db` arguments. */
export interface PowerToDbOptions {
  /** `'max'` (librosa `ref=np.max`: the largest value of the input) or a fixed reference power. Default 1. */
  reference?: 'max' | number;
  /** Floor applied to powers and to the reference before the logarithm (librosa `amin`). Default 1e-10. */
  amin?: number;
  /** Clamp everything below `max(dB) - topDb` up to it (librosa `top_db`); `null` disables. Default 80. */
  topDb?: number | null;
}

/**
 * Power to decibels, exactly as librosa `power_to_db(S, ref, amin=1e-10, top_db=80)`:
 * `10 log10(max(amin, S)) - 10 log10(max(amin, |ref|))`, then values below `max - top_db` are
 * raised to `max - top_db`. Returns a new array of the same length (any shape, flattened).
 * @throws RangeError when `amin` <= 0 or `topDb` < 0 (librosa raises ParameterError).
 */
export function powerToDb(power: ArrayLike<number>, options: PowerToDbOptions = {}): Float64Array {
  const amin = options.amin ?? 1e-10;
  const topDb = options.topDb === undefined ? 80.0 : options.topDb;
  if (!(amin > 0)) throw new RangeError(`amin must be strictly positive, got ${amin}`);
  if (topDb !== null && !(topDb >= 0)) throw new RangeError(`topDb must be non-negative, got ${topDb}`);
  const length = power.length;
  let referenceValue: number;
  const reference = options.reference ?? 1.0;
  if (reference === 'max') {
    referenceValue = -Infinity;
    for (let index = 0; index < length; index++) if (power[index]! > referenceValue) referenceValue = power[index]!;
  } else {
    referenceValue = Math.abs(reference);
  }
  const referenceDb = 10.0 * Math.log10(Math.max(amin, referenceValue));
  const result = new Float64Array(length);
  let maximumDb = -Infinity;
  for (let index = 0; index < length; index++) {
    const value = 10.0 * Math.log10(Math.max(amin, power[index]!)) - referenceDb;
    result[index] = value;
    if (value > maximumDb) maximumDb = value;
  }
  if (topDb !== null && length > 0) {
    const floor = maximumDb - topDb;
    for (let index = 0; index < length; index++) if (result[index]! < floor) result[index] = floor;
  }
  return result;
}
