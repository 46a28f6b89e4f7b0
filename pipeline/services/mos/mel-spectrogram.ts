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
 *
 * The filterbank and its parameters: ./mel-filterbank.ts; the window, frames and power spectra:
 * ./real-power-spectrum.ts (both re-exported).
 */
import { slaneyMelFilterbank, type MelFilterbank, type MelSpectrogramOptions } from './mel-filterbank.ts';
import { centredFrameCount, periodicHannWindow, RealPowerSpectrum } from './real-power-spectrum.ts';

export {
  fftFrequencies,
  hzToMelSlaney,
  melFrequenciesSlaney,
  melToHzSlaney,
  slaneyMelFilterbank,
  type MelFilterbank,
  type MelSpectrogramOptions,
} from './mel-filterbank.ts';
export { centredFrameCount, periodicHannWindow, RealPowerSpectrum } from './real-power-spectrum.ts';

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
