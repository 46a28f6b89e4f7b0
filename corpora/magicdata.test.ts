import { cp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  checkChannelOrder,
  cleanMagicDataText,
  parseMagicDataSpeakerInfo,
  parseMagicDataTranscript,
  prepareMagicData,
} from './magicdata.ts';
import { ReferenceCorpusError, validateReferenceRecording } from './reference-recording.ts';
import {
  FIXTURES,
  SESSION_SPEECH,
  temporaryFolder,
  toneTrack,
  writeSessionAudio,
  writeWavFile,
} from './reference-test-audio.ts';

const FIXTURE = path.join(FIXTURES, 'magicdata');
const RATE = 8000;

describe('prepareMagicData on the fixture (no audio)', () => {
  it('reads both sessions with exact segments, supervisions and notes', async () => {
    const recordings = await prepareMagicData([FIXTURE]);
    expect(recordings.map((recording) => recording.id)).toEqual(['A0001_S0001', 'A0002_S0001']);
    for (const recording of recordings) validateReferenceRecording(recording);
    const [session, threeSpeakers] = recordings as [
      NonNullable<(typeof recordings)[0]>,
      NonNullable<(typeof recordings)[0]>,
    ];

    expect(session.format).toBe('magicdata');
    expect(session.channelSpeakers).toEqual({ 0: 'G0001', 1: 'G0002' }); // G0002's first line is noise: G0001 speaks first
    expect(session.segments).toEqual({ 0: SESSION_SPEECH.G0001, 1: SESSION_SPEECH.G0002 });
    expect(session.durationCs).toBe(3400);
    expect(session.audio).toBeUndefined();
    const supervisions = session.supervisions ?? [];
    expect(supervisions).toHaveLength(12);
    expect(supervisions.slice(0, 4)).toEqual([
      { channel: 0, start: 62, end: 318, speaker: 'G0001', text: 'こんにちは、今日はよろしくお願いします' },
      { channel: 1, start: 340, end: 390, speaker: 'G0002', text: 'はい' },
      {
        channel: 1,
        start: 410,
        end: 735,
        speaker: 'G0002',
        text: 'こちらこそよろしくお願いします。最近は何をしていますか',
      },
      { channel: 0, start: 780, end: 990, speaker: 'G0001', text: '最近はゴルフを始めました' },
    ]);
    // The [LAUGHTER]-only line keeps its segment (1290-1330) but has no supervision.
    expect(supervisions.some((supervision) => supervision.start === 1290)).toBe(false);
    expect(supervisions.every((supervision) => !/[[\]]/.test(supervision.text))).toBe(true);
    expect(session.notes).toEqual([
      'channel 0 = G0001 (first speaker), channel 1 = G0002',
      'no WAV/A0001_S0001.wav: no audio; duration is the end of the last line',
      'skipped 2 noise or invalid lines ([*])',
      'removed markers ([+], [LAUGHTER], ...) from the text of 3 lines',
      '1 lines hold only markers: speech segment kept, no supervision',
      'dropped 1 lines whose start and end round to the same centisecond',
    ]);

    expect(threeSpeakers.channelSpeakers).toEqual({ 0: 'G0003', 1: 'G0004' });
    expect(threeSpeakers.segments).toEqual({
      0: [
        { start: 0, end: 200 },
        { start: 620, end: 800 },
      ],
      1: [
        { start: 230, end: 270 },
        { start: 300, end: 550 },
      ],
    });
    expect(threeSpeakers.notes).toContain('dropped speaker G0005: 0.40 s of talk (only two speakers are kept)');
    expect(threeSpeakers.notes).toContain('speakers not in SPKINFO.txt: G0004');
  });

  it('reads only the sessions asked for', async () => {
    expect((await prepareMagicData([FIXTURE], { sessions: ['A0002_S0001'] })).map((recording) => recording.id)).toEqual(
      ['A0002_S0001'],
    );
  });
});

describe('MagicData text and speaker info', () => {
  it('strips markers and keeps the rest', () => {
    expect(cleanMagicDataText('最近は[LAUGHTER]ゴルフを始めました')).toBe('最近はゴルフを始めました');
    expect(cleanMagicDataText('[+]すみません')).toBe('すみません');
    expect(cleanMagicDataText('[LAUGHTER]')).toBe('');
    expect(cleanMagicDataText('well [SONANT] okay  then')).toBe('well okay then');
  });

  it('skips [*] lines and counts them', () => {
    const transcript = parseMagicDataTranscript(
      '[0.0,1.0]\tA\t女,東京\t[*]\n\n[1.0,2.0]\tB\t男,東京\t[*] ノイズ\n[2.0,3.0]\tA\t女,東京\tはい\n',
      'x.txt',
    );
    expect(transcript.noiseLineCount).toBe(2);
    expect(transcript.blankLineCount).toBe(1);
    expect(transcript.lines.map((line) => [line.line, line.speaker, line.start, line.end, line.text])).toEqual([
      [4, 'A', 200, 300, 'はい'],
    ]);
  });

  it('reads speaker ids from SPKINFO.txt', () => {
    expect([...parseMagicDataSpeakerInfo('SPKID\tAGE\nG1\t30\nG2 25\n\n')]).toEqual(['G1', 'G2']);
  });
});

describe('MagicData malformed input names file and line', () => {
  const cases: { name: string; text: string; message: string }[] = [
    {
      name: 'bad time',
      text: '[0.000,1.000]\tA\t女,東京\tはい\n[1.2x,2.000]\tB\t男,東京\tええ\n',
      message: 's.txt:2: column "start": "1.2x" is not a non-negative decimal number of seconds',
    },
    {
      name: 'end before start',
      text: '[3.000,2.000]\tA\t女,東京\tはい\n',
      message: 's.txt:1: column "end": end 2.000 is before start 3.000',
    },
    {
      name: 'missing field',
      text: '[0.000,1.000]\tA\tはい\n',
      message: 's.txt:1: expected [start,end]<TAB>SPEAKER<TAB>gender,dialect<TAB>text',
    },
    {
      name: 'spaces instead of tabs',
      text: '[0.000,1.000] A 女,東京 はい\n',
      message: 's.txt:1: expected [start,end]',
    },
    {
      name: 'empty speaker',
      text: '[0.000,1.000]\t\t女,東京\tはい\n',
      message: 's.txt:1: column "speaker": empty speaker id',
    },
  ];
  for (const { name, text, message } of cases) {
    it(name, () => {
      let caught: unknown;
      try {
        parseMagicDataTranscript(text, 's.txt');
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ReferenceCorpusError);
      expect((caught as Error).message.startsWith(message)).toBe(true);
    });
  }
});

describe('MagicData sessions with audio and missing files', () => {
  let temporary: Awaited<ReturnType<typeof temporaryFolder>>;
  let corpus: string;
  beforeEach(async () => {
    temporary = await temporaryFolder('magicdata');
    corpus = path.join(temporary.folder, 'corpus');
    await cp(FIXTURE, corpus, { recursive: true });
  });
  afterEach(() => temporary.remove());

  it('confirms the channel order against a stereo WAV', async () => {
    const wav = await writeSessionAudio(corpus);
    const [session] = await prepareMagicData([corpus], { sessions: ['A0001_S0001'] });
    expect(session?.channelSpeakers).toEqual({ 0: 'G0001', 1: 'G0002' });
    expect(session?.audio).toEqual([
      { path: wav, channel: 0 },
      { path: wav, channel: 1 },
    ]);
    expect(session?.durationCs).toBe(3500);
    expect(session?.notes[0]).toMatch(
      /^channel 0 = G0001 \(first speaker\), channel 1 = G0002; confirmed by the stereo WAV \(level left minus right: 40\.\d dB for the first speaker, -40\.\d dB for the second\)$/,
    );
  });

  it('swaps the channels when the stereo WAV has the first speaker on the right', async () => {
    await writeSessionAudio(corpus, { swapped: true });
    const [session] = await prepareMagicData([corpus], { sessions: ['A0001_S0001'] });
    if (session === undefined) throw new Error('no session');
    validateReferenceRecording(session);
    expect(session.channelSpeakers).toEqual({ 0: 'G0002', 1: 'G0001' });
    expect(session.segments).toEqual({ 0: SESSION_SPEECH.G0002, 1: SESSION_SPEECH.G0001 });
    expect(session.supervisions?.[0]).toEqual({
      channel: 1,
      start: 62,
      end: 318,
      speaker: 'G0001',
      text: 'こんにちは、今日はよろしくお願いします',
    });
    expect(session.notes[0]).toMatch(/^channel 0 = G0002, channel 1 = G0001: swapped to follow the stereo WAV/);
  });

  it('keeps the first-speaker order when the audio does not decide, and points both channels at a mono WAV', async () => {
    await writeSessionAudio(corpus, { crosstalkGain: 1 });
    const [undecided] = await prepareMagicData([corpus], { sessions: ['A0001_S0001'] });
    expect(undecided?.channelSpeakers).toEqual({ 0: 'G0001', 1: 'G0002' });
    expect(undecided?.notes[0]).toContain('the stereo WAV does not decide the order');

    const wav = await writeSessionAudio(corpus, { mono: true });
    const [mono] = await prepareMagicData([corpus], { sessions: ['A0001_S0001'] });
    expect(mono?.audio).toEqual([
      { path: wav, channel: 0 },
      { path: wav, channel: 1 },
    ]);
    expect(mono?.notes[0]).toBe(
      'channel 0 = G0001 (first speaker), channel 1 = G0002; mono WAV: both channels point at the mixed track',
    );
  });

  it('leaves the audio out of a session with a dropped third speaker', async () => {
    await writeWavFile(
      path.join(corpus, 'WAV', 'A0002_S0001.wav'),
      [toneTrack(800, RATE, []), toneTrack(800, RATE, [])],
      RATE,
    );
    const [session] = await prepareMagicData([corpus], { sessions: ['A0002_S0001'] });
    expect(session?.audio).toBeUndefined();
    expect(session?.notes).toContain(
      'audio left out: the dropped speakers are heard in it, so it is not one speaker per channel',
    );
  });

  it('names a missing TXT folder, a missing session file and a one-speaker session', async () => {
    await expect(prepareMagicData([temporary.folder])).rejects.toThrow(
      `${path.join(temporary.folder, 'TXT')}: TXT folder not found`,
    );
    await expect(prepareMagicData([corpus], { sessions: ['A9999'] })).rejects.toThrow(
      `${path.join(corpus, 'TXT', 'A9999.txt')}: transcript file not found`,
    );
    await writeFile(
      path.join(corpus, 'TXT', 'A0003.txt'),
      '[0.0,1.0]\tG0001\t男,東京\tはい\n[1.5,2.0]\tG0002\t女,東京\t[*]\n',
    );
    await expect(prepareMagicData([corpus], { sessions: ['A0003'] })).rejects.toThrow(
      `${path.join(corpus, 'TXT', 'A0003.txt')}: needs two speakers, found 1 (G0001)`,
    );
    await rm(path.join(corpus, 'SPKINFO.txt'));
    const [session] = await prepareMagicData([corpus], { sessions: ['A0001_S0001'] });
    expect(session?.notes).toContain('no SPKINFO.txt: speaker ids not checked');
  });
});

describe('checkChannelOrder', () => {
  it('needs enough solo speech of both speakers', () => {
    const audio = {
      channels: [toneTrack(300, RATE, [{ start: 0, end: 50 }]), toneTrack(300, RATE, [{ start: 100, end: 300 }])],
      sampleRate: RATE,
    };
    expect(checkChannelOrder(audio, { 0: [{ start: 0, end: 50 }], 1: [{ start: 100, end: 300 }] }).decision).toBe(
      'undecided',
    );
    expect(checkChannelOrder(audio, { 0: [{ start: 0, end: 150 }], 1: [{ start: 100, end: 300 }] }).decision).toBe(
      'kept',
    );
  });
});
