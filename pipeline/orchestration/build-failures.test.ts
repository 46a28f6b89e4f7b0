/**
 * What happens when a build fails, tried as a user would, with `duplexsynth build` as a real
 * child process on real TopiOCQA dialogues (offline English build):
 *
 * - a run in which every dialogue fails for an environmental reason (the LLM service down,
 *   the cache unwritable) commits nothing and keeps the complete dataset; a smaller dataset replaces a
 *   larger one only with `--allow-shrink`;
 * - a disk that fills during the build (another process takes the space) stops it with the
 *   file and the space named, the old dataset intact; once space is freed the rerun completes;
 * - the kill -9 trial: a build killed at several moments resumes at once (the dead holder's lock is
 *   taken over) and ends with byte-identical files; no temporary file is left behind;
 * - `--json`: the summary event's `outputs` name what the build kept, in order: everything after a
 *   build that succeeded, only the datasets committed before the failure of one that stopped.
 */
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, sharedDirectory } from '../config.ts';
import { hashTree } from './testing/shared-build.ts';
import { fillFileSystem, mountTmpfs, tmpfsSkipReason } from '../storage/testing/tmpfs.ts';
import { TEST_CLI } from '../../scripts/testing/cli-command.ts';

const CLI = TEST_CLI; // the compiled command when dist/ is a build of these sources, else the sources through tsx (scripts/testing/cli-command.ts)
const TOPIOCQA_DEV = path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');
const DATASET = 'data/en/task/topiocqa';
const skipReason = tmpfsSkipReason();

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-failures-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Write a build config (real dev set, English unless `languages`, offline rules backend unless `llm`) and return its path. */
async function writeConfig(
  name: string,
  settings: { out: string; cache: string; limit?: number; llm?: unknown; languages?: string[] },
): Promise<string> {
  const file = path.join(scratch, `${name}.yaml`);
  const config = {
    name: 'failures',
    seed: 11,
    languages: settings.languages ?? ['en'],
    corpus: { path: TOPIOCQA_DEV, limit: settings.limit ?? 2 },
    output: { directory: settings.out, cacheDirectory: settings.cache },
    llm: settings.llm ?? { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
    quality: { enabled: false },
  };
  await writeFile(file, JSON.stringify(config));
  return file;
}

interface BuildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Run `duplexsynth build --config FILE ...`; with `killWhen`, SIGKILL it `delayMilliseconds` after the
 * first stderr text that matches.
 */
async function build(
  args: string[],
  killWhen?: { pattern: RegExp; delayMilliseconds?: number; then?: () => void },
): Promise<BuildRun> {
  const child = spawn(process.execPath, [CLI, 'build', ...args], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let triggered = false;
  child.stdout.resume();
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (killWhen && !triggered && killWhen.pattern.test(stderr)) {
      triggered = true;
      void sleep(killWhen.delayMilliseconds ?? 0).then(() => {
        if (killWhen.then) killWhen.then();
        else child.kill('SIGKILL');
      });
    }
  });
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })));
}

/** The last line of a `--json` run's standard error: the summary event. */
function summaryEvent(stderr: string): {
  type: string;
  level: string;
  exitCode: number;
  error?: string;
  outputs: string[];
} {
  const summary = JSON.parse(stderr.trim().split('\n').at(-1)!) as ReturnType<typeof summaryEvent>;
  expect(summary.type).toBe('summary');
  return summary;
}

async function temporaryFiles(directory: string): Promise<string[]> {
  return (await readdir(directory, { recursive: true })).filter((name) => /\.tmp$|\.partial/.test(name));
}

describe('duplexsynth build when things fail', () => {
  let referenceOut: string;
  let reference: Record<string, string>;
  beforeAll(async () => {
    referenceOut = path.join(scratch, 'reference', 'out');
    const config = await writeConfig('reference', {
      out: referenceOut,
      cache: path.join(scratch, 'reference', 'cache'),
    });
    const result = await build(['--config', config]);
    expect(result.code, result.stderr).toBe(0);
    reference = await hashTree(referenceOut);
    // two dialogues, in the dataset and in its barge-in variant (audio/, not the full-band masters in audio_fullband/)
    expect(
      Object.keys(reference).filter(
        (file) => file.endsWith('.wav') && file.includes(`topiocqa${path.sep}audio${path.sep}`),
      ),
    ).toHaveLength(2);
    expect(
      Object.keys(reference).filter(
        (file) => file.endsWith('.wav') && file.includes(`topiocqa_bargein${path.sep}audio${path.sep}`),
      ),
    ).toHaveLength(2);
  });

  it('the LLM service down for every dialogue: nothing committed, the complete dataset kept, exit 4 naming the cause', async () => {
    const out = path.join(scratch, 'service-down', 'out');
    await cp(referenceOut, out, { recursive: true });
    const config = await writeConfig('service-down', {
      out,
      cache: path.join(scratch, 'service-down', 'cache'),
      // nothing listens on port 1
      llm: {
        rewrite: {
          backend: 'openai-compatible',
          baseUrl: 'http://127.0.0.1:1/v1',
          model: 'm',
          retry: { maxRetries: 0 },
        },
        translate: { backend: 'none' },
      },
    });
    const result = await build(['--config', config]);
    expect(result.code).toBe(4);
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(
      new RegExp(
        `^duplexsynth: ${path.join(out, DATASET)}: no dialogue was built, so nothing was committed; 2 of 2 dialogues failed with: .*connection failed`,
      ),
    );
    expect(await hashTree(out)).toEqual(reference);
  });

  it.skipIf(skipReason !== undefined)(
    `the cache on a read-only disk: refused up front, exit 2, the dataset kept${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    async () => {
      const disk = mountTmpfs(1024 * 1024, { readOnly: true });
      try {
        const out = path.join(scratch, 'cache-read-only', 'out');
        await cp(referenceOut, out, { recursive: true });
        const config = await writeConfig('cache-read-only', { out, cache: path.join(disk.directory, 'cache') });
        const result = await build(['--config', config]);
        expect(result.code).toBe(2);
        expect(result.stderr.trim().split('\n').at(-1)).toBe(
          `duplexsynth: ${path.join(disk.directory, 'cache')}: cannot be used as the cache folder: the file system is read-only (EROFS)`,
        );
        expect(await hashTree(out)).toEqual(reference);
      } finally {
        disk.unmount();
      }
    },
  );

  it('a smaller dataset replaces a larger one only with --allow-shrink', async () => {
    const out = path.join(scratch, 'shrink', 'out');
    await cp(referenceOut, out, { recursive: true });
    const config = await writeConfig('shrink', { out, cache: path.join(scratch, 'reference', 'cache'), limit: 1 });
    const refused = await build(['--config', config]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(
      /the new dataset has 1 dialogues, the one there has 2; it was kept\. Pass --allow-shrink/,
    );
    expect(await hashTree(out)).toEqual(reference);
    expect(existsSync(path.join(out, `${DATASET}.partial`))).toBe(false);
    const allowed = await build(['--config', config, '--allow-shrink', '--json']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(JSON.parse(await readFile(path.join(out, DATASET, 'manifest.json'), 'utf8')).dialogues).toEqual([
      'topiocqa_dev_0001',
    ]);
    // --json: the summary names what the build wrote and kept, in order
    expect(summaryEvent(allowed.stderr)).toMatchObject({
      level: 'info',
      exitCode: 0,
      outputs: [
        path.join(out, DATASET),
        path.join(out, `${DATASET}_bargein`),
        path.join(out, 'summary.md'),
        path.join(out, 'summary.json'),
        path.join(out, 'report', 'index.html'),
      ],
    });
  });

  it('a build that stops after committing a language: the --json summary names the datasets it kept, and only those', async () => {
    const out = path.join(scratch, 'second-language-fails', 'out');
    // English from the reference build's cache; the Japanese translations from a service that is down (nothing listens on port 1)
    const config = await writeConfig('second-language-fails', {
      out,
      cache: path.join(scratch, 'reference', 'cache'),
      languages: ['en', 'ja'],
      llm: {
        rewrite: { backend: 'rules' },
        translate: {
          backend: 'openai-compatible',
          baseUrl: 'http://127.0.0.1:1/v1',
          model: 'm',
          retry: { maxRetries: 0 },
        },
      },
    });
    const result = await build(['--config', config, '--json']);
    expect(result.code, result.stderr).toBe(4);
    const summary = summaryEvent(result.stderr);
    expect(summary).toMatchObject({
      level: 'error',
      exitCode: 4,
      outputs: [path.join(out, DATASET), path.join(out, `${DATASET}_bargein`)],
    });
    expect(summary.error).toMatch(/data\/ja\/task\/topiocqa_ja: no dialogue was built, so nothing was committed/);
    for (const kept of summary.outputs) expect(existsSync(path.join(kept, 'manifest.json'))).toBe(true);
    expect(existsSync(path.join(out, 'data', 'ja'))).toBe(false);
    expect(existsSync(path.join(out, 'summary.md'))).toBe(false);
  });

  it.skipIf(skipReason !== undefined)(
    `a disk filling during the build: stopped with the file and the space named, old dataset intact; after freeing space the rerun completes${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    async () => {
      const disk = mountTmpfs(128 * 1024 * 1024); // room for the reference dataset, its barge-in variant, their full-band masters and the planned audio
      try {
        const out = path.join(disk.directory, 'out');
        await cp(referenceOut, out, { recursive: true });
        // three dialogues and a cold cache: the first is written well before the others
        const config = await writeConfig('filling', { out, cache: path.join(scratch, 'filling', 'cache'), limit: 3 });
        let filler = '';
        const result = await build(['--config', config], {
          pattern: /\[en\] 1\/3/,
          then: () => (filler = fillFileSystem(disk.directory)),
        });
        expect(result.code, result.stderr).toBe(4);
        const last = result.stderr.trim().split('\n').at(-1)!;
        // the stop removes its own unfinished .partial folders and says how much that freed
        expect(last).toMatch(
          new RegExp(
            `^duplexsynth: ${out}/\\S+: no space left on the device: it needs [\\d.]+ (bytes|kB|MB), [\\d.]+ (bytes|kB|MB) free; ` +
              `removed this build's \\d unfinished dataset folders? \\(\\.partial\\), [\\d.]+ (bytes|kB|MB) freed; free some space or choose another folder$`,
          ),
        );
        expect(await hashTree(out)).toEqual(reference);

        await rm(filler);
        const rerun = await build(['--config', config]);
        expect(rerun.code, rerun.stderr).toBe(0);
        const expected = path.join(scratch, 'filling-expected');
        const expectedRun = await build([
          '--config',
          await writeConfig('filling-expected', {
            out: expected,
            cache: path.join(scratch, 'filling', 'cache'),
            limit: 3,
          }),
        ]);
        expect(expectedRun.code).toBe(0);
        expect(await hashTree(out)).toEqual(await hashTree(expected));
      } finally {
        disk.unmount();
      }
    },
  );

  it('the kill -9 trial: killed at five moments, each rerun starts at once and the last gives byte-identical files', async () => {
    const out = path.join(scratch, 'killed', 'out');
    const cache = path.join(scratch, 'killed', 'cache');
    await mkdir(path.dirname(out), { recursive: true });
    const config = await writeConfig('killed', { out, cache });
    const moments: { pattern: RegExp; delayMilliseconds?: number }[] = [
      { pattern: /ingest: / }, // before the lock
      { pattern: /ingest: /, delayMilliseconds: 400 }, // while speech is synthesized into the cache
      { pattern: /\[en\] 1\/2/ }, // one dialogue in the .partial folder
      { pattern: /\[en\] 2\/2/ }, // both written, about to commit
      { pattern: /\[en\] wrote / }, // committed, writing the build summary
    ];
    const runs: BuildRun[] = [];
    for (const moment of moments) runs.push(await build(['--config', config], moment));
    const last = await build(['--config', config]);
    expect(last.code, last.stderr).toBe(0);
    // a killed build never made the next one wait: no run was refused for the lock
    for (const run of [...runs, last]) expect(run.stderr).not.toMatch(/another duplexsynth build/);
    expect(runs.filter((run) => run.signal === 'SIGKILL').length).toBeGreaterThanOrEqual(3);
    // a run after a kill that left the lock took it over at once
    expect([...runs.slice(1), last].some((run) => /no longer runs; taking it over/.test(run.stderr))).toBe(true);
    expect(await hashTree(out)).toEqual(reference);
    expect(await temporaryFiles(out)).toEqual([]);
    expect(await temporaryFiles(cache)).toEqual([]);
  });
});
