/**
 * `measure --format ctm|textgrid|nxt` over a copy of a small fixture with one corrupt record: by
 * default the record is skipped, named once (file, line and reason) and counted in the statistics
 * file; `--strict` stops at it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCtm, prepareCtm } from '../../corpora/ctm.ts';
import { sharedDirectory } from '../../pipeline/config-file.ts';
import { runMeasure, type MeasureOptions } from './measure.ts';

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'corpora', 'fixtures');

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'measure-skipped-words-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function options(overrides: Partial<MeasureOptions>): MeasureOptions {
  return {
    format: 'ctm',
    out: path.join(directory, 'out', 'x.timing.json'),
    language: 'en',
    vad: 'silero',
    samplerUse: 'pooled',
    licence: 'not stated',
    origin: 'not stated',
    channelMapping: 'as assigned by the corpus loader (channelSpeakers)',
    note: [],
    relativeTo: directory,
    ...overrides,
  };
}

/** Copies a fixture file into the test folder with one line replaced; returns the copy's path. */
async function corruptCopy(fixture: string, replace: [string, string]): Promise<string> {
  const text = await readFile(path.join(FIXTURES, fixture), 'utf8');
  expect(text).toContain(replace[0]);
  const copy = path.join(directory, path.basename(fixture));
  await writeFile(copy, text.replace(replace[0], replace[1]));
  return copy;
}

/** Runs measure without and with strict and checks the skipped record is named, counted, and stops strict. */
async function expectSkippedThenStrict(
  format: MeasureOptions['format'],
  inputs: string[],
  expected: string,
  recordingId: string,
  strictMessage = expected,
): Promise<void> {
  const result = await runMeasure(inputs, options({ format }));
  expect(result.skippedRecords).toEqual([expected]);
  const statistics = JSON.parse(await readFile(options({}).out, 'utf8'));
  expect(statistics.provenance.loaderNotes.filter((note: string) => note.includes(expected))).toEqual([
    `${recordingId}: skipped ${expected}`,
  ]);
  expect(statistics.provenance.notes).toContain(
    '1 malformed corpus records skipped by the reader (each in loaderNotes)',
  );
  await expect(runMeasure(inputs, options({ format, strict: true }))).rejects.toThrow(strictMessage);
}

describe('measure --format ctm with a corrupt word line', () => {
  it('skips a negative duration, naming file:line once; --strict stops at it', async () => {
    const input = await corruptCopy('ctm/calls.ctm', ['sw_4001 A 1.40 0.35 how', 'sw_4001 A 1.40 -0.35 how']);
    await expectSkippedThenStrict(
      'ctm',
      [input],
      `${input}:6: column "duration": "-0.35" is not a non-negative decimal number of seconds`,
      'sw_4001',
    );
  });

  it('skips a non-numeric begin time', async () => {
    const input = await corruptCopy('ctm/calls.ctm', ['sw_4002 B 0.905 0.600 sure', 'sw_4002 B 0.9o5 0.600 sure']);
    await expectSkippedThenStrict(
      'ctm',
      [input],
      `${input}:25: column "begin time": "0.9o5" is not a non-negative decimal number of seconds`,
      'sw_4002',
    );
  });

  it('skips the words of a third channel label, keeping the two with most words', async () => {
    const input = await corruptCopy('ctm/calls.ctm', ['sw_4001 A 4.20 0.28 good', 'sw_4001 C 4.20 0.28 good']);
    await expectSkippedThenStrict(
      'ctm',
      [input],
      `${input}:20: channel C of waveform sw_4001 is a third channel (the waveform has A, B, C; two speakers expected)`,
      'sw_4001',
      `${input}:3: waveform sw_4001 has 3 channels (A, B, C)`,
    );
  });
});

describe('measure --format textgrid with a corrupt interval', () => {
  async function pairCopy(replace: [string, string]): Promise<string[]> {
    const first = await corruptCopy('textgrid/pair_0.TextGrid', replace);
    const second = path.join(directory, 'pair_1.TextGrid');
    await writeFile(second, await readFile(path.join(FIXTURES, 'textgrid', 'pair_1.TextGrid')));
    return [first, second];
  }

  it('skips an interval ending before it starts, naming file:line and tier once; --strict stops at it', async () => {
    const inputs = await pairCopy(['1.05\n1.2\n"did"', '1.05\n0.2\n"did"']);
    await expectSkippedThenStrict(
      'textgrid',
      inputs,
      `${inputs[0]}:23: interval 4 of tier 1 ("words") ends before it starts`,
      'pair',
    );
  });

  it('skips an interval with a negative time', async () => {
    const inputs = await pairCopy(['1.2\n1.33\n"you"', '-1.2\n1.33\n"you"']);
    await expectSkippedThenStrict(
      'textgrid',
      inputs,
      `${inputs[0]}:25: the xmin of interval 5 of tier 1 ("words") -1.2 is negative`,
      'pair',
    );
  });

  it('skips an interval overlapping the one before it', async () => {
    const inputs = await pairCopy(['1.2\n1.33\n"you"', '1.1\n1.33\n"you"']);
    await expectSkippedThenStrict(
      'textgrid',
      inputs,
      `${inputs[0]}:25: tier "words": the interval 1.10-1.33 s overlaps the interval 1.05-1.20 s (line 22); the intervals of one tier must not overlap`,
      'pair',
    );
  });
});

describe('measure --format nxt with a corrupt element', () => {
  const MAP_TASK = path.join(sharedDirectory(), 'corpora', 'reference-timing', 'maptask');
  async function dialogueCopy(replace: [string, string]): Promise<string> {
    const text = await readFile(path.join(MAP_TASK, 'q1ec1.g.timed-units.xml'), 'utf8');
    expect(text).toContain(replace[0]);
    await writeFile(path.join(directory, 'q1ec1.g.timed-units.xml'), text.replace(replace[0], replace[1]));
    await writeFile(
      path.join(directory, 'q1ec1.f.timed-units.xml'),
      await readFile(path.join(MAP_TASK, 'q1ec1.f.timed-units.xml')),
    );
    return path.join(directory, 'q1ec1.g.timed-units.xml');
  }

  it('skips an element ending before it starts, naming file:line once; --strict stops at it', async () => {
    const input = await dialogueCopy(['start="0.3294" end="0.8432"', 'start="0.3294" end="0.2432"']);
    await expectSkippedThenStrict(
      'nxt',
      [directory],
      `${input}:4: column "end": <tu> ends (0.2432) before it starts (0.3294)`,
      'q1ec1',
    );
  });

  it('skips an element with a non-numeric time', async () => {
    const input = await dialogueCopy(['start="0.8432" end="1.3702"', 'start="0.84x2" end="1.3702"']);
    await expectSkippedThenStrict(
      'nxt',
      [directory],
      `${input}:5: column "start": <tu> start="0.84x2" is not a non-negative decimal number of seconds`,
      'q1ec1',
    );
  });
});

describe('parseCtm strict: false', () => {
  it('keeps the good lines, lists the bad ones, and still fails on a misplaced alternation marker', async () => {
    const text = ['w A 0.1 0.2 a', 'w A 0.3 -1 b', 'w B 0.5', 'w B 0.6 0.1 c'].join('\n');
    const parsed = parseCtm(text, 'w.ctm', { strict: false });
    expect(parsed.words.map((word) => word.line)).toEqual([1, 4]);
    expect(parsed.skippedRecords.map((record) => record.line)).toEqual([2, 3]);
    expect(() => parseCtm('w A * * <ALT>', 'w.ctm', { strict: false })).toThrow('w.ctm:1: <ALT> without <ALT_BEGIN>');
    expect(() => parseCtm(text, 'w.ctm')).toThrow('w.ctm:2:');
  });

  it('prepareCtm counts a skipped line of a pair waveform once, with its recording', async () => {
    const input = await corruptCopy('ctm/pair.ctm', ['chat7_1 1 0.70 0.25 mhm', 'chat7_1 1 0.70 0.25']);
    const [recording] = await prepareCtm([input], { strict: false });
    expect(recording?.skippedRecords).toEqual([
      `${input}:4: expected 5 or 6 fields (file channel begin duration word [confidence]), found 4`,
    ]);
  });
});
