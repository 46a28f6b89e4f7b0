/**
 * A fake detector for tests of code that uses a {@link VoiceActivityDetector}: no model runs; it
 * returns canned segments (or computes them with a function you give) and records every call.
 */
import type { SpeechSegment } from '../../model/types.ts';
import type { VoiceActivityDetector } from './detector.ts';

/** What the fake was asked: the signal's length in samples and its rate in Hz. */
export interface FakeDetectionCall {
  sampleCount: number;
  sampleRate: number;
}

/** How the fake answers: a fixed list for every call, or a function of the call. */
export type FakeDetectionAnswer =
  readonly SpeechSegment[] | ((samples: Float32Array, sampleRate: number, callIndex: number) => SpeechSegment[]);

/** A deterministic stand-in detector that records its calls in {@link FakeVoiceActivityDetector.calls}. */
export class FakeVoiceActivityDetector implements VoiceActivityDetector {
  readonly id = 'fake';
  /** Every call of {@link detect}, in order (a {@link detectMany} call records one entry per signal). */
  readonly calls: FakeDetectionCall[] = [];
  /** Number of {@link detectMany} calls (batched calls). */
  batchCalls = 0;
  released = false;

  /**
   * @param answer segments (centiseconds) to return, or a function computing them; default: no speech.
   * @param batched when true the fake offers `detectMany` (as Silero does), so helpers batch through it.
   */
  constructor(
    private readonly answer: FakeDetectionAnswer = [],
    batched = false,
  ) {
    if (!batched) this.detectMany = undefined;
  }

  /** Records the call and returns the canned segments (copies). */
  async detect(samples: Float32Array, sampleRate: number): Promise<SpeechSegment[]> {
    const callIndex = this.calls.length;
    this.calls.push({ sampleCount: samples.length, sampleRate });
    const segments = typeof this.answer === 'function' ? this.answer(samples, sampleRate, callIndex) : this.answer;
    return segments.map((segment) => ({ ...segment }));
  }

  /** Present only when constructed with `batched`: counts the batch and answers each signal like {@link detect}. */
  detectMany?: (channels: readonly Float32Array[], sampleRate: number) => Promise<SpeechSegment[][]> = async (
    channels,
    sampleRate,
  ) => {
    this.batchCalls++;
    const results: SpeechSegment[][] = [];
    for (const channel of channels) results.push(await this.detect(channel, sampleRate));
    return results;
  };

  /** Marks the fake as released. */
  async release(): Promise<void> {
    this.released = true;
  }
}
