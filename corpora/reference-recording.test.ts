import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  formatCentiseconds,
  joinTranscript,
  parseSecondsToCentiseconds,
  readWavHeader,
  ReferenceCorpusError,
  segmentsFromSpans,
  validateReferenceRecording,
} from './reference-recording.ts';
import { temporaryFolder, toneTrack, writeWavFile } from './reference-test-audio.ts';
import type { ReferenceRecording } from '../pipeline/model/types.ts';

describe('parseSecondsToCentiseconds', () => {
  it('rounds once, half up, on the written decimal', () => {
    expect(parseSecondsToCentiseconds('4.805')).toBe(481); // 4.805 * 100 is 480.49999... in floating point
    expect(parseSecondsToCentiseconds('12.004')).toBe(1200);
    expect(parseSecondsToCentiseconds('0.005')).toBe(1);
    expect(parseSecondsToCentiseconds('3')).toBe(300);
    expect(parseSecondsToCentiseconds('3.')).toBe(300);
    expect(parseSecondsToCentiseconds('.5')).toBe(50);
    expect(parseSecondsToCentiseconds(' 7.2 ')).toBe(720);
    expect(parseSecondsToCentiseconds('19.104')).toBe(1910);
    expect(parseSecondsToCentiseconds('1.2349999')).toBe(123);
  });

  it('rejects signs, exponents and junk', () => {
    for (const text of ['-1', '+1', '1e5', '1.2.3', '', 'NaN', '1,5', '0x10'])
      expect(parseSecondsToCentiseconds(text)).toBeUndefined();
  });
});

describe('ReferenceCorpusError', () => {
  it('names file, line, row and column', () => {
    expect(new ReferenceCorpusError('a.csv', { line: 4, row: 3, column: 'start' }, 'bad').message).toBe(
      'a.csv:4: row 3, column "start": bad',
    );
    expect(new ReferenceCorpusError('a.txt', { line: 2 }, 'bad').message).toBe('a.txt:2: bad');
    expect(new ReferenceCorpusError('folder', {}, 'missing').message).toBe('folder: missing');
  });
});

describe('joinTranscript', () => {
  it('joins Japanese without spaces and English with one', () => {
    expect(joinTranscript(['今日は', '晴れ', 'です'])).toBe('今日は晴れです');
    expect(joinTranscript(['so', ' where ', '', 'are'])).toBe('so where are');
    expect(joinTranscript(['GPS', 'を', '使う'])).toBe('GPSを使う');
    expect(joinTranscript(['はい。', 'OK'])).toBe('はい。OK');
    expect(joinTranscript([])).toBe('');
  });
});

describe('segmentsFromSpans', () => {
  it('merges a speaker’s own overlapping and abutting spans and drops empty ones', () => {
    const { segments, mergedCount } = segmentsFromSpans([
      { channel: 1, start: 1520, end: 1875 },
      { channel: 1, start: 1490, end: 1520 },
      { channel: 0, start: 10, end: 10 },
      { channel: 0, start: 100, end: 200 },
      { channel: 0, start: 150, end: 180 },
    ]);
    expect(segments).toEqual({ 0: [{ start: 100, end: 200 }], 1: [{ start: 1490, end: 1875 }] });
    expect(mergedCount).toBe(2);
    expect(formatCentiseconds(1875)).toBe('18.75');
  });
});

describe('validateReferenceRecording', () => {
  const base: ReferenceRecording = {
    id: 'r',
    format: 'test',
    sources: [],
    durationCs: 100,
    segments: { 0: [{ start: 0, end: 10 }], 1: [] },
    channelSpeakers: { 0: 'a', 1: 'b' },
    supervisions: [{ channel: 0, start: 0, end: 10, speaker: 'a', text: 'x' }],
    notes: [],
  };
  it('accepts a valid recording and names the problem otherwise', () => {
    expect(() => validateReferenceRecording(base)).not.toThrow();
    expect(() =>
      validateReferenceRecording({
        ...base,
        segments: {
          0: [
            { start: 5, end: 10 },
            { start: 8, end: 12 },
          ],
          1: [],
        },
      }),
    ).toThrow(/channel 0, segment 1/);
    expect(() =>
      validateReferenceRecording({
        ...base,
        supervisions: [{ channel: 0, start: 0, end: 10, speaker: 'b', text: 'x' }],
      }),
    ).toThrow(/not channel 0's speaker/);
  });
});

describe('readWavHeader', () => {
  let temporary: Awaited<ReturnType<typeof temporaryFolder>>;
  beforeAll(async () => {
    temporary = await temporaryFolder('wav-header');
  });
  afterAll(() => temporary.remove());

  it('reads channel count, rate and length without the samples', async () => {
    const file = path.join(temporary.folder, 'x.wav');
    await writeWavFile(file, [toneTrack(123, 8000, []), toneTrack(123, 8000, [])], 8000);
    expect(await readWavHeader(file)).toEqual({ channelCount: 2, sampleRate: 8000, frameCount: 9840 });
  });
});
