/**
 * The README's real-corpus command (`duplexsynth build --corpus topiocqa_dev.json --lang en
 * --limit N`) writes what the benchmark's scripts/pipe.sh reads. pipe.sh takes `--dataset
 * en_task_topiocqa[_bargein] --split test|test_small|test_other` and hands run_inference.py
 * `data/en/task/{dataset}/{split}.jsonl` (`--data`), `data/en/task/{dataset}/audio` (`--audio-dir`,
 * one `{id}.wav` per line) and, with teacher forcing, `data/en/task/{dataset}/txt_align`
 * (`--alignment-dir`, `{id}.txt`). Here a 2-dialogue build of the real TopiOCQA dev set, from the
 * command line without a config: those files exist for every split, every dialogue is in test or
 * test_other, the cache sits beside --out, and the loader's rules (pipeline/events/evaluable-events.ts,
 * with pipe.sh's settings) keep every system TURN_SHIFT of test and every BARGE_IN of the variant.
 * Every barge-in leaves words unspoken, every channel's true peak is at most -1 dBTP (ffmpeg's
 * ebur128 in quality.json), and the README's numbers are generated from such a build.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, sharedDirectory } from '../pipeline/config.ts';
import { benchmarkLoaderSettings, evaluableEventsReport, evaluableShare } from '../pipeline/events/evaluable-events.ts';
import { parseEventsLine } from '../pipeline/events/jsonl.ts';
import { splitReportSchema } from '../pipeline/model/split-report.ts';
import { datasetSummarySchema } from '../pipeline/model/dataset-summary.ts';
import { datasetQualityReportSchema } from '../pipeline/model/quality-report.ts';
import { BEGIN_MARKER, END_MARKER, realCorpusNumbers, replaceGeneratedSection } from './real-corpus-numbers.ts';
import { TEST_CLI } from './testing/cli-command.ts';

const run = promisify(execFile);
const CLI = TEST_CLI; // the compiled command when dist/ is a build of these sources, else the sources through tsx (scripts/testing/cli-command.ts)
const TOPIOCQA_DEV = path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');

let scratch: string;
let out: string;
let stderr = '';
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-real-splits-'));
  out = path.join(scratch, 'topiocqa_dev');
  // the README command, with a test target small enough that 2 dialogues give both test and test_other,
  // and DNSMOS on non-overlapping windows (the reference hop made DNSMOS most of this file's time; the
  // split and the files pipe.sh reads do not depend on it)
  const result = await run(
    process.execPath,
    [
      CLI,
      'build',
      '--corpus',
      TOPIOCQA_DEV,
      '--lang',
      'en',
      '--limit',
      '2',
      '--out',
      out,
      '--test-hours',
      '0.01',
      '--test-small',
      '1',
      '--dnsmos-hop',
      '9.01',
      '--quiet',
    ],
    {
      cwd: PROJECT_ROOT,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  stderr = result.stderr;
}, 1_800_000); // a cold 2-dialogue build with DNSMOS scoring; took over 15 min on a loaded 2-core machine
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const lines = async (file: string) =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => parseEventsLine(line, file));

describe('the README real-corpus command writes what pipe.sh reads', () => {
  it('scores and splits by default: test, test_small, test_other (+ dev) for the dataset and its barge-in variant, with audio and alignments', async () => {
    for (const dataset of ['topiocqa', 'topiocqa_bargein']) {
      const directory = path.join(out, 'data', 'en', 'task', dataset);
      const all = (await lines(path.join(directory, 'all.jsonl'))).map((line) => line.id);
      expect(all).toHaveLength(2);
      const ids: Record<string, string[]> = {};
      for (const split of ['test', 'test_small', 'test_other', 'dev']) {
        ids[split] = (await lines(path.join(directory, `${split}.jsonl`))).map((line) => line.id);
        for (const id of ids[split]!) {
          expect(existsSync(path.join(directory, 'audio', `${id}.wav`))).toBe(true);
          expect(existsSync(path.join(directory, 'txt_align', `${id}.txt`))).toBe(true);
        }
      }
      expect(ids.test!.length).toBeGreaterThan(0);
      expect(ids.test_small).toHaveLength(1);
      expect(ids.test_other!.length).toBeGreaterThan(0);
      expect(ids.dev).toEqual(ids.test_other);
      // nothing silently in neither split: speaker groups (the default) exclude nothing here
      expect([...ids.test!, ...ids.test_other!].sort()).toEqual([...all].sort());
      const report = splitReportSchema.parse(JSON.parse(await readFile(path.join(directory, 'split.json'), 'utf8')));
      expect(report.settings.unit).toBe('speaker-group');
      expect(report.excluded).toEqual([]);
      expect(existsSync(path.join(directory, 'quality.json'))).toBe(true);
    }
    // the cache beside --out, not in the project's outputs/.cache
    expect(existsSync(path.join(scratch, '.cache'))).toBe(true);
  });

  it("the benchmark loader's rules, with pipe.sh's settings, keep the events of test", async () => {
    const test = await lines(path.join(out, 'data', 'en', 'task', 'topiocqa', 'test.jsonl'));
    const [withoutContext] = benchmarkLoaderSettings('task');
    const task = evaluableEventsReport('task', withoutContext!.settings, test);
    const shifts = evaluableShare(task, 'TURN_SHIFT');
    expect(shifts.candidates).toBeGreaterThan(0);
    expect(shifts.samples).toBe(shifts.candidates);
    const bargeIn = await lines(path.join(out, 'data', 'en', 'task', 'topiocqa_bargein', 'test.jsonl'));
    const [, withContext] = benchmarkLoaderSettings('task', { bargeInVariant: true });
    const variant = evaluableEventsReport('task barge-in', withContext!.settings, bargeIn);
    const bargeIns = evaluableShare(variant, 'BARGE_IN');
    expect(bargeIns.candidates).toBeGreaterThan(0);
    expect(bargeIns.samples).toBe(bargeIns.candidates);
    expect(stderr).not.toMatch(/in neither test nor test_other/);
  });

  it('every barge-in of the variant leaves words unspoken, and every channel peaks at or under -1 dBTP (ffmpeg ebur128, true peak)', async () => {
    const variant = datasetSummarySchema.parse(
      JSON.parse(await readFile(path.join(out, 'data', 'en', 'task', 'topiocqa_bargein', 'summary.json'), 'utf8')),
    );
    expect(variant.bargeIns!.placed).toBeGreaterThan(0);
    expect(variant.bargeIns!.unspoken!.withoutUnspokenWords).toBe(0);
    expect(variant.bargeIns!.unspoken!.minimumWords).toBeGreaterThan(0);
    for (const dataset of ['topiocqa', 'topiocqa_bargein']) {
      const quality = datasetQualityReportSchema.parse(
        JSON.parse(await readFile(path.join(out, 'data', 'en', 'task', dataset, 'quality.json'), 'utf8')),
      );
      const peaks = quality.dialogues.flatMap((dialogue) =>
        dialogue.signal.channels.map((channel) => channel.loudness?.truePeakDbtp),
      );
      expect(peaks).toHaveLength(4);
      for (const peak of peaks) expect(peak!).toBeLessThanOrEqual(-1);
      expect(quality.aggregates.maximumTruePeakDbtp!).toBeLessThanOrEqual(-1);
      // --dnsmos-hop reached the scorer: the methods name it, and a channel of a minute or more has
      // one window per 9.01 s (the reference hop: one per second)
      expect(quality.methods.dnsmos).toMatch(/every 9\.01 s/);
      for (const dialogue of quality.dialogues) {
        for (const channel of dialogue.dnsmos.channels)
          if (channel.scores)
            expect(channel.scores.windows).toBeLessThanOrEqual(
              Math.max(1, Math.floor((Math.max(dialogue.durationSeconds, 2 * 9.01) - 9.01) / 9.01) + 1),
            );
      }
    }
  });

  it('scripts/check-pause-points.ts lists every TURN_HOLD split of the build and finds none inside a title', async () => {
    const directory = path.join(out, 'data', 'en', 'task', 'topiocqa');
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', path.join(PROJECT_ROOT, 'scripts', 'check-pause-points.ts'), directory],
      { cwd: PROJECT_ROOT },
    );
    const summary = datasetSummarySchema.parse(
      JSON.parse(await readFile(path.join(directory, 'summary.json'), 'utf8')),
    );
    expect(stdout).toContain(`${summary.splitQuestions} TURN_HOLD splits, 0 inside a title`);
    expect(stdout.split('\n').filter((line) => line.startsWith('ok\t'))).toHaveLength(summary.splitQuestions);
  });

  it("the README's real-corpus numbers are generated from the build's files", async () => {
    const table = await realCorpusNumbers(out);
    const summary = datasetSummarySchema.parse(
      JSON.parse(await readFile(path.join(out, 'data', 'en', 'task', 'topiocqa', 'summary.json'), 'utf8')),
    );
    const variant = datasetSummarySchema.parse(
      JSON.parse(await readFile(path.join(out, 'data', 'en', 'task', 'topiocqa_bargein', 'summary.json'), 'utf8')),
    );
    expect(table).toContain(`| dialogues, audio | 2, ${summary.totalHours.toFixed(2)} h`);
    expect(table).toContain(
      `| \`topiocqa_bargein\` barge-ins | ${variant.bargeIns!.placed} placed (${variant.bargeIns!.answersTooShort} answers too short)`,
    );
    expect(table).toContain('0 without an unspoken word');
    expect(table).toMatch(/speaker-group unit, 0 excluded \|/);
    const shifts = evaluableShare(
      summary.evaluableEvents.find((report) => !report.settings.useContext)!,
      'TURN_SHIFT',
    );
    expect(shifts.samples).toBe(shifts.candidates);
    expect(table).toContain(
      `| system TURN_SHIFTs evaluable (task, channel 1, without context) | ${shifts.samples} of ${shifts.candidates} |`,
    );
    const readme = `intro\n${BEGIN_MARKER}\nold numbers\n${END_MARKER}\nrest\n`;
    expect(replaceGeneratedSection(readme, table)).toBe(`intro\n${BEGIN_MARKER}\n${table}\n${END_MARKER}\nrest\n`);
    expect(() => replaceGeneratedSection('no markers', table)).toThrow(/real-corpus-numbers:begin/);
  });
});
