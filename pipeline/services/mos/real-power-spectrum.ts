/**
 * The frames and power spectra of ./mel-spectrogram.ts: scipy's periodic Hann window, librosa's
 * centred frame count, and the power spectrum of a real frame of any length.
 *
 * fft.js only transforms power-of-two sizes, and the DNSMOS P.808 front end uses `n_fft = 321`
 * (= 3 x 107). Power-of-two sizes use fft.js's real transform directly; every other size uses
 * Bluestein's chirp-z algorithm, which rewrites a DFT of any length N as a circular convolution
 * evaluated with two fft.js transforms of a power-of-two size M >= 2N - 1 (1024 for N = 321). It is
 * exact in exact arithmetic; in float64 its error is around 1e-13 of the largest bin.
 */
import FFT from 'fft.js';

/**
 * Periodic ("DFT-even") Hann window of `length` samples, as scipy `get_window('hann', length,
 * fftbins=True)` used by librosa's `stft`: `w[n] = 0.5 - 0.5 cos(2 pi n / length)`. Computed the way
 * scipy does (`0.5 + 0.5 cos(x)` with `x = linspace(-pi, pi, length + 1)`, last point dropped), so
 * values agree to the last bit up to `Math.cos` rounding.
 */
export function periodicHannWindow(length: number): Float64Array {
  if (!Number.isInteger(length) || length < 1)
    throw new RangeError(`window length must be a positive integer, got ${length}`);
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
  if (padded < fftSize)
    throw new RangeError(`signal of ${sampleCount} samples is too short for frames of ${fftSize} samples`);
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
