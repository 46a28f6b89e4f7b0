/**
 * `measure` over a corpus with one corrupt segment line: by default the line is skipped, named once
 * (file:line and reason) and counted in the statistics file; `--strict` stops at it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sharedDirectory } from '../../pipeline/config-file.ts';
import { parseRttm, RttmFormatError } from '../../corpora/rttm.ts';
import { runMeasure, type MeasureOptions } from './measure.ts';

const CALLHOME_MANDARIN = path.join(sharedDirectory(), 'corpora', 'reference-timing', 'rttm', 'zh');
const BAD_REASON = 'duration "-399.394" is not a non-negative decimal number of seconds';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'measure-skipped-'));
  // a copy of three CallHome calls, the third under the name 1814 with a negative duration on line 116
  for (const name of ['0003', '0022']) {
    await writeFile(
      path.join(directory, `${name}.rttm`),
      await readFile(path.join(CALLHOME_MANDARIN, `${name}.rttm`), 'utf8'),
    );
  }
  const lines = (await readFile(path.join(CALLHOME_MANDARIN, '0027.rttm'), 'utf8')).split('\n');
  const fields = lines[115]!.split(' ');
  fields[4] = '-399.394';
  lines[115] = fields.join(' ');
  await writeFile(path.join(directory, '1814.rttm'), lines.join('\n'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function options(overrides: Partial<MeasureOptions> = {}): MeasureOptions {
  return {
    format: 'rttm',
    out: path.join(directory, 'out', 'zh.timing.json'),
    language: 'zh',
    vad: 'silero',
    samplerUse: 'pooled',
    licence: 'not stated',
    origin: 'not stated',
    channelMapping: 'as assigned by the corpus loader (channelSpeakers)',
    note: [],
    relativeTo: directory,
    speakers: 'most-talk',
    ...overrides,
  };
}

describe('measure over a corpus with a bad segment line', () => {
  it('finishes, names the skipped line once and counts it in the statistics file', async () => {
    const input = path.join(directory, '1814.rttm');
    const result = await runMeasure(
      [path.join(directory, '0003.rttm'), path.join(directory, '0022.rttm'), input],
      options(),
    );
    expect(result.skippedRecords).toEqual([`${input}:116: ${BAD_REASON}`]);
    const statistics = JSON.parse(await readFile(options().out, 'utf8'));
    expect(statistics.provenance.recordingsUsed).toBe(3);
    expect(statistics.provenance.loaderNotes).toContain(`1814: skipped ${input}:116: ${BAD_REASON}`);
    expect(statistics.provenance.loaderNotes).toContain('1814: skipped 1 malformed SPEAKER lines (not strict)');
    expect(statistics.provenance.notes).toContain(
      '1 malformed corpus records skipped by the reader (each in loaderNotes)',
    );
  });

  it('--strict stops at the bad line, naming file and line', async () => {
    await expect(runMeasure([directory], options({ strict: true }))).rejects.toThrow(`1814.rttm:116: ${BAD_REASON}`);
  });
});

describe('parseRttm strict: false', () => {
  const good = 'SPEAKER c 1 0.5 1.0 <NA> <NA> A <NA> <NA>';
  it('skips malformed SPEAKER lines, lists them, and keeps the good ones', () => {
    const text = [
      good,
      'SPEAKER c 1 2.0 -1 <NA> <NA> B <NA> <NA>',
      'SPEAKER c 1 2',
      'SPEAKER c 1 3.0 0.5 <NA> <NA> B <NA> <NA>',
    ].join('\n');
    const recording = parseRttm(text, 'c.rttm', { strict: false });
    expect(recording.turns.map((turn) => turn.line)).toEqual([1, 4]);
    expect(recording.skippedRecords).toEqual([
      { source: 'c.rttm', line: 2, reason: 'duration "-1" is not a non-negative decimal number of seconds' },
      { source: 'c.rttm', line: 3, reason: 'SPEAKER line has 4 fields, expected 10' },
    ]);
    expect(() => parseRttm(text, 'c.rttm')).toThrow(RttmFormatError);
  });

  it('a file with no good line still fails, naming the first bad one', () => {
    expect(() => parseRttm('SPEAKER c 1 2.0 -1 <NA> <NA> B <NA> <NA>', 'c.rttm', { strict: false })).toThrow(
      'c.rttm: no good SPEAKER line (line 1: duration "-1" is not a non-negative decimal number of seconds)',
    );
  });
});
