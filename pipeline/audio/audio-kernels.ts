/**
 * Per-sample audio loops in WebAssembly SIMD (audio-kernels.wat, compiled to audio-kernels.wasm by
 * scripts/build-wasm.ts): 16-bit PCM encoding (the integers of raw-audio.ts `toPcm16Integer`: round
 * half up, clamped, NaN as 0) and decoding (integer / 32768), rounding floats to that grid and testing
 * whether they are on it, mixing (float32 addition) and the true-peak limiter's block peaks (largest
 * magnitude per block), each
 * giving exactly the numbers of the JavaScript loop it replaces, four samples per instruction.
 *
 * Why: in a 20-dialogue saturation build these loops run 2-5 times slower in JavaScript than in
 * isolation (the WAV encoding of the masters 4.9 ns per frame against 2.3 in a loop of its own).
 * `node --trace-opt` shows them optimized again and again: 4-6 optimizing compilations per build each
 * (the encoder, the decoder, the true-peak estimate), and deoptimizations in between, so part of every
 * call runs unoptimized. WebAssembly is compiled once and keeps its machine code. With it, the WAV encoding of the
 * masters and the synthesis cache entries takes about 0.2 s of the build's thread (0.85-1.0 s in
 * JavaScript), the mixer's additions 0.08 s (0.32 s), the true-peak limiter 0.07 s (0.37 s) (README,
 * "Throughput").
 *
 * The samples are copied into the module's memory in chunks of {@link CHUNK_SAMPLES} and the results
 * copied out (a memcpy each way). Nothing awaits between the two, so one instance per thread is safe;
 * the module is compiled once per thread, on first use, synchronously (under 1 KiB). Where it cannot be
 * (a platform without WebAssembly SIMD; a missing or damaged file, which is also warned about once per
 * thread), every function here returns false, writing nothing, and the caller runs its JavaScript loop,
 * which gives the same numbers.
 */
import { readFileSync } from 'node:fs';
import { packageFile } from '../storage/package-files.ts';

/** Samples (frames for stereo) per call into the module: 64 Ki, so one call's input and output (768 KiB at most) fit its 1 MiB of memory. */
const CHUNK_SAMPLES = 65_536;

/** Byte offsets in the module's memory: three areas of {@link CHUNK_SAMPLES} float32 each. */
const AREA_0 = 0;
const AREA_1 = CHUNK_SAMPLES * 4;
const AREA_2 = CHUNK_SAMPLES * 8;

interface Exports {
  encodeStereo(left: number, right: number, out: number, frames: number): void;
  encodeMono(samples: number, out: number, count: number): void;
  decodePcm16(input: number, out: number, count: number): void;
  add(target: number, source: number, count: number): void;
  quantize(input: number, out: number, count: number): void;
  onGrid(samples: number, count: number): number;
  blockPeaks(samples: number, out: number, blocks: number, blockSize: number): void;
  memory: { buffer: ArrayBuffer };
}

interface Kernels {
  exports: Exports;
  floats: Float32Array;
  words: Uint32Array;
  integers: Int16Array;
}

/** The part of the WebAssembly JavaScript API used here (the project's TypeScript libraries hold no DOM types). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

/** The compiled module, read from the package (not from dist/): part of the placement stage's cache key (stages/place-timeline.ts `placementCodeDigest`). */
export const AUDIO_KERNELS_FILE = packageFile('pipeline', 'audio', 'audio-kernels.wasm');

let kernels: Kernels | null | undefined;

/** The module's exports and views of its memory; null when this platform cannot compile it. */
function loadKernels(): Kernels | null {
  if (kernels !== undefined) return kernels;
  try {
    const { Module, Instance } = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
    const exports = new Instance(new Module(readFileSync(AUDIO_KERNELS_FILE))).exports as unknown as Exports;
    const buffer = exports.memory.buffer; // never grown: the views stay valid
    if (buffer.byteLength < AREA_2 + CHUNK_SAMPLES * 4) throw new Error('its memory is smaller than 768 KiB');
    kernels = {
      exports,
      floats: new Float32Array(buffer),
      words: new Uint32Array(buffer),
      integers: new Int16Array(buffer),
    };
  } catch (error) {
    kernels = null;
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    process.emitWarning(
      `${AUDIO_KERNELS_FILE}: the WebAssembly audio kernels do not run here (${reason}); the same numbers come from JavaScript loops, more slowly`,
      { code: 'DUPLEXSYNTH_AUDIO_KERNELS' },
    );
  }
  return kernels;
}

/** Whether the WebAssembly kernels run on this platform (else the callers' JavaScript loops do). */
export function audioKernelsAvailable(): boolean {
  return loadKernels() !== null;
}

/**
 * Calls `body` for each chunk of `total` samples: its first sample, its length (at most
 * {@link CHUNK_SAMPLES}) and that length rounded up to a multiple of `step` (the kernels take whole
 * vectors; the padding is zeros and its results are not read).
 */
function forEachChunk(
  total: number,
  step: number,
  body: (start: number, length: number, padded: number) => void,
): void {
  for (let start = 0; start < total; start += CHUNK_SAMPLES) {
    const length = Math.min(CHUNK_SAMPLES, total - start);
    body(start, length, Math.ceil(length / step) * step);
  }
}

/**
 * Runs a kernel of one input and one output over `count` elements in chunks: each chunk of `input` is
 * copied into `inputMemory` at {@link AREA_0} (zero-padded to a multiple of `step`), `kernel(AREA_0,
 * AREA_1, padded)` runs, and the chunk's results are copied from `outputMemory` at {@link AREA_1} into `output`.
 */
function mapThroughKernel<I extends Float32Array | Int16Array, O extends Float32Array | Int16Array>(
  input: I,
  inputMemory: I,
  output: O,
  outputMemory: O,
  count: number,
  step: number,
  kernel: (input: number, out: number, count: number) => void,
): void {
  const outputAt = AREA_1 / outputMemory.BYTES_PER_ELEMENT;
  forEachChunk(count, step, (start, length, padded) => {
    copyIn(inputMemory, AREA_0 / inputMemory.BYTES_PER_ELEMENT, input, start, length, padded);
    kernel(AREA_0, AREA_1, padded);
    output.set(outputMemory.subarray(outputAt, outputAt + length), start);
  });
}

/** Copies `source[start, start + length)` into `memory` from element `at`, then zeros up to `at + padded`. */
function copyIn<T extends Float32Array | Int16Array>(
  memory: T,
  at: number,
  source: T,
  start: number,
  length: number,
  padded: number,
): void {
  memory.set(source.subarray(start, start + length), at);
  memory.fill(0, at + length, at + padded);
}

/**
 * Writes `words.length` stereo frames as 16-bit PCM, one 32-bit word per frame (left in the low half,
 * right in the high half; the bytes of a WAV's data on a little-endian platform).
 * @param left,right samples, full scale 1.0, at least `words.length` each
 * @param words where the frames go (length = frames)
 * @returns false, writing nothing, when the kernels are not available; else true, every frame written
 * @throws RangeError when a channel is shorter than `words`
 */
export function encodeStereoPcm16Words(left: Float32Array, right: Float32Array, words: Uint32Array): boolean {
  if (left.length < words.length || right.length < words.length)
    throw new RangeError(
      `encodeStereoPcm16Words: ${left.length} and ${right.length} samples for ${words.length} frames`,
    );
  const loaded = loadKernels();
  if (loaded === null) return false;
  const { exports, floats } = loaded;
  forEachChunk(words.length, 4, (start, length, padded) => {
    copyIn(floats, AREA_0 / 4, left, start, length, padded);
    copyIn(floats, AREA_1 / 4, right, start, length, padded);
    exports.encodeStereo(AREA_0, AREA_1, AREA_2, padded);
    words.set(loaded.words.subarray(AREA_2 / 4, AREA_2 / 4 + length), start);
  });
  return true;
}

/**
 * Writes `pcm.length` samples as 16-bit integers.
 * @param samples full scale 1.0, at least `pcm.length`
 * @param pcm where the integers go
 * @returns false, writing nothing, when the kernels are not available; else true, every sample written
 * @throws RangeError when `samples` is shorter than `pcm`
 */
export function encodeMonoPcm16(samples: Float32Array, pcm: Int16Array): boolean {
  if (samples.length < pcm.length)
    throw new RangeError(`encodeMonoPcm16: ${samples.length} samples for ${pcm.length} integers`);
  const loaded = loadKernels();
  if (loaded === null) return false;
  mapThroughKernel(samples, loaded.floats, pcm, loaded.integers, pcm.length, 4, loaded.exports.encodeMono);
  return true;
}

/**
 * Decodes 16-bit signed integers to floats, integer / 32768.
 * @param pcm the integers (e.g. a view of a WAV's little-endian data on a little-endian platform)
 * @param samples where the floats go, at least `pcm.length`
 * @returns false, writing nothing, when the kernels are not available; else true, `pcm.length` samples written
 * @throws RangeError when `samples` is shorter than `pcm`
 */
export function decodePcm16Samples(pcm: Int16Array, samples: Float32Array): boolean {
  if (samples.length < pcm.length)
    throw new RangeError(`decodePcm16Samples: room for ${samples.length} samples, ${pcm.length} integers`);
  const loaded = loadKernels();
  if (loaded === null) return false;
  mapThroughKernel(pcm, loaded.integers, samples, loaded.floats, pcm.length, 8, loaded.exports.decodePcm16);
  return true;
}

/**
 * Rounds samples to the 16-bit PCM grid: the values of raw-audio.ts `quantizeToPcm16`'s loop
 * (`toPcm16Integer(x) / 32768 + 0`: round half up, clamped to [-32768, 32767] / 32768, -0 as +0, NaN
 * kept as NaN, its bits possibly other).
 * @param samples not changed (unless it is `into`)
 * @param into where the rounded samples go, at least `samples.length`: `samples` itself, or an array
 *   that does not overlap it (a view shifted against `samples` in the same buffer gets each sample's own
 *   rounding, where the JavaScript loop would read back what it had just written)
 * @returns false, writing nothing, when the kernels are not available; else true, `samples.length` written
 * @throws RangeError when `into` is shorter than `samples`
 */
export function quantizeSamples(samples: Float32Array, into: Float32Array): boolean {
  if (into.length < samples.length)
    throw new RangeError(`quantizeSamples: room for ${into.length} samples, ${samples.length} given`);
  const loaded = loadKernels();
  if (loaded === null) return false;
  mapThroughKernel(samples, loaded.floats, into, loaded.floats, samples.length, 4, loaded.exports.quantize);
  return true;
}

/**
 * Whether every sample is on the 16-bit PCM grid, as raw-audio.ts `isOnPcm16Grid`'s loop decides
 * (integer / 32768 with the integer in [-32768, 32767]; no -0, no NaN). Stops at the first chunk of
 * {@link CHUNK_SAMPLES} with a sample off the grid.
 * @returns null when the kernels are not available; else the answer
 */
export function samplesOnPcm16Grid(samples: Float32Array): boolean | null {
  const loaded = loadKernels();
  if (loaded === null) return null;
  const { exports, floats } = loaded;
  for (let start = 0; start < samples.length; start += CHUNK_SAMPLES) {
    const length = Math.min(CHUNK_SAMPLES, samples.length - start);
    const padded = Math.ceil(length / 4) * 4; // zeros (+0, on the grid) after the last sample
    copyIn(floats, AREA_0 / 4, samples, start, length, padded);
    if (exports.onGrid(AREA_0, padded) !== 1) return false;
  }
  return true;
}

/**
 * Adds `source` to `target` sample by sample, in place (float32 sums, as `target[i] + source[i]`
 * stored into a Float32Array).
 * @param target changed in place, at least `source.length`
 * @param source not changed
 * @returns false, changing nothing, when the kernels are not available; else true
 * @throws RangeError when `target` is shorter than `source`
 */
export function addSamples(target: Float32Array, source: Float32Array): boolean {
  if (target.length < source.length)
    throw new RangeError(`addSamples: ${source.length} samples added to ${target.length}`);
  const loaded = loadKernels();
  if (loaded === null) return false;
  const { exports, floats } = loaded;
  forEachChunk(source.length, 4, (start, length, padded) => {
    copyIn(floats, AREA_0 / 4, target, start, length, padded);
    copyIn(floats, AREA_1 / 4, source, start, length, padded);
    exports.add(AREA_0, AREA_1, padded);
    target.set(floats.subarray(AREA_0 / 4, AREA_0 / 4 + length), start);
  });
  return true;
}

/**
 * The largest magnitude of each block of `blockSize` samples (the last block may be shorter), NaN
 * ignored, 0 for a block of zeros: as `for (x of block) if (Math.abs(x) > peak) peak = Math.abs(x)`.
 * @param samples one channel, any length
 * @param blockSize samples per block: a positive multiple of 4 that divides 65,536 (e.g. 256)
 * @param peaks where the block peaks go, at least ceil(samples.length / blockSize)
 * @returns false, writing nothing, when the kernels are not available or `blockSize` is not such a
 *   size; else true, one value written per block
 * @throws RangeError when `peaks` has fewer places than blocks
 */
export function blockPeaks(samples: Float32Array, blockSize: number, peaks: Float32Array): boolean {
  if (!Number.isInteger(blockSize) || blockSize <= 0 || blockSize % 4 !== 0 || CHUNK_SAMPLES % blockSize !== 0)
    return false;
  if (peaks.length < Math.ceil(samples.length / blockSize))
    throw new RangeError(`blockPeaks: room for ${peaks.length} peaks, ${Math.ceil(samples.length / blockSize)} blocks`);
  const loaded = loadKernels();
  if (loaded === null) return false;
  const { exports, floats } = loaded;
  forEachChunk(samples.length, blockSize, (start, length, padded) => {
    copyIn(floats, AREA_0 / 4, samples, start, length, padded);
    exports.blockPeaks(AREA_0, AREA_1, padded / blockSize, blockSize);
    peaks.set(floats.subarray(AREA_1 / 4, AREA_1 / 4 + padded / blockSize), start / blockSize);
  });
  return true;
}
