import { describe, expect, it } from 'vitest';
import type { SpeechSegment } from '../model/types.ts';
import { AudioArgumentError, placeOnTrackInPlace, quantizeToPcm16 } from './raw-audio.ts';
import { detectSpeechSegments, frameLevelsDbfs, trimToSpeech } from './speech-regions.ts';

const RATE = 16000;

/** Silence with sine bursts at [start, end) seconds, each with its amplitude. */
function bursts(
  totalSeconds: number,
  parts: { start: number; end: number; amplitude?: number }[],
  sampleRate = RATE,
): Float32Array {
  const samples = new Float32Array(Math.round(totalSeconds * sampleRate));
  for (const part of parts) {
    const first = Math.round(part.start * sampleRate);
    const last = Math.round(part.end * sampleRate);
    for (let index = first; index < last; index++)
      samples[index] = (part.amplitude ?? 0.5) * Math.sin((2 * Math.PI * 330 * index) / sampleRate);
  }
  return samples;
}

/** Speech-like test signal: bursts of varying length, level and gap (some near threshold), deterministic. */
function syllableTrain(seed: number, seconds: number): Float32Array {
  let state = seed;
  const random = (): number => {
    state = (state * 16807) % 2147483647;
    return state / 2147483647;
  };
  const parts: { start: number; end: number; amplitude: number }[] = [];
  let time = 0.2;
  while (time < seconds - 0.5) {
    const length = 0.02 + random() * 0.3;
    parts.push({ start: time, end: time + length, amplitude: 10 ** ((-60 + random() * 55) / 20) });
    time += length + random() * 0.35;
  }
  // a fade so levels cross the threshold inside frames, not only at frame edges
  const samples = bursts(seconds, parts);
  for (let index = 0; index < samples.length; index++)
    samples[index] = (samples[index] as number) * (0.6 + 0.4 * Math.sin(index / 997));
  return quantizeToPcm16(samples);
}

describe('detectSpeechSegments', () => {
  it('finds tone bursts: a 0.10 s gap is bridged, a 0.30 s gap splits, a 0.02 s blip and a -60 dBFS tone are ignored', () => {
    const samples = bursts(3, [
      { start: 0.2, end: 0.7 },
      { start: 0.8, end: 1.2 }, // 0.10 s after the first: bridged
      { start: 1.5, end: 2.0 }, // 0.30 s after: split
      { start: 2.3, end: 2.32 }, // 20 ms blip: dropped
      { start: 2.5, end: 2.9, amplitude: 0.0014 }, // about -60 dBFS RMS: below -50
    ]);
    expect(detectSpeechSegments(samples, RATE)).toEqual([
      { start: 20, end: 120 },
      { start: 150, end: 200 },
    ]);
  });

  it('splits at exactly minSilence (0.15 s) and bridges one frame less', () => {
    expect(
      detectSpeechSegments(
        bursts(1.5, [
          { start: 0.1, end: 0.5 },
          { start: 0.65, end: 1.0 },
        ]),
        RATE,
      ),
    ).toHaveLength(2);
    expect(
      detectSpeechSegments(
        bursts(1.5, [
          { start: 0.1, end: 0.5 },
          { start: 0.64, end: 1.0 },
        ]),
        RATE,
      ),
    ).toEqual([{ start: 10, end: 100 }]);
  });

  it('keeps speech of exactly minSpeech (0.03 s) and honours options', () => {
    expect(detectSpeechSegments(bursts(1, [{ start: 0.5, end: 0.53 }]), RATE)).toEqual([{ start: 50, end: 53 }]);
    expect(detectSpeechSegments(bursts(1, [{ start: 0.5, end: 0.53 }]), RATE, { minSpeechSeconds: 0.05 })).toEqual([]);
    const quiet = bursts(1, [{ start: 0.2, end: 0.4, amplitude: 0.0014 }]);
    expect(detectSpeechSegments(quiet, RATE, { thresholdDbfs: -65 })).toEqual([{ start: 20, end: 40 }]);
  });

  it('counts a last partial frame as padded with silence', () => {
    const samples = bursts(1, [{ start: 0.9, end: 1 }]).subarray(0, RATE - 80); // last frame has 80 of 160 samples
    expect(frameLevelsDbfs(samples, RATE)).toHaveLength(100);
    expect(detectSpeechSegments(samples, RATE)).toEqual([{ start: 90, end: 100 }]);
  });

  it('throws when the sample rate is not a multiple of 100 Hz', () => {
    expect(() => detectSpeechSegments(new Float32Array(100), 22050)).toThrow(AudioArgumentError);
    expect(() => detectSpeechSegments(new Float32Array(100), 22050)).toThrow(/multiple of 100/);
  });

  it('is frame-local: an utterance placed at a centisecond-aligned offset in a silent track gives the same segments shifted', () => {
    for (const seed of [1, 7, 42, 1234, 99991]) {
      const utterance = syllableTrain(seed, 4);
      const alone = detectSpeechSegments(utterance, RATE);
      expect(alone.length).toBeGreaterThan(1);
      for (const offsetCentiseconds of [0, 17, 250, 1003]) {
        const track = new Float32Array((offsetCentiseconds + 400 + 300) * (RATE / 100));
        placeOnTrackInPlace(track, utterance, offsetCentiseconds * (RATE / 100));
        expect(detectSpeechSegments(track, RATE)).toEqual(
          alone.map((segment) => ({
            start: segment.start + offsetCentiseconds,
            end: segment.end + offsetCentiseconds,
          })),
        );
      }
    }
  });

  it('is frame-local with several utterances on one track when silences between them are >= minSilence', () => {
    const first = syllableTrain(3, 2);
    const second = syllableTrain(5, 3);
    const track = new Float32Array(800 * (RATE / 100));
    placeOnTrackInPlace(track, first, 100 * (RATE / 100));
    placeOnTrackInPlace(track, second, 400 * (RATE / 100));
    const shift = (segments: SpeechSegment[], by: number) =>
      segments.map((segment) => ({ start: segment.start + by, end: segment.end + by }));
    expect(detectSpeechSegments(track, RATE)).toEqual([
      ...shift(detectSpeechSegments(first, RATE), 100),
      ...shift(detectSpeechSegments(second, RATE), 400),
    ]);
  });
});

describe('trimToSpeech', () => {
  it('cuts exactly at the first start and last end, and re-detecting gives the re-based segments', () => {
    for (const seed of [2, 11, 77]) {
      const samples = syllableTrain(seed, 4);
      const segments = detectSpeechSegments(samples, RATE);
      const trimmed = trimToSpeech(samples, RATE, segments);
      const first = segments[0] as SpeechSegment;
      const last = segments[segments.length - 1] as SpeechSegment;
      expect(trimmed.startCentiseconds).toBe(first.start);
      expect(trimmed.samples.length).toBe((last.end - first.start) * (RATE / 100));
      expect(trimmed.samples[0]).toBe(samples[first.start * (RATE / 100)]);
      expect(trimmed.segments[0]?.start).toBe(0);
      expect(trimmed.segments[trimmed.segments.length - 1]?.end).toBe(last.end - first.start);
      expect(detectSpeechSegments(trimmed.samples, RATE)).toEqual(trimmed.segments);
      const levels = frameLevelsDbfs(trimmed.samples, RATE);
      expect(levels[0]).toBeGreaterThanOrEqual(-50);
      expect(levels[levels.length - 1]).toBeGreaterThanOrEqual(-50);
    }
  });

  it('pads with zeros when the last segment ends in a partial frame', () => {
    const samples = bursts(1, [{ start: 0.5, end: 1 }]).subarray(0, RATE - 40);
    const trimmed = trimToSpeech(samples, RATE, detectSpeechSegments(samples, RATE));
    expect(trimmed.samples.length).toBe(50 * (RATE / 100));
    expect(Array.from(trimmed.samples.subarray(trimmed.samples.length - 40))).toEqual(new Array(40).fill(0));
  });

  it('rejects empty, unsorted or out-of-range segments', () => {
    const samples = new Float32Array(RATE);
    expect(() => trimToSpeech(samples, RATE, [])).toThrow(AudioArgumentError);
    expect(() =>
      trimToSpeech(samples, RATE, [
        { start: 50, end: 60 },
        { start: 10, end: 20 },
      ]),
    ).toThrow(AudioArgumentError);
    expect(() => trimToSpeech(samples, RATE, [{ start: 90, end: 101 }])).toThrow(/beyond/);
  });
});
