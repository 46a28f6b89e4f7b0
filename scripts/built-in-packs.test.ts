/**
 * Every built-in language pack builds offline from a corpus written in its own language (the `rules`
 * rewrite, no translation: `build --corpus F --corpus-language CODE --lang CODE --no-score`), and every
 * number, date and unit of the corpus is spoken as words: no digit is left in `txt_align`.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../pipeline/config.ts';
import { TEST_CLI } from './testing/cli-command.ts';
import { PACK_CORPUS_TURNS, packCorpusRecords } from './testing/pack-corpora.ts';

const run = promisify(execFile);
let scratch = '';

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'duplexsynth-packs-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('built-in language packs offline', () => {
  it.each(Object.keys(PACK_CORPUS_TURNS))('%s builds from its own-language corpus, numbers spoken', async (code) => {
    const folder = path.join(scratch, code);
    await mkdir(folder, { recursive: true });
    const corpus = path.join(folder, `pack_${code}.json`);
    await writeFile(corpus, JSON.stringify(packCorpusRecords(code)));
    const out = path.join(folder, 'out');
    const args = [
      'build',
      '--corpus',
      corpus,
      '--corpus-language',
      code,
      '--lang',
      code,
      '--no-score',
      '--out',
      out,
      '--quiet',
    ];
    const result = await run(process.execPath, [TEST_CLI, ...args], { cwd: PROJECT_ROOT }).then(
      () => 0,
      (error: { code: number; stderr: string }) => `${error.code}: ${error.stderr}`,
    );
    expect(result).toBe(0);
    const task = path.join(out, 'data', code, 'task');
    const dataset = code === 'en' ? 'topiocqa' : `topiocqa_${code}`;
    expect(existsSync(path.join(task, dataset, 'all.jsonl'))).toBe(true);
    const alignments = await readdir(path.join(task, dataset, 'txt_align'));
    expect(alignments.length).toBe(1);
    const words = (await readFile(path.join(task, dataset, 'txt_align', alignments[0]!), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => line.split('\t')[3] ?? '');
    expect(words.length).toBeGreaterThan(20);
    expect(words.filter((word) => /[0-9\uff10-\uff19]/.test(word))).toEqual([]);
    // a German date's day is an ordinal in the dative after "am" (am 31. März)
    if (code === 'de') expect(words.join(' ')).toMatch(/\bam einunddreißigsten März\b/);
  });
});
