/**
 * The one stop path (pipeline/run/stop-signals.ts), tried as `kill`, systemd, docker stop, Slurm and
 * Ctrl-C do it: `duplexsynth` runs as a child process on a small real build (2 TopiOCQA dialogues,
 * offline English), is held just before it commits its work (scripts/testing/hold-rename.mjs: its
 * `.partial` written, not yet renamed), and the test sends the signal. Each case asserts the one line
 * on standard error, the exit code (128 + the signal's number), that no `.partial`, temporary file or
 * empty folder is left, and that what was there before is as it was.
 */
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, sharedDirectory } from '../pipeline/config.ts';
import { hashTree } from '../pipeline/orchestration/testing/shared-build.ts';
import { TEST_CLI } from './testing/cli-command.ts';
import { STOP_EXIT_CODES, type StopSignal } from '../pipeline/run/stop-signals.ts';

const HOLD = path.join(PROJECT_ROOT, 'scripts', 'testing', 'hold-rename.mjs');
const TOPIOCQA_DEV = path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');
const DATASET = path.join('data', 'en', 'task', 'topiocqa');

let scratch: string;
let built: string;
let cache: string;
let runs = 0;

/** A build config of 2 dialogues into `out` (offline rules backend, English), scored when `quality`. */
async function writeConfig(out: string, quality: boolean): Promise<string> {
  const file = path.join(scratch, `config-${++runs}.json`);
  const config = {
    name: 'signals',
    seed: 11,
    languages: ['en'],
    corpus: { path: TOPIOCQA_DEV, limit: 2 },
    output: { directory: out, cacheDirectory: cache },
    llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
    quality: { enabled: quality },
  };
  await writeFile(file, JSON.stringify(config));
  return file;
}

interface Run {
  code: number | null;
  stderr: string;
  held: boolean;
}

/**
 * Run `duplexsynth ARGS`; with `hold`, the first rename matching it (`FROM -> TO`) waits forever and
 * the test sends `signal` once it is reached (hold-rename.mjs). Resolves when the process has ended.
 */
async function run(args: string[], hold?: { rename: string; signal: StopSignal }): Promise<Run> {
  const marker = path.join(scratch, `held-${++runs}`);
  const child = spawn(process.execPath, [...(hold ? ['--import', HOLD] : []), TEST_CLI, ...args], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ...(hold ? { DUPLEXSYNTH_TEST_HOLD_RENAME: hold.rename, DUPLEXSYNTH_TEST_HOLD_MARKER: marker } : {}),
    },
  });
  let stderr = '';
  child.stdout.resume();
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let held = false;
  if (hold) {
    let ended = false;
    void exited.then(() => (ended = true));
    while (!ended && !existsSync(marker)) await sleep(100);
    if (!ended) {
      held = true;
      child.kill(hold.signal);
    }
  }
  return { code: await exited, stderr, held };
}

/** The lines of a run's standard error. */
const linesOf = (stderr: string) => stderr.trim().split('\n');

/** Every `.partial`, `.previous` and temporary file or folder under `folder`. */
async function leftovers(folder: string): Promise<string[]> {
  return (await readdir(folder, { recursive: true })).filter((name) => /\.partial|\.previous|\.tmp$/.test(name));
}

/** A copy of the small build to stop a command in. */
async function copyOfBuild(name: string): Promise<string> {
  const copy = path.join(scratch, name);
  await cp(built, copy, { recursive: true });
  return copy;
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-signals-'));
  built = path.join(scratch, 'built');
  cache = path.join(scratch, 'cache');
  const result = await run(['build', '--plain', '--config', await writeConfig(built, false)]);
  expect(result.code, result.stderr).toBe(0);
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('a signal stops every long command the same way', () => {
  it.each(['SIGTERM', 'SIGHUP', 'SIGINT'] as const)(
    'export stopped by %s: one line, its exit code, no .partial and no folder it created',
    async (signal) => {
      const out = await copyOfBuild(`export-${signal}`);
      const target = path.join(out, 'exports', 'made', 'rttm');
      const result = await run(['export', path.join(out, DATASET), '--to', 'rttm', '--out', target], {
        rename: '\\.partial -> ',
        signal,
      });
      expect(result.held, result.stderr).toBe(true);
      expect(linesOf(result.stderr)).toEqual([
        `duplexsynth: export stopped by ${signal}; nothing written to ${target}`,
      ]);
      expect(result.code).toBe(STOP_EXIT_CODES[signal]);
      expect(existsSync(path.join(out, 'exports'))).toBe(false);
      expect(await hashTree(out)).toEqual(await hashTree(built));
    },
  );

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'report stopped by %s between its renames: one line, the previous report back in place, no report.partial',
    async (signal) => {
      const out = await copyOfBuild(`report-${signal}`);
      const result = await run(['report', out], { rename: 'report\\.partial -> ', signal });
      expect(result.held, result.stderr).toBe(true);
      expect(linesOf(result.stderr)).toEqual([
        `duplexsynth: report stopped by ${signal}; the previous report in ${path.join(out, 'report')} is kept`,
      ]);
      expect(result.code).toBe(STOP_EXIT_CODES[signal]);
      expect(await leftovers(out)).toEqual([]);
      expect(await hashTree(out)).toEqual(await hashTree(built));
    },
  );

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'score stopped by %s before quality.json is in place: one line, the dataset as it was, no temporary file',
    async (signal) => {
      const out = await copyOfBuild(`score-${signal}`);
      const dataset = path.join(out, DATASET);
      const result = await run(['score', dataset, '--no-comet', '--plain'], {
        rename: ' -> .*quality\\.json$',
        signal,
      });
      expect(result.held, result.stderr).toBe(true);
      expect(linesOf(result.stderr).at(-1)).toBe(
        `duplexsynth: score stopped by ${signal}; ${dataset} kept as it was before scoring; run score again to score it`,
      );
      expect(linesOf(result.stderr).filter((line) => line.startsWith('duplexsynth:'))).toHaveLength(1);
      expect(result.code).toBe(STOP_EXIT_CODES[signal]);
      expect(await leftovers(out)).toEqual([]);
      expect(await hashTree(out)).toEqual(await hashTree(built));
    },
  );

  it('a scored build stopped by SIGTERM while splitting leaves its datasets as committed, not half-scored', async () => {
    const out = path.join(scratch, 'scored');
    const config = await writeConfig(out, true);
    const result = await run(['build', '--plain', '--config', config], {
      rename: ' -> .*split\\.json$',
      signal: 'SIGTERM',
    });
    expect(result.held, result.stderr).toBe(true);
    const datasets = [path.join(out, DATASET), `${path.join(out, DATASET)}_bargein`];
    expect(linesOf(result.stderr).at(-1)).toBe(
      `duplexsynth: build stopped by SIGTERM; ${datasets.join(', ')} kept as they were before scoring; run the build again to score them`,
    );
    expect(linesOf(result.stderr).filter((line) => line.startsWith('duplexsynth:'))).toHaveLength(1);
    expect(result.code).toBe(143);
    expect(await leftovers(out)).toEqual([]);
    for (const dataset of datasets) {
      const files = await readdir(dataset);
      expect(files).toContain('manifest.json');
      for (const name of ['quality.json', 'tables.md', 'tables.json', 'split.json', 'test.jsonl', 'dev.jsonl'])
        expect(files).not.toContain(name);
    }
    // the committed datasets are the unscored build's, byte for byte
    expect(await hashTree(path.join(out, 'data'))).toEqual(await hashTree(path.join(built, 'data')));
    // and the next build scores them
    const again = await run(['build', '--plain', '--config', config]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(await readFile(path.join(out, DATASET, 'split.json'), 'utf8'))).toHaveProperty('splits');
  });

  it('a build stopped by SIGTERM before its first commit: one line, no .partial, no folder it created', async () => {
    const out = path.join(scratch, 'new', 'out');
    const result = await run(['build', '--plain', '--config', await writeConfig(out, false)], {
      rename: '\\.partial -> ',
      signal: 'SIGTERM',
    });
    expect(result.held, result.stderr).toBe(true);
    expect(linesOf(result.stderr).at(-1)).toBe(
      'duplexsynth: build stopped by SIGTERM; nothing committed; run the build again to continue from the cache',
    );
    expect(linesOf(result.stderr).filter((line) => line.startsWith('duplexsynth:'))).toHaveLength(1);
    expect(result.code).toBe(143);
    expect(existsSync(path.join(scratch, 'new'))).toBe(false);
  });
});
