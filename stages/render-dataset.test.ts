import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWavPcm16 } from '../pipeline/audio/wav.ts';
import { bytesHash } from '../pipeline/storage/content-cache.ts';
import { writeAtomic } from '../pipeline/storage/write-atomic.ts';
import { DatasetWriter } from './render-dataset.ts';
import { BACKUP_MARKER } from './render-dataset-replace.ts';
import { EXIT_CODES } from '../pipeline/model/build-errors.ts';
import { ForeignDatasetFolderError } from '../pipeline/storage/foreign-dataset-folder.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'render-dataset-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A dataset of `ids`, one second of silence each, committed into `directory`. */
async function writeDataset(directory: string, ids: string[]): Promise<DatasetWriter> {
  const writer = await DatasetWriter.open(directory);
  for (const id of ids) {
    const track = new Float32Array(16000);
    await writer.addDialogue({
      id,
      tracks: [track, track],
      sampleRate: 16000,
      eventsLine: `{"id": "${id}", "events": {"0": [], "1": []}}`,
      words: [],
      metadata: { id, speakers: {}, durationSeconds: 0.01, utterances: [] },
    });
  }
  return writer;
}

/** What a commit killed after its first rename leaves: the old dataset, marked, moved aside as `.previous`. */
async function markAndMoveAside(directory: string): Promise<void> {
  await writeFile(path.join(directory, BACKUP_MARKER), `${path.basename(directory)}\n`);
  await rename(directory, `${directory}.previous`);
}

/** Manifest settings of build `seed` (read back as `build.seed`, to tell the commits apart). */
const settings = (seed: number) => ({
  language: 'en' as const,
  dataset: 'topiocqa',
  domain: 'task' as const,
  build: { name: 'test', seed },
});

describe('DatasetWriter commit: the complete old dataset is never lost', () => {
  it('replaces the old dataset and leaves no aside folder', async () => {
    const directory = path.join(root, 'a', 'topiocqa');
    await (await writeDataset(directory, ['d1', 'd2'])).commit(settings(1));
    await (await writeDataset(directory, ['d1', 'd2'])).commit(settings(2));
    expect(JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8')).build.seed).toBe(2);
    expect((await readdir(path.dirname(directory))).sort()).toEqual(['topiocqa']);
  });

  it('a commit killed between its two renames: the next open puts the old dataset back, and the build can go on', async () => {
    const directory = path.join(root, 'b', 'topiocqa');
    await (await writeDataset(directory, ['d1', 'd2'])).commit(settings(1));
    // the state a kill leaves after the first rename of a second commit: old aside, new still .partial
    await writeDataset(directory, ['d1', 'd2']);
    await markAndMoveAside(directory);
    const again = await writeDataset(directory, ['d1', 'd2']);
    expect(JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8')).build.seed).toBe(1); // restored
    await again.commit(settings(3));
    expect(JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8')).build.seed).toBe(3);
    expect((await readdir(path.dirname(directory))).sort()).toEqual(['topiocqa']);
  });

  it('a commit killed after both renames: the leftover aside folder is removed, the new dataset kept', async () => {
    const directory = path.join(root, 'c', 'topiocqa');
    await (await writeDataset(directory, ['d1'])).commit(settings(1));
    await markAndMoveAside(directory);
    await (await writeDataset(directory, ['d1'])).commit(settings(2));
    // simulate: new in place and an old aside left over
    await (await writeDataset(path.join(root, 'tmp'), ['d1'])).commit(settings(9));
    await writeFile(path.join(root, 'tmp', BACKUP_MARKER), 'topiocqa\n');
    await rename(path.join(root, 'tmp'), `${directory}.previous`);
    await DatasetWriter.open(directory);
    expect(JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8')).build.seed).toBe(2);
    expect((await readdir(path.dirname(directory))).filter((name) => name.endsWith('.previous'))).toEqual([]);
  });
});

describe('DatasetWriter: a dataset folder that no build wrote', () => {
  it('is refused as the build refuses it before any work: same line, exit code 2, its files stay', async () => {
    const directory = path.join(root, 'user-folder', 'tq');
    await mkdir(directory, { recursive: true });
    await writeFile(path.join(directory, 'notes.txt'), 'mine');
    const refusal = await DatasetWriter.open(directory).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ForeignDatasetFolderError);
    expect((refusal as ForeignDatasetFolderError).exitCode).toBe(EXIT_CODES.badInput);
    expect((refusal as Error).message).toBe(
      `${directory}: exists, holds files and was not written by duplexsynth (no manifest.json); it was left as it is: remove it or choose another --out`,
    );
    expect(await readFile(path.join(directory, 'notes.txt'), 'utf8')).toBe('mine');
    expect(await readdir(path.dirname(directory))).toEqual(['tq']);
  });
});

describe('DatasetWriter: a {dataset}.previous that no commit left', () => {
  it('is never removed nor restored: open stops naming it, its files stay', async () => {
    const directory = path.join(root, 'foreign', 'tq');
    await (await writeDataset(directory, ['d1'])).commit(settings(1));
    const foreign = `${directory}.previous`;
    await mkdir(path.join(foreign, 'audio'), { recursive: true });
    await writeFile(path.join(foreign, 'manifest.json'), '{"mine": true}');
    await writeFile(path.join(foreign, 'audio', 'keep.wav'), 'user data');
    await expect(writeDataset(directory, ['d1'])).rejects.toThrow(
      `${foreign}: not a backup left by a duplexsynth commit (no .duplexsynth-backup in it), and a commit keeps the old dataset under that name; it was left as it is: rename or move it, or choose another --out`,
    );
    expect(await readFile(path.join(foreign, 'audio', 'keep.wav'), 'utf8')).toBe('user data');
    expect(await readFile(path.join(foreign, 'manifest.json'), 'utf8')).toBe('{"mine": true}');
    expect(JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8')).build.seed).toBe(1);
    // with the folder itself missing, it is not taken for the old dataset either
    await rm(directory, { recursive: true });
    await expect(DatasetWriter.open(directory)).rejects.toThrow(/not a backup left by a duplexsynth commit/);
    expect(await readFile(path.join(foreign, 'audio', 'keep.wav'), 'utf8')).toBe('user data');
  });

  it('a commit leaves no marker in the committed dataset, and a marker left by a kill before the first rename is removed by open', async () => {
    const directory = path.join(root, 'marker', 'tq');
    await (await writeDataset(directory, ['d1'])).commit(settings(1));
    await (await writeDataset(directory, ['d1'])).commit(settings(2));
    expect(await readdir(directory)).not.toContain(BACKUP_MARKER);
    await writeFile(path.join(directory, BACKUP_MARKER), 'tq\n');
    await DatasetWriter.open(directory);
    expect(await readdir(directory)).not.toContain(BACKUP_MARKER);
  });
});

describe('DatasetWriter commit: the files are checked, not read back', () => {
  it('a file cut or removed after it was written, or a file nobody wrote, stops the commit naming it; the old dataset stays', async () => {
    const directory = path.join(root, 'checked', 'topiocqa');
    await (await writeDataset(directory, ['d1'])).commit(settings(1));
    const cut = await writeDataset(directory, ['d1', 'd2']);
    const wav = path.join(`${directory}.partial`, 'audio', 'd2.wav');
    await writeFile(wav, (await readFile(wav)).subarray(0, 100));
    await expect(cut.commit(settings(2))).rejects.toThrow(/audio\/d2\.wav: 100 bytes, \d+ were written; not committed/);
    const removed = await writeDataset(directory, ['d1', 'd2']);
    await rm(path.join(`${directory}.partial`, 'txt_align', 'd1.txt'));
    await expect(removed.commit(settings(3))).rejects.toThrow(
      /txt_align\/d1\.txt: listed in the manifest but missing \(ENOENT\)/,
    );
    const stray = await writeDataset(directory, ['d1', 'd2']);
    await writeFile(path.join(`${directory}.partial`, 'audio', 'extra.wav'), 'x');
    await expect(stray.commit(settings(4))).rejects.toThrow(/audio\/extra\.wav: not in the manifest; not committed/);
    expect(JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8')).build.seed).toBe(1);
  });
});

describe('DatasetWriter: WAVs the cache already holds', () => {
  it('are hard links to the cache files, listed with their recorded sha256; copied (and checked) when linking is off; a cache file changed since it was recorded is refused, naming it', async () => {
    const directory = path.join(root, 'linked', 'topiocqa');
    const cache = path.join(root, 'linked', '.cache');
    const wav = encodeWavPcm16({
      channels: [new Float32Array(1600).fill(0.25), new Float32Array(1600)],
      sampleRate: 16000,
    });
    const fullBand = encodeWavPcm16({
      channels: [new Float32Array(2400).fill(0.25), new Float32Array(2400)],
      sampleRate: 24000,
    });
    const stored = async (name: string, bytes: Uint8Array) => {
      await writeAtomic(path.join(cache, name), bytes);
      return { path: path.join(cache, name), sha256: bytesHash(bytes), byteLength: bytes.byteLength };
    };
    const [wavFile, fullBandFile] = [await stored('d1.wav', wav), await stored('d1.1.wav', fullBand)];
    const writer = await DatasetWriter.open(directory);
    const dialogue = (id: string) => ({
      id,
      eventsLine: `{"id": "${id}", "events": {"0": [], "1": []}}`,
      words: [],
      metadata: { id, speakers: {}, durationSeconds: 0.1, utterances: [] },
    });
    await writer.addDialogue({ ...dialogue('d1'), wavFile, fullBand: { sampleRate: 24000, file: fullBandFile } });
    // a cache file cut since it was recorded: not linked (another length), and its bytes cannot be trusted
    const cut = await stored('d2.wav', wav);
    await writeAtomic(cut.path, wav.subarray(0, wav.byteLength - 4));
    await expect(writer.addDialogue({ ...dialogue('d2'), wavFile: cut })).rejects.toThrow(
      `${cut.path}: the rendered WAV differs from the ${wav.byteLength} bytes and sha256 recorded`,
    );
    // a dialogue that fails part way (its WAV linked, its full-band master refused) leaves none of its files
    await expect(
      writer.addDialogue({ ...dialogue('d3'), wavFile, fullBand: { sampleRate: 24000, file: cut } }),
    ).rejects.toThrow(`${cut.path}: the rendered WAV differs`);
    // nor does one whose metadata does not fit its schema (checked before anything is written)
    await expect(
      writer.addDialogue({
        ...dialogue('d4'),
        wavFile,
        metadata: { id: 'd4', speakers: 'none', durationSeconds: 0.1, utterances: [] } as never,
      }),
    ).rejects.toThrow(/metadata\/d4\.json: the record to write does not fit its schema/);
    expect(writer.linkedFiles).toBe(2);
    await writer.commit(settings(1));
    const manifest = JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8'));
    for (const [relative, source, bytes] of [
      ['audio/d1.wav', wavFile.path, wav],
      ['audio_fullband/d1.wav', fullBandFile.path, fullBand],
    ] as const) {
      expect((await stat(path.join(directory, relative))).ino).toBe((await stat(source)).ino);
      expect(manifest.files[relative]).toBe(bytesHash(bytes));
    }
    expect(await readdir(path.join(directory, 'audio'))).toEqual(['d1.wav']);
    expect(Object.keys(manifest.files).sort()).toEqual([
      'all.jsonl',
      'audio/d1.wav',
      'audio_fullband/d1.wav',
      'metadata/d1.json',
      'txt_align/d1.txt',
    ]);
    expect(manifest.fullBand).toEqual({ directory: 'audio_fullband', sampleRates: [24000], dialogues: 1 });

    // linkToStored false (output.linkAudioToCache: false): copied, the same manifest; a changed file refused likewise
    const copied = path.join(root, 'copied', 'topiocqa');
    const copying = await DatasetWriter.open(copied, { linkToStored: false });
    await copying.addDialogue({ ...dialogue('d1'), wavFile, fullBand: { sampleRate: 24000, file: fullBandFile } });
    await expect(copying.addDialogue({ ...dialogue('d2'), wavFile: cut })).rejects.toThrow(
      `${cut.path}: the rendered WAV differs`,
    );
    expect(copying.linkedFiles).toBe(0);
    await copying.commit(settings(1));
    expect((await stat(path.join(copied, 'audio', 'd1.wav'))).nlink).toBe(1);
    expect(await readFile(path.join(copied, 'audio', 'd1.wav'))).toEqual(Buffer.from(wav));
    expect(JSON.parse(await readFile(path.join(copied, 'manifest.json'), 'utf8')).files).toEqual(manifest.files);
  });
});
