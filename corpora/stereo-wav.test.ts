import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedDirectory } from '../pipeline/config.ts';
import type { SpeechSegment } from '../pipeline/model/types.ts';
import { ReferenceCorpusError, validateReferenceRecording } from './reference-recording.ts';
import { energyDetector, temporaryFolder, toneTrack, writeWavFile } from './reference-test-audio.ts';
import { FakeVoiceActivityDetector } from '../pipeline/services/vad/fake-voice-activity-detector.ts';
import {
  createVoiceActivityDetector,
  type VoiceActivityDetector,
} from '../pipeline/services/vad/voice-activity-detector.ts';
import { prepareStereoWav } from './stereo-wav.ts';

const REFERENCE_AUDIO = path.join(sharedDirectory(), 'corpora', 'reference-audio', 'ja');
const RATE = 8000;

describe('prepareStereoWav on generated audio', () => {
  let temporary: Awaited<ReturnType<typeof temporaryFolder>>;
  let folder: string;
  beforeAll(async () => {
    temporary = await temporaryFolder('stereo-wav');
    folder = path.join(temporary.folder, 'calls');
    // Stereo: channel 0 speaks 0.20-0.80 s and 1.20-1.60 s, channel 1 speaks 0.90-1.10 s. Faint crosstalk (-53 dBFS) stays below the detector's -50 dBFS.
    const left = toneTrack(200, RATE, [
      { start: 20, end: 80 },
      { start: 120, end: 160 },
    ]);
    const right = toneTrack(200, RATE, [{ start: 90, end: 110 }]);
    const crosstalk = toneTrack(200, RATE, [{ start: 20, end: 80 }], 0.003);
    for (let index = 0; index < right.length; index += 1)
      right[index] = (right[index] as number) + (crosstalk[index] as number);
    await writeWavFile(path.join(folder, 'dialogue.wav'), [left, right], RATE);
    // A mono pair found by name, of slightly different lengths.
    await writeWavFile(path.join(folder, 'call_0.wav'), [toneTrack(150, RATE, [{ start: 10, end: 50 }])], RATE);
    await writeWavFile(path.join(folder, 'call_1.wav'), [toneTrack(160, RATE, [{ start: 60, end: 140 }])], RATE);
    await writeFile(path.join(folder, 'README.txt'), 'not audio');
  });
  afterAll(() => temporary.remove());

  it('finds the speech of each channel with the injected detector', async () => {
    const detector = energyDetector();
    const recordings = await prepareStereoWav([folder], { detector });
    expect(recordings.map((recording) => recording.id)).toEqual(['call', 'dialogue']);
    expect(detector.calls).toEqual([
      { length: 150 * 80, sampleRate: RATE },
      { length: 160 * 80, sampleRate: RATE },
      { length: 200 * 80, sampleRate: RATE },
      { length: 200 * 80, sampleRate: RATE },
    ]);
    const [call, dialogue] = recordings as [NonNullable<(typeof recordings)[0]>, NonNullable<(typeof recordings)[0]>];
    for (const recording of recordings) validateReferenceRecording(recording);

    expect(dialogue.segments).toEqual({
      0: [
        { start: 20, end: 80 },
        { start: 120, end: 160 },
      ],
      1: [{ start: 90, end: 110 }],
    });
    expect(dialogue.channelSpeakers).toEqual({ 0: 'dialogue:0', 1: 'dialogue:1' });
    expect(dialogue.durationCs).toBe(200);
    expect(dialogue.format).toBe('stereo-wav');
    expect(dialogue.supervisions).toBeUndefined();
    expect(dialogue.audio).toEqual([
      { path: path.join(folder, 'dialogue.wav'), channel: 0 },
      { path: path.join(folder, 'dialogue.wav'), channel: 1 },
    ]);
    expect(dialogue.notes).toEqual([
      'stereo file dialogue.wav: channel 0 = left, channel 1 = right',
      'channel 0: 2 speech segments from voice activity detection (energy), talk 50.0% of the recording',
      'channel 1: 1 speech segments from voice activity detection (energy), talk 10.0% of the recording',
      'no transcripts: no supervisions',
    ]);

    expect(call.segments).toEqual({ 0: [{ start: 10, end: 50 }], 1: [{ start: 60, end: 140 }] });
    expect(call.durationCs).toBe(160);
    expect(call.sources).toEqual([path.join(folder, 'call_0.wav'), path.join(folder, 'call_1.wav')]);
    expect(call.audio).toEqual([
      { path: path.join(folder, 'call_0.wav'), channel: 0 },
      { path: path.join(folder, 'call_1.wav'), channel: 1 },
    ]);
  });

  it('accepts explicit pairs, file lists and speaker names', async () => {
    const recordings = await prepareStereoWav(
      [
        { id: 'pair', files: [path.join(folder, 'call_1.wav'), path.join(folder, 'call_0.wav')] },
        path.join(folder, 'dialogue.wav'),
      ],
      { detector: energyDetector(), channelSpeakers: { dialogue: { 0: 'alice', 1: 'bob' } } },
    );
    expect(recordings.map((recording) => recording.id)).toEqual(['pair', 'dialogue']);
    expect(recordings[0]?.segments).toEqual({ 0: [{ start: 60, end: 140 }], 1: [{ start: 10, end: 50 }] });
    expect(recordings[1]?.channelSpeakers).toEqual({ 0: 'alice', 1: 'bob' });
  });

  it('makes the detector output a valid segment list and notes the fixes', async () => {
    const canned: SpeechSegment[][] = [
      [
        { start: 150, end: 190 },
        { start: 10, end: 30 },
        { start: 30, end: 40 },
        { start: 195, end: 260 },
        { start: 50, end: 50 },
      ],
      [],
    ];
    const detector = new FakeVoiceActivityDetector((_samples, _sampleRate, callIndex) => canned[callIndex] ?? [], true);
    const [recording] = await prepareStereoWav([path.join(folder, 'dialogue.wav')], { detector });
    expect(detector.batchCalls).toBe(1); // both channels in one batch when the detector offers it
    expect(detector.calls).toEqual([
      { sampleCount: 200 * 80, sampleRate: RATE },
      { sampleCount: 200 * 80, sampleRate: RATE },
    ]);
    expect(recording?.segments).toEqual({
      0: [
        { start: 10, end: 40 },
        { start: 150, end: 190 },
        { start: 195, end: 200 },
      ],
      1: [],
    });
    expect(recording?.notes).toContain(
      'channel 0: 1 segments clipped to the recording, 1 empty segments dropped, 1 overlapping or abutting segments merged',
    );
  });

  it('names the file when it is missing, has the wrong channel count, has no partner, or the detector misbehaves', async () => {
    const detector = energyDetector();
    await expect(prepareStereoWav([path.join(folder, 'missing.wav')], { detector })).rejects.toThrow(
      `${path.join(folder, 'missing.wav')}: audio file not found`,
    );
    await expect(prepareStereoWav([path.join(folder, 'call_0.wav')], { detector })).rejects.toThrow(
      `${path.join(folder, 'call_0.wav')}: has 1 channels, expected 2 (one speaker per channel) (a mono file needs a partner: name the two files call_0_0.wav and call_0_1.wav)`,
    );
    await expect(
      prepareStereoWav([{ id: 'x', files: [path.join(folder, 'dialogue.wav'), path.join(folder, 'call_1.wav')] }], {
        detector,
      }),
    ).rejects.toThrow(/dialogue\.wav: has 2 channels, expected 1/);
    const threeChannels = path.join(temporary.folder, 'three.wav');
    await writeWavFile(
      threeChannels,
      [toneTrack(10, RATE, []), toneTrack(10, RATE, []), toneTrack(10, RATE, [])],
      RATE,
    );
    await expect(prepareStereoWav([threeChannels], { detector })).rejects.toThrow(
      /three\.wav: has 3 channels, expected 2/,
    );
    const sameName = path.join(temporary.folder, 'other', 'dialogue.wav');
    await writeWavFile(sameName, [toneTrack(10, RATE, []), toneTrack(10, RATE, [])], RATE);
    const duplicate = await prepareStereoWav([path.join(folder, 'dialogue.wav'), sameName], { detector }).catch(
      (error: unknown) => error,
    );
    expect(duplicate).toBeInstanceOf(ReferenceCorpusError);
    expect((duplicate as Error).message).toBe(`${sameName}: recording id "dialogue" is given twice`);
    const fractional: VoiceActivityDetector = { id: 'fractional', detect: async () => [{ start: 1.5, end: 3 }] };
    await expect(prepareStereoWav([path.join(folder, 'dialogue.wav')], { detector: fractional })).rejects.toThrow(
      /dialogue\.wav: the voice activity detector fractional returned \[1\.5, 3\], not integer centiseconds/,
    );
  });
});

describe('prepareStereoWav on the real Japanese reference audio', () => {
  const engines = [
    { name: 'energy', create: async (): Promise<VoiceActivityDetector> => energyDetector() },
    { name: 'webrtc', create: () => createVoiceActivityDetector('webrtc') },
    { name: 'silero', create: () => createVoiceActivityDetector('silero') },
  ];
  for (const engine of engines) {
    it(`finds speech on both channels of both files, with plausible talk fractions (${engine.name})`, async () => {
      const detector = await engine.create();
      try {
        const recordings = await prepareStereoWav([REFERENCE_AUDIO], { detector });
        expect(recordings.map((recording) => recording.id)).toEqual(['prompt-159', 'prompt-62']);
        for (const recording of recordings) {
          validateReferenceRecording(recording);
          expect(recording.durationCs).toBe(1000);
          expect(
            recording.notes.filter((note) => note.includes(`voice activity detection (${detector.id})`)),
          ).toHaveLength(2);
          const fractions = ([0, 1] as const).map(
            (channel) =>
              recording.segments[channel].reduce((sum, segment) => sum + segment.end - segment.start, 0) /
              recording.durationCs,
          );
          for (const fraction of fractions) {
            expect(fraction).toBeGreaterThan(0.01);
            expect(fraction).toBeLessThan(0.9);
          }
          // Two people in conversation: together they talk a fair part of the time, and mostly not at once.
          expect(fractions[0]! + fractions[1]!).toBeGreaterThan(0.3);
          expect(fractions[0]! + fractions[1]!).toBeLessThan(1.2);
        }
        // prompt-62: the right-hand speaker holds the floor (about three quarters of the time).
        const prompt62 = recordings[1]!;
        const right = prompt62.segments[1].reduce((sum, segment) => sum + segment.end - segment.start, 0);
        expect(right).toBeGreaterThan(700);
      } finally {
        await detector.release?.();
      }
    });
  }
});
