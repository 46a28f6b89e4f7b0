import { describe, expect, it } from 'vitest';
import { VoiceActivityOptionsError } from './errors.ts';
import {
  defaultNegativeThreshold,
  resolveSpeechTimestampOptions,
  sampleSegmentsToCentiseconds,
  SILERO_REFERENCE_TIMESTAMP_OPTIONS,
  speechSampleSegments,
  type SpeechTimestampOptions,
} from './speech-timestamps.ts';

const RATE = 16000;
const FRAME = 512;
/** 0.1 s = 1600 samples of silence needed to end speech; speech must be longer than 1600 samples; no pad. */
const OPTIONS: SpeechTimestampOptions = {
  threshold: 0.5,
  negativeThreshold: 0.35,
  minSpeechSeconds: 0.1,
  minSilenceSeconds: 0.1,
  speechPadSeconds: 0,
};

/** Probabilities from a compact pattern: `#` = 0.9, `+` = 0.4 (between the thresholds), `.` = 0.1. */
function pattern(text: string): number[] {
  return [...text].map((character) => (character === '#' ? 0.9 : character === '+' ? 0.4 : 0.1));
}

describe('speechSampleSegments (Silero get_speech_timestamps steps)', () => {
  it('starts at the first frame >= threshold and ends at the first frame < negative threshold once the silence lasted minSilence', () => {
    // Speech frames 2-6; silence from frame 7 (3584); at frame 11 the silence has lasted 2048 >= 1600 samples.
    const segments = speechSampleSegments(pattern('..#####.......'), FRAME, 14 * FRAME, RATE, OPTIONS);
    expect(segments).toEqual([{ startSample: 2 * FRAME, endSample: 7 * FRAME }]);
  });

  it('bridges silences shorter than minSilence and keeps hysteresis between the two thresholds', () => {
    // A 3-frame dip (1536 < 1600 samples) is bridged; `+` frames neither start nor end speech.
    expect(speechSampleSegments(pattern('.####...####......'), FRAME, 18 * FRAME, RATE, OPTIONS)).toEqual([
      { startSample: FRAME, endSample: 12 * FRAME },
    ]);
    expect(speechSampleSegments(pattern('.++++++.....'), FRAME, 12 * FRAME, RATE, OPTIONS)).toEqual([]);
    expect(speechSampleSegments(pattern('.####++++++......'), FRAME, 17 * FRAME, RATE, OPTIONS)).toEqual([
      { startSample: FRAME, endSample: 11 * FRAME },
    ]);
  });

  it('splits only once a silent frame starts minSilence or more after the possible end (as in Python)', () => {
    // Four silent frames (2048 samples) are bridged: the 4th silent frame starts only 1536 < 1600 samples after the possible end.
    expect(speechSampleSegments(pattern('.####....####'), FRAME, 13 * FRAME, RATE, OPTIONS)).toEqual([
      { startSample: FRAME, endSample: 13 * FRAME },
    ]);
    // Five silent frames: the 5th starts 2048 >= 1600 samples after the possible end, so the segment ends there.
    expect(speechSampleSegments(pattern('.####.....####.....'), FRAME, 19 * FRAME, RATE, OPTIONS)).toEqual([
      { startSample: FRAME, endSample: 5 * FRAME },
      { startSample: 10 * FRAME, endSample: 14 * FRAME },
    ]);
  });

  it('drops segments not longer than minSpeech (strictly longer are kept, as in Python)', () => {
    const options = { ...OPTIONS, minSpeechSeconds: (3 * FRAME) / RATE };
    expect(speechSampleSegments(pattern('.###.....'), FRAME, 9 * FRAME, RATE, options)).toEqual([]);
    expect(speechSampleSegments(pattern('.####.....'), FRAME, 10 * FRAME, RATE, options)).toEqual([
      { startSample: FRAME, endSample: 5 * FRAME },
    ]);
  });

  it('ends speech still open at the end of the audio at the audio length, or at its marked possible end', () => {
    const total = 6 * FRAME - 100;
    expect(speechSampleSegments(pattern('.#####'), FRAME, total, RATE, OPTIONS)).toEqual([
      { startSample: FRAME, endSample: total },
    ]);
    // The silence at the end (2 frames) is shorter than minSilence: the segment ends where the silence began.
    expect(speechSampleSegments(pattern('.#####..'), FRAME, 8 * FRAME, RATE, OPTIONS)).toEqual([
      { startSample: FRAME, endSample: 6 * FRAME },
    ]);
  });

  it('pads both sides, splitting a silence shorter than twice the pad between the neighbours', () => {
    const options = { ...OPTIONS, speechPadSeconds: FRAME / RATE, minSpeechSeconds: 0 };
    // Segments [512, 2560) and [5120, 7168 = end of audio): silence 2560 >= 2 * 512 -> a full pad each side, clamped to the audio.
    expect(speechSampleSegments(pattern('.####.....####'), FRAME, 14 * FRAME, RATE, options)).toEqual([
      { startSample: 0, endSample: 5 * FRAME + FRAME },
      { startSample: 10 * FRAME - FRAME, endSample: 14 * FRAME },
    ]);
    // A pad of 1600 samples: 2560 < 3200, so each neighbour gets half the silence (1280 samples) and they touch.
    const wide = { ...options, speechPadSeconds: 0.1 };
    expect(speechSampleSegments(pattern('.####.....####.....'), FRAME, 19 * FRAME, RATE, wide)).toEqual([
      { startSample: 0, endSample: 5 * FRAME + 1280 },
      { startSample: 10 * FRAME - 1280, endSample: 14 * FRAME + 1600 },
    ]);
  });

  it('returns nothing for no frames or all silence', () => {
    expect(speechSampleSegments([], FRAME, 0, RATE, OPTIONS)).toEqual([]);
    expect(speechSampleSegments(pattern('..........'), FRAME, 10 * FRAME, RATE, OPTIONS)).toEqual([]);
  });
});

describe('sampleSegmentsToCentiseconds', () => {
  it('rounds each position to the nearest centisecond (160 samples at 16 kHz)', () => {
    expect(sampleSegmentsToCentiseconds([{ startSample: 512, endSample: 3584 }], RATE)).toEqual([
      { start: 3, end: 22 },
    ]);
    // 80 samples = 0.5 cs rounds up to 1; 239 samples = 1.49 cs rounds to 1: empty, dropped.
    expect(sampleSegmentsToCentiseconds([{ startSample: 80, endSample: 239 }], RATE)).toEqual([]);
    expect(sampleSegmentsToCentiseconds([{ startSample: 79, endSample: 240 }], RATE)).toEqual([{ start: 0, end: 2 }]);
  });

  it('merges segments that touch after rounding and drops empty ones', () => {
    expect(
      sampleSegmentsToCentiseconds(
        [
          { startSample: 0, endSample: 1000 },
          { startSample: 1010, endSample: 2000 },
          { startSample: 3000, endSample: 3010 },
          { startSample: 4000, endSample: 4800 },
        ],
        RATE,
      ),
    ).toEqual([
      { start: 0, end: 13 },
      { start: 25, end: 30 },
    ]);
  });
});

describe('resolveSpeechTimestampOptions', () => {
  it('fills gaps from the defaults and keeps Silero reference values documented', () => {
    expect(resolveSpeechTimestampOptions({}, SILERO_REFERENCE_TIMESTAMP_OPTIONS)).toEqual(
      SILERO_REFERENCE_TIMESTAMP_OPTIONS,
    );
    expect(SILERO_REFERENCE_TIMESTAMP_OPTIONS).toEqual({
      threshold: 0.5,
      negativeThreshold: 0.35,
      minSpeechSeconds: 0.25,
      minSilenceSeconds: 0.1,
      speechPadSeconds: 0.03,
    });
  });

  it('derives the negative threshold from a given threshold by Silero rule max(threshold - 0.15, 0.01)', () => {
    expect(resolveSpeechTimestampOptions({ threshold: 0.7 }, OPTIONS).negativeThreshold).toBeCloseTo(0.55, 12);
    expect(defaultNegativeThreshold(0.1)).toBe(0.01);
    expect(resolveSpeechTimestampOptions({ threshold: 0.7, negativeThreshold: 0.2 }, OPTIONS).negativeThreshold).toBe(
      0.2,
    );
  });

  it('rejects values out of range, naming the setting', () => {
    expect(() => resolveSpeechTimestampOptions({ threshold: 1.5 }, OPTIONS)).toThrow(VoiceActivityOptionsError);
    expect(() => resolveSpeechTimestampOptions({ threshold: 0.5, negativeThreshold: 0.6 }, OPTIONS)).toThrow(
      /negativeThreshold 0.6 is above threshold 0.5/,
    );
    expect(() => resolveSpeechTimestampOptions({ minSilenceSeconds: -1 }, OPTIONS)).toThrow(/minSilenceSeconds/);
    expect(() => resolveSpeechTimestampOptions({ speechPadSeconds: Number.NaN }, OPTIONS)).toThrow(/speechPadSeconds/);
  });
});
