import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RawAudio } from '../../audio/raw-audio.ts';
import { encodeWavPcm16 } from '../../audio/wav.ts';
import { FakeVoiceActivityDetector } from './fake-voice-activity-detector.ts';
import {
  createVoiceActivityDetector,
  detectChannels,
  detectSpeakerFiles,
  detectSpeakerRecordings,
  VOICE_ACTIVITY_ENGINES,
} from './voice-activity-detector.ts';

/** Answers with one segment whose end is the signal's length in centiseconds, so each call can be told apart. */
const lengthAnswer = (samples: Float32Array, sampleRate: number) => [
  { start: 0, end: Math.round((samples.length * 100) / sampleRate) },
];

function silence(channels: number, sampleRate: number, seconds: number): RawAudio {
  return {
    sampleRate,
    channels: Array.from({ length: channels }, () => new Float32Array(Math.round(sampleRate * seconds))),
  };
}

describe('createVoiceActivityDetector', () => {
  it('creates each engine by name', async () => {
    expect(VOICE_ACTIVITY_ENGINES).toEqual(['silero', 'webrtc']);
    for (const engine of VOICE_ACTIVITY_ENGINES) {
      const detector = await createVoiceActivityDetector(engine);
      try {
        expect(detector.id).toBe(engine);
        expect(await detector.detect(new Float32Array(1600), 16000)).toEqual([]);
      } finally {
        await detector.release?.();
      }
    }
  });

  it('passes the engine option block through and rejects unknown names', async () => {
    const webrtc = await createVoiceActivityDetector('webrtc', { mode: 1 });
    expect((webrtc as unknown as { options: { mode: number } }).options.mode).toBe(1);
    await webrtc.release?.();
    await expect(createVoiceActivityDetector('energy' as 'silero')).rejects.toThrow(
      /unknown voice activity engine "energy"/,
    );
  });
});

describe('detectChannels', () => {
  it('maps audio channel 0 and 1 to result channels 0 and 1, batched when the detector can', async () => {
    const audio: RawAudio = { sampleRate: 16000, channels: [new Float32Array(16000), new Float32Array(16000)] };
    const fake = new FakeVoiceActivityDetector(
      (samples, _rate, callIndex) => [{ start: callIndex * 10, end: callIndex * 10 + 5 }],
      true,
    );
    expect(await detectChannels(audio, fake)).toEqual({ 0: [{ start: 0, end: 5 }], 1: [{ start: 10, end: 15 }] });
    expect(fake.batchCalls).toBe(1);
    expect(fake.calls).toEqual([
      { sampleCount: 16000, sampleRate: 16000 },
      { sampleCount: 16000, sampleRate: 16000 },
    ]);
  });

  it('calls detect per channel when the detector cannot batch', async () => {
    const fake = new FakeVoiceActivityDetector([{ start: 1, end: 2 }]);
    expect(fake.detectMany).toBeUndefined();
    expect(await detectChannels(silence(2, 8000, 0.5), fake)).toEqual({
      0: [{ start: 1, end: 2 }],
      1: [{ start: 1, end: 2 }],
    });
    expect(fake.calls).toHaveLength(2);
  });

  it('rejects audio that does not have exactly two channels', async () => {
    await expect(detectChannels(silence(1, 16000, 0.1), new FakeVoiceActivityDetector())).rejects.toThrow(
      /exactly 2 channels.*got 1.*detectSpeakerRecordings/,
    );
    await expect(detectChannels(silence(3, 16000, 0.1), new FakeVoiceActivityDetector())).rejects.toMatchObject({
      failure: 'invalid-audio',
    });
  });
});

describe('one recording per speaker', () => {
  let folder: string;

  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'vad-speaker-files-'));
  });

  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('downmixes each recording and keeps its own length and rate', async () => {
    const fake = new FakeVoiceActivityDetector(lengthAnswer, true);
    const segments = await detectSpeakerRecordings([silence(2, 16000, 1), silence(1, 8000, 2)], fake);
    expect(segments).toEqual({ 0: [{ start: 0, end: 100 }], 1: [{ start: 0, end: 200 }] });
    expect(fake.batchCalls).toBe(0); // different rates: one call each
    expect(fake.calls).toEqual([
      { sampleCount: 16000, sampleRate: 16000 },
      { sampleCount: 16000, sampleRate: 8000 },
    ]);
  });

  it('reads one file per speaker', async () => {
    const first = path.join(folder, 'speaker-a.wav');
    const second = path.join(folder, 'speaker-b.wav');
    await writeFile(first, encodeWavPcm16(silence(1, 16000, 1.5)));
    await writeFile(second, encodeWavPcm16(silence(2, 16000, 1)));
    const fake = new FakeVoiceActivityDetector(lengthAnswer, true);
    expect(await detectSpeakerFiles([first, second], fake)).toEqual({
      0: [{ start: 0, end: 150 }],
      1: [{ start: 0, end: 100 }],
    });
    expect(fake.batchCalls).toBe(1);
    await expect(detectSpeakerFiles([first, path.join(folder, 'missing.wav')], fake)).rejects.toThrow(
      /missing\.wav \(not-found\)/,
    );
  });
});
