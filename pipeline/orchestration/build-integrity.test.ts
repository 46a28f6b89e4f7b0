/**
 * Integrity you can check, on one tiny real build shared by the file (the first TopiOCQA dev
 * conversation, English, offline rules rewrite and espeak-ng, no barge-in variant, no scoring):
 *
 * - a content-cache entry edited after it was written (a rewrite reply, a word of the timings beside a
 *   synthesized clip) is noticed by its content hash, recomputed, named in the log and counted, and
 *   the dataset comes out byte-identical to the clean build's;
 * - `verify` on a tampered copy of the dataset (a deleted metadata file, an edited `txt_align` word,
 *   flipped WAV bytes, an extra file) names each problem, before re-deriving the events.
 */
import { BACKUP_MARKER } from '../storage/commit-backup-marker.ts';
import { cp, readdir, readFile, rm, stat, unlink, writeFile, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, sharedDirectory, type BuildConfig, DEFAULT_CONFIG_FILE, loadConfigFile } from '../config.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { verifyDatasetIntegrity } from '../run/dataset-integrity.ts';
import { runBuild } from './build.ts';
import { hashTree } from './testing/shared-build.ts';
import { TEST_CLI } from '../../scripts/testing/cli-command.ts';

const TOPIOCQA_DEV = path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');
const DATASET = path.join('data', 'en', 'task', 'topiocqa');
const ID = 'topiocqa_dev_0001';

const CLI = TEST_CLI; // the compiled command when dist/ is a build of these sources, else the sources through tsx (scripts/testing/cli-command.ts)

/** Run the CLI as a user does: exit code, standard output and error. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

let scratch: string;
let clean: BuildConfig;
let cleanFiles: Record<string, string>;

async function tinyConfig(name: string): Promise<BuildConfig> {
  const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
  return {
    ...base,
    name: 'integrity',
    seed: 21,
    languages: ['en'],
    corpus: { ...base.corpus, path: TOPIOCQA_DEV, limit: 1 },
    llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } } as BuildConfig['llm'],
    datasets: { ...base.datasets, en: 'topiocqa', bargeIn: false },
    quality: { ...base.quality, enabled: false },
    output: { directory: path.join(scratch, name, 'out'), cacheDirectory: path.join(scratch, 'cache') },
  };
}

/** The cache entries (`.json`) of a stage whose text contains `needle`. */
async function entriesContaining(stage: string, needle: string): Promise<string[]> {
  const folder = path.join(scratch, 'cache', stage);
  const found: string[] = [];
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.json')) continue;
    const file = path.join(entry.parentPath, entry.name);
    if ((await readFile(file, 'utf8')).includes(needle)) found.push(file);
  }
  return found;
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-integrity-'));
  clean = await tinyConfig('clean');
  const report = await runBuild(clean);
  expect(report.failedDialogues).toBe(0);
  cleanFiles = await hashTree(path.join(clean.output.directory, DATASET));
}, 600_000);
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('content-cache entries carry a content hash checked on read', () => {
  it('an edited rewrite reply and an edited word-timing sidecar are redone, named and counted; the dataset is the clean one', async () => {
    const [rewrite] = await entriesContaining('rewrite-spoken', "It's in Britain.");
    expect(rewrite).toBeDefined();
    await writeFile(rewrite!, (await readFile(rewrite!, 'utf8')).replace("It's in Britain.", 'It is in Xritain.'));
    const [sidecar] = await entriesContaining('synthesize-speech', '"word":"actors"');
    expect(sidecar).toBeDefined();
    await writeFile(sidecar!, (await readFile(sidecar!, 'utf8')).replace('"word":"actors"', '"word":"actorx"'));

    const lines: string[] = [];
    const rebuilt = await tinyConfig('rebuilt');
    await runBuild(rebuilt, { log: (line) => lines.push(line) });

    expect(await hashTree(path.join(rebuilt.output.directory, DATASET))).toEqual(cleanFiles);
    expect(lines).toContain(
      `cache: corrupt entry redone: ${rewrite}: content differs from the sha256 recorded at write time`,
    );
    expect(lines).toContain(
      `cache: corrupt entry redone: ${sidecar}: metadata differs from the sha256 recorded at write time`,
    );
    expect(lines.at(-1)).toBe('cache: 2 corrupt cache entries redone');
    const alignment = await readFile(path.join(rebuilt.output.directory, DATASET, 'txt_align', `${ID}.txt`), 'utf8');
    expect(alignment).toContain('\tactors\n');
    expect(alignment).not.toContain('actorx');
  }, 600_000);
});

describe('verify checks the manifest first', () => {
  it('a tampered copy: a deleted metadata file, an edited word, flipped WAV bytes and an extra file are each named', async () => {
    const copy = path.join(scratch, 'tampered');
    await cp(path.join(clean.output.directory, DATASET), copy, { recursive: true });
    await unlink(path.join(copy, 'metadata', `${ID}.json`));
    const alignmentFile = path.join(copy, 'txt_align', `${ID}.txt`);
    await writeFile(alignmentFile, (await readFile(alignmentFile, 'utf8')).replace('\tactors\n', '\tactorx\n'));
    const wavFile = path.join(copy, 'audio', `${ID}.wav`);
    const wav = await readFile(wavFile);
    for (const offset of [5000, 5001, 90000, 90001]) wav[offset] = wav[offset]! ^ 0xff;
    await writeFile(wavFile, wav);
    await writeFile(path.join(copy, 'notes.txt'), 'mine\n');

    const integrity = await verifyDatasetIntegrity(copy);
    expect(integrity.problems).toEqual([
      `${path.join(copy, 'audio', `${ID}.wav`)}: sha256 differs from manifest.json (${wav.byteLength} bytes now): the file was changed after the build`,
      `${path.join(copy, 'metadata', `${ID}.json`)}: listed in manifest.json but missing`,
      `${path.join(copy, 'notes.txt')}: not listed in manifest.json (added after the build; remove it or rebuild)`,
      `${alignmentFile}: sha256 differs from manifest.json (${(await readFile(alignmentFile)).byteLength} bytes now): the file was changed after the build`,
    ]);
    expect(integrity.filesChecked).toBe(Object.keys(cleanFiles).length - 2); // all but manifest.json and the deleted one

    const result = await cli('verify', copy);
    expect(result.code).toBe(1);
    const stderr = result.stderr.trim().split('\n');
    expect(stderr.slice(0, 4)).toEqual(integrity.problems);
    expect(result.stdout.trim().split('\n').at(-1)).toBe(
      `${integrity.filesChecked} files checked against manifest.json, 1 dialogues checked, ${stderr.length} problems`,
    );

    const quick = await cli('verify', '--quick', copy);
    expect(quick.code).toBe(1);
    expect(quick.stderr.trim().split('\n')).toEqual(integrity.problems);
    expect(quick.stdout.trim()).toBe(`${integrity.filesChecked} files checked against manifest.json, 4 problems`);
  }, 300_000);

  it('a dataset whose commit was interrupted between its renames: verify names the .previous and the command that restores it', async () => {
    const moved = path.join(scratch, 'interrupted', 'topiocqa');
    await cp(path.join(clean.output.directory, DATASET), `${moved}.previous`, { recursive: true });
    // without the commit's marker the folder is someone else's: verify does not advise moving it
    const foreign = await cli('verify', '--quick', moved);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).not.toContain('interrupted commit');
    await writeFile(path.join(`${moved}.previous`, BACKUP_MARKER), `${path.basename(moved)}\n`);
    const result = await cli('verify', '--quick', moved);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      `duplexsynth: ${moved}: missing; an interrupted commit left the last complete dataset in ${moved}.previous: restore it with \`mv '${moved}.previous' '${moved}'\` (the next build does the same)`,
    );
  }, 120_000);

  it('the clean dataset has no integrity problem', async () => {
    const integrity = await verifyDatasetIntegrity(path.join(clean.output.directory, DATASET));
    expect(integrity.problems).toEqual([]);
    expect(integrity.filesChecked).toBe(Object.keys(cleanFiles).length - 1); // all but manifest.json itself
  });
});

describe('dataset WAVs linked to the cache (output.linkAudioToCache)', () => {
  it('a WAV rewritten in place changes the cache copy too: the next build finds it by its sha256 and renders again; with linkAudioToCache false each WAV is a file of its own', async () => {
    const config = {
      ...(await tinyConfig('linked')),
      output: { directory: path.join(scratch, 'linked', 'out'), cacheDirectory: path.join(scratch, 'linked', 'cache') },
    };
    await runBuild(config);
    const wavFile = path.join(config.output.directory, DATASET, 'audio', `${ID}.wav`);
    expect((await stat(wavFile)).nlink).toBe(2);
    const wav = await readFile(wavFile);
    wav[5000] = wav[5000]! ^ 0xff;
    await writeFile(wavFile, wav); // in place (truncate and write), as `ffmpeg -y` or an editor's save does

    const lines: string[] = [];
    await runBuild(config, { log: (line) => lines.push(line) });
    const redone = lines.filter((line) => line.startsWith('cache: corrupt entry redone: '));
    expect(redone).toHaveLength(1);
    expect(redone[0]).toMatch(/place-timeline\/.*\.wav: sha256 differs from the one recorded at write time$/);
    expect(await hashTree(path.join(config.output.directory, DATASET))).toEqual(cleanFiles);
    expect((await stat(wavFile)).nlink).toBe(2);

    const copies = {
      ...config,
      output: { ...config.output, directory: path.join(scratch, 'copies', 'out'), linkAudioToCache: false },
    };
    await runBuild(copies);
    expect((await stat(path.join(copies.output.directory, DATASET, 'audio', `${ID}.wav`))).nlink).toBe(1);
    expect(await hashTree(path.join(copies.output.directory, DATASET))).toEqual(cleanFiles);
  }, 600_000);
});
