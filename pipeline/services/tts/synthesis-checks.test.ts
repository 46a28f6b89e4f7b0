import { describe, expect, it } from 'vitest';
import { createVoiceActivityDetector } from '../vad/voice-activity-detector.ts';
import {
  checkSynthesizedSpeech,
  DEFAULT_SPEECH_RATE_BOUNDS,
  endsAbruptly,
  energySpeechDetector,
  plausibleDurationRange,
  resolveSynthesisCheckOptions,
  SpeechRateMonitor,
  speechActivityDetectorFrom,
  spokenLength,
  trimTail,
} from './synthesis-checks.ts';
import { loopbackSpeech, steadyNoise } from './testing/loopback-speech.ts';

const RATE = 22050; // not a multiple of 100: the checks must not need one

/** Syllable-like speech stand-in: a 180 Hz tone whose level swings at 4 Hz, `seconds` long. */
function syllables(seconds: number, sampleRate = RATE): Float32Array {
  const samples = new Float32Array(Math.round(seconds * sampleRate));
  for (let index = 0; index < samples.length; index++) {
    const time = index / sampleRate;
    const envelope = Math.sin(Math.PI * ((time * 4) % 1)) ** 2;
    samples[index] = 0.3 * envelope * Math.sin(2 * Math.PI * 180 * time);
  }
  return samples;
}

function join(...parts: Float32Array[]): Float32Array {
  const joined = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let position = 0;
  for (const part of parts) {
    joined.set(part, position);
    position += part.length;
  }
  return joined;
}

const silence = (seconds: number): Float32Array => new Float32Array(Math.round(seconds * RATE));

describe('spoken length and plausible durations', () => {
  it('counts letters (digits as 4) for English and morae for Japanese, with pauses inside the text', async () => {
    expect(await spokenLength('Hello there, how are you? In 1889.', 'en')).toEqual({
      units: 5 + 5 + 3 + 3 + 3 + 2 + 16,
      unit: 'letters',
      pauses: 2,
    });
    expect(await spokenLength('今日は、いい天気です。', 'ja')).toEqual({
      units: 2 + 1 + 2 + 3 + 2,
      unit: 'morae',
      pauses: 1,
    });
  });

  it('derives the range from the language bounds', () => {
    const range = plausibleDurationRange({ units: 48, unit: 'letters', pauses: 1 }, DEFAULT_SPEECH_RATE_BOUNDS.en!);
    expect(range.minimumSeconds).toBeCloseTo(2, 6);
    expect(range.typicalSeconds).toBeCloseTo(48 / 13.5, 6);
    expect(range.maximumSeconds).toBeCloseTo(48 / 5 + 0.6 + 1, 6);
  });
});

describe('tail trimming', () => {
  it('cuts trailing silence and keeps a 50 ms margin', async () => {
    const trimmed = await trimTail(join(syllables(2), silence(3)), RATE, 2);
    expect(trimmed.removed).toEqual(['silence']);
    expect(trimmed.samples.length / RATE).toBeGreaterThan(1.9);
    expect(trimmed.samples.length / RATE).toBeLessThan(2.1);
  });

  it('cuts a steady noise tail that an energy threshold would call speech', async () => {
    const noisy = join(syllables(2), steadyNoise(Math.round(1.5 * RATE), -42));
    expect((await energySpeechDetector()(noisy, RATE)).at(-1)?.endSeconds).toBeGreaterThan(3.4);
    const trimmed = await trimTail(noisy, RATE, 2);
    expect(trimmed.removed).toEqual(['noise']);
    expect(trimmed.samples.length / RATE).toBeLessThan(2.1);
  });

  it('cuts a short burst after a long gap once the text is covered, and keeps it otherwise', async () => {
    const withBurst = join(syllables(2), silence(1.2), syllables(0.5), silence(0.2));
    const cut = await trimTail(withBurst, RATE, 2);
    expect(cut.removed).toEqual(['hallucination']);
    expect(cut.samples.length / RATE).toBeLessThan(2.1);
    const kept = await trimTail(withBurst, RATE, 4); // the text needs about 4 s: the burst may be its end
    expect(kept.removed).toEqual(['silence']);
    expect(kept.samples.length / RATE).toBeGreaterThan(3.6);
  });

  it('leaves clean speech alone', async () => {
    const clean = join(silence(0.1), syllables(1.5), silence(0.04));
    const trimmed = await trimTail(clean, RATE, 1.5);
    expect(trimmed.removed).toEqual([]);
    expect(trimmed.samples.length).toBe(clean.length);
  });

  it('tells an audio cut inside speech from one that ends on silence', () => {
    const speech = syllables(1.1);
    expect(endsAbruptly(speech.subarray(0, Math.round(0.875 * RATE)), RATE)).toBe(true); // at a syllable's loudest point
    expect(endsAbruptly(join(speech, silence(0.1)), RATE)).toBe(false);
  });
});

describe('checkSynthesizedSpeech', () => {
  const text = 'This sentence has exactly forty eight letters in it.'; // 42 letters
  it('accepts plausible speech and reports its rate', async () => {
    const check = await checkSynthesizedSpeech(join(syllables(3.1), silence(0.3)), RATE, text, 'en');
    expect(check.verdict).toBe('plausible');
    expect(check.unitsPerSecond).toBeGreaterThan(12);
    expect(check.unitsPerSecond).toBeLessThan(15);
    expect(check.tempo).toBeCloseTo(check.unitsPerSecond / 13.5, 6);
  });

  it('flags speech far shorter than the text as truncated, and a loud last frame as cut', async () => {
    expect((await checkSynthesizedSpeech(join(syllables(1.0), silence(0.2)), RATE, text, 'en')).verdict).toBe(
      'truncated',
    );
    const cut = await checkSynthesizedSpeech(syllables(2.6).subarray(0, Math.round(2.38 * RATE)), RATE, text, 'en');
    expect(cut.abruptEnd).toBe(true);
    expect(cut.verdict).toBe('truncated');
  });

  it('flags speech far longer than the text as runaway, and silence as no speech', async () => {
    expect((await checkSynthesizedSpeech(syllables(14), RATE, text, 'en')).verdict).toBe('runaway');
    expect((await checkSynthesizedSpeech(silence(2), RATE, text, 'en')).verdict).toBe('no-speech');
  });
});

describe('SpeechRateMonitor', () => {
  it('concludes only over a full window, from the median', () => {
    const monitor = new SpeechRateMonitor({ windowSize: 3 });
    monitor.record(0.66, 2);
    monitor.record(0.7, 2);
    expect(monitor.assess()).toBeNull();
    monitor.record(1.2, 2);
    expect(monitor.assess()).toEqual({ medianTempoRatio: 0.7, count: 3, plausible: false });
    monitor.record(1.0, 2);
    monitor.record(0.95, 2);
    expect(monitor.assess()).toEqual({ medianTempoRatio: 1.0, count: 3, plausible: true });
    monitor.record(Number.NaN, 2);
    expect(monitor.assess()?.count).toBe(3);
    monitor.record(0.5, 1.4); // shorter than minimumTypicalSeconds (1.5 s): not looked at
    monitor.record(0.5, 0.3);
    expect(monitor.assess()).toEqual({ medianTempoRatio: 1.0, count: 3, plausible: true });
  });

  // The 26 utterances of build-services.test.ts's first dialogue (espeak-ng through the CosyVoice2
  // loopback server) with the tempo ratios measured there. Counted all, 8 of them completing in a row
  // had a median of 0.72 and quarantined correct speech; the short ones (backchannels, "Yes, it was.",
  // the padded "And, …" forms) are the slow ones.
  const measured: [string, number][] = [
    ['Who designed it?', 0.94],
    ['It was between eighteen eighty-seven and eighteen eighty-nine.', 1.208],
    ["It was Maurice Koechlin and Émile Nouguier, engineers working for Gustave Eiffel's company.", 1.04],
    ['When was the eiffel tower built?', 1.042],
    ['And, who designed it?', 0.724],
    ['How tall is it?', 0.887],
    ['Was it the tallest structure,', 1.049],
    ["It's three hundred thirty meters.", 1.052],
    ['in the world when it opened?', 1.144],
    ['And, how tall is it?', 0.678],
    ['Yes, it was.', 0.482],
    ['Until when?', 0.717],
    ['Until nineteen thirty, when the Chrysler Building in New York was completed.', 1.04],
    ['How many people visit it each year?', 0.952],
    ["It's about six million.", 0.954],
    ['And, Until when?', 0.585],
    ['Which river flows past it?', 0.918],
    ["It's the Seine.", 0.971],
    ['How long is that river?', 0.968],
    ["It's seven hundred seventy-seven kilometers.", 0.953],
    ["Well, it's the Seine.", 0.788],
    ['uh-huh', 0.828],
    ['mm-hmm', 0.552],
    ['yeah', 0.719],
    ['right', 0.85],
    ['okay', 0.599],
  ];

  it('reaches no false verdict on that dialogue in any completion order, and still catches a wrong sample rate', async () => {
    const typical = await Promise.all(
      measured.map(
        async ([text]) =>
          plausibleDurationRange(await spokenLength(text, 'en'), DEFAULT_SPEECH_RATE_BOUNDS.en!).typicalSeconds,
      ),
    );
    // the worst order: the slowest first
    const slowestFirst = measured
      .map(([, ratio], index) => ({ ratio, seconds: typical[index]! }))
      .sort((a, b) => a.ratio - b.ratio);
    const monitor = new SpeechRateMonitor();
    const verdicts: boolean[] = [];
    for (const { ratio, seconds } of slowestFirst) {
      monitor.record(ratio, seconds);
      const assessment = monitor.assess();
      if (assessment) verdicts.push(assessment.plausible);
    }
    expect(verdicts.length).toBeGreaterThan(0);
    expect(verdicts.every((plausible) => plausible)).toBe(true);
    // counting the short ones, the same order concludes wrongly (what the threshold is for)
    const counted = new SpeechRateMonitor({ minimumTypicalSeconds: 0 });
    for (const { ratio } of slowestFirst.slice(0, 8)) counted.record(ratio, 2);
    expect(counted.assess()?.plausible).toBe(false);
    // 24000 Hz audio read as 16000 Hz stretches every clip by 1.5: caught, in any order
    const wrongRate = new SpeechRateMonitor();
    for (const { ratio, seconds } of [...slowestFirst].reverse()) wrongRate.record(ratio / 1.5, seconds);
    expect(wrongRate.assess()?.plausible).toBe(false);
  });
});

describe('Silero VAD as the speech finder', () => {
  it('trims a noise tail after espeak-ng speech, as the energy detector does', async () => {
    const speech = await loopbackSpeech('Could you tell me more about its history, please?', 16000);
    const noisy = new Float32Array(speech.length + 2 * 16000);
    noisy.set(speech);
    noisy.set(steadyNoise(2 * 16000, -45), speech.length);
    const silero = await createVoiceActivityDetector('silero');
    try {
      const detector = speechActivityDetectorFrom(silero);
      const spans = await detector(noisy, 16000);
      expect(spans.at(-1)?.endSeconds).toBeLessThan(speech.length / 16000 + 0.1);
      const check = await checkSynthesizedSpeech(
        noisy,
        16000,
        'Could you tell me more about its history, please?',
        'en',
        resolveSynthesisCheckOptions({ detector }),
      );
      expect(check.verdict).toBe('plausible');
      expect(check.samples.length / 16000).toBeLessThan(speech.length / 16000 + 0.1);
    } finally {
      await silero.release?.();
    }
  });
});
