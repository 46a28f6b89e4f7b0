import { describe, expect, test } from 'vitest';
import { p808MelFeatures, resampleTo16k, extendByDoubling } from './dnsmos.ts';
import {
  RealPowerSpectrum,
  centredFrameCount,
  fftFrequencies,
  hzToMelSlaney,
  melFrequenciesSlaney,
  melSpectrogram,
  melToHzSlaney,
  periodicHannWindow,
  powerToDb,
  slaneyMelFilterbank,
} from './mel-spectrogram.ts';
import { seededGaussianNoise, synthesizeSpeechWithEspeak } from './testing/test-support.ts';

// ---------------------------------------------------------------------------------------------
// An independent, deliberately naive implementation of the DNSMOS P.808 front end, written from the
// formulas (Slaney's Auditory Toolbox mel scale, librosa's documented defaults) rather than from
// mel-spectrogram.ts: float64 throughout, dense matrices, direct O(N^2) DFT, explicit zero padding.
// ---------------------------------------------------------------------------------------------

/** Slaney mel: 3 mel per 200 Hz up to 1 kHz, then 27 mel per factor 6.4. */
function naiveHzToMel(hz: number): number {
  return hz < 1000 ? (3 * hz) / 200 : 15 + (27 * Math.log(hz / 1000)) / Math.log(6.4);
}
function naiveMelToHz(mel: number): number {
  return mel < 15 ? (200 * mel) / 3 : 1000 * Math.pow(6.4, (mel - 15) / 27);
}

/** Dense [bands][bins] filterbank: unit-area triangles between consecutive Slaney-spaced edges. */
function naiveFilterbank(sampleRate: number, fftSize: number, bands: number): number[][] {
  const topMel = naiveHzToMel(sampleRate / 2);
  const edges: number[] = [];
  for (let index = 0; index < bands + 2; index++) edges.push(naiveMelToHz((topMel * index) / (bands + 1)));
  const bins = Math.floor(fftSize / 2) + 1;
  const matrix: number[][] = [];
  for (let band = 0; band < bands; band++) {
    const [left, centre, right] = [edges[band]!, edges[band + 1]!, edges[band + 2]!];
    const row: number[] = [];
    for (let bin = 0; bin < bins; bin++) {
      const frequency = (bin * sampleRate) / fftSize;
      let height = 0;
      if (frequency > left && frequency <= centre) height = (frequency - left) / (centre - left);
      else if (frequency > centre && frequency < right) height = (right - frequency) / (right - centre);
      row.push((height * 2) / (right - left));
    }
    matrix.push(row);
  }
  return matrix;
}

/** Direct real DFT power spectrum, bins 0..floor(N/2). */
function naivePowerSpectrum(frame: number[]): number[] {
  const size = frame.length;
  const result: number[] = [];
  for (let bin = 0; bin <= Math.floor(size / 2); bin++) {
    let real = 0;
    let imaginary = 0;
    for (let n = 0; n < size; n++) {
      const angle = (2 * Math.PI * ((bin * n) % size)) / size;
      real += frame[n]! * Math.cos(angle);
      imaginary -= frame[n]! * Math.sin(angle);
    }
    result.push(real * real + imaginary * imaginary);
  }
  return result;
}

/** The P.808 input of one 144160-sample window, [900][120], from the formulas. */
function naiveP808Features(window: ArrayLike<number>): number[][] {
  const sampleRate = 16000;
  const fftSize = 321;
  const hop = 160;
  const signalLength = window.length - 160; // audio_seg[:-160]
  const filterbank = naiveFilterbank(sampleRate, fftSize, 120);
  const hann: number[] = [];
  for (let n = 0; n < fftSize; n++) hann.push(0.5 * (1 - Math.cos((2 * Math.PI * n) / fftSize)));
  const frames = 1 + Math.floor((signalLength + 2 * 160 - fftSize) / hop);
  const mel: number[][] = [];
  let maximum = 0;
  for (let frame = 0; frame < frames; frame++) {
    const windowed: number[] = [];
    for (let n = 0; n < fftSize; n++) {
      const index = frame * hop - 160 + n;
      windowed.push(index >= 0 && index < signalLength ? window[index]! * hann[n]! : 0);
    }
    const power = naivePowerSpectrum(windowed);
    const row = filterbank.map((weights) => weights.reduce((sum, weight, bin) => sum + weight * power[bin]!, 0));
    for (const value of row) maximum = Math.max(maximum, value);
    mel.push(row);
  }
  const decibels = mel.map((row) =>
    row.map((value) => 10 * Math.log10(Math.max(1e-10, value)) - 10 * Math.log10(Math.max(1e-10, maximum))),
  );
  let top = -Infinity;
  for (const row of decibels) for (const value of row) top = Math.max(top, value);
  return decibels.map((row) => row.map((value) => (Math.max(value, top - 80) + 40) / 40));
}

function maximumDifference(actual: Float32Array, expected: number[][]): number {
  let worst = 0;
  expected.forEach((row, frame) =>
    row.forEach((value, band) => {
      worst = Math.max(worst, Math.abs(actual[frame * row.length + band]! - value));
    }),
  );
  return worst;
}

describe('Slaney mel scale (librosa hz_to_mel / mel_to_hz, htk=False)', () => {
  test('known values: 1000 Hz = 15 mel, 6400 Hz = 42 mel, linear region 3 mel per 200 Hz', () => {
    expect(hzToMelSlaney(1000)).toBeCloseTo(15, 12);
    expect(hzToMelSlaney(6400)).toBeCloseTo(42, 12);
    expect(hzToMelSlaney(200)).toBeCloseTo(3, 12);
    expect(hzToMelSlaney(0)).toBe(0);
    expect(hzToMelSlaney(8000)).toBeCloseTo(15 + (27 * Math.log(8)) / Math.log(6.4), 12);
  });

  test('mel_to_hz inverts hz_to_mel on both sides of 1 kHz', () => {
    for (const hz of [0, 50, 999.5, 1000, 1234.5, 4000, 8000, 22050])
      expect(melToHzSlaney(hzToMelSlaney(hz))).toBeCloseTo(hz, 8);
  });

  test('mel_frequencies: equally spaced in mel, exact end points', () => {
    const edges = melFrequenciesSlaney(122, 0, 8000);
    expect(edges.length).toBe(122);
    expect(edges[0]).toBe(0);
    expect(edges[121]).toBeCloseTo(8000, 9);
    const step = hzToMelSlaney(edges[1]!) - hzToMelSlaney(edges[0]!);
    for (let index = 1; index < 122; index++)
      expect(hzToMelSlaney(edges[index]!) - hzToMelSlaney(edges[index - 1]!)).toBeCloseTo(step, 9);
  });
});

describe('building blocks', () => {
  test('fft_frequencies for n_fft=321 at 16 kHz: 161 bins, 16000/321 Hz apart, no Nyquist bin', () => {
    const frequencies = fftFrequencies(16000, 321);
    expect(frequencies.length).toBe(161);
    expect(frequencies[1]).toBeCloseTo(16000 / 321, 10);
    expect(frequencies[160]).toBeCloseTo((160 * 16000) / 321, 8);
  });

  test('periodic Hann window = scipy get_window("hann", N, fftbins=True)', () => {
    const window = periodicHannWindow(321);
    expect(window[0]).toBeCloseTo(0, 15);
    for (let n = 0; n < 321; n++) expect(window[n]).toBeCloseTo(0.5 - 0.5 * Math.cos((2 * Math.PI * n) / 321), 14);
    // Periodic, not symmetric: w[1] = w[N-1] but the last sample is not 0.
    expect(window[1]).toBeCloseTo(window[320]!, 14);
    expect(window[320]).toBeGreaterThan(0);
  });

  test('centred frame count: 144000 samples, n_fft 321, hop 160 -> 900 frames (model input [1, 900, 120])', () => {
    expect(centredFrameCount(144000, 321, 160)).toBe(900);
    expect(centredFrameCount(144160, 321, 160)).toBe(901);
    expect(centredFrameCount(16000, 512, 160)).toBe(101);
  });

  test.each([2, 3, 5, 321, 512, 1000])(
    'power spectrum of size %i (fft.js, Bluestein for non-powers of two) = direct DFT',
    (size) => {
      const uniform = seededGaussianNoise(size, size);
      const frame = Array.from(uniform);
      const expected = naivePowerSpectrum(frame);
      const actual = new Float64Array(expected.length);
      new RealPowerSpectrum(size).compute(frame, actual);
      const scale = Math.max(...expected);
      expected.forEach((value, bin) => expect(Math.abs(actual[bin]! - value) / scale).toBeLessThan(1e-12));
    },
  );

  test('power_to_db as librosa: ref=max, amin floor, top_db clamp', () => {
    const decibels = powerToDb([1, 0.1, 1e-3, 1e-12, 0], { reference: 'max' });
    expect(Array.from(decibels)).toEqual([0, expect.closeTo(-10, 12), expect.closeTo(-30, 12), -80, -80]);
    expect(Array.from(powerToDb([100, 1]))).toEqual([expect.closeTo(20, 12), 0]);
    expect(Array.from(powerToDb([1, 1e-12], { topDb: null }))).toEqual([0, expect.closeTo(-100, 9)]);
    expect(Array.from(powerToDb([0, 0], { reference: 'max' }))).toEqual([0, 0]);
    expect(() => powerToDb([1], { amin: 0 })).toThrow(RangeError);
  });
});

describe('Slaney-normalised mel filterbank (librosa filters.mel, htk=False, norm="slaney")', () => {
  test('every triangle has unit area in Hz (checked on a fine DFT grid)', () => {
    const sampleRate = 16000;
    const fftSize = 16384;
    const filterbank = slaneyMelFilterbank({ sampleRate, fftSize, hopLength: 160, melBandCount: 40 });
    const binWidth = sampleRate / fftSize;
    for (let band = 0; band < 40; band++) {
      const area = filterbank.weights[band]!.reduce((sum, weight) => sum + weight, 0) * binWidth;
      expect(area).toBeCloseTo(1, 2);
    }
  });

  test('peak of each triangle is 2 / (upper edge - lower edge)', () => {
    const edges = melFrequenciesSlaney(42, 0, 8000);
    const filterbank = slaneyMelFilterbank({ sampleRate: 16000, fftSize: 16384, hopLength: 160, melBandCount: 40 });
    for (let band = 0; band < 40; band++) {
      const peak = Math.max(...filterbank.weights[band]!);
      const expected = 2 / (edges[band + 2]! - edges[band]!);
      expect(peak).toBeLessThanOrEqual(expected * (1 + 1e-6));
      expect(peak).toBeGreaterThan(expected * 0.98);
    }
  });

  test('DNSMOS filterbank (16 kHz, n_fft 321, 120 bands) equals the independent one to float32 precision', () => {
    const filterbank = slaneyMelFilterbank({ sampleRate: 16000, fftSize: 321, hopLength: 160, melBandCount: 120 });
    const expected = naiveFilterbank(16000, 321, 120);
    expect(filterbank.binCount).toBe(161);
    for (let band = 0; band < 120; band++) {
      for (let bin = 0; bin < 161; bin++) {
        const offset = bin - filterbank.firstBin[band]!;
        const weights = filterbank.weights[band]!;
        const actual = offset >= 0 && offset < weights.length ? weights[offset]! : 0;
        expect(Math.abs(actual - expected[band]![bin]!)).toBeLessThanOrEqual(
          Math.abs(expected[band]![bin]!) * 1e-6 + 1e-12,
        );
      }
    }
  });
});

describe('DNSMOS P.808 mel front end', () => {
  test('speech window: matches the independent implementation to 1e-4', async () => {
    const { samples, sampleRate } = synthesizeSpeechWithEspeak(
      'The quick brown fox jumps over the lazy dog near the river bank. We talked about the history of the old city.',
    );
    const audio = extendByDoubling(await resampleTo16k(samples, sampleRate));
    const window = audio.subarray(0, 144160);
    const features = p808MelFeatures(window);
    expect(features.length).toBe(900 * 120);
    const difference = maximumDifference(features, naiveP808Features(window));
    expect(difference).toBeLessThan(1e-4);
  });

  test('noise window with a silent start: matches the independent implementation to 1e-4', () => {
    const window = seededGaussianNoise(144160, 11).map((value, index) => (index < 30000 ? 0 : value * 0.01));
    const difference = maximumDifference(p808MelFeatures(window), naiveP808Features(window));
    expect(difference).toBeLessThan(1e-4);
  });

  test('generic melSpectrogram with a power-of-two n_fft matches the naive DFT route', () => {
    const signal = seededGaussianNoise(4000, 5);
    const spectrogram = melSpectrogram(signal, { sampleRate: 16000, fftSize: 512, hopLength: 256, melBandCount: 40 });
    expect(spectrogram.frameCount).toBe(1 + Math.floor((4000 + 512 - 512) / 256));
    const filterbank = naiveFilterbank(16000, 512, 40);
    const hann = Array.from({ length: 512 }, (_, n) => 0.5 * (1 - Math.cos((2 * Math.PI * n) / 512)));
    for (const frame of [0, 7, spectrogram.frameCount - 1]) {
      const windowed = hann.map((weight, n) => {
        const index = frame * 256 - 256 + n;
        return index >= 0 && index < signal.length ? signal[index]! * weight : 0;
      });
      const power = naivePowerSpectrum(windowed);
      filterbank.forEach((weights, band) => {
        const expected = weights.reduce((sum, weight, bin) => sum + weight * power[bin]!, 0);
        expect(spectrogram.data[frame * 40 + band]).toBeCloseTo(expected, 6);
      });
    }
  });
});
