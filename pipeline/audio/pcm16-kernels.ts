/**
 * 16-bit PCM encoding in WebAssembly SIMD (pcm16-kernels.wat, compiled to pcm16-kernels.wasm by
 * scripts/build-wasm.ts): the same integers as raw-audio.ts `toPcm16Integer` (round half up, clamped,
 * NaN as 0), four samples per instruction. On a 20-dialogue saturation build the WAV encoding of the
 * masters and the synthesis cache entries fell from 0.85-1.0 s to about 0.2 s of the build's thread:
 * besides the vectors, compiled WebAssembly keeps its machine code, while V8 drops the optimized code
 * of a JavaScript loop at full garbage collections and runs it unoptimized until it is compiled again
 * (README, "Throughput").
 *
 * The samples are copied into the module's memory in chunks of {@link CHUNK_FRAMES} and the result
 * copied out (a memcpy each way, a small part of the cost). The module is compiled once per thread, on
 * first use, synchronously (512 bytes). Where it cannot be (a platform without WebAssembly SIMD), every
 * function here returns false and the caller keeps its JavaScript loop.
 */
import { readFileSync } from 'node:fs';
import { packageFile } from '../storage/package-files.ts';

/** Frames per call into the module: 64 Ki, so one call's input and output (768 KiB) fit its 1 MiB of memory. */
const CHUNK_FRAMES = 65_536;

interface Kernels {
  encodeStereo(left: number, right: number, out: number, frames: number): void;
  encodeMono(samples: number, out: number, count: number): void;
  floats: Float32Array;
  words: Uint32Array;
  integers: Int16Array;
}

/** The part of the WebAssembly JavaScript API used here (the project's TypeScript libraries hold no DOM types). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

let kernels: Kernels | null | undefined;

/** The module's exports and views of its memory; null when this platform cannot compile it. */
function loadKernels(): Kernels | null {
  if (kernels !== undefined) return kernels;
  try {
    const { Module, Instance } = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
    const module = new Module(readFileSync(packageFile('pipeline', 'audio', 'pcm16-kernels.wasm')));
    const exports = new Instance(module).exports as unknown as Pick<Kernels, 'encodeStereo' | 'encodeMono'> & { memory: { buffer: ArrayBuffer } };
    const buffer = exports.memory.buffer; // never grown: the views stay valid
    if (buffer.byteLength < CHUNK_FRAMES * 12) throw new Error('pcm16-kernels.wasm: memory too small');
    kernels = {
      encodeStereo: exports.encodeStereo,
      encodeMono: exports.encodeMono,
      floats: new Float32Array(buffer),
      words: new Uint32Array(buffer),
      integers: new Int16Array(buffer),
    };
  } catch {
    kernels = null;
  }
  return kernels;
}

/** Whether the WebAssembly encoder runs on this platform (else the callers' JavaScript loops do). */
export function pcm16KernelsAvailable(): boolean {
  return loadKernels() !== null;
}

/**
 * Writes `words.length` stereo frames as 16-bit PCM, one 32-bit word per frame (left in the low half,
 * right in the high half; the bytes of a WAV's data on a little-endian platform).
 * @param left,right samples, full scale 1.0, at least `words.length` each
 * @param words where the frames go (length = frames)
 * @returns false, writing nothing, when the module is not available; true when every frame was written
 */
export function encodeStereoPcm16Words(left: Float32Array, right: Float32Array, words: Uint32Array): boolean {
  const loaded = loadKernels();
  if (loaded === null) return false;
  const { floats } = loaded;
  const frames = words.length;
  // floats [0, CHUNK) left, [CHUNK, 2 CHUNK) right, words from byte 8 CHUNK
  for (let start = 0; start < frames; start += CHUNK_FRAMES) {
    const length = Math.min(CHUNK_FRAMES, frames - start);
    floats.set(left.subarray(start, start + length), 0);
    floats.set(right.subarray(start, start + length), CHUNK_FRAMES);
    // the kernel takes multiples of 4 frames: the last chunk's remainder is zero-padded (its words unused)
    const padded = (length + 3) & ~3;
    floats.fill(0, length, padded);
    floats.fill(0, CHUNK_FRAMES + length, CHUNK_FRAMES + padded);
    loaded.encodeStereo(0, CHUNK_FRAMES * 4, CHUNK_FRAMES * 8, padded);
    words.set(loaded.words.subarray(CHUNK_FRAMES * 2, CHUNK_FRAMES * 2 + length), start);
  }
  return true;
}

/**
 * Writes `pcm.length` samples as 16-bit integers.
 * @param samples full scale 1.0, at least `pcm.length`
 * @param pcm where the integers go
 * @returns false, writing nothing, when the module is not available; true when every sample was written
 */
export function encodeMonoPcm16(samples: Float32Array, pcm: Int16Array): boolean {
  const loaded = loadKernels();
  if (loaded === null) return false;
  const { floats, integers } = loaded;
  const count = pcm.length;
  // floats [0, CHUNK) in, integers from byte 4 CHUNK
  for (let start = 0; start < count; start += CHUNK_FRAMES) {
    const length = Math.min(CHUNK_FRAMES, count - start);
    floats.set(samples.subarray(start, start + length), 0);
    const padded = (length + 3) & ~3;
    floats.fill(0, length, padded);
    loaded.encodeMono(0, CHUNK_FRAMES * 4, padded);
    pcm.set(integers.subarray(CHUNK_FRAMES * 2, CHUNK_FRAMES * 2 + length), start);
  }
  return true;
}
