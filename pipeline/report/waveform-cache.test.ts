/** Waveform envelopes kept in the content cache under the WAV's sha256. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWavPcm16 } from '../audio/wav.ts';
import { bytesHash, ContentCache } from '../storage/content-cache.ts';
import { cachedWavEnvelopes, WAVEFORM_CACHE_STAGE } from './waveform-cache.ts';
import { readWavEnvelopes } from './waveform.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-waveform-cache-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const noise = (length: number, seed: number) =>
  Float32Array.from({ length }, (_, index) => Math.sin(index * 0.37 + seed) * ((index * seed) % 7) * 0.1);

describe('cachedWavEnvelopes', () => {
  it('gives the envelopes a read gives, from the cache once stored, without the WAV, per sha256 and column count', async () => {
    const wav = encodeWavPcm16({ channels: [noise(48_001, 1), noise(48_001, 3)], sampleRate: 16000 });
    const file = path.join(scratch, 'a.wav');
    await writeFile(file, wav);
    const cache = new ContentCache(path.join(scratch, 'cache'));
    const where = { cache, sha256: bytesHash(wav) };
    const read = await readWavEnvelopes(file, 37);
    expect(await cachedWavEnvelopes(file, 37, where)).toEqual(read);
    expect(cache.statistics[WAVEFORM_CACHE_STAGE]).toEqual({ hits: 0, misses: 1, corrupt: 0 });
    await rm(file);
    // the WAV is gone: a hit reads the entry, with the very values of the read
    expect(await cachedWavEnvelopes(file, 37, where)).toEqual(read);
    expect(cache.statistics[WAVEFORM_CACHE_STAGE]!.hits).toBe(1);
    // another column count, or another WAV, is another entry (a miss, which needs the file)
    await expect(cachedWavEnvelopes(file, 38, where)).rejects.toThrow();
    await expect(cachedWavEnvelopes(file, 37, { cache, sha256: bytesHash('other') })).rejects.toThrow();
  });
});
