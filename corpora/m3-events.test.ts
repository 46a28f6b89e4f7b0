import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sharedDirectory } from '../pipeline/config.ts';
import {
  AlignmentParseError,
  buildIpus,
  computeEvents,
  EventsLineParseError,
  formatEventsLine,
  parseAlignment,
  parseEventsLine,
  segmentsFromEvents,
  segmentsFromWords,
} from '../pipeline/events/index.ts';
import { prepareM3Events, readM3EventsFolder } from './m3-events.ts';
import { joinTranscript, ReferenceCorpusError, validateReferenceRecording } from './reference-recording.ts';
import { FIXTURES, temporaryFolder, toneTrack, writeWavFile } from './reference-test-audio.ts';

const TOY = path.join(sharedDirectory(), 'conformance', 'm3-toy', 'data', 'ja');
const FIXTURE = path.join(FIXTURES, 'm3-events');

describe('prepareM3Events on the real conformance folders', () => {
  const cases = [
    { folder: 'chat/magicdata_toy', id: 'A0022_S0003.0.0-120.0', words: 358, ipus: [21, 26], segments: [40, 52] },
    { folder: 'task/topiocqa_ja_toy', id: 'topiocqa_dev_0001', words: 300, ipus: [14, 16], segments: [40, 30] },
  ] as const;
  for (const expected of cases) {
    it(`${expected.folder}: segments from the words, IPU supervisions, no disagreement`, async () => {
      const folder = path.join(TOY, expected.folder);
      const [recording, ...rest] = await prepareM3Events([folder]);
      expect(rest).toHaveLength(0);
      if (recording === undefined) throw new Error('no recording');
      validateReferenceRecording(recording);
      expect(recording.id).toBe(expected.id);
      expect(recording.format).toBe('m3-events');
      const alignmentFile = path.join(folder, 'txt_align', `${expected.id}.txt`);
      const words = parseAlignment(await readFile(alignmentFile, 'utf8'), alignmentFile);
      expect(words).toHaveLength(expected.words);
      const fromWords = segmentsFromWords(words);
      expect(recording.segments).toEqual(fromWords);
      const { events } = parseEventsLine(
        (await readFile(path.join(folder, 'test.jsonl'), 'utf8')).trim(),
        'test.jsonl:1',
      );
      expect(recording.segments).toEqual(segmentsFromEvents(events));
      expect(recording.segments[0]).toHaveLength(expected.segments[0]);
      expect(recording.segments[1]).toHaveLength(expected.segments[1]);
      expect(recording.notes.some((note) => note.includes('disagree'))).toBe(false);
      expect(recording.channelSpeakers).toEqual({ 0: `${expected.id}:0`, 1: `${expected.id}:1` });
      const supervisions = recording.supervisions ?? [];
      for (const channel of [0, 1] as const) {
        const own = supervisions.filter((supervision) => supervision.channel === channel);
        expect(own).toHaveLength(expected.ipus[channel]);
        expect(own.map(({ start, end }) => ({ start, end }))).toEqual(
          buildIpus(fromWords[channel]).map(({ start, end }) => ({ start, end })),
        );
        // Japanese: the words of a channel, in order, joined without spaces, are the supervisions' texts joined.
        const channelWords = words.filter((word) => word.channel === channel).sort((a, b) => a.start - b.start);
        expect(own.map((supervision) => supervision.text).join('')).toBe(
          channelWords.map((word) => word.word).join(''),
        );
        expect(own.every((supervision) => !supervision.text.includes(' '))).toBe(true);
      }
      expect(recording.durationCs).toBe(Math.max(...words.map((word) => word.end)));
      expect(recording.audio).toBeUndefined();
    });
  }
});

describe('prepareM3Events on the hand-made fixture', () => {
  it('uses every split once, joins English words with spaces, and notes disagreements', async () => {
    const recordings = await readM3EventsFolder(FIXTURE);
    expect(recordings.map((recording) => recording.id)).toEqual(['dlg_a', 'dlg_b']);
    const [a, b] = recordings as [NonNullable<(typeof recordings)[0]>, NonNullable<(typeof recordings)[0]>];
    expect(a.segments).toEqual({
      0: [
        { start: 50, end: 200 },
        { start: 260, end: 300 },
      ],
      1: [
        { start: 320, end: 350 },
        { start: 400, end: 560 },
      ],
    });
    expect(a.supervisions).toEqual([
      { channel: 0, start: 50, end: 200, speaker: 'dlg_a:0', text: 'so where are you' },
      { channel: 0, start: 260, end: 300, speaker: 'dlg_a:0', text: 'from' },
      { channel: 1, start: 320, end: 560, speaker: 'dlg_a:1', text: "yeah i'm from ohio" },
    ]);
    expect(a.durationCs).toBe(560);
    expect(a.notes).toContain('also listed in test_small.jsonl (line 1); loaded once');
    expect(a.notes.some((note) => note.includes('disagree'))).toBe(false);
    // The fixture's events are what the rules compute from its words.
    const line = (await readFile(path.join(FIXTURE, 'test.jsonl'), 'utf8')).split('\n')[0];
    expect(formatEventsLine('dlg_a', computeEvents(a.segments))).toBe(line);

    expect(b.segments[0]).toEqual([{ start: 100, end: 300 }]);
    expect(b.notes).toContain(
      'channel 0: words and events disagree (1 segments from words, 1 from events; only in words: [1.00, 3.00]; only in events: [1.00, 3.50]); the words are used',
    );
    expect(b.notes.filter((note) => note.includes('disagree'))).toHaveLength(1);
    expect(joinTranscript((b.supervisions ?? []).map((supervision) => supervision.text))).toBe('hello there hi');

    expect((await readM3EventsFolder(FIXTURE, { splits: ['test_small'] })).map((recording) => recording.id)).toEqual([
      'dlg_a',
    ]);
  });
});

describe('prepareM3Events with audio and errors', () => {
  let temporary: Awaited<ReturnType<typeof temporaryFolder>>;
  let folder: string;
  beforeEach(async () => {
    temporary = await temporaryFolder('m3-events');
    folder = path.join(temporary.folder, 'dataset');
    await cp(FIXTURE, folder, { recursive: true });
  });
  afterEach(() => temporary.remove());

  it('takes the duration and audio from audio/{id}.wav', async () => {
    await writeWavFile(
      path.join(folder, 'audio', 'dlg_a.wav'),
      [toneTrack(700, 8000, []), toneTrack(700, 8000, [])],
      8000,
    );
    const [a, b] = await prepareM3Events([folder]);
    expect(a?.durationCs).toBe(700);
    expect(a?.audio).toEqual([
      { path: path.join(folder, 'audio', 'dlg_a.wav'), channel: 0 },
      { path: path.join(folder, 'audio', 'dlg_a.wav'), channel: 1 },
    ]);
    expect(b?.audio).toBeUndefined();
  });

  it('names the missing word file, and file and line of malformed input', async () => {
    await rm(path.join(folder, 'txt_align', 'dlg_b.txt'));
    await expect(prepareM3Events([folder])).rejects.toThrow(
      `${path.join(folder, 'txt_align', 'dlg_b.txt')}: word alignment file not found`,
    );

    await writeFile(path.join(folder, 'txt_align', 'dlg_b.txt'), '0\t1.00\t1.50\thello\n0\t1.5x\t3.00\tthere\n');
    const alignmentError = await prepareM3Events([folder]).catch((error: unknown) => error);
    expect(alignmentError).toBeInstanceOf(AlignmentParseError);
    expect((alignmentError as Error).message).toBe(
      `${path.join(folder, 'txt_align', 'dlg_b.txt')}:2: start: not seconds with at most 2 decimals: "1.5x"`,
    );

    await writeFile(
      path.join(folder, 'test.jsonl'),
      '{"id": "dlg_a", "events": {"0": [], "1": []}}\n{"id": "dlg_b", "events": {"0": [{"event": "TURN", "time": ["x", 1.0]}], "1": []}}\n',
    );
    const eventsError = await prepareM3Events([folder]).catch((error: unknown) => error);
    expect(eventsError).toBeInstanceOf(EventsLineParseError);
    expect((eventsError as Error).message).toContain(`${path.join(folder, 'test.jsonl')}:2: events.0.0.time.0`);

    await expect(prepareM3Events([folder], { splits: ['dev'] })).rejects.toThrow(
      `${path.join(folder, 'dev.jsonl')}: events JSONL file not found`,
    );
    await expect(prepareM3Events([path.join(folder, 'nothing')])).rejects.toThrow(ReferenceCorpusError);
  });
});
