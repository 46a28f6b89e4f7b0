import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCtm, prepareCtm } from './ctm.ts';
import { ReferenceCorpusError, validateReferenceRecording } from './reference-recording.ts';
import { FIXTURES } from './reference-test-audio.ts';

const FOLDER = path.join(FIXTURES, 'ctm');

describe('CTM reader', () => {
  it('reads sclite CTM lines: comments, blank lines, confidences, the first alternative of an alternation', async () => {
    const recordings = await prepareCtm([path.join(FOLDER, 'calls.ctm')]);
    expect(recordings.map((recording) => recording.id)).toEqual(['sw_4001', 'sw_4002']);
    const call = recordings[0];
    if (call === undefined) return;
    validateReferenceRecording(call);
    expect(call.format).toBe('ctm');
    expect(call.channelSpeakers).toEqual({ 0: 'sw_4001:A', 1: 'sw_4001:B' });
    // A: hello there (0.50-1.04) [noise] is not speech; how are you 1.40-2.33; good 4.20-4.48.
    expect(call.segments[0]).toEqual([
      { start: 50, end: 104 },
      { start: 140, end: 233 },
      { start: 420, end: 448 },
    ]);
    // B: %HESITATION fine thanks (first alternative) 2.10-3.05; the laughter after it is not speech.
    expect(call.segments[1]).toEqual([{ start: 210, end: 305 }]);
    expect(call.supervisions?.map((supervision) => [supervision.channel, supervision.text])).toEqual([
      [0, 'hello there'], // one supervision per speech segment: the silence before "how" ends it
      [0, 'how are you'],
      [1, '%HESITATION fine thanks'],
      [0, 'good'],
    ]);
    expect(call.notes).toContain('2 words of later alternatives (<ALT>) left out in calls.ctm');
    // sw_4002: channel order by label (A before B) even though B speaks first; begin + duration summed exactly.
    const second = recordings[1];
    expect(second?.channelSpeakers).toEqual({ 0: 'sw_4002:A', 1: 'sw_4002:B' });
    expect(second?.segments[1]).toEqual([
      { start: 0, end: 40 },
      { start: 90, end: 151 },
    ]);
    expect(second?.notes.some((note) => note.startsWith('1 speech words start and end on the same centisecond'))).toBe(
      false,
    );
  });

  it('pairs one-channel waveforms <id>_0 / <id>_1 into one recording', async () => {
    const [recording] = await prepareCtm([path.join(FOLDER, 'pair.ctm')]);
    expect(recording?.id).toBe('chat7');
    expect(recording?.channelSpeakers).toEqual({ 0: 'chat7_0:1', 1: 'chat7_1:1' });
    expect(recording?.segments).toEqual({
      0: [
        { start: 12, end: 82 },
        { start: 240, end: 290 },
      ],
      1: [
        { start: 70, end: 95 },
        { start: 160, end: 202 },
      ],
    });
    expect(recording?.supervisions?.[0]?.words).toEqual([
      { channel: 0, start: 12, end: 52, word: 'okay' },
      { channel: 0, start: 52, end: 82, word: 'so' },
    ]);
  });
});

describe('CTM reader: malformed files name file and line', () => {
  const cases: [string, string, RegExp][] = [
    ['too few fields', 'a A 0.1 0.2\n', /x\.ctm:1: expected 5 or 6 fields/],
    [
      'a bad begin time',
      ';; comment\na A 0,1 0.2 hi\n',
      /x\.ctm:2: column "begin time": "0,1" is not a non-negative decimal/,
    ],
    ['a negative duration', 'a A 0.1 -0.2 hi\n', /x\.ctm:1: column "duration": "-0.2"/],
    ['a bad confidence', 'a A 0.1 0.2 hi high\n', /x\.ctm:1: column "confidence": "high" is not a number/],
    ['an alternation never closed', 'a A * * <ALT_BEGIN>\na A 0.1 0.2 hi\n', /x\.ctm:1: <ALT_BEGIN> is never closed/],
    ['<ALT> outside an alternation', '\n\na A * * <ALT>\n', /x\.ctm:3: <ALT> without <ALT_BEGIN>/],
  ];
  for (const [what, text, message] of cases) {
    it(what, () => {
      expect(() => parseCtm(text, 'x.ctm')).toThrow(ReferenceCorpusError);
      expect(() => parseCtm(text, 'x.ctm')).toThrow(message);
    });
  }

  it('a waveform with one channel and no partner, or three channels', async () => {
    const { temporaryFolder } = await import('./reference-test-audio.ts');
    const { writeFile } = await import('node:fs/promises');
    const temporary = await temporaryFolder('ctm');
    try {
      const one = path.join(temporary.folder, 'one.ctm');
      await writeFile(one, ';;\nsolo A 0.1 0.2 hi\n');
      await expect(prepareCtm([one])).rejects.toThrow(/one\.ctm:2: waveform solo has one channel \(A\)/);
      const three = path.join(temporary.folder, 'three.ctm');
      await writeFile(three, 'w A 0.1 0.2 hi\nw B 0.3 0.2 hi\nw C 0.5 0.2 hi\n');
      await expect(prepareCtm([three])).rejects.toThrow(/three\.ctm:1: waveform w has 3 channels \(A, B, C\)/);
      const half = path.join(temporary.folder, 'half.ctm');
      await writeFile(half, 'call_1 1 0.1 0.2 hi\n');
      await expect(prepareCtm([half])).rejects.toThrow(/half\.ctm:1: waveform call_1 has no partner call_0/);
    } finally {
      await temporary.remove();
    }
  });
});
