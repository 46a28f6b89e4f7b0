/**
 * Exhaustive check of the WebAssembly 16-bit encoder (pipeline/audio/audio-kernels.ts) against the
 * JavaScript reference (raw-audio.ts `toPcm16Integer`, stored as an Int16Array stores it: NaN as 0):
 * every one of the 2^32 float32 bit patterns, mono and stereo; and of the rounding to the grid
 * (`quantizeSamples`) against `toPcm16Integer(x) / 32768 + 0` as a Float32Array stores it (bit for bit;
 * NaN for NaN, whatever its bits). About 40 s of CPU; run it after changing
 * pipeline/audio/audio-kernels.wat (the unit tests check a structured subset on every run).
 *
 *     npx tsx scripts/check-audio-kernels.ts     # exit 1, printing the first differences, if any differs
 */
import { pathToFileURL } from 'node:url';
import { encodeMonoPcm16, encodeStereoPcm16Words, quantizeSamples } from '../pipeline/audio/audio-kernels.ts';
import { toPcm16Integer } from '../pipeline/audio/raw-audio.ts';

/** Bit patterns per round: 4 Mi. */
const ROUND = 1 << 22;

/**
 * Compares the kernels with the reference on the bit patterns `[first, end)` (multiples of {@link ROUND}).
 * @returns the number compared and up to 20 differences, described
 * @throws Error when the kernels cannot run on this platform
 */
export function compareEncoders(first = 0, end = 2 ** 32): { compared: number; differences: string[] } {
  const bits = new Uint32Array(ROUND);
  const samples = new Float32Array(bits.buffer);
  const mono = new Int16Array(ROUND);
  const words = new Uint32Array(ROUND);
  const quantized = new Float32Array(ROUND);
  const quantizedBits = new Uint32Array(quantized.buffer);
  const expectedQuantized = new Float32Array(1);
  const expectedQuantizedBits = new Uint32Array(expectedQuantized.buffer);
  const differences: string[] = [];
  let compared = 0;
  for (let start = first; start < end; start += ROUND) {
    for (let index = 0; index < ROUND; index++) bits[index] = (start + index) >>> 0;
    // stereo: the same samples left, and reversed right, so each lane meets other neighbours
    const reversed = samples.slice().reverse();
    if (
      !encodeMonoPcm16(samples, mono) ||
      !encodeStereoPcm16Words(samples, reversed, words) ||
      !quantizeSamples(samples, quantized)
    )
      throw new Error('the WebAssembly kernels do not run on this platform');
    for (let index = 0; index < ROUND; index++) {
      const expected = toPcm16Integer(samples[index]!) | 0; // NaN as 0, as an Int16Array stores it
      const expectedRight = toPcm16Integer(reversed[index]!) | 0;
      const expectedWord = ((expected & 0xffff) | (expectedRight << 16)) >>> 0;
      if ((mono[index] !== expected || words[index] !== expectedWord) && differences.length < 20) {
        differences.push(
          `0x${bits[index]!.toString(16).padStart(8, '0')} (${samples[index]}): mono ${mono[index]}, stereo word 0x${words[index]!.toString(16)}; expected ${expected}, 0x${expectedWord.toString(16)}`,
        );
      }
      expectedQuantized[0] = toPcm16Integer(samples[index]!) / 32768 + 0;
      const sameQuantized =
        quantizedBits[index] === expectedQuantizedBits[0] ||
        (Number.isNaN(quantized[index]) && Number.isNaN(expectedQuantized[0]));
      if (!sameQuantized && differences.length < 20) {
        differences.push(
          `0x${bits[index]!.toString(16).padStart(8, '0')} (${samples[index]}): rounded to the grid as bits 0x${quantizedBits[index]!.toString(16)}, expected 0x${expectedQuantizedBits[0]!.toString(16)}`,
        );
      }
    }
    compared += ROUND;
  }
  return { compared, differences };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { compared, differences } = compareEncoders();
  console.log(
    `${compared} float32 values compared, ${differences.length === 0 ? 'no difference' : `differences:\n${differences.join('\n')}`}`,
  );
  if (differences.length > 0) process.exitCode = 1;
}
