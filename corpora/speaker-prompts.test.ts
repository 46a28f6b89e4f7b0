import { cp, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav } from '../pipeline/audio/wav.ts';
import { detectSpeechSegments } from '../pipeline/audio/speech-regions.ts';
import type { ReferenceRecording } from '../pipeline/model/types.ts';
import { sharedDirectory } from '../pipeline/config.ts';
import { readCandorConversation } from './candor.ts';
import { prepareMagicData } from './magicdata.ts';
import { joinTranscript } from './reference-recording.ts';
import { FIXTURES, temporaryFolder, toneTrack, writeSessionAudio, writeWavFile } from './reference-test-audio.ts';
import { prepareRttm } from './rttm-recordings.ts';
import {
  planSpeakerPrompts,
  resolveSpeakerPromptOptions,
  SPEAKER_PROMPT_MANIFEST,
  writeSpeakerPromptPool,
  type PlannedSpeakerPrompt,
} from './speaker-prompts.ts';

const CANDOR_A = '5e0c1b7a-1e5f-4c07-9a3d-0f1e2d3c4b5a';

/** The properties every clip must have, checked against its recording. */
function expectValidClip(clip: PlannedSpeakerPrompt, marginCs = 10): void {
  const duration = clip.end - clip.start;
  expect(duration).toBeGreaterThanOrEqual(300);
  expect(duration).toBeLessThanOrEqual(1000);
  const other = clip.recording.segments[clip.channel === 0 ? 1 : 0];
  for (const segment of other)
    expect(segment.end < clip.start - marginCs || segment.start > clip.end + marginCs).toBe(true);
  const inside = (clip.recording.supervisions ?? []).filter(
    (supervision) =>
      supervision.channel === clip.channel && supervision.start >= clip.start && supervision.end <= clip.end,
  );
  expect(clip.text).toBe(joinTranscript(inside.map((supervision) => supervision.text)));
  expect(clip.supervisions).toEqual(inside);
  expect(inside.every((supervision) => supervision.speaker === clip.speaker)).toBe(true);
  expect(clip.speaker).toBe(clip.recording.channelSpeakers[clip.channel]);
}

describe('speaker prompt pool', () => {
  let temporary: Awaited<ReturnType<typeof temporaryFolder>>;
  let session: ReferenceRecording;
  let candor: ReferenceRecording;
  beforeAll(async () => {
    temporary = await temporaryFolder('speaker-prompts');
    const corpus = path.join(temporary.folder, 'magicdata');
    await cp(path.join(FIXTURES, 'magicdata'), corpus, { recursive: true });
    await writeSessionAudio(corpus);
    session = (await prepareMagicData([corpus], { sessions: ['A0001_S0001'] }))[0] as ReferenceRecording;
    const conversation = path.join(temporary.folder, 'candor', CANDOR_A);
    await cp(path.join(FIXTURES, 'candor', CANDOR_A), conversation, { recursive: true });
    await writeWavFile(
      path.join(conversation, 'processed', `${CANDOR_A}.wav`),
      [toneTrack(2400, 8000, [{ start: 510, end: 930 }]), toneTrack(2400, 8000, [{ start: 52, end: 481 }])],
      8000,
    );
    candor = await readCandorConversation(conversation);
  });
  afterAll(() => temporary.remove());

  it('plans the clips computed by hand on the MagicData session', () => {
    const { clips, skipped } = planSpeakerPrompts([session], { clipsPerSpeaker: null });
    expect(skipped).toEqual([]);
    expect(
      clips.map(({ id, speaker, channel, start, end, text }) => ({ id, speaker, channel, start, end, text })),
    ).toEqual([
      {
        id: 'magicdata-A0001_S0001-0-780-1260',
        speaker: 'G0001',
        channel: 0,
        start: 780,
        end: 1260,
        text: '最近はゴルフを始めました週末に友達と打ちっぱなしに行っています',
      },
      {
        id: 'magicdata-A0001_S0001-0-2450-3000',
        speaker: 'G0001',
        channel: 0,
        start: 2450,
        end: 3000,
        text: 'いいですよ、駅の近くに初心者向けの教室があるので今度一緒に行きましょう',
      },
      // Exactly 3.00 s: the minimum is inclusive. Not merged with 24.50-30.00 (G0002 says はい in the gap).
      {
        id: 'magicdata-A0001_S0001-0-3100-3400',
        speaker: 'G0001',
        channel: 0,
        start: 3100,
        end: 3400,
        text: '楽しみにしています、よろしくお願いします',
      },
      {
        id: 'magicdata-A0001_S0001-1-340-735',
        speaker: 'G0002',
        channel: 1,
        start: 340,
        end: 735,
        text: 'はいこちらこそよろしくお願いします。最近は何をしていますか',
      },
      // Not merged with 18.00-21.50: G0001's うん (17.20-17.60) lies in the gap.
      {
        id: 'magicdata-A0001_S0001-1-1350-1700',
        speaker: 'G0002',
        channel: 1,
        start: 1350,
        end: 1700,
        text: 'ゴルフですか、いいですね。私もやってみたいです',
      },
      {
        id: 'magicdata-A0001_S0001-1-1800-2420',
        speaker: 'G0002',
        channel: 1,
        start: 1800,
        end: 2420,
        text: '初心者向けの教室があれば教えてくださいできれば週末がいいです',
      },
    ]);
    for (const clip of clips) expectValidClip(clip);
  });

  it('keeps the other channel silent with a margin, and takes no clip over untranscribed speech', () => {
    const wide = planSpeakerPrompts([session], { clipsPerSpeaker: null, otherChannelMarginSeconds: 0.25 });
    expect(wide.clips.map((clip) => clip.id)).not.toContain('magicdata-A0001_S0001-1-1350-1700'); // うん starts 0.20 s after it
    for (const clip of wide.clips) expectValidClip(clip, 25);
    // G0002's [LAUGHTER] (12.90-13.30) has a segment but no supervision: no clip of G0002 may cover it.
    const all = planSpeakerPrompts([session], {
      clipsPerSpeaker: null,
      maximumGapSeconds: 5,
      otherChannelMarginSeconds: 0,
    });
    for (const clip of all.clips.filter((candidate) => candidate.channel === 1))
      expect(clip.end <= 1290 || clip.start >= 1330).toBe(true);
  });

  it('keeps the longest clips per speaker and says what it skipped', async () => {
    const rttm = await prepareRttm([
      path.join(sharedDirectory(), 'corpora', 'reference-timing', 'rttm', 'en', '4175.rttm'),
    ]);
    const noAudio = { ...candor, id: 'no-audio' };
    delete noAudio.audio;
    const { clips, skipped } = planSpeakerPrompts([session, candor, ...rttm, noAudio], { clipsPerSpeaker: 2 });
    expect(clips.map((clip) => clip.id)).toEqual([
      `candor-${CANDOR_A}-1-52-481`,
      'magicdata-A0001_S0001-0-780-1260',
      'magicdata-A0001_S0001-0-2450-3000',
      'magicdata-A0001_S0001-1-340-735',
      'magicdata-A0001_S0001-1-1800-2420',
    ]);
    for (const clip of clips) expectValidClip(clip);
    expect(clips[0]?.text).toBe('So, where are you calling from today?');
    expect(skipped).toEqual([
      'rttm 4175: no supervisions (no transcripts)',
      'candor no-audio: no audio for channel 0',
      'candor no-audio: no audio for channel 1',
      'speaker G0001: 1 more clips over the limit of 2 per speaker',
      'speaker G0002: 1 more clips over the limit of 2 per speaker',
    ]);
  });

  it('writes 16 kHz mono clips and a manifest, byte for byte the same twice', async () => {
    const first = path.join(temporary.folder, 'pool-1');
    const second = path.join(temporary.folder, 'pool-2');
    const pool = await writeSpeakerPromptPool([session, candor], first, { clipsPerSpeaker: null });
    await writeSpeakerPromptPool([session, candor], second, { clipsPerSpeaker: null });
    expect(pool.manifestPath).toBe(path.join(first, SPEAKER_PROMPT_MANIFEST));
    const manifest = await readFile(pool.manifestPath, 'utf8');
    expect(manifest).toBe(await readFile(path.join(second, SPEAKER_PROMPT_MANIFEST), 'utf8'));
    const lines = manifest
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(7);
    expect(lines[0]).toEqual({
      id: `candor-${CANDOR_A}-1-52-481`,
      speaker: '1e5',
      corpus: 'candor',
      recording: CANDOR_A,
      start: 0.52,
      end: 4.81,
      text: 'So, where are you calling from today?',
      path: `clips/candor-${CANDOR_A}-1-52-481.wav`,
      durationSeconds: 4.29,
    });
    expect(Object.keys(lines[1] ?? {})).toEqual([
      'id',
      'speaker',
      'corpus',
      'recording',
      'start',
      'end',
      'text',
      'path',
      'durationSeconds',
    ]);
    for (const entry of pool.entries) {
      const bytes = await readFile(path.join(first, entry.path));
      expect(bytes.equals(await readFile(path.join(second, entry.path)))).toBe(true);
      const audio = decodeWav(bytes, entry.path);
      expect(audio.sampleRate).toBe(16000);
      expect(audio.channels).toHaveLength(1);
      expect(audio.channels[0]?.length).toBe(Math.round(entry.durationSeconds * 16000));
      // The clip holds its speaker's speech (the tone) from start to end, not the silence around it.
      const speech = detectSpeechSegments(audio.channels[0] as Float32Array, 16000);
      expect(speech[0]?.start).toBeLessThanOrEqual(1);
      expect(speech.at(-1)?.end).toBeGreaterThanOrEqual(Math.round(entry.durationSeconds * 100) - 1);
    }
  });

  it('skips clips that reach past the end of the audio', async () => {
    const short = path.join(temporary.folder, 'short.wav');
    await writeWavFile(short, [toneTrack(3300, 8000, []), toneTrack(3300, 8000, [])], 8000);
    const recording = {
      ...session,
      audio: [
        { path: short, channel: 0 as const },
        { path: short, channel: 1 as const },
      ],
    };
    const pool = await writeSpeakerPromptPool([recording], path.join(temporary.folder, 'pool-short'), {
      clipsPerSpeaker: null,
    });
    expect(pool.entries).toHaveLength(5);
    expect(pool.skipped).toEqual([`magicdata-A0001_S0001-0-3100-3400: reaches past the end of ${short}`]);
  });

  it('draws the clips per speaker by seed: the same seed the same clips, every candidate left out has a reason', () => {
    const all = planSpeakerPrompts([session], { clipsPerSpeaker: null });
    const draw = (seed: number) => planSpeakerPrompts([session], { clipsPerSpeaker: 1, selectionSeed: seed });
    expect(draw(7).clips.map((clip) => clip.id)).toEqual(draw(7).clips.map((clip) => clip.id));
    const drawn = new Set(
      [0, 1, 2, 3, 4, 5, 6, 7].map((seed) =>
        draw(seed)
          .clips.map((clip) => clip.id)
          .join(','),
      ),
    );
    expect(drawn.size).toBeGreaterThan(1);
    const one = draw(3);
    expect(one.clips).toHaveLength(2);
    for (const clip of one.clips) expect(all.clips.map((candidate) => candidate.id)).toContain(clip.id);
    expect(one.rejected.filter((item) => item.reason === 'over the limit of 1 clips per speaker')).toHaveLength(
      all.clips.length - 2,
    );
    expect(all.rejected.length).toBeGreaterThan(0);
    for (const item of all.rejected)
      expect(item.reason).toMatch(
        /^(shorter than 3 s|longer than 10 s|the other channel speaks within 0.1 s|untranscribed speech of the speaker inside)/,
      );
  });

  it('rejects a clip whose transcript holds the aligner placeholder <unk>', () => {
    // The clip 7.80-12.60 s of G0001 starts with the supervision at 7.80 s.
    const marked = (supervision: { channel: number; start: number }) =>
      supervision.channel === 0 && supervision.start === 780;
    const withUnknown = {
      ...session,
      supervisions: session.supervisions?.map((supervision) =>
        marked(supervision) ? { ...supervision, text: `${supervision.text} <unk>` } : supervision,
      ),
    };
    expect(withUnknown.supervisions?.filter(marked)).toHaveLength(1);
    const plan = planSpeakerPrompts([withUnknown], { clipsPerSpeaker: null });
    expect(plan.clips.map((clip) => clip.id)).not.toContain('magicdata-A0001_S0001-0-780-1260');
    expect(plan.clips.some((clip) => clip.text.includes('<unk>'))).toBe(false);
    expect(
      plan.rejected.some(
        (item) => item.reason.startsWith('the transcript holds the placeholder <unk>') && item.start === 780,
      ),
    ).toBe(true);
  });

  it('checks its options', () => {
    expect(() => resolveSpeakerPromptOptions({ minimumDurationSeconds: 11 })).toThrow(RangeError);
    expect(() => resolveSpeakerPromptOptions({ maximumDurationSeconds: 31 })).toThrow(/30 s prompt limit/);
    expect(() => resolveSpeakerPromptOptions({ clipsPerSpeaker: 0 })).toThrow(RangeError);
    expect(resolveSpeakerPromptOptions({ clipsPerSpeaker: undefined }).clipsPerSpeaker).toBe(3);
  });
});
