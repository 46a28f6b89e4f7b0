import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCandorChannelMap, parseCandorTranscript, prepareCandor, readCandorConversation } from './candor.ts';
import { ReferenceCorpusError, validateReferenceRecording } from './reference-recording.ts';
import { FIXTURES, temporaryFolder, toneTrack, writeWavFile } from './reference-test-audio.ts';

const ROOT = path.join(FIXTURES, 'candor');
const A = '5e0c1b7a-1e5f-4c07-9a3d-0f1e2d3c4b5a';
const B = '9b2d4f60-7a1c-4e3b-8d5f-3c2b1a0f9e8d';
const SPEAKER_B0 = '5f3c2a1b9e8d7c6b5a4f3e2d';
const SPEAKER_B1 = '60a1b2c3d4e5f60718293a4b';

/** Runs `action` and returns the ReferenceCorpusError it throws. */
async function corpusError(action: () => Promise<unknown> | unknown): Promise<ReferenceCorpusError> {
  try {
    await action();
  } catch (error) {
    expect(error).toBeInstanceOf(ReferenceCorpusError);
    return error as ReferenceCorpusError;
  }
  throw new Error('expected a ReferenceCorpusError');
}

describe('prepareCandor on the fixture (backbiter, the default)', () => {
  it('reads every conversation of the corpus folder, in name order', async () => {
    const recordings = await prepareCandor([ROOT]);
    expect(recordings.map((recording) => recording.id)).toEqual([A, B]);
    for (const recording of recordings) {
      validateReferenceRecording(recording);
      expect(recording.format).toBe('candor');
    }
  });

  it('maps channels from channel_map.json and turns backchannels into their own supervisions', async () => {
    const recording = await readCandorConversation(path.join(ROOT, A));
    expect(recording.channelSpeakers).toEqual({ 0: '007', 1: '1e5' });
    expect(recording.segments).toEqual({
      0: [
        { start: 510, end: 930 },
        { start: 1200, end: 1520 },
        { start: 1930, end: 2300 },
      ],
      1: [
        { start: 52, end: 481 }, // 4.805 s rounds half up to 481 (floating point would give 480)
        { start: 720, end: 755 },
        { start: 960, end: 1200 },
        { start: 1490, end: 1875 }, // backchannel "mhm" 14.9-15.2 abuts the turn 15.2-18.75: one segment
        { start: 2100, end: 2140 },
      ],
    });
    expect(recording.supervisions).toEqual([
      { channel: 1, start: 52, end: 481, speaker: '1e5', text: 'So, where are you calling from today?' },
      {
        channel: 0,
        start: 510,
        end: 930,
        speaker: '007',
        text: "I'm in Columbus, Ohio. It's been really cold this week.",
      },
      { channel: 1, start: 720, end: 755, speaker: '1e5', text: 'yeah' },
      { channel: 1, start: 960, end: 1200, speaker: '1e5', text: "Oh wow, I've never been to Ohio, actually." },
      {
        channel: 0,
        start: 1200,
        end: 1520,
        speaker: '007',
        text: "It's nice. You should visit in the fall, the leaves are great.",
      },
      { channel: 1, start: 1490, end: 1520, speaker: '1e5', text: 'mhm' },
      { channel: 1, start: 1520, end: 1875, speaker: '1e5', text: 'Maybe I will. So what do you do for work?' },
      { channel: 0, start: 1930, end: 2300, speaker: '007', text: 'I\'m a nurse, so a lot of "night shifts" lately.' },
      { channel: 1, start: 2100, end: 2140, speaker: '1e5', text: 'okay' },
    ]);
    expect(recording.durationCs).toBe(2300);
    expect(recording.audio).toBeUndefined();
    expect(recording.notes).toEqual([
      'channels from channel_map.json: channel 0 (left) = 007, channel 1 (right) = 1e5',
      'segmentation backbiter (transcript_backbiter.csv): 7 rows',
      '3 backchannels as their own supervisions',
      'dropped 1 utterances or backchannels whose start and stop round to the same centisecond',
      'merged 1 overlapping or abutting spans of the same speaker into one segment',
      'no audio found (processed/<id>.wav, .flac or .mp3)',
      'duration is the end of the last utterance',
    ]);
  });

  it('puts the first speaker on channel 0 without a channel map; one span for several backchannels', async () => {
    const recording = await readCandorConversation(path.join(ROOT, B));
    expect(recording.channelSpeakers).toEqual({ 0: SPEAKER_B0, 1: SPEAKER_B1 });
    expect(recording.segments).toEqual({
      0: [
        { start: 0, end: 350 },
        { start: 500, end: 690 },
        { start: 860, end: 1000 },
      ],
      1: [{ start: 390, end: 825 }],
    });
    expect(recording.supervisions?.find((supervision) => supervision.start === 500)).toEqual({
      channel: 0,
      start: 500,
      end: 690,
      speaker: SPEAKER_B0,
      text: 'mm hm nice',
    });
    expect(recording.notes).toContain(
      `no channel_map.json: channel 0 = ${SPEAKER_B0} (speaker of the first row), channel 1 = ${SPEAKER_B1}; assumed to be the audio's left and right`,
    );
    expect(recording.notes).toContain(
      '1 rows list several backchannels with one start and stop: one supervision each over that span',
    );
  });
});

describe('prepareCandor segmentations', () => {
  it('reads audiophile and cliffhanger when asked', async () => {
    const audiophile = await readCandorConversation(path.join(ROOT, A), { segmentation: 'audiophile' });
    expect(audiophile.segments).toEqual({
      0: [
        { start: 510, end: 700 },
        { start: 780, end: 930 },
      ],
      1: [
        { start: 52, end: 210 },
        { start: 230, end: 481 },
        { start: 720, end: 755 },
      ],
    });
    expect(audiophile.supervisions).toHaveLength(5);
    expect(audiophile.notes).toContain('segmentation audiophile (transcript_audiophile.csv): 5 rows');
    const cliffhanger = await readCandorConversation(path.join(ROOT, A), { segmentation: 'cliffhanger' });
    expect(cliffhanger.segments[1]).toEqual([
      { start: 52, end: 481 },
      { start: 720, end: 755 },
    ]);
  });

  it('names the missing transcript file', async () => {
    const error = await corpusError(() => prepareCandor([ROOT], { segmentation: 'audiophile' }));
    expect(error.file).toBe(path.join(ROOT, B, 'transcription', 'transcript_audiophile.csv'));
    expect(error.message).toContain('transcript file not found (segmentation audiophile');
  });
});

describe('CANDOR speaker ids stay strings', () => {
  it('keeps hex ids such as 1e5, 007 and 0012 exactly as written', () => {
    const rows = parseCandorTranscript(
      'turn_id,speaker,start,stop,utterance\n0,1e5,0,1,a\n1,007,1,2,b\n2,0012,2,3,c\n3,1E5,3,4,d\n',
      'transcript_audiophile.csv',
      'audiophile',
    );
    expect(rows.map((row) => row.speaker)).toEqual(['1e5', '007', '0012', '1E5']);
    expect(rows.map((row) => typeof row.speaker)).toEqual(['string', 'string', 'string', 'string']);
    expect(rows.map((row) => row.turnId)).toEqual(['0', '1', '2', '3']);
  });

  it('rejects a channel map whose speaker id is a JSON number', async () => {
    const error = await corpusError(() => parseCandorChannelMap('{"channels": [1e5, "007"]}', 'channel_map.json'));
    expect(error.message).toMatch(/^channel_map\.json: column "channels\.0": /);
    expect(parseCandorChannelMap('{"channels": ["1e5", "007"], "audio": "a.wav"}', 'x')).toEqual({
      channels: ['1e5', '007'],
      audio: 'a.wav',
    });
  });
});

describe('CANDOR malformed transcripts name file, line, row and column', () => {
  const header = 'turn_id,speaker,start,stop,utterance,interval,delta,n_words';
  const cases: { name: string; text: string; message: string }[] = [
    {
      name: 'bad time',
      text: `${header}\n0,1e5,0.5,1.0,hi,,0.5,1\n1,007,1.2.3,2.0,yo,,,1\n`,
      message: 't.csv:3: row 2, column "start": "1.2.3" is not a non-negative decimal number of seconds',
    },
    {
      name: 'negative time',
      text: `${header}\n0,1e5,-0.5,1.0,hi,,,1\n`,
      message: 't.csv:2: row 1, column "start": "-0.5" is not a non-negative decimal number of seconds',
    },
    {
      name: 'stop before start',
      text: `${header}\n0,1e5,2.0,1.0,hi,,,1\n`,
      message: 't.csv:2: row 1, column "stop": stop 1.0 is before start 2.0',
    },
    {
      name: 'wrong column',
      text: 'turn_id,speaker,start,end,utterance\n0,1e5,0,1,hi\n',
      message: 't.csv:1: column "stop": missing column in the header (found: turn_id, speaker, start, end, utterance)',
    },
    {
      name: 'empty speaker',
      text: `${header}\n0,,0,1,hi,,,1\n`,
      message: 't.csv:2: row 1, column "speaker": empty speaker id',
    },
    {
      name: 'row after a multi-line cell',
      text: `${header}\n0,1e5,0,1,"two\nlines",,,2\n1,007,x,2,yo,,,1\n`,
      message: 't.csv:4: row 2, column "start": "x" is not',
    },
  ];
  for (const { name, text, message } of cases) {
    it(name, async () => {
      const error = await corpusError(() => parseCandorTranscript(text, 't.csv', 'cliffhanger'));
      expect(error.message.startsWith(message)).toBe(true);
    });
  }

  it('a row with a different number of cells', async () => {
    const error = await corpusError(() =>
      parseCandorTranscript(`${header}\n0,1e5,0,1,hi,,,1\n1,007,1,2\n`, 't.csv', 'audiophile'),
    );
    expect(error.message).toMatch(/^t\.csv:3: malformed CSV: Invalid Record Length/);
  });

  it('backbiter columns and values', async () => {
    const backbiterHeader =
      'turn_id,speaker,start,stop,utterance,backchannel,backchannel_count,backchannel_speaker,backchannel_start,backchannel_stop';
    expect((await corpusError(() => parseCandorTranscript(`${header}\n`, 'b.csv', 'backbiter'))).message).toMatch(
      /^b\.csv:1: column "backchannel": missing column/,
    );
    expect(
      (
        await corpusError(() =>
          parseCandorTranscript(`${backbiterHeader}\n0,1e5,0,1,hi,yeah,one,007,0.2,0.4\n`, 'b.csv', 'backbiter'),
        )
      ).message,
    ).toBe('b.csv:2: row 1, column "backchannel_count": "one" is not a whole number');
    expect(
      (
        await corpusError(() =>
          parseCandorTranscript(`${backbiterHeader}\n0,1e5,0,1,hi,yeah,1,007,,0.4\n`, 'b.csv', 'backbiter'),
        )
      ).message,
    ).toBe('b.csv:2: row 1, column "backchannel_start": "" is not a non-negative decimal number of seconds');
    expect(
      (
        await corpusError(() =>
          parseCandorTranscript(`${backbiterHeader}\n0,1e5,0,1,hi,yeah,1,,0.2,0.4\n`, 'b.csv', 'backbiter'),
        )
      ).message,
    ).toBe('b.csv:2: row 1, column "backchannel_speaker": a backchannel is listed but its speaker is empty');
  });
});

describe('CANDOR conversation folders', () => {
  let temporary: Awaited<ReturnType<typeof temporaryFolder>>;
  beforeEach(async () => {
    temporary = await temporaryFolder('candor');
  });
  afterEach(() => temporary.remove());

  it('finds the audio and takes the duration from its header', async () => {
    const folder = path.join(temporary.folder, A);
    await cp(path.join(ROOT, A), folder, { recursive: true });
    await writeWavFile(
      path.join(folder, 'processed', `${A}.wav`),
      [toneTrack(2400, 8000, []), toneTrack(2400, 8000, [])],
      8000,
    );
    const recording = await readCandorConversation(folder);
    expect(recording.durationCs).toBe(2400);
    expect(recording.audio).toEqual([
      { path: path.join(folder, 'processed', `${A}.wav`), channel: 0 },
      { path: path.join(folder, 'processed', `${A}.wav`), channel: 1 },
    ]);
    expect(recording.sources).toContain(path.join(folder, 'processed', `${A}.wav`));
  });

  it('names the row of a speaker missing from the channel map, or of a third speaker', async () => {
    const folder = path.join(temporary.folder, A);
    await cp(path.join(ROOT, A), folder, { recursive: true });
    await writeFile(path.join(folder, 'channel_map.json'), '{"channels": ["007", "abc"]}');
    const transcript = path.join(folder, 'transcription', 'transcript_backbiter.csv');
    expect((await corpusError(() => readCandorConversation(folder))).message).toBe(
      `${transcript}:2: row 1, column "speaker": speaker "1e5" is not in ${path.join(folder, 'channel_map.json')} (007, abc)`,
    );
    await rm(path.join(folder, 'channel_map.json'));
    const text = await readFile(transcript, 'utf8');
    await writeFile(transcript, text.replace('2,1e5,9.6', '2,0ff,9.6'));
    expect((await corpusError(() => readCandorConversation(folder))).message).toBe(
      `${transcript}:4: row 3, column "speaker": third speaker "0ff" (the conversation has 1e5 and 007)`,
    );
  });

  it('names a folder without conversations', async () => {
    const error = await corpusError(() => prepareCandor([temporary.folder]));
    expect(error.message).toBe(
      `${temporary.folder}: no CANDOR conversation folder (with transcription/ or transcript_*.csv) inside`,
    );
    await expect(prepareCandor([path.join(temporary.folder, 'missing')])).rejects.toThrow(/CANDOR folder not found/);
  });
});
