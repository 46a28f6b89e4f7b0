/**
 * The canonical WAV encoder every dataset file is written with: a 44-byte RIFF/WAVE header and 16-bit
 * signed little-endian PCM, channels interleaved, alone or several files back to back in one buffer.
 */
import { AudioArgumentError, assertWellFormed, sampleCount, toPcm16Integer, type RawAudio } from './raw-audio.ts';
import { encodeMonoPcm16, encodeStereoPcm16Words } from './audio-kernels.ts';

const PLATFORM_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Bytes of the file {@link encodeWavPcm16} writes for `audio`: 44 + frames × channels × 2.
 * @throws AudioArgumentError as encodeWavPcm16 (no channels, channels of different lengths, a sample rate
 *   that is not a positive integer, data beyond the 4 GiB RIFF limit)
 */
export function wavPcm16ByteLength(audio: RawAudio): number {
  assertWellFormed(audio, 'encodeWavPcm16');
  if (!Number.isInteger(audio.sampleRate))
    throw new AudioArgumentError(`encodeWavPcm16: sample rate ${audio.sampleRate} Hz is not an integer`);
  const dataBytes = sampleCount(audio) * audio.channels.length * 2;
  if (dataBytes + 36 > 0xffffffff)
    throw new AudioArgumentError(`encodeWavPcm16: ${dataBytes} bytes of audio exceed the RIFF size limit`);
  return 44 + dataBytes;
}

/**
 * Encodes each audio as {@link encodeWavPcm16} does, the files back to back in one buffer, so files
 * stored together (a cache entry with the output-rate and the full-band WAV) need no copy to be joined.
 * @param allocate the buffer for all files, given their total length in bytes (default: a new
 *   array); every byte of it is written, so a reused buffer needs no clearing
 * @returns `bytes`, the whole buffer, and `files`, each file as a view of it (same order as `audios`)
 * @throws AudioArgumentError as encodeWavPcm16; RangeError when `allocate` returns another length
 */
export function encodeWavFilesPcm16(
  audios: readonly RawAudio[],
  allocate: (byteLength: number) => Uint8Array = (byteLength) => new Uint8Array(byteLength),
): { bytes: Uint8Array; files: Uint8Array[] } {
  const lengths = audios.map(wavPcm16ByteLength);
  const total = lengths.reduce((sum, length) => sum + length, 0);
  const bytes = allocate(total);
  if (bytes.byteLength !== total)
    throw new RangeError(`encodeWavFilesPcm16: ${bytes.byteLength} bytes given for ${total}`);
  let offset = 0;
  const files = audios.map((audio, index) => {
    const file = encodeWavPcm16(audio, bytes.subarray(offset, offset + lengths[index]!));
    offset += lengths[index]!;
    return file;
  });
  return { bytes, files };
}

/**
 * Both channels of a stereo file's data, one 32-bit word per frame (little-endian: left in the low
 * half, right in the high half), with {@link toPcm16Integer}'s rounding and clipping written out as
 * offset binary (integer + 32768, so the truncation `| 0` sees only positive values) and turned back to
 * two's complement by flipping bit 15 of each half. The same bytes as two Int16 stores per frame
 * (NaN included: 0), about 1.2-1.4 x faster on the mastered tracks of a saturation build (and those
 * stores were 1.3 x faster than two strided passes); every dialogue and master is stereo. Used where
 * the WebAssembly encoder (audio-kernels.ts, 4-5 x faster in a build) cannot run, and as its reference
 * in the tests.
 * @param channels left and right, full scale 1.0, of at least `words.length` samples
 * @param words the data chunk as 32-bit words (4-byte aligned, little-endian platform)
 */
function encodeStereoFrames([left, right]: [Float32Array, Float32Array], words: Uint32Array): void {
  for (let frame = 0; frame < words.length; frame++) {
    let scaled = (left[frame] as number) * 32768;
    const low = scaled >= 32767 ? 65535 : scaled > -32768 ? (scaled + 32768.5) | 0 : scaled <= -32768 ? 0 : 32768;
    scaled = (right[frame] as number) * 32768;
    const high = scaled >= 32767 ? 65535 : scaled > -32768 ? (scaled + 32768.5) | 0 : scaled <= -32768 ? 0 : 32768;
    words[frame] = (low ^ 0x8000) | ((high ^ 0x8000) << 16);
  }
}

/**
 * Encodes audio as a canonical 44-byte-header RIFF/WAVE file, 16-bit signed little-endian PCM,
 * channels interleaved. Samples are converted with `round(x * 32768)` clamped to [-32768, 32767]
 * (see {@link quantizeToPcm16}). The bytes depend only on the samples and the sample rate.
 *
 * @param into where the file goes: a new array by default, or a caller's array of exactly
 *   {@link wavPcm16ByteLength} bytes (e.g. part of one buffer holding several files, so they need no
 *   copy to be stored together); even byte offsets keep the fast path
 * @returns `into` (or the new array), every byte written
 * @throws AudioArgumentError when the audio has no channels, channels differ in length, the sample rate
 *   is not a positive integer, the data would exceed the 4 GiB RIFF limit, or `into` has another length.
 */
export function encodeWavPcm16(audio: RawAudio, into?: Uint8Array): Uint8Array {
  const dataBytes = wavPcm16ByteLength(audio) - 44;
  const channels = audio.channels.length;
  const frames = sampleCount(audio);
  if (into !== undefined && into.byteLength !== 44 + dataBytes)
    throw new AudioArgumentError(`encodeWavPcm16: ${into.byteLength} bytes given for a ${44 + dataBytes}-byte file`);
  const bytes = into ?? new Uint8Array(44 + dataBytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const writeAscii = (position: number, text: string): void => {
    for (let index = 0; index < text.length; index++) bytes[position + index] = text.charCodeAt(index);
  };
  writeAscii(0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  writeAscii(8, 'WAVE');
  writeAscii(12, 'fmt ');
  view.setUint32(16, 16, true); // fmt chunk size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, channels, true);
  view.setUint32(24, audio.sampleRate, true);
  view.setUint32(28, audio.sampleRate * channels * 2, true); // bytes per second
  view.setUint16(32, channels * 2, true); // bytes per frame
  view.setUint16(34, 16, true); // bits per sample
  writeAscii(36, 'data');
  view.setUint32(40, dataBytes, true);
  if (PLATFORM_IS_LITTLE_ENDIAN && bytes.byteOffset % 2 === 0) {
    // through a typed-array view (the data starts at byte 44, aligned): the same bytes as the DataView
    // loop below, several times faster (the saturation bench's profile); stereo as one word per frame
    if (channels === 2 && bytes.byteOffset % 4 === 0) {
      const [left, right] = audio.channels as [Float32Array, Float32Array];
      const words = new Uint32Array(bytes.buffer, bytes.byteOffset + 44, frames);
      // WebAssembly SIMD (audio-kernels.ts) where it runs, else the same integers in JavaScript
      if (!encodeStereoPcm16Words(left, right, words)) encodeStereoFrames([left, right], words);
      return bytes;
    }
    const pcm = new Int16Array(bytes.buffer, bytes.byteOffset + 44, frames * channels);
    if (channels === 1 && encodeMonoPcm16(audio.channels[0] as Float32Array, pcm)) return bytes;
    for (let channel = 0; channel < channels; channel++) {
      const samples = audio.channels[channel] as Float32Array;
      for (let frame = 0, position = channel; frame < frames; frame++, position += channels)
        pcm[position] = toPcm16Integer(samples[frame] as number);
    }
    return bytes;
  }
  let position = 44;
  for (let frame = 0; frame < frames; frame++) {
    for (let channel = 0; channel < channels; channel++) {
      view.setInt16(position, toPcm16Integer((audio.channels[channel] as Float32Array)[frame] as number), true);
      position += 2;
    }
  }
  return bytes;
}
