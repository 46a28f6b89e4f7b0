import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  DNSMOS_POLYNOMIALS,
  DNSMOS_WINDOW_SAMPLES,
  DnsmosScorer,
  P808FeatureExtractor,
  channelHasSpeech,
  evaluatePolynomial,
  extendByDoubling,
  loadDnsmosScorer,
  mapDnsmosRawScores,
  p808MelFeatures,
  planDnsmosWindows,
  resampleTo16k,
  type DnsmosScores,
} from './dnsmos.ts';
import {
  mixAtSnr,
  seededGaussianNoise,
  sharedDnsmosModelDirectory,
  synthesizeSpeechWithEspeak,
} from './testing/test-support.ts';

const SPEECH_TEXT =
  'The quick brown fox jumps over the lazy dog near the river bank. Yesterday we talked about the history of the old city, ' +
  'its markets, and the famous bridge that was built more than three hundred years ago.';

describe('reference length handling and windowing (dnsmos_local.py)', () => {
  test('a 3 s clip doubles to 6 s then 12 s; num_hops = trunc(floor(12) - 9.01) + 1 = 3', () => {
    const plan = planDnsmosWindows(3 * 16000);
    expect(plan.doublings).toBe(2);
    expect(plan.extendedLength).toBe(12 * 16000);
    expect(plan.hopCount).toBe(3);
    expect(plan.windows).toEqual([
      { index: 0, start: 0, end: 144160 },
      { index: 1, start: 16000, end: 160160 },
      { index: 2, start: 32000, end: 176160 },
    ]);
    expect(plan.skippedWindowIndices).toEqual([]);
  });

  test('doubling repeats the whole clip (np.append(audio, audio)), not a tiling to an exact length', () => {
    const clip = new Float32Array(48000).map((_, index) => index);
    const extended = extendByDoubling(clip);
    expect(extended.length).toBe(192000);
    for (const copy of [0, 1, 2, 3]) {
      expect(extended[copy * 48000]).toBe(0);
      expect(extended[copy * 48000 + 47999]).toBe(47999);
    }
    // 7 s doubles once to 14 s (not to exactly 9.01 s); a clip of 9.01 s or more is left alone.
    expect(planDnsmosWindows(7 * 16000).extendedLength).toBe(14 * 16000);
    expect(extendByDoubling(new Float32Array(DNSMOS_WINDOW_SAMPLES)).length).toBe(DNSMOS_WINDOW_SAMPLES);
    expect(planDnsmosWindows(1).extendedLength).toBe(262144);
  });

  test('num_hops formula: whole seconds first, then truncation toward zero', () => {
    const cases: Array<[number, number]> = [
      [144160, 1], // 9.01 s: floor = 9, 9 - 9.01 = -0.01 -> trunc 0 -> 1
      [159999, 1], // 9.99 s
      [160000, 1], // 10 s: 0.99 -> 0 -> 1
      [176000, 2], // 11 s: 1.99 -> 1 -> 2
      [30 * 16000 + 15999, 21], // 30.99 s: 20.99 -> 20 -> 21
    ];
    for (const [length, hops] of cases) expect(planDnsmosWindows(length).hopCount).toBe(hops);
  });

  test('windows whose float64 end index rounds down to 144159 samples are skipped, as in the reference', () => {
    // int((7 + 9.01) * 16000) = int(256159.99999999997) = 256159: the reference drops windows 7..23.
    const plan = planDnsmosWindows(30 * 16000);
    expect(plan.hopCount).toBe(21);
    expect(plan.skippedWindowIndices).toEqual([7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(plan.windows.map((window) => window.index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const exact = planDnsmosWindows(30 * 16000, { referenceWindowEnds: false });
    expect(exact.windows.length).toBe(21);
    expect(exact.skippedWindowIndices).toEqual([]);
  });

  test('another hop (quality.dnsmos.hopSeconds) spaces full windows by it: 9.01 s gives non-overlapping windows, a bad hop is refused', () => {
    const plan = planDnsmosWindows(60 * 16000, { hopSeconds: 9.01 });
    // floor((960000 - 144160) / 144160) + 1 = 6, against 51 hops of the reference
    expect(plan.windows.map((window) => [window.start, window.end])).toEqual(
      [0, 1, 2, 3, 4, 5].map((index) => [index * 144160, index * 144160 + 144160]),
    );
    expect(plan.hopCount).toBe(6);
    expect(planDnsmosWindows(60 * 16000).hopCount).toBe(51);
    // 2 s hop on 30 s: starts 0, 2, ... 20 s (20 s + 9.01 s fits, 22 s does not)
    expect(planDnsmosWindows(30 * 16000, { hopSeconds: 2 }).windows.map((window) => window.start / 16000)).toEqual([
      0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
    ]);
    // the reference hop is the default, quirks included
    expect(planDnsmosWindows(30 * 16000, { hopSeconds: 1 })).toEqual(planDnsmosWindows(30 * 16000));
    // a short signal is still doubled first: 3 s → 12 s holds one 9.01 s window at a 9.01 s hop
    expect(planDnsmosWindows(3 * 16000, { hopSeconds: 9.01 }).windows).toEqual([{ index: 0, start: 0, end: 144160 }]);
    for (const hopSeconds of [0, -1, 1 / 40000, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => planDnsmosWindows(16000, { hopSeconds }), String(hopSeconds)).toThrow(RangeError);
  });

  test('empty input is an error (the reference would loop forever)', () => {
    expect(() => planDnsmosWindows(0)).toThrow(RangeError);
    expect(() => extendByDoubling(new Float32Array(0))).toThrow(RangeError);
  });
});

describe('polynomial mapping (get_polyfit_val)', () => {
  test('np.poly1d order: highest power first', () => {
    expect(evaluatePolynomial([2, 3, 4], 10)).toBe(234);
    expect(evaluatePolynomial([1, 0, 0, 0], 2)).toBe(8);
  });

  test('standard and personalized mappings use the dnsmos_local.py coefficients', () => {
    const raw = { sig: 3, bak: 4, ovrl: 2.5 };
    const standard = mapDnsmosRawScores(raw, false);
    expect(standard.ovrl).toBeCloseTo(-0.06766283 * 6.25 + 1.11546468 * 2.5 + 0.04602535, 12);
    expect(standard.sig).toBeCloseTo(-0.08397278 * 9 + 1.22083953 * 3 + 0.0052439, 12);
    expect(standard.bak).toBeCloseTo(-0.13166888 * 16 + 1.60915514 * 4 - 0.39604546, 12);
    const personalized = mapDnsmosRawScores(raw, true);
    expect(personalized.ovrl).toBeCloseTo(-0.00533021 * 15.625 + 0.005101 * 6.25 + 1.18058466 * 2.5 - 0.11236046, 12);
    expect(personalized.bak).toBeCloseTo(evaluatePolynomial(DNSMOS_POLYNOMIALS.personalized.bak, 4), 15);
  });
});

describe('resampling to 16 kHz', () => {
  test('output length is ceil(n * 16000 / rate), like librosa.resample', async () => {
    expect((await resampleTo16k(new Float32Array(22050), 22050)).length).toBe(16000);
    expect((await resampleTo16k(new Float32Array(220501), 22050)).length).toBe(Math.ceil((220501 * 16000) / 22050));
    const same = new Float32Array(10);
    expect(await resampleTo16k(same, 16000)).toBe(same);
  });

  test('long input (libsamplerate-js chunked path) keeps its tail and stays in phase', async () => {
    const rate = 48000;
    const length = rate * 25 + 123; // > 4 MB of float32: libsamplerate-js splits it into chunks
    const frequency = 440;
    const input = new Float32Array(length).map((_, index) => 0.5 * Math.sin((2 * Math.PI * frequency * index) / rate));
    const output = await resampleTo16k(input, rate);
    expect(output.length).toBe(Math.ceil((length * 16000) / rate));
    let worst = 0;
    for (const start of [2000, 160000, 8 * 16000 + 5, output.length - 3000]) {
      for (let index = start; index < start + 1000; index++) {
        worst = Math.max(worst, Math.abs(output[index]! - 0.5 * Math.sin((2 * Math.PI * frequency * index) / 16000)));
      }
    }
    expect(worst).toBeLessThan(1e-3);
  });
});

describe('P.808 features with frame caching', () => {
  test('cached extractor gives exactly the direct audio_melspec features for successive windows', () => {
    const signal = seededGaussianNoise(16000 * 12, 3).map(
      (value, index) => value * (0.2 + 0.8 * Math.abs(Math.sin(index / 5000))),
    );
    const extractor = new P808FeatureExtractor();
    for (const start of [0, 16000, 32000]) {
      const cached = extractor.features(signal, start);
      const direct = p808MelFeatures(signal.subarray(start, start + DNSMOS_WINDOW_SAMPLES));
      expect(cached).toEqual(direct);
    }
  });
});

describe('channel speech rule', () => {
  test('silence and a low noise floor have no speech; a speech clip has', () => {
    expect(channelHasSpeech(new Float32Array(16000), 16000)).toBe(false);
    expect(
      channelHasSpeech(
        seededGaussianNoise(16000, 1).map((value) => value * 1e-4),
        16000,
      ),
    ).toBe(false);
    const { samples, sampleRate } = synthesizeSpeechWithEspeak('Hello there, how are you today?');
    expect(channelHasSpeech(samples, sampleRate)).toBe(true);
  });
});

describe('DNSMOS scores with the shared ONNX models', () => {
  let scorer: DnsmosScorer;
  let speech: { samples: Float32Array; sampleRate: number };
  let clean: DnsmosScores;
  let noisy: DnsmosScores;

  beforeAll(async () => {
    scorer = await DnsmosScorer.load(sharedDnsmosModelDirectory());
    speech = synthesizeSpeechWithEspeak(SPEECH_TEXT);
    clean = await scorer.score(speech.samples, speech.sampleRate);
    const noise = seededGaussianNoise(speech.samples.length, 20240917);
    noisy = await scorer.score(mixAtSnr(speech.samples, noise, 0), speech.sampleRate);
  });
  afterAll(async () => {
    await scorer?.close();
  });

  test('the espeak-ng clip is about 10 s of speech', () => {
    expect(clean.durationSeconds).toBeGreaterThan(9.5);
    expect(clean.durationSeconds).toBeLessThan(14);
    expect(clean.windows).toBeGreaterThanOrEqual(1);
  });

  test('OVRL of clean speech exceeds the same speech in white noise at 0 dB SNR by at least 0.5', () => {
    expect(clean.ovrl - noisy.ovrl).toBeGreaterThanOrEqual(0.5);
    // White noise ruins the background score above all.
    expect(clean.bak - noisy.bak).toBeGreaterThan(1);
    expect(clean.p808).toBeGreaterThan(noisy.p808);
  });

  test('scores lie in the MOS range 1..5', () => {
    for (const scores of [clean, noisy]) {
      for (const value of [scores.ovrl, scores.sig, scores.bak, scores.p808]) {
        expect(value).toBeGreaterThanOrEqual(1);
        expect(value).toBeLessThanOrEqual(5);
      }
    }
  });

  test('deterministic: the same input scores identically', async () => {
    const again = await scorer.score(speech.samples, speech.sampleRate);
    expect(again).toEqual(clean);
  });

  test('deterministic across scorers: another scorer (its own onnxruntime sessions) scoring two inputs at once gives the same scores', async () => {
    // what a build's scoring does (two dialogues at a time, pipeline/orchestration/build-fresh-cache.test.ts relies on it)
    const other = await DnsmosScorer.load(sharedDnsmosModelDirectory());
    try {
      const noise = seededGaussianNoise(speech.samples.length, 20240917);
      const [again, noisyAgain] = await Promise.all([
        other.score(speech.samples, speech.sampleRate),
        other.score(mixAtSnr(speech.samples, noise, 0), speech.sampleRate),
      ]);
      expect(again).toEqual(clean);
      expect(noisyAgain).toEqual(noisy);
    } finally {
      await other.close();
    }
  });

  test('a scorer with a 9.01 s hop runs fewer windows of the same models (its own plan) and scores near the reference ones', async () => {
    const coarse = await DnsmosScorer.load(sharedDnsmosModelDirectory(), { hopSeconds: 9.01 });
    try {
      expect(coarse.hopSeconds).toBe(9.01);
      const scores = await coarse.score(speech.samples, speech.sampleRate);
      expect(scores.windows).toBe(
        coarse.planWindows(Math.round(speech.samples.length * (16000 / speech.sampleRate))).windows.length,
      );
      expect(scores.windows).toBeLessThan(clean.windows);
      // the same models on a subset of the same windows (window 0 is in both): close, not equal
      expect(Math.abs(scores.ovrl - clean.ovrl)).toBeLessThan(0.5);
      expect(scores).not.toEqual(clean);
    } finally {
      await coarse.close();
    }
    await expect(DnsmosScorer.load(sharedDnsmosModelDirectory(), { hopSeconds: 0 })).rejects.toThrow(
      /hop must be at least one sample/,
    );
  });

  test('a 3 s clip is scored through doubling: 3 windows', async () => {
    const start = Math.round(1.0 * speech.sampleRate);
    const clip = speech.samples.slice(start, start + 3 * speech.sampleRate);
    const scores = await scorer.score(clip, speech.sampleRate);
    expect(scores.hopCount).toBe(3);
    expect(scores.windows).toBe(3);
    expect(scores.durationSeconds).toBeCloseTo(3, 3);
    expect(scores.ovrl).toBeGreaterThan(1);
    expect(scores.ovrl).toBeLessThan(5);
  });

  test('a 16 kHz input gives the same scores as when scoring its own 16 kHz resampled version', async () => {
    const audio16k = await resampleTo16k(speech.samples, speech.sampleRate);
    const direct = await scorer.score(audio16k, 16000);
    expect(direct).toEqual(clean);
  });

  test('scoreRecording: per channel, silent channel skipped, dialogue = mean over channels with speech', async () => {
    const length = speech.samples.length;
    const noisyChannel = mixAtSnr(speech.samples, seededGaussianNoise(length, 20240917), 0);
    const silent = new Float32Array(length);
    const withSilence = await scorer.scoreRecording({
      channels: [speech.samples, silent],
      sampleRate: speech.sampleRate,
    });
    expect(withSilence.channels[1]).toEqual({ channel: 1, hasSpeech: false, scores: null });
    expect(withSilence.channels[0]!.scores).toEqual(clean);
    expect(withSilence.dialogue).toMatchObject({
      ovrl: clean.ovrl,
      sig: clean.sig,
      bak: clean.bak,
      p808: clean.p808,
      channelCount: 1,
    });

    const both = await scorer.scoreRecording({
      channels: [speech.samples, noisyChannel],
      sampleRate: speech.sampleRate,
    });
    expect(both.dialogue!.channelCount).toBe(2);
    expect(both.dialogue!.ovrl).toBeCloseTo((clean.ovrl + noisy.ovrl) / 2, 12);
    expect(both.dialogue!.p808).toBeCloseTo((clean.p808 + noisy.p808) / 2, 12);

    const none = await scorer.scoreRecording({ channels: [silent], sampleRate: speech.sampleRate });
    expect(none.dialogue).toBeNull();
    await expect(
      scorer.scoreRecording({ channels: [silent], sampleRate: speech.sampleRate }, { channelHasSpeech: [true, false] }),
    ).rejects.toThrow(RangeError);
  });

  test('bad input is rejected with a clear error', async () => {
    await expect(scorer.score(new Float32Array(0), 16000)).rejects.toThrow(/at least one sample/);
    await expect(scorer.score(new Float32Array([0, Number.NaN]), 16000)).rejects.toThrow(/not a finite number/);
    await expect(scorer.score(new Float32Array(100), 0)).rejects.toThrow(/sample rate/);
  });
});

describe('personalized DNSMOS (pDNSMOS)', () => {
  test('runs p_sig_bak_ovr.onnx alongside and maps with the personalized polynomials', async () => {
    const scorer = await DnsmosScorer.load(sharedDnsmosModelDirectory(), { personalized: true });
    try {
      const { samples, sampleRate } = synthesizeSpeechWithEspeak(
        'Good morning. I would like to book a table for two people tonight.',
      );
      const scores = await scorer.score(samples, sampleRate);
      expect(scores.personalized).toBeDefined();
      const personalized = scores.personalized!;
      // With a single window, the mapped means are the mapping of the raw means.
      if (scores.windows === 1)
        expect(personalized.ovrl).toBeCloseTo(mapDnsmosRawScores(personalized.raw, true).ovrl, 10);
      for (const value of [personalized.ovrl, personalized.sig, personalized.bak]) {
        expect(value).toBeGreaterThan(0.5);
        expect(value).toBeLessThan(5.5);
      }
    } finally {
      await scorer.close();
    }
  });
});

describe('batched model runs and execution providers', () => {
  test('windows batched into one run (and batches prepared while the previous one runs) score as one run per window', async () => {
    // about 20 s of espeak-ng speech in noise: the reference rule scores about 7 windows
    const speech = synthesizeSpeechWithEspeak(`${SPEECH_TEXT} ${SPEECH_TEXT}`);
    const samples = mixAtSnr(speech.samples, seededGaussianNoise(speech.samples.length, 7), 15);
    const scores: DnsmosScores[] = [];
    for (const batchWindows of [1, 2, 64]) {
      const scorer = await DnsmosScorer.load(sharedDnsmosModelDirectory(), {
        batchWindows,
        personalized: batchWindows !== 64,
      });
      try {
        scores.push(await scorer.score(samples, speech.sampleRate));
      } finally {
        await scorer.close();
      }
    }
    const [perWindow, ...batched] = scores as [DnsmosScores, ...DnsmosScores[]];
    expect(perWindow.windows).toBeGreaterThan(4); // several batches of 2
    for (const other of batched) {
      expect(other.windows).toBe(perWindow.windows);
      for (const key of ['ovrl', 'sig', 'bak', 'p808'] as const)
        expect(Math.abs(other[key] - perWindow[key])).toBeLessThan(1e-5);
      if (other.personalized)
        for (const key of ['ovrl', 'sig', 'bak'] as const)
          expect(Math.abs(other.personalized[key] - perWindow.personalized![key])).toBeLessThan(1e-5);
    }
  });

  test('batchWindows must be a positive integer', async () => {
    await expect(DnsmosScorer.load(sharedDnsmosModelDirectory(), { batchWindows: 0 })).rejects.toThrow(RangeError);
  });

  test("'auto' runs on CUDA when onnxruntime-node can load it and on the CPU otherwise; 'cpu' on the CPU", async () => {
    const settings = { intraOpThreads: 1, batchWindows: 4 };
    const auto = await loadDnsmosScorer(sharedDnsmosModelDirectory(), { ...settings, executionProvider: 'auto' });
    const cpu = await loadDnsmosScorer(sharedDnsmosModelDirectory(), { ...settings, executionProvider: 'cpu' });
    try {
      expect(['cpu', 'cuda']).toContain(auto.executionProvider);
      expect(cpu.executionProvider).toBe('cpu');
      const speech = synthesizeSpeechWithEspeak(SPEECH_TEXT);
      const [a, b] = [
        await auto.scorer.score(speech.samples, speech.sampleRate),
        await cpu.scorer.score(speech.samples, speech.sampleRate),
      ];
      expect(Math.abs(a.ovrl - b.ovrl)).toBeLessThan(1e-3);
    } finally {
      await auto.scorer.close();
      await cpu.scorer.close();
    }
  });
});
