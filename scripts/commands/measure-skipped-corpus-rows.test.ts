/**
 * `measure --format candor|magicdata` over a copy of a small fixture with one corrupt transcript
 * record: by default the record is skipped, named once (file:line and reason) and counted in the
 * statistics file; `--strict` stops at it. The readers' `strict` option on its own as well.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readCandorConversation } from '../../corpora/candor.ts';
import { prepareMagicData } from '../../corpora/magicdata.ts';
import { runMeasure, type MeasureOptions } from './measure.ts';

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'corpora', 'fixtures');
const CANDOR_CONVERSATION = '5e0c1b7a-1e5f-4c07-9a3d-0f1e2d3c4b5a';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'measure-skipped-rows-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function options(overrides: Partial<MeasureOptions>): MeasureOptions {
  return {
    format: 'candor',
    out: path.join(directory, 'out', 'x.timing.json'),
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

/** Copies a fixture folder into the test folder with one text replaced in one of its files; returns the file. */
async function corruptCopy(folder: string, file: string, replace: [string, string]): Promise<string> {
  await cp(path.join(FIXTURES, folder), path.join(directory, folder), { recursive: true });
  const copy = path.join(directory, folder, file);
  const text = await readFile(copy, 'utf8');
  expect(text).toContain(replace[0]);
  await writeFile(copy, text.replace(replace[0], replace[1]));
  return copy;
}

/** Runs measure without and with strict: the record is named once and counted, and strict stops at it. */
async function expectSkippedThenStrict(
  format: MeasureOptions['format'],
  input: string,
  expected: string,
  recordingId: string,
): Promise<void> {
  const result = await runMeasure([input], options({ format }));
  expect(result.skippedRecords).toEqual([expected]);
  const statistics = JSON.parse(await readFile(options({}).out, 'utf8'));
  expect(statistics.provenance.loaderNotes.filter((note: string) => note.includes(expected))).toEqual([
    `${recordingId}: skipped ${expected}`,
  ]);
  expect(statistics.provenance.notes).toContain(
    '1 malformed corpus records skipped by the reader (each in loaderNotes)',
  );
  await expect(runMeasure([input], options({ format, strict: true }))).rejects.toThrow(expected);
}

describe('measure --format candor with a corrupt transcript row', () => {
  it('skips a non-numeric start, naming file:line once; --strict stops at it', async () => {
    const transcript = await corruptCopy(
      'candor',
      path.join(CANDOR_CONVERSATION, 'transcription', 'transcript_backbiter.csv'),
      ['2,1e5,9.6,12.004', '2,1e5,abc,12.004'],
    );
    await expectSkippedThenStrict(
      'candor',
      path.join(directory, 'candor', CANDOR_CONVERSATION),
      `${transcript}:4: row 3, column "start": "abc" is not a non-negative decimal number of seconds`,
      CANDOR_CONVERSATION,
    );
  });

  it('the reader skips a row with another number of cells and keeps the rest', async () => {
    const transcript = await corruptCopy(
      'candor',
      path.join(CANDOR_CONVERSATION, 'transcription', 'transcript_backbiter.csv'),
      ['2,1e5,9.6,12.004,"Oh wow, I\'ve never been to Ohio, actually.",,0,,,,0.3,2.404,0,False,False,8', '2,1e5,9.6'],
    );
    const folder = path.join(directory, 'candor', CANDOR_CONVERSATION);
    const whole = await readCandorConversation(path.join(FIXTURES, 'candor', CANDOR_CONVERSATION));
    const recording = await readCandorConversation(folder, { strict: false });
    expect(recording.skippedRecords).toEqual([`${transcript}:4: row 3: 3 cells, the header has 16`]);
    expect(recording.notes).toContain('skipped 1 malformed CANDOR rows (not strict)');
    expect(recording.supervisions).toHaveLength((whole.supervisions ?? []).length - 1);
    await expect(readCandorConversation(folder)).rejects.toThrow(
      `${transcript}:4: malformed CSV: Invalid Record Length`,
    );
  });
});

describe('measure --format magicdata with a corrupt transcript line', () => {
  it('skips a non-numeric end, naming file:line once; --strict stops at it', async () => {
    const transcript = await corruptCopy('magicdata', path.join('TXT', 'A0001_S0001.txt'), [
      '[3.400,3.900]',
      '[3.400,3.9x0]',
    ]);
    await expectSkippedThenStrict(
      'magicdata',
      path.join(directory, 'magicdata'),
      `${transcript}:3: column "end": "3.9x0" is not a non-negative decimal number of seconds`,
      'A0001_S0001',
    );
  });

  it('the reader counts the skipped line in a note and keeps the rest', async () => {
    await corruptCopy('magicdata', path.join('TXT', 'A0001_S0001.txt'), ['[3.400,3.900]', '3.400-3.900']);
    const [recording] = await prepareMagicData([path.join(directory, 'magicdata')], {
      sessions: ['A0001_S0001'],
      strict: false,
    });
    expect(recording?.skippedRecords).toEqual([
      `${path.join(directory, 'magicdata', 'TXT', 'A0001_S0001.txt')}:3: expected [start,end]<TAB>SPEAKER<TAB>gender,dialect<TAB>text`,
    ]);
    expect(recording?.notes).toContain('skipped 1 malformed MagicData lines (not strict)');
  });
});
