import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resample } from '../../audio/resample.ts';
import { detectSpeechSegments } from '../../audio/speech-regions.ts';
import { createSpeechSynthesizer, DEFAULT_VOICES } from '../tts/synthesizer-registry.ts';
import { VoiceActivityOptionsError } from './errors.ts';
import { addWhiteNoiseInPlace } from './testing/test-dialogue.ts';
import {
  createWebRtcVoiceActivityDetector,
  DEFAULT_WEBRTC_VAD_OPTIONS,
  resolveWebRtcVadOptions,
  type WebRtcVoiceActivityDetector,
} from './webrtc-vad.ts';

let detector: WebRtcVoiceActivityDetector;
/** "Which team won the championship last year" (espeak-ng, system voice) with 0.5 s of silence around it. */
let utterance16k: Float32Array;
/** The synthesis at espeak-ng's own 22050 Hz (not a libfvad rate: the detector resamples it). */
let utterance22k: Float32Array;

beforeAll(async () => {
  detector = await createWebRtcVoiceActivityDetector();
  const synthesizer = await createSpeechSynthesizer('espeak-ng');
  const output = await synthesizer.synthesize({
    text: 'Which team won the championship last year',
    language: 'en',
    voice: DEFAULT_VOICES.en!.voices.system,
  });
  const pad = (samples: Float32Array, rate: number): Float32Array => {
    const padded = new Float32Array(samples.length + 2 * Math.round(rate / 2));
    padded.set(samples, Math.round(rate / 2));
    return padded;
  };
  utterance16k = pad((await resample(output.audio, 16000)).channels[0] as Float32Array, 16000);
  utterance22k = pad(output.audio.channels[0] as Float32Array, output.audio.sampleRate);
});

afterAll(async () => {
  await detector.release();
});

describe('WebRtcVoiceActivityDetector.frameDecisions', () => {
  it('gives one 0/1 decision per 10 ms frame, the same on every call', () => {
    const decisions = detector.frameDecisions(utterance16k, 16000);
    expect(decisions.length).toBe(Math.ceil(utterance16k.length / 160));
    expect(decisions.every((value) => value === 0 || value === 1)).toBe(true);
    expect(decisions.some((value) => value === 1)).toBe(true);
    expect([...detector.frameDecisions(utterance16k, 16000)]).toEqual([...decisions]);
    expect(detector.frameDecisions(new Float32Array(16000), 16000).every((value) => value === 0)).toBe(true);
  });

  it('rejects a rate libfvad does not accept', () => {
    expect(() => detector.frameDecisions(utterance22k, 22050)).toThrow(/webrtc.*invalid-audio.*22050/);
  });
});

describe('WebRtcVoiceActivityDetector.detect', () => {
  it('finds one espeak-ng sentence within 50 ms of its level-based boundaries, at 16 kHz and at 22050 Hz', async () => {
    const known = detectSpeechSegments(utterance16k, 16000);
    expect(known).toHaveLength(1);
    for (const [samples, rate] of [
      [utterance16k, 16000],
      [utterance22k, 22050],
    ] as const) {
      const found = await detector.detect(samples, rate);
      expect(found).toHaveLength(1);
      expect(Math.abs((found[0]?.start ?? 0) - (known[0]?.start ?? 0))).toBeLessThanOrEqual(5);
      expect(Math.abs((found[0]?.end ?? 0) - (known[0]?.end ?? 0))).toBeLessThanOrEqual(5);
    }
  });

  it('finds nothing in digital silence or in -60 dBFS white noise (mode 3)', async () => {
    expect(await detector.detect(new Float32Array(32000), 16000)).toEqual([]);
    const noise = new Float32Array(5 * 16000);
    addWhiteNoiseInPlace(noise, -60, 5);
    expect(await detector.detect(noise, 16000)).toEqual([]);
  });

  it('cannot be used after release', async () => {
    const released = await createWebRtcVoiceActivityDetector();
    await released.release();
    expect(() => released.frameDecisions(utterance16k, 16000)).toThrow(/released/);
  });
});

describe('resolveWebRtcVadOptions', () => {
  it('documents the defaults and validates mode and frame length', () => {
    expect(DEFAULT_WEBRTC_VAD_OPTIONS).toMatchObject({
      mode: 3,
      frameMilliseconds: 10,
      threshold: 0.5,
      negativeThreshold: 0.5,
      minSpeechSeconds: 0.1,
      minSilenceSeconds: 0.1,
      speechPadSeconds: 0,
    });
    expect(resolveWebRtcVadOptions({ threshold: 0.9 }).negativeThreshold).toBe(0.9);
    expect(() => resolveWebRtcVadOptions({ mode: 4 as 3 })).toThrow(VoiceActivityOptionsError);
    expect(() => resolveWebRtcVadOptions({ frameMilliseconds: 15 as 10 })).toThrow(/frameMilliseconds 15/);
  });
});
