/**
 * Output and cache folders are checked up front with one-line messages
 * naming the folder and the cause (a folder under /proc no longer hangs; a read-only file system, a
 * file in the way and a full disk are named), and bad settings are refused before the lock, leaving
 * nothing behind.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_CONFIG_FILE,
  loadConfigFile,
  PROJECT_ROOT,
  resolveConfig,
  sharedDirectory,
  type BuildConfig,
} from '../config.ts';
import { BuildInputError, DiskFullError } from '../model/build-errors.ts';
import { checkBuildSettings, checkFolder, estimatePlannedAudioBytes } from './output-checks.ts';
import { mountTmpfs, tmpfsSkipReason } from '../storage/testing/tmpfs.ts';
import { removeOrphanedTemporaryFiles, temporaryPathFor } from '../storage/write-atomic.ts';
import { TEST_CLI } from '../../scripts/testing/cli-command.ts';
import { runLocked } from './build-guards.ts';
import { PRE_RENDERED_PAGES_DIRECTORY } from '../report/pre-rendered-pages.ts';

const run = promisify(execFile);
const CLI = TEST_CLI; // the compiled command when dist/ is a build of these sources, else the sources through tsx (scripts/testing/cli-command.ts)
const TOPIOCQA_DEV = path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');
const skipReason = tmpfsSkipReason();

async function cli(args: string[], cwd = PROJECT_ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { cwd });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-checks-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('output and cache folders, checked up front', () => {
  it('a folder under /proc is refused at once, naming the special file system (it used to hang)', async () => {
    const error = await checkFolder('/proc/duplexsynth/out', 'output folder').then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(BuildInputError);
    expect((error as Error).message).toBe(
      '/proc/duplexsynth/out: cannot be used as the output folder: it is on the special file system proc, which holds no ordinary files',
    );
  });

  it('the CLI: build --out /proc/... ends with exit code 2 and one line', async () => {
    const result = await cli(['build', '--corpus', TOPIOCQA_DEV, '--limit', '1', '--out', '/proc/duplexsynth/out']);
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines.at(-1)).toMatch(
      /^duplexsynth: \/proc\/duplexsynth\/out: cannot be used as the output folder: .*special file system proc/,
    );
    expect(lines.filter((line) => line.startsWith('duplexsynth:'))).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('a file where the folder should be, or where a parent folder should be', async () => {
    const file = path.join(scratch, 'a-file');
    await writeFile(file, '');
    await expect(checkFolder(file, 'output folder')).rejects.toThrow(
      `${file}: cannot be used as the output folder: it is a file, not a folder`,
    );
    await expect(checkFolder(path.join(file, 'sub'), 'cache folder')).rejects.toThrow(
      `${path.join(file, 'sub')}: cannot be used as the cache folder: ${file} is a file, not a folder`,
    );
  });

  describe.skipIf(skipReason !== undefined)(`on tmpfs${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
    it('a read-only file system is named as such (it used to be a bare ENOENT)', async () => {
      const disk = mountTmpfs(1024 * 1024, { readOnly: true });
      try {
        const folder = path.join(disk.directory, 'out');
        await expect(checkFolder(folder, 'output folder')).rejects.toThrow(
          `${folder}: cannot be used as the output folder: the file system is read-only (EROFS)`,
        );
      } finally {
        disk.unmount();
      }
    });

    it('not enough room for the planned audio: DiskFullError naming the folder, the space free and needed', async () => {
      const disk = mountTmpfs(4 * 1024 * 1024);
      try {
        const folder = path.join(disk.directory, 'cache');
        const error = await checkFolder(folder, 'cache folder', 8_000_000).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(DiskFullError);
        expect((error as Error).message).toMatch(
          new RegExp(
            `^${folder}: not enough free space for the cache folder: 4\\.\\d MB free, the planned audio needs about 9\\.0 MB`,
          ),
        );
        await expect(checkFolder(folder, 'cache folder', 1_000_000)).resolves.toBeUndefined();
      } finally {
        disk.unmount();
      }
    });
  });

  it('the planned audio grows with the text and the languages (2 real dialogues: about their real 5.5 MB)', async () => {
    const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
    const { ingestCorpus } = await import('../../stages/ingest-corpus.ts');
    const corpus = await ingestCorpus({
      ...base,
      languages: ['en'],
      corpus: { ...base.corpus, path: TOPIOCQA_DEV, limit: 2 },
    });
    const bytes = estimatePlannedAudioBytes(corpus.conversations, 1, 16000);
    // the real build of these two dialogues writes 86.6 s of 2-channel 16-bit audio at 16 kHz: 5.54 MB
    expect(bytes).toBeGreaterThan(5_540_000);
    expect(bytes).toBeLessThan(2 * 5_540_000);
    expect(estimatePlannedAudioBytes(corpus.conversations, 2, 16000)).toBe(2 * bytes);
  });
});

describe('the write check of a folder', () => {
  it('leaves nothing behind, and its probe is named as a temporary file, so one a killed build left is removed by the next build', async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-probe-'));
    try {
      await checkFolder(folder, 'output folder');
      expect(await readdir(folder)).toEqual([]);
      // a build killed between writing the probe and removing it (the kill -9 trial once found it in the output)
      const exited = spawn(process.execPath, ['-e', '']);
      const deadPid = exited.pid!;
      await new Promise((resolve) => exited.on('exit', resolve));
      const leftover = temporaryPathFor(path.join(folder, '.duplexsynth-write-check')).replace(
        `-${process.pid}-`,
        `-${deadPid}-`,
      );
      await writeFile(leftover, '');
      expect(await removeOrphanedTemporaryFiles(folder)).toEqual([leftover]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('what a killed build left', () => {
  it('the report pages it made while it ran are removed by the next build, scored or not, under the lock, with a line saying so', async () => {
    const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
    const root = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-leftover-pages-'));
    try {
      const config: BuildConfig = {
        ...base,
        output: { directory: path.join(root, 'out'), cacheDirectory: path.join(root, 'cache') },
      };
      expect(config.quality.enabled).toBe(true); // a scored build makes no pages of its own, so nothing else would remove them
      const page = path.join(
        config.output.directory,
        PRE_RENDERED_PAGES_DIRECTORY,
        'dialogues',
        'en',
        'topiocqa_demo',
        'demo_topiocqa_0001.html',
      );
      await mkdir(path.dirname(page), { recursive: true });
      await writeFile(page, '<html>from a killed build</html>');
      const lines: string[] = [];
      let sawFolder: boolean | null = null;
      await runLocked(
        config,
        { conversations: [] },
        (line) => lines.push(line),
        async () => {
          sawFolder = existsSync(path.join(config.output.directory, PRE_RENDERED_PAGES_DIRECTORY));
        },
      );
      expect(sawFolder).toBe(false); // gone before the build's work starts
      expect(lines).toContain(
        `cleanup: removed the report pages an interrupted build made (${path.join(config.output.directory, PRE_RENDERED_PAGES_DIRECTORY)})`,
      );
      // none there: no line
      lines.length = 0;
      await runLocked(
        config,
        { conversations: [] },
        (line) => lines.push(line),
        async () => {},
      );
      expect(lines.filter((line) => line.includes('report pages'))).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('settings refused before the lock', () => {
  async function demoConfig(): Promise<BuildConfig> {
    return loadConfigFile(DEFAULT_CONFIG_FILE);
  }

  it.each([
    [
      'datasets.en',
      (config: BuildConfig) => ({ ...config, datasets: { ...config.datasets, en: '..' } }),
      /datasets\.en: "\.\." is not a safe folder name/,
    ],
    ['name', (config: BuildConfig) => ({ ...config, name: '.' }), /name: "\." is not a safe folder name/],
    [
      'seed',
      (config: BuildConfig) => ({ ...config, seed: 1e20 }),
      /seed: 100000000000000000000 is not a non-negative integer below 2\^53/,
    ],
  ])('%s', async (_setting, change, message) => {
    expect(() => checkBuildSettings(change(structuredClone(config0)))).toThrow(message);
  });

  let config0: BuildConfig;
  beforeAll(async () => {
    config0 = await demoConfig();
  });

  it('the schema: unknown keys of the rules and replay backends, unsafe dataset names', () => {
    const resolve = (value: unknown) => () =>
      resolveConfig({ corpus: { path: 'x.json' }, ...(value as object) }, 'test.yaml', scratch);
    expect(resolve({ llm: { rewrite: { backend: 'rules', temperature: 0 } } })).toThrow(
      /llm\.rewrite: Unrecognized key: "temperature"/,
    );
    expect(resolve({ llm: { rewrite: { backend: 'replay', file: 'a.jsonl', model: 'm', fle: 'b.jsonl' } } })).toThrow(
      /llm\.rewrite: Unrecognized key: "fle"/,
    );
    expect(resolve({ llm: { translate: { backend: 'replay', file: 'a.jsonl', model: 'm', temprature: 1 } } })).toThrow(
      /llm\.translate: Unrecognized key: "temprature"/,
    );
    expect(resolve({ datasets: { en: '..' } })).toThrow(/datasets\.en: letters, digits/);
    expect(resolve({ datasets: { en: 'x.partial' } })).toThrow(/datasets\.en: must not end in "\.partial"/);
    expect(resolve({ seed: 1e20 })).toThrow(/seed/);
  });

  it('--seed 1e20 is a usage error (exit 2) and leaves no output folder, no .partial', async () => {
    const out = path.join(scratch, 'seed-out');
    const result = await cli(['build', '--corpus', TOPIOCQA_DEV, '--limit', '1', '--out', out, '--seed', '1e20']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--seed.*non-negative integer below 2\^53/);
    expect(existsSync(out)).toBe(false);
  });

  it('a corpus named "..json" without --out is refused (it would make outputs/ itself the output folder)', async () => {
    const corpus = path.join(scratch, '..json');
    await writeFile(corpus, '[]');
    const result = await cli(['build', '--corpus', corpus, '--limit', '1'], scratch);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toMatch(
      /^duplexsynth: --corpus .*\.\.json: the file name gives no safe build name \("\."\); rename the file or pass --out$/,
    );
    expect(existsSync(path.join(scratch, 'outputs'))).toBe(false);
  });
});
