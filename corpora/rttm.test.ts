import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateSegments } from '../pipeline/events/index.ts';
import {
  mergeOverlappingSegments,
  parseRttm,
  readRttm,
  recordingContentKey,
  RttmFormatError,
  toTwoChannelSegments,
  type TwoChannelRecording,
} from './rttm.ts';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHARED = process.env.DUPLEXSYNTH_SHARED ?? path.resolve(PROJECT_ROOT, '..', 'shared');
const RTTM_FOLDER = path.join(SHARED, 'corpora', 'reference-timing', 'rttm');

const line = (onset: string, duration: string, speaker: string, file = 'call.cha') =>
  `SPEAKER ${file} 1 ${onset} ${duration} <NA> <NA> ${speaker} <NA> <NA>`;

function expectFormatError(run: () => unknown, lineNumber: number | null, fragment: string): void {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(RttmFormatError);
    const formatError = error as RttmFormatError;
    expect(formatError.line).toBe(lineNumber);
    expect(formatError.message).toContain(`test.rttm${lineNumber === null ? '' : `:${lineNumber}`}: `);
    expect(formatError.message).toContain(fragment);
    return;
  }
  throw new Error('expected an RttmFormatError');
}

describe('parseRttm', () => {
  it('reads SPEAKER lines, rounds each time once to centiseconds from the exact decimal', () => {
    const text = [
      ';; a comment',
      '',
      line('2.24', '0.64', 'M2'),
      line('2.944', '1.44', 'M1'),
      line('0.005', '0.01', 'M1'), // 0.005 -> 1 cs (half up), end 0.015 -> 2 cs
      'SPKR-INFO call.cha 1 <NA> <NA> <NA> adult_male M1 <NA> <NA>',
    ].join('\n');
    const recording = parseRttm(text, '/data/4175.rttm');
    expect(recording.id).toBe('4175');
    expect(recording.fileId).toBe('call.cha');
    expect(recording.speakers).toEqual(['M2', 'M1']);
    expect(recording.skippedLineCount).toBe(1);
    expect(recording.turns.map((turn) => [turn.speaker, turn.start, turn.end, turn.line])).toEqual([
      ['M2', 224, 288, 3],
      ['M1', 294, 438, 4],
      ['M1', 1, 2, 5],
    ]);
    expect(recording.turns[1]?.onsetSeconds).toBe(2.944);
    expect(recording.turns[1]?.durationSeconds).toBe(1.44);
  });

  it('sums onset and duration exactly before rounding (no floating-point drift)', () => {
    // 0.1 + 0.2 in floating point is 0.30000000000000004; 1.005 + 0 rounds half up to 101.
    const recording = parseRttm([line('0.1', '0.2', 'A'), line('1.005', '0.001', 'A')].join('\n'), 'test.rttm');
    expect(recording.turns.map((turn) => [turn.start, turn.end])).toEqual([
      [10, 30],
      [101, 101],
    ]);
  });

  it('names file and line in every error', () => {
    expectFormatError(
      () => parseRttm(`${line('1', '1', 'A')}\nSPEAKER call.cha 1 2.0 1.0 <NA> <NA> B`, 'test.rttm'),
      2,
      '8 fields, expected 10',
    );
    expectFormatError(() => parseRttm(line('1.x', '1', 'A'), 'test.rttm'), 1, 'onset "1.x"');
    expectFormatError(() => parseRttm(line('-1', '1', 'A'), 'test.rttm'), 1, 'onset "-1"');
    expectFormatError(() => parseRttm(`\n${line('1', '1e2', 'A')}`, 'test.rttm'), 2, 'duration "1e2"');
    expectFormatError(() => parseRttm(line('1', '0.000', 'A'), 'test.rttm'), 1, 'duration is 0');
    expectFormatError(
      () => parseRttm([line('1', '1', 'A', 'a.cha'), line('2', '1', 'B', 'b.cha')].join('\n'), 'test.rttm'),
      2,
      'differs from "a.cha"',
    );
    expectFormatError(() => parseRttm(';; only a comment\n', 'test.rttm'), null, 'no SPEAKER line');
  });

  it('readRttm reports a missing file with its path', async () => {
    await expect(readRttm(path.join(RTTM_FOLDER, 'no-such.rttm'))).rejects.toThrow('no-such.rttm');
  });
});

describe('toTwoChannelSegments', () => {
  it('keeps the two speakers with most talk time, merges own overlapping and abutting bullets, reports the rest', () => {
    const text = [
      line('0.0', '1.0', 'B'),
      line('1.0', '0.5', 'B'), // abuts -> merged
      line('1.2', '1.0', 'B'), // overlaps -> merged: B = [0, 220]
      line('1.1', '2.0', 'A'), // A = [110, 310] + [400, 450] = 250 cs
      line('4.0', '0.5', 'A'),
      line('5.0', '0.3', 'C'), // dropped third speaker
      line('6.0', '0.004', 'C'), // rounds to zero length -> empty
    ].join('\n');
    const converted = toTwoChannelSegments(parseRttm(text, 'test.rttm'));
    expect(converted.channelSpeakers).toEqual({ 0: 'A', 1: 'B' });
    expect(converted.talkTime).toEqual({ 0: 250, 1: 220 });
    expect(converted.segments).toEqual({
      0: [
        { start: 110, end: 310 },
        { start: 400, end: 450 },
      ],
      1: [{ start: 0, end: 220 }],
    });
    expect(converted.mergedSegmentCount).toBe(2);
    expect(converted.emptySegmentCount).toBe(1);
    expect(converted.droppedSpeakers).toEqual([{ speaker: 'C', talkTime: 30, segments: [{ start: 500, end: 530 }] }]);
    expect(converted.duration).toBe(600);
  });

  it('breaks talk-time ties by speaker label', () => {
    const converted = toTwoChannelSegments(
      parseRttm([line('0', '1', 'Y'), line('2', '1', 'X')].join('\n'), 'test.rttm'),
    );
    expect(converted.channelSpeakers).toEqual({ 0: 'X', 1: 'Y' });
  });

  it('refuses a one-speaker recording, naming the file', () => {
    expect(() => toTwoChannelSegments(parseRttm(line('0', '1', 'A'), 'test.rttm'))).toThrow(
      /test\.rttm: needs two speakers.*found 1 \(A\)/,
    );
  });

  it('mergeOverlappingSegments sorts without mutating its input', () => {
    const input = [
      { start: 50, end: 60 },
      { start: 0, end: 10 },
      { start: 5, end: 20 },
    ];
    const copy = structuredClone(input);
    expect(mergeOverlappingSegments(input)).toEqual({
      segments: [
        { start: 0, end: 20 },
        { start: 50, end: 60 },
      ],
      mergedCount: 1,
    });
    expect(input).toEqual(copy);
  });
});

describe('the real CallFriend RTTM files (shared folder)', () => {
  async function readLanguage(language: string) {
    const folder = path.join(RTTM_FOLDER, language);
    const names = (await readdir(folder)).filter((name) => name.endsWith('.rttm')).sort();
    const recordings = await Promise.all(names.map((name) => readRttm(path.join(folder, name))));
    return recordings.map((recording) => ({ recording, converted: toTwoChannelSegments(recording) }));
  }
  const extraSpeakers = (converted: TwoChannelRecording[]) =>
    converted
      .filter((entry) => entry.droppedSpeakers.length > 0)
      .map(
        (entry) =>
          `${entry.id}:${entry.droppedSpeakers.map((dropped) => `${dropped.speaker}=${dropped.talkTime}`).join(',')}`,
      );

  it('English: 31 calls, 16,875 bullets, 6 calls with extra speakers', async () => {
    const entries = await readLanguage('en');
    expect(entries).toHaveLength(31);
    expect(entries.reduce((sum, entry) => sum + entry.recording.turns.length, 0)).toBe(16_875);
    const converted = entries.map((entry) => entry.converted);
    expect(extraSpeakers(converted)).toEqual([
      '4175:F1=4522,F2=3620',
      '4504:MA=1017',
      '4889:NUR=643',
      '4984:ER=1474,S=942',
      '6126:S3=5585',
      '6255:XXX=80',
    ]);
    expect(converted.reduce((sum, entry) => sum + entry.segments[0].length + entry.segments[1].length, 0)).toBe(13_561);
    expect(converted.reduce((sum, entry) => sum + entry.mergedSegmentCount, 0)).toBe(3_183);
    expect(converted.reduce((sum, entry) => sum + entry.emptySegmentCount, 0)).toBe(0);
    expect(converted.reduce((sum, entry) => sum + entry.duration, 0)).toBe(2_750_889);
    const call4175 = converted.find((entry) => entry.id === '4175');
    expect(call4175?.channelSpeakers).toEqual({ 0: 'M1', 1: 'M2' });
    expect(call4175?.talkTime).toEqual({ 0: 116_184, 1: 48_220 });
  });

  it('Japanese: 31 calls, 31,130 bullets, 4 calls with extra speakers, one call published twice', async () => {
    const entries = await readLanguage('ja');
    expect(entries).toHaveLength(31);
    expect(entries.reduce((sum, entry) => sum + entry.recording.turns.length, 0)).toBe(31_130);
    const converted = entries.map((entry) => entry.converted);
    expect(extraSpeakers(converted)).toEqual(['1612:FE2=576', '1758:FE1=23564', '1841:FE2=55', '2167:FE2=23994']);
    expect(converted.reduce((sum, entry) => sum + entry.segments[0].length + entry.segments[1].length, 0)).toBe(30_385);
    expect(converted.reduce((sum, entry) => sum + entry.emptySegmentCount, 0)).toBe(95);
    const keys = new Map<string, string[]>();
    for (const { recording } of entries) {
      const key = recordingContentKey(recording);
      keys.set(key, [...(keys.get(key) ?? []), recording.id]);
    }
    expect([...keys.values()].filter((ids) => ids.length > 1)).toEqual([['4222', '4261']]);
  });

  it('every converted channel is valid event-rule input (sorted, non-overlapping, integer centiseconds)', async () => {
    for (const language of ['en', 'ja'] as const) {
      for (const { converted } of await readLanguage(language)) {
        expect(() => validateSegments(converted.segments[0], 0)).not.toThrow();
        expect(() => validateSegments(converted.segments[1], 1)).not.toThrow();
      }
    }
  });
});
