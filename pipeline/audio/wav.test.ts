/** The WAV codec: chunk walking, header-only reads, the 16-bit fast path against wavefile. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import wavefile from 'wavefile';
import {
  decodePcm16LittleEndian,
  decodePcm16LittleEndianChunks,
  decodeWav,
  encodeWavPcm16,
  isRiffWave,
  readWavFileLayout,
  wavLayout,
  wavPcm16ByteLength,
  encodeWavFilesPcm16,
} from './wav.ts';
import { AudioArgumentError, toPcm16Integer } from './raw-audio.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-wav-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** `wav` with a LIST chunk of `bytes` bytes (odd: padded) put before its data chunk. */
function withListChunk(wav: Uint8Array, bytes: number): Uint8Array {
  const list = new Uint8Array(8 + bytes + (bytes % 2));
  list.set([0x4c, 0x49, 0x53, 0x54]); // LIST
  new DataView(list.buffer).setUint32(4, bytes, true);
  const joined = new Uint8Array(wav.length + list.length);
  joined.set(wav.subarray(0, 36));
  joined.set(list, 36);
  joined.set(wav.subarray(36), 36 + list.length);
  new DataView(joined.buffer).setUint32(4, joined.length - 8, true);
  return joined;
}

describe('WAV codec', () => {
  it('refuses an odd number of PCM bytes', () => {
    expect(() => decodePcm16LittleEndian(new Uint8Array(3))).toThrow(RangeError);
    const unaligned = new Uint8Array([9, 0, 128, 255, 127]).subarray(1);
    expect(Array.from(decodePcm16LittleEndian(unaligned), (sample) => sample * 32768)).toEqual([-32768, 32767]);
  });

  it('decodes a stream of chunks as the joined bytes: samples split between chunks, empty and unaligned chunks', () => {
    let state = 11;
    const next = (limit: number): number => ((state = (state * 1103515245 + 12345) % 2147483648) >>> 12) % limit;
    const joined = Uint8Array.from({ length: 4002 }, () => next(256));
    joined.set([0x00, 0x80, 0xff, 0x7f, 0xff, 0xff], 0); // -32768, 32767, -1 at the start
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < joined.length;) {
      const length = Math.min(joined.length - at, next(40)); // odd and even lengths, some empty
      // every other chunk at an odd byte offset of its own buffer (the slow path of the decoder)
      const backing = new Uint8Array(length + 1);
      backing.set(joined.subarray(at, at + length), chunks.length % 2);
      chunks.push(backing.subarray(chunks.length % 2, (chunks.length % 2) + length));
      at += length;
      if (chunks.length % 7 === 3) chunks.push(new Uint8Array(0)); // empty reads, also between the bytes of a split sample
    }
    expect(chunks.some((chunk) => chunk.length === 0)).toBe(true);
    expect(
      chunks.filter(
        (chunk, index) => chunks.slice(0, index).reduce((total, previous) => total + previous.length, 0) % 2 === 1,
      ).length,
    ).toBeGreaterThan(10);
    const decoded = decodePcm16LittleEndianChunks(chunks);
    expect(Array.from(decoded.subarray(0, 3), (sample) => sample * 32768)).toEqual([-32768, 32767, -1]);
    expect(decoded).toEqual(decodePcm16LittleEndian(joined));
    expect(
      decodePcm16LittleEndianChunks([joined.subarray(0, 2), joined.subarray(2, 3), joined.subarray(3, 4)]),
    ).toEqual(decodePcm16LittleEndian(joined.subarray(0, 4)));
    expect(() => decodePcm16LittleEndianChunks([joined.subarray(0, 2), joined.subarray(2, 3)])).toThrow(RangeError);
    expect(decodePcm16LittleEndianChunks([])).toEqual(new Float32Array(0));
  });

  it('decodes 16-bit PCM straight from the data chunk, streamed headers and stereo included', () => {
    const left = Float32Array.from([0, 0.5, -0.5, 0.25]);
    const right = Float32Array.from([0.125, -1, 0.75, 0]);
    const stereo = encodeWavPcm16({ channels: [left, right], sampleRate: 22050 });
    expect(decodeWav(stereo, 'test')).toEqual({ channels: [left, right], sampleRate: 22050 });
    const streamed = encodeWavPcm16({ channels: [left], sampleRate: 24000 });
    new DataView(streamed.buffer).setUint32(4, 0xffffffff, true);
    new DataView(streamed.buffer).setUint32(40, 0xffffffff, true);
    expect(decodeWav(streamed, 'test')).toEqual({ channels: [left], sampleRate: 24000 });
    expect(() => decodeWav(new Uint8Array(10), 'test')).toThrow(/Cannot decode WAV/);
  });

  it('gives the samples wavefile gives for 16-bit PCM, mono and stereo, with a chunk before the data', () => {
    const left = Float32Array.from({ length: 999 }, (_, index) => Math.sin(index / 7) * 0.9);
    const right = Float32Array.from({ length: 999 }, (_, index) => Math.cos(index / 5) * 0.3);
    for (const channels of [[left], [left, right]]) {
      const wav = withListChunk(encodeWavPcm16({ channels, sampleRate: 16000 }), 5);
      const reference = new wavefile.WaveFile(wav);
      const samples = reference.getSamples(false, Float64Array) as unknown as Float64Array | Float64Array[];
      const expected = (channels.length === 1 ? [samples as Float64Array] : (samples as Float64Array[])).map((values) =>
        Float32Array.from(values, (value) => value / 32768),
      );
      expect(decodeWav(wav, 'test')).toEqual({ channels: expected, sampleRate: 16000 });
    }
  });

  it('decodes other encodings through wavefile (32-bit float)', () => {
    const wave = new wavefile.WaveFile();
    wave.fromScratch(1, 8000, '32f', [0.5, -0.25]);
    expect(decodeWav(wave.toBuffer(), 'float')).toEqual({
      channels: [Float32Array.from([0.5, -0.25])],
      sampleRate: 8000,
    });
  });

  it('finds the format and the data chunk in memory and on disk, reading only chunk headers from a file', async () => {
    const wav = withListChunk(
      encodeWavPcm16({ channels: [new Float32Array(100), new Float32Array(100)], sampleRate: 8000 }),
      3,
    );
    const layout = wavLayout(wav);
    expect(layout).toEqual({
      format: { formatTag: 1, channels: 2, sampleRate: 8000, blockAlign: 4, bitsPerSample: 16, subFormat: null },
      dataOffset: 44 + 12,
      dataBytes: 400,
      declaredDataBytes: 400,
    });
    const file = path.join(scratch, 'listed.wav');
    await writeFile(file, wav);
    expect(readWavFileLayout(file)).toEqual(layout);
    // a streamed header declares more data than there is: clipped to the bytes present
    const cut = wav.slice(0, wav.length - 100);
    expect(wavLayout(cut)?.dataBytes).toBe(300);
    expect(wavLayout(cut)?.declaredDataBytes).toBe(400);
    expect(isRiffWave(wav)).toBe(true);
    expect(wavLayout(new TextEncoder().encode('RIFF....WAVEdata'))).toBeUndefined();
    expect(isRiffWave(new Uint8Array(12))).toBe(false);
  });

  it('rounds and clips stereo as toPcm16Integer does on every path (one word per frame, 16-bit stores, DataView)', () => {
    const edges = [
      Number.NaN,
      1.2,
      -1.5,
      Infinity,
      -Infinity,
      32767.6 / 32768,
      32766.5 / 32768,
      -32767.5 / 32768,
      -32768.6 / 32768,
      0.5 / 32768,
      -0.5 / 32768,
      1.5 / 32768,
      -1.5 / 32768,
      -0,
      0.3,
      -0.7,
    ];
    const left = Float32Array.from(edges);
    const right = Float32Array.from(edges).reverse();
    const expected = Array.from(left, (value, index) => [
      toPcm16Integer(value) | 0,
      toPcm16Integer(right[index]!) | 0,
    ]).flat();
    // NaN -> 0, clipped at both ends, halves rounded up (-0.5 -> 0, 0.5 -> 1, -1.5 -> -1, 1.5 -> 2)
    expect(expected.slice(0, 16)).toEqual([
      0, -22938, 32767, 9830, -32768, 0, 32767, -1, -32768, 2, 32767, 0, 32767, 1, -32767, -32768,
    ]);
    const audio = { channels: [left, right], sampleRate: 16000 };
    const length = wavPcm16ByteLength(audio);
    for (const offset of [0, 2, 3]) {
      const file = encodeWavPcm16(audio, new Uint8Array(offset + length).subarray(offset));
      const data = new DataView(file.buffer, file.byteOffset + 44, file.byteLength - 44);
      expect(Array.from({ length: data.byteLength / 2 }, (_, index) => data.getInt16(2 * index, true))).toEqual(
        expected,
      );
    }
  });

  it("encodes into a caller's array the same bytes as into a new one, at even and odd offsets, and refuses another length", () => {
    const audio = {
      channels: [Float32Array.from([0.5, -0.25, 1.5, -0]), Float32Array.from([0, 0.125, -2, 1e-6])],
      sampleRate: 16000,
    };
    const alone = encodeWavPcm16(audio);
    expect(wavPcm16ByteLength(audio)).toBe(alone.byteLength);
    for (const offset of [0, 2, 3]) {
      const shared = new Uint8Array(offset + alone.byteLength + 5).fill(0xaa);
      expect(encodeWavPcm16(audio, shared.subarray(offset, offset + alone.byteLength))).toEqual(alone);
      expect(Array.from(shared.subarray(offset, offset + alone.byteLength))).toEqual(Array.from(alone));
      expect(shared[offset + alone.byteLength]).toBe(0xaa);
    }
    expect(() => encodeWavPcm16(audio, new Uint8Array(alone.byteLength - 1))).toThrow(AudioArgumentError);
    const mono = { channels: [Float32Array.from([0.25, -0.5, 0.75])], sampleRate: 24000 };
    const { bytes, files } = encodeWavFilesPcm16([audio, mono]);
    expect(files.map((file) => Array.from(file))).toEqual([Array.from(alone), Array.from(encodeWavPcm16(mono))]);
    expect(files.every((file) => file.buffer === bytes.buffer)).toBe(true);
    expect(bytes.byteLength).toBe(alone.byteLength + files[1]!.byteLength);
  });
});
