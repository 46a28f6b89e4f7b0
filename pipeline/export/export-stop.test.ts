/**
 * `export` stopped by SIGTERM inside its commit, at the two renames that swap the new export in for
 * the old one (pipeline/storage/folder-swap.ts), held there by scripts/testing/hold-rename.mjs: each
 * stop ends with exactly one line and exit code 143, and leaves the old export byte for byte, with no
 * `.partial`, `.previous` or marker left. Random moments over the whole export: `npm run chaos --
 * --section signals`.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../config.ts';
import { TEST_CLI } from '../../scripts/testing/cli-command.ts';
import { copyExportFixture } from './testing/export-fixture.ts';

const HOLD = path.join(PROJECT_ROOT, 'scripts', 'testing', 'hold-rename.mjs');

let scratch: string;
let dataset: string;
let runs = 0;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-export-stop-'));
  dataset = await copyExportFixture(scratch);
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** sha256 of every file under `folder` by relative path, sorted. */
async function hashes(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  const lines = await Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map(async (entry) => {
        const file = path.join(entry.parentPath, entry.name);
        const digest = createHash('sha256')
          .update(await readFile(file))
          .digest('hex');
        return `${path.relative(folder, file)} ${digest}`;
      }),
  );
  return lines.sort();
}

/**
 * Runs `duplexsynth ARGS`; with `hold`, the first rename matching it (`FROM -> TO`) waits and SIGTERM
 * is sent once it is reached. Resolves when the process has ended.
 */
async function run(args: string[], hold?: string): Promise<{ code: number | null; lines: string[]; held: boolean }> {
  const marker = path.join(scratch, `held-${++runs}`);
  const child = spawn(process.execPath, [...(hold ? ['--import', HOLD] : []), TEST_CLI, ...args], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      ...(hold ? { DUPLEXSYNTH_TEST_HOLD_RENAME: hold, DUPLEXSYNTH_TEST_HOLD_MARKER: marker } : {}),
    },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let ended = false;
  void exited.then(() => (ended = true));
  let held = false;
  if (hold) {
    while (!ended && !existsSync(marker)) await sleep(100);
    if (!ended) {
      held = true;
      child.kill('SIGTERM');
    }
  }
  const code = await exited;
  return { code, lines: stderr.split('\n').filter((line) => line.startsWith('duplexsynth:')), held };
}

/** `text` with the characters a regular expression gives a meaning escaped. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('export stopped by SIGTERM in the commit that replaces an earlier export', () => {
  it.each([
    { moment: 'at the rename of the old export aside', rename: (out: string) => `${out} -> ${out}\\.previous$` },
    { moment: 'between the two renames', rename: (out: string) => `${out}\\.partial -> ${out}$` },
  ])('$moment: one line, exit 143, the old export byte for byte', async ({ moment, rename }) => {
    const out = path.join(scratch, 'exports', moment.replaceAll(/[^a-z]+/g, '-'));
    const args = ['export', dataset, '--to', 'lhotse', '--copy-audio', '--out', out];
    const first = await run(args);
    expect(first.code, first.lines.join('\n')).toBe(0);
    const before = await hashes(out);
    // a different export of the same format: what the stopped commit would have swapped in
    const result = await run([...args, '--absolute-paths'], rename(literal(out)));
    expect(result.held).toBe(true);
    expect(result.code).toBe(143);
    expect(result.lines).toEqual([`duplexsynth: export stopped by SIGTERM; the earlier export in ${out} is kept`]);
    expect(await hashes(out)).toEqual(before);
    expect((await readdir(path.dirname(out))).filter((name) => name.startsWith(path.basename(out)))).toEqual([
      path.basename(out),
    ]);
  });
});
