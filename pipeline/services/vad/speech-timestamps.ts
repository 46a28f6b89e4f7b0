/**
 * Frame-level speech probabilities -> speech segments, the post-processing of Silero VAD's
 * `get_speech_timestamps` (snakers4/silero-vad, src/silero_vad/utils_vad.py), shared by every engine
 * in this folder (WebRTC VAD feeds its 0/1 frame decisions through the same steps).
 *
 * Steps, on a grid of equal frames (frame k starts at sample k * frameSamples):
 * 1. Speech starts at the first frame whose probability is >= `threshold`.
 * 2. While in speech, a frame with probability < `negativeThreshold` marks a possible end (the start of
 *    that frame). The end is confirmed once the probability has stayed below `threshold` for at least
 *    `minSilenceSeconds` (a frame >= `threshold` cancels the possible end); probabilities between the two
 *    thresholds neither start nor end speech (hysteresis).
 * 3. Segments not longer than `minSpeechSeconds` are dropped.
 * 4. Each segment is padded by `speechPadSeconds` on both sides; when two neighbours are closer than
 *    twice the pad, each gets half of the silence between them, so padding never makes them overlap.
 *
 * Differences from the Python function, on purpose:
 * - `max_speech_duration_s` (default infinity there) is not implemented: the benchmark needs whole
 *   utterances, never forced splits.
 * - Speech still open at the end of the audio ends at its possible end when one was marked (the
 *   Python function ends it at the end of the audio even after a silence shorter than
 *   `min_silence_duration_ms`, which would stretch a final segment over trailing silence).
 */
import type { SpeechSegment } from '../../model/types.ts';
import { VoiceActivityOptionsError } from './errors.ts';

/** Settings of the post-processing; durations in seconds, probabilities in [0, 1]. */
export interface SpeechTimestampOptions {
  /** A frame with speech probability >= this starts speech (Silero `threshold`). */
  threshold: number;
  /**
   * While in speech, a frame with probability < this may end it (Silero `neg_threshold`). Silero's
   * default is `max(threshold - 0.15, 0.01)`; {@link resolveSpeechTimestampOptions} applies that rule
   * when this is not given.
   */
  negativeThreshold: number;
  /** Segments this long or shorter are dropped, seconds (Silero `min_speech_duration_ms` / 1000). */
  minSpeechSeconds: number;
  /** Silence shorter than this does not end a segment, seconds (Silero `min_silence_duration_ms` / 1000). */
  minSilenceSeconds: number;
  /** Added to both sides of each segment, seconds (Silero `speech_pad_ms` / 1000). */
  speechPadSeconds: number;
}

/** Input form of {@link SpeechTimestampOptions}: any subset; `negativeThreshold` follows `threshold` when absent. */
export type SpeechTimestampOptionsInput = Partial<SpeechTimestampOptions>;

/**
 * Silero VAD's own defaults of `get_speech_timestamps` (utils_vad.py): threshold 0.5,
 * neg_threshold = threshold - 0.15 = 0.35, min_speech_duration_ms 250, min_silence_duration_ms 100,
 * speech_pad_ms 30. Engines in this folder override some of them for benchmark timing (see their own
 * option blocks); these are kept for reference and as the fallback of {@link resolveSpeechTimestampOptions}.
 */
export const SILERO_REFERENCE_TIMESTAMP_OPTIONS: Readonly<SpeechTimestampOptions> = Object.freeze({
  threshold: 0.5,
  negativeThreshold: 0.35,
  minSpeechSeconds: 0.25,
  minSilenceSeconds: 0.1,
  speechPadSeconds: 0.03,
});

/** Silero's rule for the negative threshold: `max(threshold - 0.15, 0.01)` (utils_vad.py). */
export function defaultNegativeThreshold(threshold: number): number {
  return Math.max(threshold - 0.15, 0.01);
}

/**
 * Completes and checks post-processing settings: `defaults` fill what `options` leaves out, except
 * that an absent `negativeThreshold` is derived from the resolved threshold with
 * {@link defaultNegativeThreshold} whenever `options` sets `threshold`.
 *
 * @param options settings given by the caller.
 * @param defaults the engine's defaults (complete).
 * @returns a complete, checked settings object (a new object).
 * @throws VoiceActivityOptionsError when a probability is outside [0, 1], the negative threshold is above
 *   the threshold, or a duration is negative or not finite.
 */
export function resolveSpeechTimestampOptions(
  options: SpeechTimestampOptionsInput,
  defaults: Readonly<SpeechTimestampOptions>,
): SpeechTimestampOptions {
  const threshold = options.threshold ?? defaults.threshold;
  const negativeThreshold =
    options.negativeThreshold ??
    (options.threshold === undefined ? defaults.negativeThreshold : defaultNegativeThreshold(threshold));
  const resolved: SpeechTimestampOptions = {
    threshold,
    negativeThreshold,
    minSpeechSeconds: options.minSpeechSeconds ?? defaults.minSpeechSeconds,
    minSilenceSeconds: options.minSilenceSeconds ?? defaults.minSilenceSeconds,
    speechPadSeconds: options.speechPadSeconds ?? defaults.speechPadSeconds,
  };
  for (const key of ['threshold', 'negativeThreshold'] as const) {
    const value = resolved[key];
    if (!Number.isFinite(value) || value < 0 || value > 1)
      throw new VoiceActivityOptionsError(`${key} ${value} is not a probability in [0, 1]`);
  }
  if (resolved.negativeThreshold > resolved.threshold) {
    throw new VoiceActivityOptionsError(
      `negativeThreshold ${resolved.negativeThreshold} is above threshold ${resolved.threshold}`,
    );
  }
  for (const key of ['minSpeechSeconds', 'minSilenceSeconds', 'speechPadSeconds'] as const) {
    const value = resolved[key];
    if (!Number.isFinite(value) || value < 0)
      throw new VoiceActivityOptionsError(`${key} ${value} is not a non-negative number of seconds`);
  }
  return resolved;
}

/** A speech segment in samples: `[startSample, endSample)`, at the rate the frames were computed at. */
export interface SampleSegment {
  startSample: number;
  endSample: number;
}

/**
 * Runs steps 1-4 (see the file comment) over frame probabilities.
 *
 * @param probabilities one speech probability in [0, 1] per frame; frame k covers samples
 *   [k * frameSamples, (k + 1) * frameSamples).
 * @param frameSamples samples per frame (Silero: 512 at 16 kHz; WebRTC: 10/20/30 ms).
 * @param totalSamples length of the analysed audio in samples (the last frame may reach beyond it).
 * @param sampleRate rate of the frames' samples, Hz; converts the durations in `options` to samples.
 * @param options complete settings (see {@link resolveSpeechTimestampOptions}).
 * @returns segments in samples, sorted, non-overlapping, inside [0, totalSamples].
 */
export function speechSampleSegments(
  probabilities: ArrayLike<number>,
  frameSamples: number,
  totalSamples: number,
  sampleRate: number,
  options: Readonly<SpeechTimestampOptions>,
): SampleSegment[] {
  const minSpeechSamples = options.minSpeechSeconds * sampleRate;
  const minSilenceSamples = options.minSilenceSeconds * sampleRate;
  const padSamples = options.speechPadSeconds * sampleRate;

  const speeches: SampleSegment[] = [];
  let triggered = false;
  let start = 0;
  let possibleEnd = -1; // -1: no possible end marked
  for (let frame = 0; frame < probabilities.length; frame++) {
    const probability = probabilities[frame] as number;
    const position = frame * frameSamples;
    if (probability >= options.threshold) {
      possibleEnd = -1;
      if (!triggered) {
        triggered = true;
        start = position;
      }
      continue;
    }
    if (triggered && probability < options.negativeThreshold) {
      if (possibleEnd < 0) possibleEnd = position;
      if (position - possibleEnd < minSilenceSamples) continue;
      if (possibleEnd - start > minSpeechSamples) speeches.push({ startSample: start, endSample: possibleEnd });
      triggered = false;
      possibleEnd = -1;
    }
  }
  if (triggered) {
    const end = possibleEnd >= 0 ? possibleEnd : totalSamples;
    if (end - start > minSpeechSamples) speeches.push({ startSample: start, endSample: Math.min(end, totalSamples) });
  }

  for (let index = 0; index < speeches.length; index++) {
    const speech = speeches[index] as SampleSegment;
    if (index === 0) speech.startSample = Math.max(0, Math.trunc(speech.startSample - padSamples));
    const next = speeches[index + 1];
    if (next) {
      const silence = next.startSample - speech.endSample;
      if (silence < 2 * padSamples) {
        speech.endSample += Math.floor(silence / 2);
        next.startSample = Math.max(0, next.startSample - Math.floor(silence / 2));
      } else {
        speech.endSample = Math.min(totalSamples, Math.trunc(speech.endSample + padSamples));
        next.startSample = Math.max(0, Math.trunc(next.startSample - padSamples));
      }
    } else {
      speech.endSample = Math.min(totalSamples, Math.trunc(speech.endSample + padSamples));
    }
  }
  return speeches;
}

/**
 * Converts sample segments to integer centiseconds: each position rounds to the nearest centisecond
 * (`round(sample * 100 / sampleRate)`, halves up). Segments that become empty are dropped and segments
 * that touch or overlap after rounding are merged, so the result is a valid channel segment list.
 *
 * @param segments sorted, non-overlapping, in samples at `sampleRate` Hz.
 * @param sampleRate Hz.
 * @returns sorted, non-overlapping segments with start < end, centiseconds.
 */
export function sampleSegmentsToCentiseconds(segments: readonly SampleSegment[], sampleRate: number): SpeechSegment[] {
  const result: SpeechSegment[] = [];
  for (const segment of segments) {
    const start = Math.round((segment.startSample * 100) / sampleRate);
    const end = Math.round((segment.endSample * 100) / sampleRate);
    if (end <= start) continue;
    const previous = result[result.length - 1];
    if (previous && start <= previous.end) previous.end = Math.max(previous.end, end);
    else result.push({ start, end });
  }
  return result;
}
