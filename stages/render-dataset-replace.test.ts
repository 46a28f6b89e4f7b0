import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BACKUP_MARKER } from '../pipeline/storage/commit-backup-marker.ts';
import { removeStaleVariantDataset } from './render-dataset-replace.ts';

const HASH = 'a'.repeat(64);
let scratch: string;
let variant: string;
beforeEach(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'stale-variant-'));
  variant = path.join(scratch, 'data', 'en', 'task', 'topiocqa_bargein');
});
afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A committed-looking variant folder: all.jsonl and a WAV, listed by a manifest with `manifest` merged in. */
async function writeVariant(manifest: Record<string, unknown> = {}): Promise<void> {
  await mkdir(path.join(variant, 'audio'), { recursive: true });
  await writeFile(path.join(variant, 'all.jsonl'), '{}\n');
  await writeFile(path.join(variant, 'audio', 'd1.wav'), 'RIFF');
  await writeFile(
    path.join(variant, 'manifest.json'),
    JSON.stringify({
      format: 'm3-duplexbench',
      manifestVersion: 1,
      dataset: 'topiocqa_bargein',
      variant: { kind: 'barge-in', of: 'topiocqa', systemYields: 'next-word-boundary' },
      dialogues: ['d1'],
      files: { 'all.jsonl': HASH, 'audio/d1.wav': HASH },
      ...manifest,
    }),
  );
}

describe('removeStaleVariantDataset', () => {
  it('removes a barge-in variant a commit wrote, and its marked backup', async () => {
    await writeVariant();
    await mkdir(`${variant}.previous`);
    await writeFile(path.join(`${variant}.previous`, BACKUP_MARKER), 'topiocqa_bargein\n');
    const outcome = await removeStaleVariantDataset(variant, 'topiocqa');
    expect(outcome).toEqual({
      removed: true,
      message: `${variant}: removed: the barge-in dataset of an earlier build (this build writes none)`,
    });
    expect(existsSync(variant)).toBe(false);
    expect(existsSync(`${variant}.previous`)).toBe(false);
    expect(existsSync(path.dirname(variant))).toBe(true);
  });

  it('returns null when there is no such folder', async () => {
    expect(await removeStaleVariantDataset(variant, 'topiocqa')).toBeNull();
  });

  it.each([
    ['no manifest', async () => writeFile(path.join(variant, 'manifest.json'), '{}'), /no manifest|not a duplexsynth/],
    [
      'another dataset',
      async () => writeVariant({ variant: { kind: 'barge-in', of: 'other', systemYields: 'runs-on' } }),
      /barge-in variant of topiocqa/,
    ],
    ['no variant record', async () => writeVariant({ variant: undefined }), /barge-in variant of topiocqa/],
    [
      'a file the manifest does not list',
      async () => {
        await writeVariant();
        await writeFile(path.join(variant, 'notes.txt'), 'mine');
      },
      /files its manifest\.json does not list \(notes\.txt\)/,
    ],
    [
      'a manifest that is not JSON',
      async () => {
        await writeVariant();
        await writeFile(path.join(variant, 'manifest.json'), '{');
      },
      /cannot be read/,
    ],
  ])("leaves a folder it cannot prove is a commit's variant (%s), with a warning", async (_, write, reason) => {
    await mkdir(variant, { recursive: true });
    await write();
    const outcome = await removeStaleVariantDataset(variant, 'topiocqa');
    expect(outcome?.removed).toBe(false);
    expect(outcome?.message).toMatch(new RegExp(`^${variant.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: left as it is: `));
    expect(outcome?.message).toMatch(reason);
    expect(existsSync(path.join(variant, 'manifest.json'))).toBe(true);
  });

  it('leaves a folder without any manifest', async () => {
    await mkdir(variant, { recursive: true });
    await writeFile(path.join(variant, 'mine.wav'), 'RIFF');
    const outcome = await removeStaleVariantDataset(variant, 'topiocqa');
    expect(outcome?.message).toContain('(it has no manifest.json)');
    expect(existsSync(path.join(variant, 'mine.wav'))).toBe(true);
  });
});
