/**
 * A build whose output folder holds a user's own `report.previous` or `{dataset}.previous` (a folder
 * without the swap's backup marker, pipeline/storage/folder-swap.ts), or a user's own folder where a
 * dataset goes (files, no manifest.json), is refused before any work
 * (pipeline/run/build-guards.ts `refuseForeignBackupFolders`), run as `duplexsynth build` in a child
 * process (offline English build: rules rewrite, espeak-ng): exit code 2, one line naming the folder,
 * nothing synthesized (the cache folder not made), nothing written into the output folder, and the
 * user's folder byte for byte as it was.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, sharedDirectory } from '../config.ts';
import { EXIT_CODES } from '../model/build-errors.ts';
import { hashTree } from '../orchestration/testing/shared-build.ts';
import { TEST_CLI } from '../../scripts/testing/cli-command.ts';

const TOPIOCQA_DEV = path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-foreign-backup-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Runs `duplexsynth build --config FILE`; resolves with its exit code and standard error. */
function build(config: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [TEST_CLI, 'build', '--config', config], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

/** Every entry under `folder` (files and folders), relative, sorted. */
async function entriesBelow(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries.map((entry) => path.relative(folder, path.join(entry.parentPath, entry.name))).sort();
}

describe('a build meeting a user’s own .previous folder', () => {
  for (const [name, relative, refusal] of [
    ['report.previous', 'report.previous', 'not a backup left by duplexsynth'],
    [
      'the barge-in dataset’s .previous',
      path.join('data', 'en', 'task', 'topiocqa_bargein.previous'),
      'not a backup left by duplexsynth',
    ],
    [
      'a dataset folder without manifest',
      path.join('data', 'en', 'task', 'topiocqa'),
      'exists, holds files and was not written by duplexsynth',
    ],
  ] as const) {
    it(`refuses ${name} before any work and leaves it byte for byte`, async () => {
      const root = path.join(scratch, name.replace(/[^a-z]+/g, '-'));
      const out = path.join(root, 'out');
      const cache = path.join(root, 'cache');
      const userFolder = path.join(out, relative);
      // the user's folder: files at two depths, no marker
      await mkdir(path.join(userFolder, 'notes'), { recursive: true });
      await writeFile(path.join(userFolder, 'index.html'), '<p>my own report</p>\n');
      await writeFile(path.join(userFolder, 'notes', 'todo.txt'), 'keep this\n');
      const config = path.join(root, 'build.json');
      await writeFile(
        config,
        JSON.stringify({
          name: 'foreign-backup',
          seed: 11,
          languages: ['en'],
          corpus: { path: TOPIOCQA_DEV, limit: 1 },
          output: { directory: out, cacheDirectory: cache },
          llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
          quality: { enabled: false },
        }),
      );
      const userFiles = await hashTree(userFolder);
      const outEntries = await entriesBelow(out);

      const result = await build(config);

      expect(result.code).toBe(EXIT_CODES.badInput);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(`^duplexsynth: ${userFolder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ${refusal}`),
      );
      // nothing synthesized: the build's cache was never made; nothing written beside the user's folder
      expect(existsSync(cache)).toBe(false);
      expect(await entriesBelow(out)).toEqual(outEntries);
      expect(await hashTree(userFolder)).toEqual(userFiles);
    });
  }
});
