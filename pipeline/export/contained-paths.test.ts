/**
 * A dataset whose `all.jsonl` holds a dialogue id that is a path (`../../../../x`) makes neither
 * `export` (every format) nor `report` read or write a file outside its folders: each stops with one
 * line naming the file, its line and the id, exits 2, and leaves the sandbox the dataset sits in as
 * it was, byte for byte. The dialogue's files are where that id leads, so a command that followed it
 * would find them and write beside them. A dataset name in `manifest.json` that is a path (the
 * moshi-finetune export's `{dataset}.jsonl`, the report's `dialogues/{lang}/{dataset}/`) is refused the same way.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CLI } from '../../scripts/testing/cli-command.ts';
import { EXPORT_FORMAT_NAMES } from './export-formats.ts';
import { copyExportFixture } from './testing/export-fixture.ts';

const ESCAPING_ID = '../../../../x';

let sandbox: string;
let build: string;
let dataset: string;

/** Every file and folder under `folder` with the sha256 of each file's bytes, sorted. */
async function snapshot(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  const lines = await Promise.all(
    entries.map(async (entry) => {
      const file = path.join(entry.parentPath, entry.name);
      const relative = path.relative(folder, file);
      if (!entry.isFile()) return `${relative}/`;
      return `${relative} ${createHash('sha256')
        .update(await readFile(file))
        .digest('hex')}`;
    }),
  );
  return lines.sort();
}

/** Runs `duplexsynth ARGS` and returns its exit code and output. */
function duplexsynth(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [TEST_CLI, ...args], { encoding: 'utf8', env: { ...process.env } });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

beforeAll(async () => {
  sandbox = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-contained-paths-'));
  // deep enough that every `..` of the id stays inside the sandbox
  const parent = path.join(sandbox, 'd1', 'd2');
  await mkdir(parent, { recursive: true });
  dataset = await copyExportFixture(parent);
  build = path.join(parent, 'build');
  for (const name of ['all.jsonl', 'dev.jsonl', 'manifest.json']) {
    const file = path.join(dataset, name);
    await writeFile(file, (await readFile(file, 'utf8')).replaceAll('tiny_0002', ESCAPING_ID));
  }
  // the dialogue's files where its id leads: {dataset}/metadata/../../../../x.json is build/data/x.json
  const target = path.resolve(dataset, 'metadata', `${ESCAPING_ID}.json`);
  await rename(path.join(dataset, 'metadata', 'tiny_0002.json'), target);
  await rename(
    path.join(dataset, 'txt_align', 'tiny_0002.txt'),
    path.resolve(dataset, 'txt_align', `${ESCAPING_ID}.txt`),
  );
  await rename(path.join(dataset, 'audio', 'tiny_0002.wav'), path.resolve(dataset, 'audio', `${ESCAPING_ID}.wav`));
  await rm(path.join(dataset, 'audio_fullband', 'tiny_0002.wav'));
  const metadata = JSON.parse(await readFile(target, 'utf8'));
  await writeFile(target, JSON.stringify({ ...metadata, id: ESCAPING_ID }));
});
afterAll(async () => {
  await rm(sandbox, { recursive: true, force: true });
});

/** The one line every refusal prints: the file and line of the id, and the id. */
function refusal(file: string, field: string): string {
  return `duplexsynth: ${file}: ${field} "${ESCAPING_ID}" is not a file name (it names files and folders: no "/", "\\" or NUL character, not "." or "..")\n`;
}

describe('a dialogue id that is a path', () => {
  it.each(EXPORT_FORMAT_NAMES)('export --to %s: one line, exit 2, nothing written anywhere', async (format) => {
    const before = await snapshot(sandbox);
    // the export folder deep in the sandbox: `{out}.partial/../../../../x.*` would still land inside it
    const out = path.join(sandbox, 'd1', 'd2', 'd3', 'd4', `out-${format}`);
    const run = duplexsynth('export', dataset, '--to', format, '--out', out);
    expect(run.stderr).toBe(refusal(`${path.join(dataset, 'all.jsonl')}:2`, 'id'));
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(await snapshot(sandbox)).toEqual(before);
  });

  it('report: one line, exit 2, nothing written anywhere', async () => {
    const before = await snapshot(sandbox);
    const run = duplexsynth('report', build);
    expect(run.stderr).toBe(refusal(`${path.join(dataset, 'all.jsonl')}:2`, 'id'));
    expect(run.status).toBe(2);
    expect(await snapshot(sandbox)).toEqual(before);
  });
});

describe('a dataset name that is a path', () => {
  let named: string;
  let namedDataset: string;
  beforeAll(async () => {
    named = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-contained-names-'));
    await mkdir(path.join(named, 'd1', 'd2'), { recursive: true });
    namedDataset = await copyExportFixture(path.join(named, 'd1', 'd2'));
    const manifest = path.join(namedDataset, 'manifest.json');
    await writeFile(
      manifest,
      JSON.stringify({ ...JSON.parse(await readFile(manifest, 'utf8')), dataset: ESCAPING_ID }),
    );
  });
  afterAll(async () => {
    await rm(named, { recursive: true, force: true });
  });

  it.each([
    ['export --to moshi-finetune (its {dataset}.jsonl)', 'export'],
    ['report (its dialogues/{lang}/{dataset}/ pages)', 'report'],
  ])('%s: one line, exit 2, nothing written anywhere', async (_name, command) => {
    const before = await snapshot(named);
    const out = path.join(named, 'd1', 'd2', 'd3', 'd4', 'out');
    const run =
      command === 'export'
        ? duplexsynth('export', namedDataset, '--to', 'moshi-finetune', '--out', out)
        : duplexsynth('report', path.join(named, 'd1', 'd2', 'build'));
    expect(run.stderr).toBe(refusal(path.join(namedDataset, 'manifest.json'), 'dataset'));
    expect(run.status).toBe(2);
    expect(await snapshot(named)).toEqual(before);
  });
});
