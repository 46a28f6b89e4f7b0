/**
 * A language that is not built in builds on the first try with a pack written from
 * docs/language-packs.md alone: Dutch, Hindi and Thai (scripts/testing/newcomer-packs/), each from a
 * small corpus in its own language with years, a decimal and units (scripts/testing/newcomer-corpora.ts),
 * offline (`build --corpus F --corpus-language CODE --language-pack P --no-score`, no `--lang`: the
 * corpus language is built). Every number is spoken by the pack's n2words locale, so no digit is left in
 * `txt_align`; a pack whose numbers name no library (`language-model`) stops the offline build of a
 * corpus with digits before any dialogue, in one line saying an LLM rewrite must write them.
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
import { NEWCOMER_CORPUS_TURNS } from './testing/newcomer-corpora.ts';
import { packCorpusRecords } from './testing/pack-corpora.ts';

const run = promisify(execFile);
const PACKS = path.join(PROJECT_ROOT, 'scripts', 'testing', 'newcomer-packs');
let scratch = '';

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'duplexsynth-newcomers-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Runs `build` on the code's corpus with a pack file; the exit code (0) or `code: stderr`. */
async function buildOffline(code: string, pack: string, out: string): Promise<number | string> {
  const corpus = path.join(path.dirname(out), `newcomer_${code}.json`);
  await writeFile(corpus, JSON.stringify(packCorpusRecords(code, NEWCOMER_CORPUS_TURNS[code])));
  const args = ['build', '--corpus', corpus, '--corpus-language', code, '--language-pack', pack];
  return run(process.execPath, [TEST_CLI, ...args, '--no-score', '--out', out, '--quiet'], { cwd: PROJECT_ROOT }).then(
    () => 0,
    (error: { code: number; stderr: string }) => `${error.code}: ${error.stderr}`,
  );
}

describe('a newcomer language on the first try', () => {
  it.each(Object.keys(NEWCOMER_CORPUS_TURNS))(
    '%s builds from its own-language corpus, numbers spoken',
    async (code) => {
      const folder = path.join(scratch, code);
      await mkdir(folder, { recursive: true });
      const out = path.join(folder, 'out');
      expect(await buildOffline(code, path.join(PACKS, `${code}.yaml`), out)).toBe(0);
      const task = path.join(out, 'data', code, 'task');
      // only the corpus language is built
      expect(await readdir(path.join(out, 'data'))).toEqual([code]);
      const dataset = path.join(task, `topiocqa_${code}`);
      expect(existsSync(path.join(dataset, 'all.jsonl'))).toBe(true);
      const alignments = await readdir(path.join(dataset, 'txt_align'));
      expect(alignments.length).toBe(1);
      const words = (await readFile(path.join(dataset, 'txt_align', alignments[0]!), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => line.split('\t')[3] ?? '');
      expect(words.length).toBeGreaterThan(20);
      expect(words.filter((word) => /[0-9\uff10-\uff19]/.test(word))).toEqual([]);
    },
  );

  it('a pack whose numbers name no library stops a corpus with digits, naming the LLM rewrite', async () => {
    const folder = path.join(scratch, 'nl-language-model');
    await mkdir(folder, { recursive: true });
    const dutch = await readFile(path.join(PACKS, 'nl.yaml'), 'utf8');
    const pack = path.join(folder, 'nl.yaml');
    await writeFile(pack, dutch.replace(/^numbers: .*$/m, 'numbers: language-model'));
    const out = path.join(folder, 'out');
    const result = String(await buildOffline('nl', pack, out));
    // stopped before any dialogue, with one line naming the pack file, its field and the LLM rewrite
    expect(result).toMatch(/^2: /);
    const lines = result.replace(/^2: /, '').trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${pack}: numbers: language-model: no number library writes Dutch numbers`);
    expect(lines[0]).toContain('an LLM rewrite backend is needed (llm.rewrite: ');
    expect(existsSync(path.join(out, 'data'))).toBe(false);
  });
});
