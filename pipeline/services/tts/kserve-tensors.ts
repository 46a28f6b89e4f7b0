/**
 * KServe v2 tensors as the CosyVoice2 Triton client and its loopback server write and read them:
 * FP32 and BYTES elements in Triton's binary tensor data extension (raw little-endian bytes after the
 * JSON header, whose length the `Inference-Header-Content-Length` header gives), float samples as the
 * inside of a JSON array, and the numbers of a JSON tensor.
 */

/** One KServe v2 output tensor as this client reads it. */
export interface OutputTensor {
  name?: unknown;
  datatype?: unknown;
  shape?: unknown;
  data?: unknown;
  parameters?: { binary_data_size?: unknown };
}

/**
 * HTTP header of the binary tensor data extension: the byte length of the JSON object that starts the
 * body (the tensors' raw bytes follow it). Lower case, as `Headers` reports names.
 */
export const INFERENCE_HEADER_CONTENT_LENGTH = 'inference-header-content-length';

/** True when typed arrays use little-endian byte order here (x86, ARM as Node runs them). */
const PLATFORM_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const encodedSamples = new WeakMap<Float32Array, Uint8Array>();

/**
 * Float samples as the raw bytes of a binary FP32 tensor: 4 bytes per sample, IEEE 754 little-endian.
 * On a little-endian platform the bytes are a view of the samples (no copy; do not change the samples
 * afterwards), elsewhere a converted copy remembered per sample array (a prompt is encoded once).
 *
 * @returns samples.length * 4 bytes.
 */
export function encodeFloat32LittleEndian(samples: Float32Array): Uint8Array {
  if (PLATFORM_IS_LITTLE_ENDIAN) return new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  let bytes = encodedSamples.get(samples);
  if (!bytes) {
    bytes = new Uint8Array(samples.length * 4);
    const view = new DataView(bytes.buffer);
    for (let index = 0; index < samples.length; index++) view.setFloat32(index * 4, samples[index] as number, true);
    encodedSamples.set(samples, bytes);
  }
  return bytes;
}

/**
 * The raw bytes of a binary FP32 tensor (IEEE 754 little-endian) as float samples (a copy).
 *
 * @param bytes a multiple of 4 bytes, any alignment.
 * @returns bytes.length / 4 samples.
 * @throws RangeError when the byte count is not a multiple of 4 (the data ends inside a value).
 */
export function decodeFloat32LittleEndian(bytes: Uint8Array): Float32Array {
  if (bytes.length % 4 !== 0) throw new RangeError(`${bytes.length} bytes is not a whole number of 32-bit floats`);
  const samples = new Float32Array(bytes.length / 4);
  if (PLATFORM_IS_LITTLE_ENDIAN) {
    new Uint8Array(samples.buffer).set(bytes);
    return samples;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let index = 0; index < samples.length; index++) samples[index] = view.getFloat32(index * 4, true);
  return samples;
}

/** One element of a binary BYTES tensor: its UTF-8 byte length (4 bytes, unsigned little-endian), then the bytes. */
export function encodeBytesElement(text: string): Uint8Array {
  const utf8 = new TextEncoder().encode(text);
  const element = new Uint8Array(4 + utf8.length);
  new DataView(element.buffer).setUint32(0, utf8.length, true);
  element.set(utf8, 4);
  return element;
}

const formattedSamples = new WeakMap<Float32Array, string>();

/**
 * Formats float samples as the inside of a JSON array without the 17-digit noise of `JSON.stringify`
 * on float32 values: 6 decimals (1e-6 is below one 16-bit step, 3e-5). Remembered per sample array
 * (a prompt is formatted once, not once per request).
 */
export function formatSamples(samples: Float32Array): string {
  let formatted = formattedSamples.get(samples);
  if (formatted === undefined) {
    const parts = new Array<string>(samples.length);
    for (let index = 0; index < samples.length; index++)
      parts[index] = String(Math.round((samples[index] as number) * 1e6) / 1e6);
    formatted = parts.join(',');
    formattedSamples.set(samples, formatted);
  }
  return formatted;
}

/**
 * The numbers of a KServe v2 JSON tensor, flattened: `data` may be flat (as Triton answers) or nested
 * row by row (as clients often send).
 *
 * @returns the values in row-major order, or null when one is not a number.
 */
export function tensorNumbers(data: unknown): number[] | null {
  if (!Array.isArray(data)) return null;
  const values: unknown[] = data.length > 0 && Array.isArray(data[0]) ? data.flat(Infinity) : data;
  for (const value of values) if (typeof value !== 'number') return null;
  return values as number[];
}
