import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { restoreInterruptedSwap, swapPoolIntoPlace } from './prompt-pool-swap.ts';

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'prompt-pool-swap-'));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function pool(directory: string, text: string): Promise<void> {
  await mkdir(directory, { recursive: true });
  await writeFile(path.join(directory, 'manifest.json'), text);
}

describe('swapPoolIntoPlace', () => {
  it('replaces the old pool and leaves no backup', async () => {
    const out = path.join(folder, 'pool');
    await pool(out, 'old');
    await pool(`${out}.partial`, 'new');
    await swapPoolIntoPlace(`${out}.partial`, out);
    expect(await readFile(path.join(out, 'manifest.json'), 'utf8')).toBe('new');
    expect(existsSync(`${out}.previous`)).toBe(false);
    expect(existsSync(`${out}.partial`)).toBe(false);
  });

  it('puts the old pool back when the new one cannot be renamed in', async () => {
    const out = path.join(folder, 'pool');
    await pool(out, 'old');
    await expect(swapPoolIntoPlace(`${out}.partial`, out)).rejects.toThrow('ENOENT');
    expect(await readFile(path.join(out, 'manifest.json'), 'utf8')).toBe('old');
  });
});

describe('restoreInterruptedSwap', () => {
  it('restores a pool set aside by a run killed between the renames', async () => {
    const out = path.join(folder, 'pool');
    await pool(`${out}.previous`, 'old');
    await restoreInterruptedSwap(out);
    expect(await readFile(path.join(out, 'manifest.json'), 'utf8')).toBe('old');
    expect(existsSync(`${out}.previous`)).toBe(false);
  });
});
