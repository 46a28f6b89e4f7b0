/** A build refused while another runs touches nothing of the running build: its lock, folders or cache. */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_FILE, loadConfigFile, type BuildConfig } from '../config.ts';
import { BuildInputError, OutputLockedError } from '../model/build-errors.ts';
import { runLocked } from './build-guards.ts';
import { LOCK_NAME } from './build-lock.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-refused-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('a refused build', () => {
  it('into a running build’s folder and into its cache removes nothing of it, and the first ends normally', async () => {
    const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
    const first: BuildConfig = {
      ...base,
      output: { directory: path.join(root, 'out'), cacheDirectory: path.join(root, 'cache') },
    };
    // the folders the running build has made and not yet filled
    const outputFolder = path.join(first.output.directory, 'data', 'en', 'task');
    const cacheFolder = path.join(first.output.cacheDirectory, 'tts', 'en');
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const firstBuild = runLocked(
      first,
      { conversations: [] },
      () => {},
      async () => {
        await mkdir(outputFolder, { recursive: true });
        await mkdir(cacheFolder, { recursive: true });
        started();
        await finished;
        return 'first build done';
      },
    );
    await running;
    const lock = path.join(first.output.directory, LOCK_NAME);
    expect(existsSync(lock)).toBe(true);

    // the same output folder: refused by the lock
    await expect(
      runLocked(
        first,
        { conversations: [] },
        () => {},
        async () => 'second',
      ),
    ).rejects.toThrow(OutputLockedError);
    expect(existsSync(lock)).toBe(true);
    expect(existsSync(outputFolder)).toBe(true);
    expect(existsSync(cacheFolder)).toBe(true);

    // another output folder (a file: refused by the folder checks) with the running build's cache
    const notAFolder = path.join(root, 'not-a-folder');
    await writeFile(notAFolder, 'a file');
    const third: BuildConfig = { ...first, output: { ...first.output, directory: path.join(notAFolder, 'out') } };
    await expect(
      runLocked(
        third,
        { conversations: [] },
        () => {},
        async () => 'third',
      ),
    ).rejects.toThrow(BuildInputError);
    expect(existsSync(cacheFolder)).toBe(true);
    expect(existsSync(lock)).toBe(true);

    finish();
    expect(await firstBuild).toBe('first build done');
    expect(existsSync(lock)).toBe(false);
  });
});
