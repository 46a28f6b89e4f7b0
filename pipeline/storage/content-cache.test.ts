/**
 * ContentCache with damaged entries: a corrupted entry is a miss (recomputed, overwritten, counted as
 * `corrupt`), never an exception that fails the dialogue.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeWav, encodeWavPcm16 } from '../audio/wav.ts';
import { ContentCache, contentHash, type StoredFile } from './content-cache.ts';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-cache-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

interface Clip {
  label: string;
  audio: Float32Array;
}

/** The synthesize stage's kind of codec: 16-bit WAV plus JSON metadata. */
const WAV_CODEC = {
  encode: (clip: Clip) => ({
    bytes: encodeWavPcm16({ channels: [clip.audio], sampleRate: 16000 }),
    metadata: { label: clip.label },
  }),
  decode: (bytes: Buffer, metadata: { label: string }): Clip => ({
    label: metadata.label,
    audio: decodeWav(bytes, 'cache entry').channels[0]!,
  }),
};

function clip(): Clip {
  return { label: 'tone', audio: Float32Array.from({ length: 4000 }, (_, index) => 0.5 * Math.sin(index / 5)) };
}

function entry(cache: ContentCache, stage: string, keyMaterial: unknown, extension: string): string {
  return cache.entryPath(stage, contentHash({ stage, keyMaterial }), extension);
}

describe('ContentCache.json with a corrupted entry', () => {
  it('recomputes, overwrites the entry and counts it as corrupt', async () => {
    const onCorrupt = vi.fn();
    const cache = new ContentCache(directory, { onCorrupt });
    const compute = vi.fn(async () => ({ answer: 42 }));
    await cache.json('rewrite-spoken', { id: 1 }, compute);
    const file = entry(cache, 'rewrite-spoken', { id: 1 }, '.json');
    await writeFile(file, '{bad');

    await expect(cache.json('rewrite-spoken', { id: 1 }, compute)).resolves.toEqual({ answer: 42 });
    expect(compute).toHaveBeenCalledTimes(2);
    expect(cache.statistics['rewrite-spoken']).toEqual({ hits: 0, misses: 2, corrupt: 1 });
    expect(onCorrupt).toHaveBeenCalledWith(file, expect.stringMatching(/not valid JSON/));
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ contentCacheEntry: 2, value: { answer: 42 } });

    await expect(cache.json('rewrite-spoken', { id: 1 }, compute)).resolves.toEqual({ answer: 42 });
    expect(compute).toHaveBeenCalledTimes(2);
    expect(cache.statistics['rewrite-spoken']).toEqual({ hits: 1, misses: 2, corrupt: 1 });
  });
});

describe('ContentCache.json: the content hash', () => {
  it('an edited value that is still valid JSON is a corrupt entry: recomputed and rewritten', async () => {
    const onCorrupt = vi.fn();
    const cache = new ContentCache(directory, { onCorrupt });
    const compute = vi.fn(async () => ({ turns: ["It's Io."] }));
    await cache.json('rewrite-spoken', { id: 2 }, compute);
    const file = entry(cache, 'rewrite-spoken', { id: 2 }, '.json');
    const written = await readFile(file, 'utf8');
    await writeFile(file, written.replace("It's Io.", 'It is Xo.'));

    await expect(cache.json('rewrite-spoken', { id: 2 }, compute)).resolves.toEqual({ turns: ["It's Io."] });
    expect(compute).toHaveBeenCalledTimes(2);
    expect(cache.corruptEntries).toBe(1);
    expect(onCorrupt).toHaveBeenCalledWith(file, 'content differs from the sha256 recorded at write time');
    expect(await readFile(file, 'utf8')).toBe(written);
  });

  it('an entry from before the hash is a hit, rewritten with its hash, and checked from then on', async () => {
    const cache = new ContentCache(directory);
    const file = entry(cache, 'translate', { id: 3 }, '.json');
    await cache.json('translate', { id: 3 }, async () => 0); // makes the folder
    await writeFile(file, JSON.stringify({ text: 'legacy' }));
    const compute = vi.fn(async () => ({ text: 'fresh' }));
    await expect(cache.json('translate', { id: 3 }, compute)).resolves.toEqual({ text: 'legacy' });
    expect(compute).not.toHaveBeenCalled();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      contentCacheEntry: 2,
      valueSha256: contentHash({ text: 'legacy' }),
      value: { text: 'legacy' },
    });

    await writeFile(file, (await readFile(file, 'utf8')).replace('legacy', 'edited'));
    await expect(cache.json('translate', { id: 3 }, compute)).resolves.toEqual({ text: 'fresh' });
    expect(cache.statistics.translate).toEqual({ hits: 1, misses: 2, corrupt: 1 });
  });
});

describe('ContentCache.binary with a corrupted entry', () => {
  const stage = 'synthesize-speech';

  async function filled(): Promise<{
    cache: ContentCache;
    dataFile: string;
    metadataFile: string;
    compute: () => Promise<Clip>;
  }> {
    const cache = new ContentCache(directory);
    const compute = vi.fn(async () => clip());
    await cache.binary(stage, { text: 'hello' }, compute, WAV_CODEC, '.wav');
    return {
      cache,
      compute,
      dataFile: entry(cache, stage, { text: 'hello' }, '.wav'),
      metadataFile: entry(cache, stage, { text: 'hello' }, '.json'),
    };
  }

  it('a truncated audio file (which still decodes, shorter) is recomputed and rewritten', async () => {
    const { cache, compute, dataFile } = await filled();
    const complete = await readFile(dataFile);
    await truncate(dataFile, 1000);

    const value = await cache.binary(stage, { text: 'hello' }, compute, WAV_CODEC, '.wav');
    expect(value.audio.length).toBe(4000);
    expect(compute).toHaveBeenCalledTimes(2);
    expect(cache.statistics[stage]).toEqual({ hits: 0, misses: 2, corrupt: 1 });
    expect(await readFile(dataFile)).toEqual(complete);

    const again = await cache.binary(stage, { text: 'hello' }, compute, WAV_CODEC, '.wav');
    expect(again.audio.length).toBe(4000);
    expect(compute).toHaveBeenCalledTimes(2);
    expect(cache.statistics[stage]).toEqual({ hits: 1, misses: 2, corrupt: 1 });
  });

  it('metadata that is not JSON is recomputed', async () => {
    const { cache, compute, metadataFile } = await filled();
    await writeFile(metadataFile, '{bad');
    await expect(cache.binary(stage, { text: 'hello' }, compute, WAV_CODEC, '.wav')).resolves.toMatchObject({
      label: 'tone',
    });
    expect(cache.statistics[stage]?.corrupt).toBe(1);
    expect(JSON.parse(await readFile(metadataFile, 'utf8'))).toMatchObject({ metadata: { label: 'tone' } });
  });

  it('edited metadata (a word of the timings beside the audio) is recomputed', async () => {
    const { cache, compute, metadataFile } = await filled();
    const written = await readFile(metadataFile, 'utf8');
    await writeFile(metadataFile, written.replace('"tone"', '"tonx"'));
    await expect(cache.binary(stage, { text: 'hello' }, compute, WAV_CODEC, '.wav')).resolves.toMatchObject({
      label: 'tone',
    });
    expect(cache.statistics[stage]).toEqual({ hits: 0, misses: 2, corrupt: 1 });
    expect(await readFile(metadataFile, 'utf8')).toBe(written);
  });

  it('metadata without its audio file is recomputed', async () => {
    const { cache, compute, dataFile } = await filled();
    await rm(dataFile);
    await expect(cache.binary(stage, { text: 'hello' }, compute, WAV_CODEC, '.wav')).resolves.toMatchObject({
      label: 'tone',
    });
    expect(cache.statistics[stage]?.corrupt).toBe(1);
  });

  it('an entry from before the recorded length and sha256 is still a hit, unless the codec cannot decode it', async () => {
    const { cache, compute, dataFile, metadataFile } = await filled();
    await writeFile(metadataFile, JSON.stringify({ label: 'legacy' }));
    await expect(cache.binary(stage, { text: 'hello' }, compute, WAV_CODEC, '.wav')).resolves.toMatchObject({
      label: 'legacy',
    });
    expect(cache.statistics[stage]).toEqual({ hits: 1, misses: 1, corrupt: 0 });

    await writeFile(dataFile, 'RIFF garbage');
    await expect(cache.binary(stage, { text: 'hello' }, compute, WAV_CODEC, '.wav')).resolves.toMatchObject({
      label: 'tone',
    });
    expect(cache.statistics[stage]).toEqual({ hits: 1, misses: 2, corrupt: 1 });
  });
});

describe('ContentCache.binary tells the codec the data file behind the value', () => {
  const stage = 'synthesize-speech';
  const fileSha256 = async (cache: ContentCache, key: unknown) =>
    createHash('sha256')
      .update(await readFile(entry(cache, stage, key, '.wav')))
      .digest('hex');

  it('on a miss (the computed value), a hit (the decoded value) and a hit on an entry from before the recorded sha256', async () => {
    const cache = new ContentCache(directory);
    const told: [Clip, string][] = [];
    const codec = { ...WAV_CODEC, stored: (value: Clip, sha256: string) => void told.push([value, sha256]) };
    const computed = clip();
    const first = await cache.binary(stage, { text: 'hello' }, async () => computed, codec, '.wav');
    expect(first).toBe(computed);
    const written = await fileSha256(cache, { text: 'hello' });
    expect(told).toEqual([[computed, written]]);
    expect(told[0]![0]).toBe(computed);

    const hit = await cache.binary(stage, { text: 'hello' }, async () => clip(), codec, '.wav');
    expect(cache.statistics[stage]).toEqual({ hits: 1, misses: 1, corrupt: 0 });
    expect(told[1]![0]).toBe(hit);
    expect(told[1]![1]).toBe(written);

    // another entry's file has another sha256
    await cache.binary(
      stage,
      { text: 'other' },
      async () => ({ label: 'other', audio: new Float32Array(10) }),
      codec,
      '.wav',
    );
    expect(told[2]![1]).toBe(await fileSha256(cache, { text: 'other' }));
    expect(told[2]![1]).not.toBe(written);

    await writeFile(entry(cache, stage, { text: 'hello' }, '.json'), JSON.stringify({ label: 'legacy' }));
    const legacy = await cache.binary(stage, { text: 'hello' }, async () => clip(), codec, '.wav');
    expect(legacy.label).toBe('legacy');
    expect(told[3]).toEqual([legacy, written]);
  });
});

describe('ContentCache.binaryFiles (an entry of several data files)', () => {
  const stage = 'place-timeline';
  const parts = [new Uint8Array([1, 2, 3, 4]), new Uint8Array([5, 6, 7, 8, 9, 10])];
  interface Parts {
    label: string;
    parts: Uint8Array[];
    stored: StoredFile[];
  }
  const codec = {
    encode: (value: Parts) => ({ parts: value.parts, metadata: { label: value.label } }),
    decode: (stored: StoredFile[], metadata: { label: string }): Parts => ({
      label: metadata.label,
      parts: stored.map((part) => new Uint8Array(part.bytes)),
      stored,
    }),
  };

  it('stores each part as its own file, hands the files and their sha256 to decode on a miss and on a hit alike', async () => {
    const cache = new ContentCache(directory);
    const compute = vi.fn(async (): Promise<Parts> => ({ label: 'two parts', parts, stored: [] }));
    const first = await cache.binaryFiles(stage, { id: 1 }, compute, codec, '.wav');
    const second = await cache.binaryFiles(stage, { id: 1 }, compute, codec, '.wav');
    expect(compute).toHaveBeenCalledTimes(1);
    expect(cache.statistics[stage]).toEqual({ hits: 1, misses: 1, corrupt: 0 });
    for (const value of [first, second]) {
      expect(value.parts).toEqual(parts);
      expect(value.stored.map((part) => path.basename(part.path))).toEqual([
        path.basename(entry(cache, stage, { id: 1 }, '.wav')),
        path.basename(entry(cache, stage, { id: 1 }, '.1.wav')),
      ]);
      for (const [index, part] of value.stored.entries()) {
        expect(await readFile(part.path)).toEqual(Buffer.from(parts[index]!));
        expect(part.sha256).toBe(createHash('sha256').update(parts[index]!).digest('hex'));
      }
    }
    expect(JSON.parse(await readFile(entry(cache, stage, { id: 1 }, '.json'), 'utf8'))).toMatchObject({
      contentCacheEntry: 3,
      files: [{ bytes: 4 }, { bytes: 6 }],
      metadata: { label: 'two parts' },
    });
  });

  it('a damaged or missing second file, or metadata of another kind, is recomputed and rewritten', async () => {
    const cache = new ContentCache(directory);
    const compute = vi.fn(async (): Promise<Parts> => ({ label: 'two parts', parts, stored: [] }));
    await cache.binaryFiles(stage, { id: 2 }, compute, codec, '.wav');
    const second = entry(cache, stage, { id: 2 }, '.1.wav');
    await writeFile(second, new Uint8Array([5, 6, 7, 8, 9, 11])); // same length, other bytes
    await expect(cache.binaryFiles(stage, { id: 2 }, compute, codec, '.wav')).resolves.toMatchObject({
      label: 'two parts',
    });
    expect(await readFile(second)).toEqual(Buffer.from(parts[1]!));
    await rm(second);
    await cache.binaryFiles(stage, { id: 2 }, compute, codec, '.wav');
    const metadataFile = entry(cache, stage, { id: 2 }, '.json');
    await writeFile(
      metadataFile,
      JSON.stringify({ contentCacheEntry: 2, dataBytes: 4, dataSha256: 'x', metadataSha256: 'y', metadata: {} }),
    );
    await cache.binaryFiles(stage, { id: 2 }, compute, codec, '.wav');
    expect(compute).toHaveBeenCalledTimes(4);
    expect(cache.statistics[stage]).toEqual({ hits: 0, misses: 4, corrupt: 3 });
    await expect(cache.binaryFiles(stage, { id: 2 }, compute, codec, '.wav')).resolves.toMatchObject({ parts });
    expect(cache.statistics[stage]).toEqual({ hits: 1, misses: 4, corrupt: 3 });
  });
});
