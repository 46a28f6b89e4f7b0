import { mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatasetWriter } from './render-dataset.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'render-dataset-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A dataset of `ids`, one second of silence each, committed into `directory`. */
async function writeDataset(directory: string, ids: string[], seed: number): Promise<DatasetWriter> {
  const writer = await DatasetWriter.open(directory);
  for (const id of ids) {
    const track = new Float32Array(16000);
    await writer.addDialogue({ id, tracks: [track, track], sampleRate: 16000, eventsLine: `{"id": "${id}", "events": {"0": [], "1": []}}`, words: [], metadata: { id, speakers: {}, durationSeconds: 0.01, utterances: [] } });
  }
  return writer;
}

/** Manifest settings of build `seed` (read back as `build.seed`, to tell the commits apart). */
const settings = (seed: number) => ({ language: 'en' as const, dataset: 'topiocqa', domain: 'task' as const, build: { name: 'test', seed } });

describe('DatasetWriter commit: the complete old dataset is never lost', () => {
  it('replaces the old dataset and leaves no aside folder', async () => {
    const directory = path.join(root, 'a', 'topiocqa');
    await (await writeDataset(directory, ['d1', 'd2'], 1)).commit(settings(1));
    await (await writeDataset(directory, ['d1', 'd2'], 2)).commit(settings(2));
    expect(JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8')).build.seed).toBe(2);
    expect((await readdir(path.dirname(directory))).sort()).toEqual(['topiocqa']);
  });

  it('a commit killed between its two renames: the next open puts the old dataset back, and the build can go on', async () => {
    const directory = path.join(root, 'b', 'topiocqa');
    await (await writeDataset(directory, ['d1', 'd2'], 1)).commit(settings(1));
    // the state a kill leaves after the first rename of a second commit: old aside, new still .partial
    await writeDataset(directory, ['d1', 'd2'], 2);
    await rename(directory, `${directory}.previous`);
    const again = await writeDataset(directory, ['d1', 'd2'], 3);
    expect(JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8')).build.seed).toBe(1); // restored
    await again.commit(settings(3));
    expect(JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8')).build.seed).toBe(3);
    expect((await readdir(path.dirname(directory))).sort()).toEqual(['topiocqa']);
  });

  it('a commit killed after both renames: the leftover aside folder is removed, the new dataset kept', async () => {
    const directory = path.join(root, 'c', 'topiocqa');
    await (await writeDataset(directory, ['d1'], 1)).commit(settings(1));
    await rename(directory, `${directory}.previous`);
    await (await writeDataset(directory, ['d1'], 2)).commit(settings(2));
    // simulate: new in place and an old aside left over
    await (await writeDataset(path.join(root, 'tmp'), ['d1'], 9)).commit(settings(9));
    await rename(path.join(root, 'tmp'), `${directory}.previous`);
    await DatasetWriter.open(directory);
    expect(JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8')).build.seed).toBe(2);
    expect((await readdir(path.dirname(directory))).filter((name) => name.endsWith('.previous'))).toEqual([]);
  });
});

describe('DatasetWriter commit: the files are checked, not read back', () => {
  it('a file cut or removed after it was written, or a file nobody wrote, stops the commit naming it; the old dataset stays', async () => {
    const directory = path.join(root, 'checked', 'topiocqa');
    await (await writeDataset(directory, ['d1'], 1)).commit(settings(1));
    const cut = await writeDataset(directory, ['d1', 'd2'], 2);
    const wav = path.join(`${directory}.partial`, 'audio', 'd2.wav');
    await writeFile(wav, (await readFile(wav)).subarray(0, 100));
    await expect(cut.commit(settings(2))).rejects.toThrow(/audio\/d2\.wav: 100 bytes, \d+ were written; not committed/);
    const removed = await writeDataset(directory, ['d1', 'd2'], 3);
    await rm(path.join(`${directory}.partial`, 'txt_align', 'd1.txt'));
    await expect(removed.commit(settings(3))).rejects.toThrow(/txt_align\/d1\.txt: listed in the manifest but missing \(ENOENT\)/);
    const stray = await writeDataset(directory, ['d1', 'd2'], 4);
    await writeFile(path.join(`${directory}.partial`, 'audio', 'extra.wav'), 'x');
    await expect(stray.commit(settings(4))).rejects.toThrow(/audio\/extra\.wav: not in the manifest; not committed/);
    expect(JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8')).build.seed).toBe(1);
  });
});
