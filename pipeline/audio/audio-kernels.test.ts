import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { binaryPathOf, compileWat } from '../../scripts/build-wasm.ts';
import { compareEncoders } from '../../scripts/check-audio-kernels.ts';
import { packageFile } from '../storage/package-files.ts';
import {
  addSamples,
  audioKernelsAvailable,
  blockPeaks,
  decodePcm16Samples,
  encodeMonoPcm16,
  encodeStereoPcm16Words,
  quantizeSamples,
  samplesOnPcm16Grid,
} from './audio-kernels.ts';
import { samplePeaks } from './true-peak-limiter.ts';
import { isOnPcm16Grid, placeOnTrackInPlace, quantizeToPcm16, toPcm16Integer } from './raw-audio.ts';
import { decodePcm16LittleEndian, encodeWavPcm16 } from './wav.ts';

/** Values where rounding, clamping or the float32 arithmetic could go wrong. */
const EDGES = [
  0,
  -0,
  NaN,
  Infinity,
  -Infinity,
  1,
  -1,
  2,
  -2,
  3.4e38,
  -3.4e38,
  1e-30,
  -1e-30,
  1e-45,
  0.5 / 32768,
  -0.5 / 32768,
  2 ** -16 - 2 ** -40,
  -(2 ** -16 - 2 ** -40),
  1.5 / 32768,
  -1.5 / 32768,
  2.5 / 32768,
  -2.5 / 32768,
  32766.5 / 32768,
  32767 / 32768,
  32767.25 / 32768,
  32767.5 / 32768,
  32767.75 / 32768,
  -32767.5 / 32768,
  -32768 / 32768,
  -32768.5 / 32768,
  16383.5 / 32768,
  -16383.5 / 32768,
  16384.5 / 32768,
  Math.fround(0.999_999_9),
  Math.fround(-0.999_999_9),
];

/** Deterministic samples: the edges, then halves between grid steps, then noise at several levels. */
function samples(length: number, seed: number): Float32Array {
  let state = seed >>> 0;
  const random = () => (state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
  return Float32Array.from({ length }, (_, index) => {
    if (index < EDGES.length) return EDGES[(index + seed) % EDGES.length]!;
    const kind = index % 3;
    if (kind === 0) return (Math.floor(random() * 65_536) - 32_768 + 0.5) / 32_768;
    if (kind === 1) return (random() * 2.2 - 1.1) * (random() < 0.5 ? 1 : 1e-3);
    return random() * 2 - 1;
  });
}

/** Each float's bits, 'NaN' for any NaN (whose bits WebAssembly leaves open). */
function bitsOf(values: Float32Array): (number | 'NaN')[] {
  return Array.from(new Uint32Array(values.buffer, values.byteOffset, values.length), (bits, index) =>
    Number.isNaN(values[index]) ? 'NaN' : bits,
  );
}

describe('the WebAssembly audio kernels', () => {
  it('is the compilation of its WebAssembly text, and runs here', async () => {
    const source = packageFile('pipeline', 'audio', 'audio-kernels.wat');
    expect(Buffer.from(await compileWat(source)).equals(readFileSync(binaryPathOf(source)))).toBe(true);
    expect(audioKernelsAvailable()).toBe(true);
  });

  it("gives toPcm16Integer's integers, stereo and mono, across chunks and for lengths that are not a multiple of 4", () => {
    for (const length of [0, 1, 3, 4, 7, EDGES.length, 65_536, 65_536 * 2 + 5]) {
      // views at an offset into longer arrays, as a track's subarray would be
      const left = samples(length + 9, 1).subarray(5, 5 + length);
      const right = samples(length + 2, 2).subarray(1, 1 + length);
      const words = new Uint32Array(length).fill(0xdead_beef);
      expect(encodeStereoPcm16Words(left, right, words)).toBe(true);
      const expectedWords = Uint32Array.from(
        { length },
        (_, frame) => (toPcm16Integer(left[frame]!) & 0xffff) | (toPcm16Integer(right[frame]!) << 16),
      );
      expect(words).toEqual(expectedWords);

      const pcm = new Int16Array(length).fill(12_345);
      expect(encodeMonoPcm16(left, pcm)).toBe(true);
      expect(pcm).toEqual(Int16Array.from(left, toPcm16Integer));
    }
  });

  it('decode: integer / 32768 for every 16-bit integer, across chunks and odd lengths', () => {
    const every = Int16Array.from({ length: 65_536 }, (_, index) => index - 32_768);
    for (const pcm of [
      every,
      every.subarray(3, 3 + 70_001 - 65_536 + 17),
      new Int16Array(0),
      Int16Array.from([1, -1, 32_767]),
      Int16Array.from({ length: 65_536 * 2 + 9 }, (_, index) => ((index * 7919) % 65_536) - 32_768),
    ]) {
      const samples = new Float32Array(pcm.length + 2).fill(5);
      expect(decodePcm16Samples(pcm, samples)).toBe(true);
      expect(samples.subarray(0, pcm.length)).toEqual(Float32Array.from(pcm, (integer) => integer / 32_768));
      expect([...samples.subarray(pcm.length)]).toEqual([5, 5]);
    }
  });

  it('quantize: toPcm16Integer(x) / 32768 + 0 bit for bit (NaN kept as NaN), into another array or in place, across chunks and odd lengths', () => {
    for (const length of [0, 1, 3, EDGES.length, 65_536, 65_536 * 2 + 5]) {
      const input = samples(length + 6, 15).subarray(6);
      const expected = Float32Array.from(input, (value) => toPcm16Integer(value) / 32_768 + 0);
      const into = new Float32Array(length + 1).fill(9);
      expect(quantizeSamples(input, into)).toBe(true);
      expect(bitsOf(into.subarray(0, length))).toEqual(bitsOf(expected));
      expect(into[length]).toBe(9);
      const inPlace = Float32Array.from(input);
      expect(quantizeSamples(inPlace, inPlace)).toBe(true);
      expect(bitsOf(inPlace)).toEqual(bitsOf(expected));
    }
    expect(() => quantizeSamples(new Float32Array(5), new Float32Array(4))).toThrow(RangeError);
  });

  it('grid test: true for every 16-bit value, false for one sample off the grid wherever it is (−0, NaN, ±Infinity, 1.0, half steps)', () => {
    const grid = Float32Array.from(
      { length: 65_536 * 2 + 7 },
      (_, index) => (((index * 7919) % 65_536) - 32_768) / 32_768,
    );
    expect(samplesOnPcm16Grid(grid)).toBe(true);
    expect(samplesOnPcm16Grid(new Float32Array(0))).toBe(true);
    expect(samplesOnPcm16Grid(Float32Array.from([-1, 32_767 / 32_768, 0, 3]))).toBe(false);
    for (const offGrid of [-0, NaN, Infinity, -Infinity, 1, -32_769 / 32_768, 0.5 / 32_768, 1e-30, 32_767.5 / 32_768]) {
      for (const at of [0, 3, 65_535, 65_536, 100_000, 131_071, 131_072, grid.length - 1]) {
        const copy = Float32Array.from(grid);
        copy[at] = offGrid;
        expect(samplesOnPcm16Grid(copy)).toBe(false);
        expect(samplesOnPcm16Grid(copy.subarray(at === 0 ? 1 : 0, at))).toBe(true); // the samples before it
      }
    }
  });

  it('add: the float32 sums JavaScript stores, in place, for any values (overflow, NaN, −0 included)', () => {
    for (const length of [0, 1, 5, EDGES.length, 65_536 + 3, 65_536 * 2]) {
      const target = samples(length + 4, 9).map((value, index) => (index % 5 === 0 ? value * 3e38 : value));
      const source = samples(length, 10).map((value, index) =>
        index % 7 === 0 ? value * 3e38 : index % 11 === 0 ? -value : value,
      );
      const expected = Float32Array.from(target);
      for (let index = 0; index < length; index++) expected[index + 2] = expected[index + 2]! + source[index]!;
      expect(addSamples(target.subarray(2, 2 + length), source)).toBe(true);
      expect(Buffer.from(target.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
    }
  });

  it('block peaks: the largest magnitude of each block, NaN ignored, a short last block, across chunks; other block sizes refused', () => {
    for (const [length, blockSize] of [
      [0, 256],
      [1, 256],
      [255, 256],
      [257, 4],
      [EDGES.length * 9, 8],
      [65_536 * 2 + 300, 256],
      [70_000, 65_536],
    ] as const) {
      const input = samples(length + 3, 13).subarray(3);
      const expected = Float32Array.from({ length: Math.ceil(length / blockSize) }, (_, block) => {
        let peak = 0;
        for (let n = block * blockSize; n < Math.min(length, (block + 1) * blockSize); n++)
          if (Math.abs(input[n]!) > peak) peak = Math.abs(input[n]!);
        return peak;
      });
      const peaks = new Float32Array(expected.length + 1).fill(-1);
      expect(blockPeaks(input, blockSize, peaks)).toBe(true);
      expect(peaks.subarray(0, expected.length)).toEqual(expected);
      expect(peaks[expected.length]).toBe(-1);
    }
    const nanPeaks = Float32Array.from([-1, -1]);
    expect(blockPeaks(Float32Array.from([NaN, NaN, NaN, NaN, NaN, 0.25, NaN, -0.5]), 4, nanPeaks)).toBe(true);
    expect([...nanPeaks]).toEqual([0, 0.5]);
    for (const size of [0, 3, 6, 12, 1.5, 131_072])
      expect(blockPeaks(new Float32Array(8), size, new Float32Array(8))).toBe(false);
  });

  it('encodes every float32 whose product with 32768 lies in ±[0.25, 1) or ±[16384, 32768), and the infinities, NaN and the largest values, as toPcm16Integer does (all 2^32: scripts/check-audio-kernels.ts)', () => {
    // around the first and the last half step (floor(y + 0.5), an earlier form, was wrong at y = 0.5 − 2^−25)
    for (const sign of [0, 0x8000_0000]) {
      expect(compareEncoders(sign + 0x3700_0000, sign + 0x3800_0000)).toEqual({
        compared: 0x0100_0000,
        differences: [],
      });
      expect(compareEncoders(sign + 0x3f00_0000, sign + 0x3f80_0000)).toEqual({
        compared: 0x0080_0000,
        differences: [],
      });
      expect(compareEncoders(sign + 0x7f40_0000, sign + 0x8000_0000)).toEqual({
        compared: 0x00c0_0000,
        differences: [],
      });
    }
  });

  it('writes only the given output (a subarray of a longer buffer keeps the rest)', () => {
    const words = new Uint32Array(10).fill(7);
    encodeStereoPcm16Words(samples(20, 3), samples(20, 4), words.subarray(2, 8));
    expect([...words.subarray(0, 2), ...words.subarray(8)]).toEqual([7, 7, 7, 7]);
    const pcm = new Int16Array(10).fill(7);
    encodeMonoPcm16(samples(20, 5), pcm.subarray(3, 6));
    expect([...pcm.subarray(0, 3), ...pcm.subarray(6)]).toEqual([7, 7, 7, 7, 7, 7, 7]);
  });

  it('encodeWavPcm16, decodePcm16LittleEndian, quantizeToPcm16, isOnPcm16Grid, placeOnTrackInPlace and the true-peak estimate give the same bytes with them as with the JavaScript loops they replace (the platform without them)', async () => {
    const stereo = { channels: [samples(70_001, 6), samples(70_001, 7)], sampleRate: 24_000 };
    const mono = { channels: [samples(70_001, 8)], sampleRate: 16_000 };
    const wavs = [encodeWavPcm16(stereo), encodeWavPcm16(mono)];
    const decoded = decodePcm16LittleEndian(wavs[0]!.subarray(44));
    const track = samples(80_000, 11);
    placeOnTrackInPlace(track, samples(70_001, 12), 9_000);
    const loud = Float32Array.from(samples(70_001, 14), (value, index) =>
      index % 20_000 < 500 ? value * 1.5 : value * 0.01,
    );
    const peaks = samplePeaks(loud, 24_000, 0.5);
    vi.resetModules();
    const rounded = quantizeToPcm16(samples(70_001, 16));
    const roundedWithoutNaN = rounded.map((value) => (Number.isNaN(value) ? 0.25 : value)); // NaN is kept by rounding, and is off the grid
    const onGrid = [isOnPcm16Grid(roundedWithoutNaN), isOnPcm16Grid(samples(70_001, 17))];
    vi.doMock('./audio-kernels.ts', () => ({
      encodeStereoPcm16Words: () => false,
      encodeMonoPcm16: () => false,
      decodePcm16Samples: () => false,
      addSamples: () => false,
      blockPeaks: () => false,
      quantizeSamples: () => false,
      samplesOnPcm16Grid: () => null,
      audioKernelsAvailable: () => false,
    }));
    try {
      const withoutKernelsRaw = await import('./raw-audio.ts');
      const roundedWithoutKernels = withoutKernelsRaw.quantizeToPcm16(samples(70_001, 16));
      expect(bitsOf(roundedWithoutKernels)).toEqual(bitsOf(rounded));
      expect([
        withoutKernelsRaw.isOnPcm16Grid(roundedWithoutNaN),
        withoutKernelsRaw.isOnPcm16Grid(samples(70_001, 17)),
      ]).toEqual(onGrid);
      expect(onGrid).toEqual([true, false]);
      const withoutKernels = await import('./wav.ts');
      const { placeOnTrackInPlace: placeWithoutKernels } = await import('./raw-audio.ts');
      const { samplePeaks: peaksWithoutKernels } = await import('./true-peak-limiter.ts');
      expect(Buffer.from(peaksWithoutKernels(loud, 24_000, 0.5).buffer).equals(Buffer.from(peaks.buffer))).toBe(true);
      expect(Buffer.from(withoutKernels.encodeWavPcm16(stereo)).equals(Buffer.from(wavs[0]!))).toBe(true);
      expect(Buffer.from(withoutKernels.encodeWavPcm16(mono)).equals(Buffer.from(wavs[1]!))).toBe(true);
      expect(
        Buffer.from(withoutKernels.decodePcm16LittleEndian(wavs[0]!.subarray(44)).buffer).equals(
          Buffer.from(decoded.buffer),
        ),
      ).toBe(true);
      const trackWithoutKernels = samples(80_000, 11);
      placeWithoutKernels(trackWithoutKernels, samples(70_001, 12), 9_000);
      expect(Buffer.from(trackWithoutKernels.buffer).equals(Buffer.from(track.buffer))).toBe(true);
    } finally {
      vi.doUnmock('./audio-kernels.ts');
      vi.resetModules();
    }
  });
});
