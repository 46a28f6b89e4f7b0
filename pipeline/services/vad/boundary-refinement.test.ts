import { describe, expect, it } from 'vitest';
import { detectSpeechSegments, frameLevelsDbfs } from '../../audio/speech-regions.ts';
import {
  DEFAULT_BOUNDARY_REFINEMENT_OPTIONS,
  levelSegments,
  noiseFloorDbfs,
  refinementThresholdDbfs,
  refineSpeechBoundaries,
  resolveBoundaryRefinementOptions,
} from './boundary-refinement.ts';
import { VoiceActivityOptionsError } from './errors.ts';
import { addWhiteNoiseInPlace } from './testing/test-dialogue.ts';

const RATE = 16000;
const PER_CENTISECOND = RATE / 100;

/** A signal of `lengthCs` centiseconds with 400 Hz tone stretches (4 whole periods per 10 ms frame, so each frame's RMS is exact). */
function toneSignal(lengthCs: number, stretches: { start: number; end: number; levelDbfs: number }[]): Float32Array {
  const samples = new Float32Array(lengthCs * PER_CENTISECOND);
  for (const stretch of stretches) {
    const amplitude = Math.SQRT2 * 10 ** (stretch.levelDbfs / 20);
    for (let index = stretch.start * PER_CENTISECOND; index < stretch.end * PER_CENTISECOND; index++) {
      samples[index] = amplitude * Math.sin((2 * Math.PI * 400 * index) / RATE);
    }
  }
  return samples;
}

const options = DEFAULT_BOUNDARY_REFINEMENT_OPTIONS;

describe('refineSpeechBoundaries', () => {
  it('moves late or early detector boundaries onto the level edges', () => {
    const samples = toneSignal(300, [{ start: 100, end: 200, levelDbfs: -20 }]);
    expect(refineSpeechBoundaries([{ start: 104, end: 209 }], samples, RATE, options)).toEqual([
      { start: 100, end: 200 },
    ]);
    expect(refineSpeechBoundaries([{ start: 96, end: 190 }], samples, RATE, options)).toEqual([
      { start: 100, end: 200 },
    ]);
  });

  it('keeps a boundary when no level edge lies within maxShiftSeconds', () => {
    const samples = toneSignal(300, [{ start: 100, end: 200, levelDbfs: -20 }]);
    expect(refineSpeechBoundaries([{ start: 125, end: 205 }], samples, RATE, options)).toEqual([
      { start: 125, end: 200 },
    ]);
    expect(
      refineSpeechBoundaries([{ start: 125, end: 205 }], samples, RATE, { ...options, maxShiftSeconds: 0.3 }),
    ).toEqual([{ start: 100, end: 200 }]);
  });

  it('uses -50 dBFS on a quiet channel and noise floor + 10 dB on a noisy one', () => {
    const stretches = [
      { start: 100, end: 200, levelDbfs: -20 },
      { start: 200, end: 210, levelDbfs: -40 }, // a weak tail: speech on a quiet channel, lost in noise on a noisy one
    ];
    const clean = toneSignal(300, stretches);
    expect(refineSpeechBoundaries([{ start: 102, end: 205 }], clean, RATE, options)).toEqual([
      { start: 100, end: 210 },
    ]);

    const noisy = toneSignal(300, stretches);
    addWhiteNoiseInPlace(noisy, -45, 7);
    const levels = frameLevelsDbfs(noisy, RATE);
    const threshold = refinementThresholdDbfs(levels, [{ start: 100, end: 210 }], options);
    expect(threshold).toBeGreaterThan(-36.5);
    expect(threshold).toBeLessThan(-34.5);
    expect(refineSpeechBoundaries([{ start: 102, end: 205 }], noisy, RATE, options)).toEqual([
      { start: 100, end: 200 },
    ]);
  });

  it('merges neighbours split by a weak stretch the level segments cover, but not a real pause', () => {
    const weak = toneSignal(350, [
      { start: 100, end: 150, levelDbfs: -20 },
      { start: 150, end: 165, levelDbfs: -45 },
      { start: 165, end: 250, levelDbfs: -20 },
    ]);
    expect(
      refineSpeechBoundaries(
        [
          { start: 102, end: 152 },
          { start: 170, end: 252 },
        ],
        weak,
        RATE,
        options,
      ),
    ).toEqual([{ start: 100, end: 250 }]);

    const paused = toneSignal(350, [
      { start: 100, end: 150, levelDbfs: -20 },
      { start: 180, end: 250, levelDbfs: -20 },
    ]);
    expect(
      refineSpeechBoundaries(
        [
          { start: 101, end: 153 },
          { start: 182, end: 252 },
        ],
        paused,
        RATE,
        options,
      ),
    ).toEqual([
      { start: 100, end: 150 },
      { start: 180, end: 250 },
    ]);
  });

  it('leaves segments unchanged when the signal has no frame above the threshold, and returns [] for no segments', () => {
    const silent = new Float32Array(300 * PER_CENTISECOND);
    expect(refineSpeechBoundaries([{ start: 10, end: 50 }], silent, RATE, options)).toEqual([{ start: 10, end: 50 }]);
    expect(refineSpeechBoundaries([], silent, RATE, options)).toEqual([]);
  });
});

describe('levelSegments', () => {
  it('equals the clean speech detector (no minimum speech length) on the same signal', () => {
    const samples = toneSignal(400, [
      { start: 20, end: 60, levelDbfs: -20 },
      { start: 70, end: 75, levelDbfs: -48 },
      { start: 80, end: 140, levelDbfs: -35 },
      { start: 150, end: 151, levelDbfs: -10 },
      { start: 200, end: 260, levelDbfs: -55 },
      { start: 300, end: 400, levelDbfs: -25 },
    ]);
    addWhiteNoiseInPlace(samples, -58, 11);
    const levels = frameLevelsDbfs(samples, RATE);
    for (const thresholdDbfs of [-60, -50, -40, -30]) {
      for (const bridgeSeconds of [0, 0.05, 0.15]) {
        expect(levelSegments(levels, thresholdDbfs, Math.round(bridgeSeconds * 100))).toEqual(
          detectSpeechSegments(samples, RATE, { thresholdDbfs, minSilenceSeconds: bridgeSeconds, minSpeechSeconds: 0 }),
        );
      }
    }
  });
});

describe('noiseFloorDbfs', () => {
  it('takes the nearest-rank percentile of the frames outside the segments', () => {
    const levels = Float64Array.from([-80, -70, -10, -10, -60, -50, -40, -30, -20, -90]);
    // Outside [2, 4): -80 -70 -60 -50 -40 -30 -20 -90 -> sorted -90 -80 -70 -60 -50 -40 -30 -20.
    expect(noiseFloorDbfs(levels, [{ start: 2, end: 4 }], 10)).toBe(-90);
    expect(noiseFloorDbfs(levels, [{ start: 2, end: 4 }], 50)).toBe(-60);
    expect(noiseFloorDbfs(levels, [{ start: 0, end: 10 }], 10)).toBe(-Infinity);
  });
});

describe('resolveBoundaryRefinementOptions', () => {
  it('fills the documented defaults and rejects invalid values', () => {
    expect(resolveBoundaryRefinementOptions()).toEqual({
      levelThresholdDbfs: -50,
      noiseFloorMarginDb: 10,
      noiseFloorPercentile: 10,
      bridgeSeconds: 0.15,
      maxShiftSeconds: 0.2,
    });
    expect(() => resolveBoundaryRefinementOptions({ maxShiftSeconds: -0.1 })).toThrow(VoiceActivityOptionsError);
    expect(() => resolveBoundaryRefinementOptions({ noiseFloorPercentile: 120 })).toThrow(/noiseFloorPercentile/);
    expect(() => resolveBoundaryRefinementOptions({ levelThresholdDbfs: Number.NaN })).toThrow(/levelThresholdDbfs/);
  });
});
