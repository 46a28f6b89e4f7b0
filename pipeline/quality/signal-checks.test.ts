import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav, encodeWavPcm16 } from '../audio/wav.ts';
import type { BenchmarkEvent, ChannelEvents } from '../model/types.ts';
import { LoudnessMeasurementError, measureLoudness, parseEbur128Summary } from './loudness.ts';
import {
  checkDialogueSignal,
  loudnessFlags,
  measureClipping,
  measureSilence,
  roleLabelAgreement,
  samplePeakDbfs,
  speechCentisecondsWithin,
} from './signal-checks.ts';
import { DEFAULT_QUALITY_THRESHOLDS, resolveQualityThresholds } from './thresholds.ts';

const RATE = 16000;

function sine(seconds: number, amplitude: number, frequency = 1000, rate = RATE): Float32Array {
  const samples = new Float32Array(Math.round(seconds * rate));
  for (let index = 0; index < samples.length; index++)
    samples[index] = amplitude * Math.sin((2 * Math.PI * frequency * index) / rate);
  return samples;
}

function concat(...parts: Float32Array[]): Float32Array {
  const result = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    result.set(part, offset);
    offset += part.length;
  }
  return result;
}

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'signal-checks-test-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** Writes 16-bit PCM as the dataset does, and returns the path and the decoded audio. */
async function writeWav(name: string, channels: Float32Array[], rate = RATE) {
  const file = path.join(folder, name);
  const bytes = encodeWavPcm16({ channels, sampleRate: rate });
  await writeFile(file, bytes);
  return { file, audio: decodeWav(bytes, file) };
}

describe('clipping', () => {
  it('counts full-scale samples and runs of a clipped sine after 16-bit encoding', async () => {
    // A 100 Hz sine at amplitude 2, hard-clipped to [-1, 1]: |sin| >= 0.5 for 120 of every 180 degrees,
    // so two thirds of the samples sit at full scale, in runs of 160 / 3 ~ 53 samples, 2 runs per period.
    const raw = sine(1, 2, 100);
    for (let index = 0; index < raw.length; index++) raw[index] = Math.max(-1, Math.min(1, raw[index]!));
    const { audio } = await writeWav('clipped.wav', [raw]);
    const clipping = measureClipping(audio.channels[0]!, {
      fullScaleLevel: DEFAULT_QUALITY_THRESHOLDS.fullScaleLevel,
      minimumRunSamples: 3,
    });
    expect(clipping.clippedRuns).toBe(200);
    expect(clipping.fullScaleRatio).toBeGreaterThan(0.66);
    expect(clipping.fullScaleRatio).toBeLessThan(0.68);
    expect(clipping.longestRunSamples).toBeGreaterThanOrEqual(53);
    expect(clipping.longestRunSamples).toBeLessThanOrEqual(55);
  });

  it('does not call a clean sine or an isolated full-scale sample clipping', () => {
    const clean = sine(1, 0.5);
    expect(measureClipping(clean, { fullScaleLevel: 32767 / 32768, minimumRunSamples: 3 })).toEqual({
      fullScaleSamples: 0,
      fullScaleRatio: 0,
      clippedRuns: 0,
      longestRunSamples: 0,
    });
    clean[100] = 1;
    clean[101] = -1;
    const single = measureClipping(clean, { fullScaleLevel: 32767 / 32768, minimumRunSamples: 3 });
    expect(single).toMatchObject({ fullScaleSamples: 2, clippedRuns: 0, longestRunSamples: 2 });
    expect(
      measureClipping(clean, { fullScaleLevel: 32767 / 32768, minimumRunSamples: 3 }, { start: 0, end: 100 })
        .fullScaleSamples,
    ).toBe(0);
  });
});

describe('silence ratio', () => {
  it('is the share of 10 ms frames below the threshold', () => {
    const signal = concat(
      sine(0.3, 0.1),
      new Float32Array(RATE * 0.5),
      sine(0.2, 0.1),
      new Float32Array(RATE * 0.25).fill(0.001),
    );
    // 0.001 = -60 dBFS is silent at -50 dBFS: silent = 0.5 + 0.25 of 1.25 s.
    expect(measureSilence(signal, RATE, -50)).toEqual({ frames: 125, silentFrames: 75, silenceRatio: 0.6 });
    expect(measureSilence(signal, RATE, -50, { start: 0, end: RATE * 0.3 }).silenceRatio).toBe(0);
    expect(measureSilence(new Float32Array(0), RATE, -50).silenceRatio).toBe(0);
  });

  it('works at rates that are not multiples of 100 Hz', () => {
    const rate = 22050;
    const signal = concat(sine(0.5, 0.2, 440, rate), new Float32Array(rate / 2));
    const result = measureSilence(signal, rate, -50);
    expect(result.silenceRatio).toBeCloseTo(0.5, 1);
  });
});

describe('EBU R 128 loudness (ffmpeg ebur128)', () => {
  it('measures a -23 LUFS calibrated 1 kHz tone within 0.5 LU, and a silent channel as null', async () => {
    // BS.1770: a 1 kHz sine at 0 dBFS peak in one channel reads -3.01 LUFS, so amplitude 10^(-19.99/20) ~ 0.1 reads -23 LUFS.
    const amplitude = 10 ** ((-23 + 3.01) / 20);
    const { file } = await writeWav('tone.wav', [sine(5, amplitude), new Float32Array(5 * RATE)]);
    const tone = await measureLoudness(file, { channel: 0 });
    expect(Math.abs(tone.integratedLufs! - -23)).toBeLessThanOrEqual(0.5);
    expect(tone.truePeakDbtp!).toBeCloseTo(20 * Math.log10(amplitude), 0);
    const silent = await measureLoudness(file, { channel: 1 });
    expect(silent).toEqual({ integratedLufs: null, truePeakDbtp: null, loudnessRangeLu: 0 });
    const whole = await measureLoudness(file);
    expect(Math.abs(whole.integratedLufs! - -23)).toBeLessThanOrEqual(0.5);
    expect(loudnessFlags(tone, DEFAULT_QUALITY_THRESHOLDS)).toEqual([]);
    expect(
      loudnessFlags({ integratedLufs: -30, truePeakDbtp: -0.5, loudnessRangeLu: 0 }, DEFAULT_QUALITY_THRESHOLDS),
    ).toEqual(['loudness-off-target', 'true-peak-over-limit']);
    expect(loudnessFlags(silent, DEFAULT_QUALITY_THRESHOLDS)).toEqual(['channel-silent']);
    await expect(measureLoudness(file, { channel: 5 })).rejects.toThrow(
      /cannot measure channel 5: the file has 2 channels/,
    );
    await expect(measureLoudness(path.join(folder, 'missing.wav'))).rejects.toThrow(LoudnessMeasurementError);
  });

  it('parses the last of the summaries ffmpeg prints', () => {
    const probe =
      '[Parsed_ebur128_1 @ 0x1] Summary:\n\n  Integrated loudness:\n    I:         -70.0 LUFS\n    Threshold:   0.0 LUFS\n\n  Loudness range:\n    LRA:         0.0 LU\n    Threshold:   0.0 LUFS\n    LRA low:     0.0 LUFS\n    LRA high:    0.0 LUFS\n\n  True peak:\n    Peak:       -inf dBFS\n';
    const real = probe
      .replace('-70.0 LUFS\n    Threshold:   0.0', '-23.4 LUFS\n    Threshold: -33.4')
      .replace('LRA:         0.0', 'LRA:         4.2')
      .replace('-inf dBFS', ' -3.7 dBFS');
    expect(parseEbur128Summary(`${probe}Stream mapping:\n${real}`)).toEqual({
      integratedLufs: -23.4,
      truePeakDbtp: -3.7,
      loudnessRangeLu: 4.2,
    });
    expect(parseEbur128Summary(probe)).toEqual({ integratedLufs: null, truePeakDbtp: null, loudnessRangeLu: 0 });
    expect(() => parseEbur128Summary('no summary')).toThrow(LoudnessMeasurementError);
  });
});

describe('events-based speech time and role/label agreement', () => {
  const events: BenchmarkEvent[] = [
    { event: 'TURN', start: 100, end: 400 },
    { event: 'SHORTPAUSE', start: 200, end: 230 },
    { event: 'BC', start: 500, end: 560 },
    { event: 'TURN_SHIFT', start: 90, end: 100 },
  ];
  it('sums TURN and BC inside the span minus pauses', () => {
    expect(speechCentisecondsWithin(events, 100, 400)).toBe(270);
    expect(speechCentisecondsWithin(events, 0, 1000)).toBe(330);
    expect(speechCentisecondsWithin(events, 150, 210)).toBe(50);
  });
  it('flags questions and answers labelled BC, and backchannels labelled TURN', () => {
    expect(roleLabelAgreement('answer', events, 100, 400)).toBe('agrees');
    expect(roleLabelAgreement('answer', events, 500, 560)).toBe('labelled-bc-whole');
    expect(roleLabelAgreement('question', events, 100, 560)).toBe('labelled-bc-part');
    expect(roleLabelAgreement('backchannel', events, 500, 560)).toBe('agrees');
    expect(roleLabelAgreement('backchannel', events, 100, 400)).toBe('labelled-turn');
    expect(roleLabelAgreement('answer', events, 700, 800)).toBe('no-speech');
  });
});

describe('checkDialogueSignal', () => {
  it('measures a two-channel synthetic dialogue per utterance and per channel', async () => {
    // user (channel 1) speaks 0.5-2.5 s, system (channel 0) answers 3.0-6.0 s with a clipped stretch,
    // then a 0.6 s answer labelled BC at 6.5-7.1 s.
    const seconds = 8;
    const channel0 = new Float32Array(seconds * RATE);
    const channel1 = new Float32Array(seconds * RATE);
    channel1.set(sine(2, 0.1), 0.5 * RATE);
    channel0.set(sine(3, 0.1), 3 * RATE);
    channel0.fill(1, 4 * RATE, 4 * RATE + 10);
    channel0.set(sine(0.6, 0.1), 6.5 * RATE);
    const { file, audio } = await writeWav('dialogue.wav', [channel0, channel1]);
    const events: ChannelEvents = {
      0: [
        { event: 'TURN_SHIFT', start: 250, end: 300 },
        { event: 'TURN', start: 300, end: 600 },
        { event: 'BC', start: 650, end: 710 },
      ],
      1: [{ event: 'TURN', start: 50, end: 250 }],
    };
    const checks = await checkDialogueSignal(
      {
        file,
        audio,
        language: 'en',
        events,
        utterances: [
          {
            index: 0,
            role: 'user',
            kind: 'question',
            channel: 1,
            start: 0.5,
            end: 2.5,
            spokenText: 'When was the Eiffel Tower built?',
          },
          {
            index: 1,
            role: 'system',
            kind: 'answer',
            channel: 0,
            start: 3,
            end: 6,
            spokenText: 'It was built between eighteen eighty-seven and eighteen eighty-nine.',
          },
          { index: 2, role: 'system', kind: 'answer', channel: 0, start: 6.5, end: 7.1, spokenText: 'Yes.' },
        ],
      },
      resolveQualityThresholds(),
    );
    expect(checks.durationSeconds).toBe(8);
    // Speech 0.5-2.5, 3.0-6.0, 6.5-7.1 s: dead air 0.5 + 0.5 + 0.5 + 0.9 = 2.4 of 8 s.
    expect(checks.mutualSilenceRatio).toBe(0.3);
    expect(checks.channels.map((channel) => channel.flags)).toEqual([['clipping', 'true-peak-over-limit'], []]);
    // 2 s of the -23 LUFS tone: 400 ms blocks at its edges overlap silence, so slightly below -23.
    expect(Math.abs(checks.channels[1]!.loudness!.integratedLufs! + 23)).toBeLessThanOrEqual(1);
    const [question, answer, short] = checks.utterances;
    // "When was the Eiffel Tower built" = 1+1+1+2+2+1 = 8 syllables in 2 s of speech.
    expect(question).toMatchObject({
      units: 8,
      unit: 'syllable',
      speechSeconds: 2,
      speechRate: 4,
      roleLabel: 'agrees',
      flags: [],
    });
    expect(answer!.clipping.clippedRuns).toBe(1);
    expect(answer!.flags).toContain('clipping');
    expect(answer!.samplePeakDbfs).toBe(0);
    expect(short).toMatchObject({ roleLabel: 'labelled-bc-whole', units: 1 });
    expect(short!.flags).toEqual(['speech-rate-low', 'labelled-bc']);
    expect(checks.flagCounts).toEqual({
      clipping: 2,
      'labelled-bc': 1,
      'speech-rate-low': 1,
      'true-peak-over-limit': 1,
    });
    expect(checks.speechRateByRole.user).toEqual({ units: 8, speechSeconds: 2, speechRate: 4 });
    expect(samplePeakDbfs(new Float32Array(4))).toBeNull();
    const again = await checkDialogueSignal(
      { file, audio, language: 'en', events, utterances: [] },
      resolveQualityThresholds(),
      { measureLoudness: false },
    );
    expect(again.programmeLoudness).toBeNull();
    expect(again.channels[0]!.loudness).toBeNull();
  });
});

describe('thresholds', () => {
  it('fills defaults and rejects nonsense', () => {
    expect(resolveQualityThresholds({ targetLoudnessLufs: -16 }).targetLoudnessLufs).toBe(-16);
    expect(
      resolveQualityThresholds({ speechRate: { en: { minimum: 1, maximum: 9, source: 'test' } } }).speechRate.ja,
    ).toEqual(DEFAULT_QUALITY_THRESHOLDS.speechRate.ja);
    expect(() => resolveQualityThresholds({ maximumUtteranceSilenceRatio: 2 })).toThrow(RangeError);
    expect(() => resolveQualityThresholds({ minimumClippingRunSamples: 0 })).toThrow(RangeError);
    expect(() => resolveQualityThresholds({ speechRate: { en: { minimum: 9, maximum: 1, source: 'x' } } })).toThrow(
      RangeError,
    );
  });
});
