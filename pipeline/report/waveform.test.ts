/** The report's WAV reader and waveform outline. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import wavefile from 'wavefile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav, encodeWavPcm16 } from '../audio/wav.ts';
import { readWavChannels, readWavEnvelopes, waveformEnvelope, waveformPath } from './waveform.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-waveform-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const tone = (length: number, frequency: number) =>
  Float32Array.from({ length }, (_, index) => 0.5 * Math.sin((2 * Math.PI * frequency * index) / 16000));

describe('readWavChannels', () => {
  it('reads 16-bit PCM to the same samples as decodeWav, also with a chunk before the data', async () => {
    const wav = encodeWavPcm16({ channels: [tone(1601, 220), tone(1601, 330)], sampleRate: 16000 });
    const plain = path.join(scratch, 'plain.wav');
    await writeFile(plain, wav);
    expect(await readWavChannels(plain)).toEqual(decodeWav(wav, 'plain').channels);
    // a LIST chunk of odd length (padded) between fmt and data
    const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc'), Buffer.from([0])]);
    const withList = Buffer.concat([Buffer.from(wav.subarray(0, 36)), list, Buffer.from(wav.subarray(36))]);
    withList.writeUInt32LE(withList.length - 8, 4);
    const listed = path.join(scratch, 'listed.wav');
    await writeFile(listed, withList);
    expect(await readWavChannels(listed)).toEqual(decodeWav(wav, 'plain').channels);
  });

  it('falls back to decodeWav for other encodings (32-bit float)', async () => {
    const wave = new wavefile.WaveFile();
    wave.fromScratch(2, 16000, '32f', [Array.from(tone(400, 220)), Array.from(tone(400, 330))]);
    const file = path.join(scratch, 'float.wav');
    await writeFile(file, wave.toBuffer());
    const channels = await readWavChannels(file);
    expect(channels).toHaveLength(2);
    expect(channels[1]![100]).toBeCloseTo(tone(400, 330)[100]!, 6);
  });
});

describe('readWavEnvelopes', () => {
  const expected = (wav: Uint8Array, columns: number) =>
    decodeWav(wav, 'expected').channels.map((samples) => waveformEnvelope(samples, columns));

  it('gives the envelopes of the decoded channels, for more and fewer columns than frames and across its 64 Ki-frame reads', async () => {
    const long = encodeWavPcm16({ channels: [tone(150001, 220), tone(150001, 97)], sampleRate: 16000 });
    const file = path.join(scratch, 'long.wav');
    await writeFile(file, long);
    for (const columns of [1, 7, 3000, 70000])
      expect(await readWavEnvelopes(file, columns)).toEqual(expected(long, columns));
    const short = encodeWavPcm16({ channels: [tone(5, 220), tone(5, 330)], sampleRate: 16000 });
    const shortFile = path.join(scratch, 'short.wav');
    await writeFile(shortFile, short);
    expect(await readWavEnvelopes(shortFile, 12)).toEqual(expected(short, 12));
    // full scale both ways on each channel (the stereo path reads a frame as one 32-bit word)
    const extremes = encodeWavPcm16({
      channels: [Float32Array.from([1, -1, 0, -0.5, 0.25, -1]), Float32Array.from([-1, 0, 1, 0.5, -1, 1])],
      sampleRate: 16000,
    });
    const extremesFile = path.join(scratch, 'extremes.wav');
    await writeFile(extremesFile, extremes);
    for (const columns of [1, 2, 3, 6])
      expect(await readWavEnvelopes(extremesFile, columns)).toEqual(expected(extremes, columns));
    expect(
      (await readWavEnvelopes(extremesFile, 1)).map((envelope) => [envelope.minimum[0], envelope.maximum[0]]),
    ).toEqual(
      [
        [-1, 32767 / 32768],
        [-1, 32767 / 32768],
      ].map((pair) => pair.map(Math.fround)),
    );
  });

  it('reads past a chunk before the data, ignores a partial last frame and falls back to decoding for float WAVs', async () => {
    const wav = encodeWavPcm16({ channels: [tone(1601, 220), tone(1601, 330)], sampleRate: 16000 });
    const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc'), Buffer.from([0])]);
    const withList = Buffer.concat([
      Buffer.from(wav.subarray(0, 36)),
      list,
      Buffer.from(wav.subarray(36)),
      Buffer.from([0x7f, 0x7f]),
    ]);
    withList.writeUInt32LE(withList.length - 8, 4);
    withList.writeUInt32LE(1601 * 4 + 2, 36 + list.length + 4);
    const listed = path.join(scratch, 'listed-envelope.wav');
    await writeFile(listed, withList);
    expect(await readWavEnvelopes(listed, 50)).toEqual(expected(wav, 50));
    const wave = new wavefile.WaveFile();
    wave.fromScratch(2, 16000, '32f', [Array.from(tone(400, 220)), Array.from(tone(400, 330))]);
    const float = path.join(scratch, 'float-envelope.wav');
    await writeFile(float, wave.toBuffer());
    expect(await readWavEnvelopes(float, 9)).toEqual(
      (await readWavChannels(float)).map((samples) => waveformEnvelope(samples, 9)),
    );
    await expect(readWavEnvelopes(listed, 0)).rejects.toThrow(RangeError);
  });
});

describe('waveformEnvelope / waveformPath', () => {
  it('keeps the extremes of each column and draws silence on the middle line', () => {
    const samples = Float32Array.from([0, 0.5, -0.25, 0, 0, 0, 1, -1]);
    const envelope = waveformEnvelope(samples, 4);
    expect(Array.from(envelope.maximum)).toEqual([0.5, 0, 0, 1]);
    expect(Array.from(envelope.minimum)).toEqual([0, -0.25, 0, -1]);
    // whole pixels, relative steps, the level run of two columns as one h
    expect(waveformPath(envelope, 2, 20)).toBe('M0 5l2 5h2l2-10v20l-2-10l-2 3l-2-3Z');
    // silence: one level run each way
    expect(waveformPath(waveformEnvelope(new Float32Array(100), 10), 2, 56)).toBe('M0 28h18h-18Z');
    expect(() => waveformEnvelope(samples, 0)).toThrow(RangeError);
  });
});
