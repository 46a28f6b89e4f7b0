/**
 * End-to-end builds that need no demo build: the real TopiOCQA dev set (English, rules backend),
 * checked the way the benchmark's loader reads it, in both timeline profiles, and bad configuration and
 * corpus input. In their own file (taken out of build.test.ts) so that they run in the other end-to-end
 * worker while build.test.ts waits for the run's shared demo build.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_FILE, loadConfigFile, PROJECT_ROOT, sharedDirectory, type BuildConfig } from '../config.ts';
import { parseEventsLine } from '../events/index.ts';
import { runBuild } from './build.ts';
import { loaderLookupProblems, verifyDataset } from '../run/verify-dataset.ts';

const TOPIOCQA_DEV = path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-build-input-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function config(overrides: (base: BuildConfig) => Partial<BuildConfig>, name: string): Promise<BuildConfig> {
  const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
  return {
    ...base,
    output: { directory: path.join(scratch, name, 'out'), cacheDirectory: path.join(scratch, name, 'cache') },
    quality: { ...base.quality, enabled: false },
    ...overrides(base),
  };
}

describe('real TopiOCQA dev set, English, offline rules backend', () => {
  it('builds, every dialogue passes the loader lookups and re-derives from words and audio', async () => {
    const real = await config(
      (base) => ({
        languages: ['en'],
        corpus: { ...base.corpus, path: TOPIOCQA_DEV, limit: 3 },
        llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
        datasets: { ...base.datasets, en: 'topiocqa', ja: 'topiocqa_ja' },
      }),
      'real',
    );
    const report = await runBuild(real);
    expect(report.failedDialogues).toBe(0);
    const directory = path.join(real.output.directory, 'data/en/task/topiocqa');
    const verification = await verifyDataset(directory);
    expect(verification).toMatchObject({ dialogues: 3, problems: [] });
    // benchmark profile: every system TURN_SHIFT (channel 0, evaluating the user channel 1) becomes a sample
    const shifts = verification.evaluableEvents[1]!.byType.TURN_SHIFT;
    expect(shifts.samples).toBe(shifts.inFile - (shifts.dropped['channel-not-evaluated'] ?? 0));
    const lines = (await readFile(path.join(directory, 'all.jsonl'), 'utf8')).trim().split('\n');
    const ids = lines.map((line) => parseEventsLine(line, 'all.jsonl').id);
    expect(ids).toEqual(['topiocqa_dev_0001', 'topiocqa_dev_0002', 'topiocqa_dev_0003']);
    for (const line of lines) {
      const { id, events } = parseEventsLine(line, 'all.jsonl');
      expect(loaderLookupProblems(id, events)).toEqual([]);
      // system responses are not a constant offset (the toy data's defect)
      const shifts = events[0].filter((event) => event.event === 'TURN_SHIFT').map((event) => event.end - event.start);
      expect(new Set(shifts).size).toBeGreaterThan(1);
      expect(Math.min(...shifts)).toBeGreaterThanOrEqual(1); // benchmark profile: the system never overlaps
    }
    // the natural profile: same dialogues, system responses overlap too, no question is split
    const natural = {
      ...real,
      timeline: { ...real.timeline, profile: 'natural' as const },
      output: { ...real.output, directory: path.join(scratch, 'real-natural') },
    };
    const naturalReport = await runBuild(natural);
    const naturalSummary = naturalReport.datasets.find((summary) => summary.dataset === 'topiocqa')!;
    expect(naturalSummary.splitQuestions).toBe(0);
    const systemOffsets = (
      await readFile(path.join(natural.output.directory, 'data/en/task/topiocqa/all.jsonl'), 'utf8')
    )
      .trim()
      .split('\n')
      .flatMap((line) =>
        parseEventsLine(line, 'all.jsonl').events[0].filter(
          (event) => event.event === 'TURN_SHIFT' || event.event === 'BARGE_IN',
        ),
      )
      .map((event) => (event.event === 'TURN_SHIFT' ? event.end - event.start : event.start - event.end));
    expect(systemOffsets.some((offset) => offset <= 0)).toBe(true);
  });
});

describe('bad configuration and bad corpus input', () => {
  it('Japanese without a translation backend stops at once, writing nothing', async () => {
    const noTranslate = await config(
      (base) => ({
        languages: ['ja'],
        corpus: { ...base.corpus, path: TOPIOCQA_DEV },
        llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
      }),
      'no-translate',
    );
    await expect(runBuild(noTranslate)).rejects.toThrow(
      /Japanese needs a translation backend: the corpus is in English \(corpus\.language: en\)\. If the corpus is written in Japanese, say so: corpus\.language: ja .*--corpus-language ja.*set llm\.translate/,
    );
    expect(existsSync(noTranslate.output.directory)).toBe(false);
  });

  it.each(['not-json.json', 'empty.json', 'not-array.json'])(
    '%s: a clear error naming the file, no output',
    async (file) => {
      const bad = await config(
        (base) => ({
          languages: ['en'],
          corpus: { ...base.corpus, path: path.join(PROJECT_ROOT, 'corpora/fixtures/topiocqa', file) },
          llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
        }),
        `bad-${file}`,
      );
      await expect(runBuild(bad)).rejects.toThrow(file);
      expect(existsSync(bad.output.directory)).toBe(false);
    },
  );

  it('an empty answer before the last turn is named in the log and the summary, with its dialogue and turn', async () => {
    const records = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'corpora/demo/demo_topiocqa.json'), 'utf8')) as {
      Conversation_no: number;
      Turn_no: number;
      Answer: string;
    }[];
    const target = records.find((record) => record.Conversation_no === 1 && record.Turn_no === 2)!;
    target.Answer = '';
    const corpusDirectory = path.join(scratch, 'empty-answer-corpus');
    await mkdir(corpusDirectory, { recursive: true });
    const corpusFile = path.join(corpusDirectory, 'demo_topiocqa.json');
    await writeFile(corpusFile, JSON.stringify(records));
    const empty = await config(
      (base) => ({
        languages: ['en'],
        corpus: { ...base.corpus, path: corpusFile, limit: 1 },
        llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
        quality: { ...base.quality, enabled: false },
      }),
      'empty-answer',
    );
    const logged: string[] = [];
    const report = await runBuild(empty, { log: (line: string) => logged.push(line) });
    const summary = report.datasets[0]!;
    expect(summary.failed).toEqual([]);
    expect(summary.corpusNotes).toEqual([
      expect.stringMatching(
        /^demo_topiocqa_0001 turn 2: field "Answer" is empty in .*demo_topiocqa\.json; the answer is not spoken/,
      ),
    ]);
    expect(logged.some((line) => line.includes('ingest: note: demo_topiocqa_0001 turn 2'))).toBe(true);
    const markdown = await readFile(path.join(empty.output.directory, 'data/en/task/topiocqa_demo/summary.md'), 'utf8');
    expect(markdown).toContain('corpus quirks that change what is spoken: 1');
  });

  it('an invalid conversation is rejected with a reason naming it and the field; the rest is built', async () => {
    const gap = await config(
      (base) => ({
        languages: ['en'],
        corpus: { ...base.corpus, path: path.join(PROJECT_ROOT, 'corpora/fixtures/topiocqa/missing-field.json') },
        llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
        datasets: { ...base.datasets, en: 'topiocqa', ja: 'topiocqa_ja' },
      }),
      'missing-field',
    );
    const report = await runBuild(gap);
    const summary = report.datasets[0]!;
    expect(summary.failed.length).toBeGreaterThan(0);
    expect(summary.failed[0]!.reason).toMatch(/conversation \d+.*field "/);
    const listed = (await readFile(path.join(gap.output.directory, 'data/en/task/topiocqa/all.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .filter(Boolean);
    expect(listed.length).toBe(summary.dialogues);
    expect(existsSync(path.join(gap.output.directory, 'data/en/task/topiocqa.partial'))).toBe(false);
  });
});
