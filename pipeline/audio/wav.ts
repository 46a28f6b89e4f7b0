/**
 * The one WAV codec: the RIFF/WAVE chunk walker (4-byte id, 32-bit little-endian size, bodies padded
 * to even length), the header of a file without reading its samples, and decoding (16-bit integer PCM
 * read straight from the data chunk, every other encoding through wavefile). The canonical 16-bit
 * encoder every dataset file is written with is ./wav-encoding.ts (re-exported here).
 */
import { closeSync, openSync, readSync, fstatSync } from 'node:fs';
import wavefile from 'wavefile';
import { WavDecodeError, type RawAudio } from './raw-audio.ts';
import { decodePcm16Samples } from './audio-kernels.ts';

export { encodeWavFilesPcm16, encodeWavPcm16, wavPcm16ByteLength } from './wav-encoding.ts';

/** The `fmt ` chunk of a WAV file. */
export interface WavFormat {
  /** 1 = integer PCM, 3 = IEEE float, 0xFFFE = WAVE_FORMAT_EXTENSIBLE (see `subFormat`). */
  formatTag: number;
  channels: number;
  /** Hz. */
  sampleRate: number;
  /** Bytes per frame (all channels of one sample time). */
  blockAlign: number;
  bitsPerSample: number;
  /** The sub-format's first two bytes of an extensible header (1 = PCM, 3 = float); null otherwise. */
  subFormat: number | null;
}

/** Where the samples of a WAV file are. */
export interface WavLayout {
  format: WavFormat;
  /** Byte offset of the data chunk's body. */
  dataOffset: number;
  /** Bytes of sample data present: the declared size, clipped to the bytes there are (a streamed header says 0xFFFFFFFF). */
  dataBytes: number;
  /** The data chunk's size as its header declares it (0xFFFFFFFF from a streamed header); above dataBytes when the file was cut short. */
  declaredDataBytes: number;
}

/** Reads `length` bytes at `offset` (fewer at the end). */
type ByteReader = (offset: number, length: number) => Uint8Array;

const text4 = (bytes: Uint8Array): string =>
  String.fromCharCode(bytes[0] ?? 0, bytes[1] ?? 0, bytes[2] ?? 0, bytes[3] ?? 0);

/** True when `header` (at least the first 12 bytes of a file) starts a RIFF/WAVE file. */
export function isRiffWave(header: Uint8Array): boolean {
  return header.length >= 12 && text4(header) === 'RIFF' && text4(header.subarray(8, 12)) === 'WAVE';
}

/**
 * Walks the chunks of a RIFF/WAVE file up to its data chunk.
 * @param read reads bytes of the file; @param size the file's length in bytes
 * @returns the format and the data chunk, or undefined when it is not RIFF/WAVE or has no `fmt ` chunk
 *   (of at least 16 bytes) before its `data` chunk
 */
function walkWav(read: ByteReader, size: number): WavLayout | undefined {
  if (!isRiffWave(read(0, 12))) return undefined;
  let format: WavFormat | undefined;
  for (let offset = 12; offset + 8 <= size;) {
    const header = read(offset, 8);
    const view = new DataView(header.buffer, header.byteOffset, 8);
    const id = text4(header);
    const chunkSize = view.getUint32(4, true);
    if (id === 'fmt ' && chunkSize >= 16) {
      const bodyBytes = read(offset + 8, Math.min(chunkSize, 40));
      if (bodyBytes.length < 16) return undefined;
      const body = new DataView(bodyBytes.buffer, bodyBytes.byteOffset, bodyBytes.byteLength);
      const formatTag = body.getUint16(0, true);
      format = {
        formatTag,
        channels: body.getUint16(2, true),
        sampleRate: body.getUint32(4, true),
        blockAlign: body.getUint16(12, true),
        bitsPerSample: body.getUint16(14, true),
        subFormat: formatTag === 0xfffe && bodyBytes.byteLength >= 26 ? body.getUint16(24, true) : null,
      };
    } else if (id === 'data') {
      if (format === undefined) return undefined;
      return {
        format,
        dataOffset: offset + 8,
        dataBytes: Math.max(0, Math.min(chunkSize, size - offset - 8)),
        declaredDataBytes: chunkSize,
      };
    }
    offset += 8 + chunkSize + (chunkSize % 2);
  }
  return undefined;
}

/** {@link walkWav} over bytes in memory. */
export function wavLayout(bytes: Uint8Array): WavLayout | undefined {
  return walkWav((offset, length) => bytes.subarray(offset, offset + length), bytes.length);
}

/**
 * The layout of a WAV file on disk, reading only its chunk headers (not its samples).
 * @returns undefined when the file is not a WAV file with a `fmt ` and a `data` chunk
 * @throws the file-system error when the file cannot be opened or read
 */
export function readWavFileLayout(file: string): WavLayout | undefined {
  const descriptor = openSync(file, 'r');
  try {
    const size = fstatSync(descriptor).size;
    return walkWav((offset, length) => {
      const buffer = new Uint8Array(length);
      const read = readSync(descriptor, buffer, 0, length, offset);
      return buffer.subarray(0, read);
    }, size);
  } finally {
    closeSync(descriptor);
  }
}

/** Whether the format is 16-bit integer PCM (format tag 1, or extensible with the PCM sub-format). */
export function isPcm16(format: WavFormat): boolean {
  return (
    (format.formatTag === 1 || (format.formatTag === 0xfffe && format.subFormat === 1)) && format.bitsPerSample === 16
  );
}

const PLATFORM_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Raw 16-bit signed little-endian PCM (interleaved or mono) as floats: `integer / 32768`.
 * @param into where the samples go: a new array by default, or a caller's array of exactly
 *   bytes.length / 2 samples (e.g. part of one array a chunked stream is decoded into)
 * @returns `into` (or the new array): bytes.length / 2 samples in [-1, 1).
 * @throws RangeError when the byte count is odd (the stream ended inside a sample) or `into` has another length.
 */
export function decodePcm16LittleEndian(bytes: Uint8Array, into?: Float32Array): Float32Array {
  if (bytes.length % 2 !== 0) throw new RangeError(`${bytes.length} bytes is not a whole number of 16-bit samples`);
  if (into !== undefined && into.length !== bytes.length / 2)
    throw new RangeError(`decodePcm16LittleEndian: ${into.length} samples given for ${bytes.length / 2}`);
  const samples = into ?? new Float32Array(bytes.length / 2);
  if (PLATFORM_IS_LITTLE_ENDIAN && bytes.byteOffset % 2 === 0) {
    // Aligned on a little-endian platform: read through an Int16Array view (several times faster).
    const integers = new Int16Array(bytes.buffer, bytes.byteOffset, samples.length);
    // WebAssembly SIMD (audio-kernels.ts) where it runs, else the same floats in JavaScript
    if (decodePcm16Samples(integers, samples)) return samples;
    for (let index = 0; index < samples.length; index++) samples[index] = (integers[index] as number) / 32768;
    return samples;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let index = 0; index < samples.length; index++) samples[index] = view.getInt16(index * 2, true) / 32768;
  return samples;
}

/**
 * {@link decodePcm16LittleEndian} of the bytes of `chunks` joined, without joining them: each chunk
 * is decoded straight into one array (a sample split between two chunks is put together from both),
 * so a streamed body needs no joined copy. The same samples as decoding the joined bytes.
 * @param chunks the stream's byte arrays in order (any lengths, empty ones included)
 * @returns total bytes / 2 samples in [-1, 1)
 * @throws RangeError when the byte count is odd (the stream ended inside a sample)
 */
export function decodePcm16LittleEndianChunks(chunks: readonly Uint8Array[]): Float32Array {
  const totalBytes = chunks.reduce((total, chunk) => total + chunk.length, 0);
  if (totalBytes % 2 !== 0) throw new RangeError(`${totalBytes} bytes is not a whole number of 16-bit samples`);
  const samples = new Float32Array(totalBytes / 2);
  let sample = 0;
  let pendingLowByte = -1; // the first byte of a sample whose second byte is in the next chunk
  for (const chunk of chunks) {
    let start = 0;
    if (pendingLowByte >= 0 && chunk.length > 0) {
      samples[sample++] = ((((chunk[0] as number) << 24) >> 16) | pendingLowByte) / 32768;
      pendingLowByte = -1;
      start = 1;
    }
    const wholeBytes = (chunk.length - start) & ~1;
    decodePcm16LittleEndian(
      chunk.subarray(start, start + wholeBytes),
      samples.subarray(sample, sample + wholeBytes / 2),
    );
    sample += wholeBytes / 2;
    if (start + wholeBytes < chunk.length) pendingLowByte = chunk[chunk.length - 1] as number;
  }
  return samples;
}

/** The channels of 16-bit PCM data, de-interleaved; a partial last frame is dropped. */
function decodePcm16Data(bytes: Uint8Array, layout: WavLayout): RawAudio {
  const channelCount = layout.format.channels;
  const frames = Math.floor(layout.dataBytes / (2 * channelCount));
  const interleaved = decodePcm16LittleEndian(
    bytes.subarray(layout.dataOffset, layout.dataOffset + frames * 2 * channelCount),
  );
  if (channelCount === 1) return { channels: [interleaved], sampleRate: layout.format.sampleRate };
  const channels = Array.from({ length: channelCount }, (_, channel) => {
    const samples = new Float32Array(frames);
    for (let frame = 0; frame < frames; frame++) samples[frame] = interleaved[frame * channelCount + channel] as number;
    return samples;
  });
  return { channels, sampleRate: layout.format.sampleRate };
}

/**
 * Decodes a RIFF/WAVE file into {@link RawAudio} with samples scaled to [-1, 1].
 *
 * Accepted encodings: integer PCM of 8 bits (unsigned, offset 128, scaled by 1/128), 16 bits (1/32768),
 * 24 bits (1/8388608) and 32 bits (1/2147483648); IEEE float of 32 or 64 bits (kept as is). The
 * WAVE_FORMAT_EXTENSIBLE header is accepted for these. A data chunk whose declared size exceeds the
 * bytes present (streamed WAV, as `espeak-ng --stdout` writes with size 0x7FFFFFFF) is read up to the
 * bytes present.
 *
 * @param buffer the whole file's bytes.
 * @param source a name for the bytes (path, URL, "espeak-ng stdout") used in error messages.
 * @throws WavDecodeError naming `source` when the bytes are not a WAV file, the encoding is compressed
 *   (ADPCM, A-law, mu-law) or unknown, or the header declares no channels or no sample rate.
 */
export function decodeWav(buffer: Uint8Array, source: string): RawAudio {
  // 16-bit PCM, what speech servers send and every dataset holds: straight from the data chunk (the
  // same samples as wavefile's, about ten times faster)
  const layout = wavLayout(buffer);
  if (layout !== undefined && isPcm16(layout.format) && layout.format.channels >= 1 && layout.format.sampleRate > 0)
    return decodePcm16Data(buffer, layout);
  let wave: InstanceType<typeof wavefile.WaveFile>;
  try {
    wave = new wavefile.WaveFile(buffer);
  } catch (error) {
    throw new WavDecodeError(source, error instanceof Error ? error.message : String(error));
  }
  const format = wave.fmt as { numChannels: number; sampleRate: number };
  if (!(format.numChannels >= 1)) throw new WavDecodeError(source, `header declares ${format.numChannels} channels`);
  if (!(format.sampleRate > 0)) throw new WavDecodeError(source, `header declares sample rate ${format.sampleRate}`);

  const bitDepth = wave.bitDepth;
  let scale: number;
  let offset = 0;
  switch (bitDepth) {
    case '8':
      scale = 1 / 128;
      offset = -128;
      break;
    case '16':
      scale = 1 / 32768;
      break;
    case '24':
      scale = 1 / 8388608;
      break;
    case '32':
      scale = 1 / 2147483648;
      break;
    case '32f':
    case '64':
      scale = 1;
      break;
    default:
      throw new WavDecodeError(
        source,
        `unsupported sample encoding "${bitDepth}" (need PCM 8/16/24/32-bit or float 32/64-bit)`,
      );
  }

  let decoded: Float64Array | Float64Array[];
  try {
    decoded = wave.getSamples(false, Float64Array) as unknown as Float64Array | Float64Array[];
  } catch (error) {
    throw new WavDecodeError(source, error instanceof Error ? error.message : String(error));
  }
  const perChannel = format.numChannels === 1 ? [decoded as Float64Array] : (decoded as Float64Array[]);
  const channels = perChannel.map((values) => {
    const channel = new Float32Array(values.length);
    for (let index = 0; index < values.length; index++) channel[index] = ((values[index] as number) + offset) * scale;
    return channel;
  });
  return { channels, sampleRate: format.sampleRate };
}
