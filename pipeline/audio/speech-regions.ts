/**
 * Speech regions of CLEAN synthetic speech (TTS output, silence is near digital zero), found with a
 * frame energy detector. Not meant for recorded speech with background noise: use a real VAD there.
 *
 * Frames are exactly 10 ms = one centisecond, so frame index k is centisecond k and the segments come
 * out in integer centiseconds without rounding. Each frame's level depends only on its own samples and
 * the decisions depend only on the sequence of frame levels, so the detector is frame-local: the same
 * utterance placed at a centisecond-aligned offset inside a longer silent track gives the same
 * segments shifted by that offset (as long as the surrounding silence is at least `minSilenceSeconds`).
 */
import type { Centiseconds, SpeechSegment } from '../model/types.ts';
import { AudioArgumentError } from './raw-audio.ts';

/** Settings of {@link detectSpeechSegments}. */
export interface SpeechDetectorOptions {
  /**
   * A frame is speech when its RMS level is at least this many dB relative to full scale
   * (20 * log10(rms), full scale = 1.0, so a full-scale sine is -3 dBFS).
   */
  thresholdDbfs: number;
  /** A run of silent frames splits speech only when it lasts at least this long, in seconds. */
  minSilenceSeconds: number;
  /** A run of speech frames (after bridging) shorter than this is dropped, in seconds. */
  minSpeechSeconds: number;
}

/**
 * Defaults:
 * - `thresholdDbfs: -50`: measured on this project's engines, Open JTalk's silences (pau/sil) sit at
 *   -60 to -75 dBFS and espeak-ng writes digital zeros, while vowels are at -15 to -30 dBFS; -50 dBFS is
 *   below weak fricatives and stop bursts yet 10 dB above Open JTalk's silence floor.
 * - `minSilenceSeconds: 0.15`: bridges stop closures, the geminate (っ) closure and the short breaks
 *   between unpunctuated words, yet stays well below the 0.5 s inter-pausal-unit rule, so pauses at
 *   punctuation remain visible as silence. Measured at 16 kHz with the default voices on 9 sentences:
 *   silences not at punctuation last 0.01-0.12 s in both engines; pauses at , . ; : ? ! 、 。 last
 *   0.16-0.35 s in espeak-ng (160-165 words per minute; a comma can come close to 0.15 s and then be
 *   bridged) and 0.31-0.52 s in Open JTalk.
 * - `minSpeechSeconds: 0.03`: three frames; drops isolated clicks and single-frame blips, shorter than
 *   any spoken syllable.
 */
export const DEFAULT_SPEECH_DETECTOR_OPTIONS: Readonly<SpeechDetectorOptions> = Object.freeze({
  thresholdDbfs: -50,
  minSilenceSeconds: 0.15,
  minSpeechSeconds: 0.03,
});

/**
 * Fills missing settings with {@link DEFAULT_SPEECH_DETECTOR_OPTIONS} and checks them.
 *
 * @throws AudioArgumentError when a duration is negative or not finite, or the threshold is not finite.
 */
export function resolveSpeechDetectorOptions(options: Partial<SpeechDetectorOptions> = {}): SpeechDetectorOptions {
  const resolved = { ...DEFAULT_SPEECH_DETECTOR_OPTIONS, ...options };
  if (!Number.isFinite(resolved.thresholdDbfs))
    throw new AudioArgumentError(`speech detector: threshold ${resolved.thresholdDbfs} dBFS is not finite`);
  for (const key of ['minSilenceSeconds', 'minSpeechSeconds'] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0)
      throw new AudioArgumentError(`speech detector: ${key} ${resolved[key]} is not a non-negative number of seconds`);
  }
  return resolved;
}

/**
 * Samples in one centisecond (10 ms) at `sampleRate` Hz.
 *
 * @throws AudioArgumentError when `sampleRate` is not a positive multiple of 100 Hz (frames must hold a
 *   whole number of samples for centisecond-exact positions).
 */
export function samplesPerCentisecond(sampleRate: number): number {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0 || sampleRate % 100 !== 0) {
    throw new AudioArgumentError(
      `sample rate ${sampleRate} Hz is not a positive multiple of 100 Hz, so 10 ms frames do not hold whole samples`,
    );
  }
  return sampleRate / 100;
}

/**
 * RMS level of each 10 ms frame in dBFS (20 * log10(rms), full scale = 1.0; -Infinity for digital
 * silence). Frame k covers samples [k * n, (k + 1) * n) with n = sampleRate / 100; a last partial frame
 * is treated as padded with zeros to n samples (the RMS divides by n), exactly as it would read inside
 * a longer track that continues with silence.
 *
 * @returns one value per frame: ceil(samples.length / n) values.
 * @throws AudioArgumentError when `sampleRate` is not a positive multiple of 100 Hz.
 */
export function frameLevelsDbfs(samples: Float32Array, sampleRate: number): Float64Array {
  const frameLength = samplesPerCentisecond(sampleRate);
  const frames = Math.ceil(samples.length / frameLength);
  const levels = new Float64Array(frames);
  for (let frame = 0; frame < frames; frame++) {
    const end = Math.min(samples.length, (frame + 1) * frameLength);
    let energy = 0;
    for (let index = frame * frameLength; index < end; index++) {
      const value = samples[index] as number;
      energy += value * value;
    }
    levels[frame] = 10 * Math.log10(energy / frameLength);
  }
  return levels;
}

/**
 * Finds the speech segments of clean synthetic speech.
 *
 * Steps: (1) a 10 ms frame is speech when its RMS level is >= `thresholdDbfs` ({@link frameLevelsDbfs});
 * (2) silent runs between two speech runs that are shorter than `minSilenceSeconds` (rounded to whole
 * frames) are bridged; (3) speech runs shorter than `minSpeechSeconds` (rounded to whole frames) are
 * dropped. Leading and trailing silence is never part of a segment.
 *
 * @param samples mono samples, nominal range [-1, 1].
 * @param sampleRate in Hz; must be a multiple of 100.
 * @param options any of {@link SpeechDetectorOptions}; the rest from {@link DEFAULT_SPEECH_DETECTOR_OPTIONS}.
 * @returns segments in integer centiseconds relative to `samples[0]`, sorted, non-overlapping, separated
 *   by at least `minSilenceSeconds`; empty when nothing reaches the threshold. An `end` may be
 *   ceil(samples.length / (sampleRate / 100)) when speech reaches the last (partial) frame.
 * @throws AudioArgumentError when `sampleRate` is not a positive multiple of 100 Hz or options are invalid.
 */
export function detectSpeechSegments(
  samples: Float32Array,
  sampleRate: number,
  options: Partial<SpeechDetectorOptions> = {},
): SpeechSegment[] {
  const resolved = resolveSpeechDetectorOptions(options);
  return speechSegmentsOfLevels(frameLevelsDbfs(samples, sampleRate), resolved);
}

/**
 * Steps (1)-(3) of {@link detectSpeechSegments} on frame levels already measured: the segments
 * `detectSpeechSegments` finds in audio whose {@link frameLevelsDbfs} are `levels`. A caller that
 * tries many variants of one clip (stages/place-timeline.ts yieldPoints: each cut of an answer, faded
 * over its last frames) measures the clip once and only the frames that differ.
 *
 * @param levels dBFS per 10 ms frame, as frameLevelsDbfs returns them (length = frames)
 * @param options complete settings (resolveSpeechDetectorOptions)
 * @returns segments in integer centiseconds (frame indices), as detectSpeechSegments
 */
export function speechSegmentsOfLevels(levels: Float64Array, options: SpeechDetectorOptions): SpeechSegment[] {
  const minSilenceFrames = Math.round(options.minSilenceSeconds * 100);
  const minSpeechFrames = Math.round(options.minSpeechSeconds * 100);

  const runs: SpeechSegment[] = [];
  let runStart = -1;
  for (let frame = 0; frame <= levels.length; frame++) {
    const isSpeech = frame < levels.length && (levels[frame] as number) >= options.thresholdDbfs;
    if (isSpeech && runStart < 0) runStart = frame;
    if (!isSpeech && runStart >= 0) {
      runs.push({ start: runStart, end: frame });
      runStart = -1;
    }
  }

  const bridged: SpeechSegment[] = [];
  for (const run of runs) {
    const previous = bridged[bridged.length - 1];
    if (previous && run.start - previous.end < minSilenceFrames) previous.end = run.end;
    else bridged.push({ ...run });
  }
  return bridged.filter((segment) => segment.end - segment.start >= minSpeechFrames);
}

/** A clip cut to its speech, with its segments re-based to the cut. */
export interface TrimmedSpeech {
  /** Samples from the first segment's start to the last segment's end: (last.end - first.start) centiseconds long. */
  samples: Float32Array;
  /** The input segments minus `startCentiseconds`: the first starts at 0, the last ends at the clip's duration. */
  segments: SpeechSegment[];
  /** Where the cut began in the input, in centiseconds (= first segment's start). */
  startCentiseconds: Centiseconds;
}

/**
 * Cuts a clip exactly at its first speech start and last speech end (both centisecond-aligned, so the
 * cut falls on frame boundaries) and re-bases the segments to the cut. When the last segment ends in a
 * partial last frame, the clip is padded with zeros to the whole frame, so its length is always
 * (last.end - first.start) * sampleRate / 100 samples. Running {@link detectSpeechSegments} on the result
 * gives the re-based segments again.
 *
 * @param samples mono samples.
 * @param sampleRate in Hz; a multiple of 100.
 * @param segments centiseconds relative to `samples[0]`, sorted, non-overlapping, non-empty list.
 * @returns the clip: a view of `samples` (no copy: the two share memory) when the last segment ends
 *   inside them, else a new zero-padded array; the input is never changed.
 * @throws AudioArgumentError when the list is empty, unsorted, overlapping, has an empty segment, or
 *   lies beyond the samples, or the sample rate is not a multiple of 100 Hz.
 */
export function trimToSpeech(
  samples: Float32Array,
  sampleRate: number,
  segments: readonly SpeechSegment[],
): TrimmedSpeech {
  const frameLength = samplesPerCentisecond(sampleRate);
  const first = segments[0];
  const last = segments[segments.length - 1];
  if (!first || !last) throw new AudioArgumentError('trimToSpeech: no speech segments given');
  let previousEnd = -Infinity;
  for (const segment of segments) {
    if (
      !Number.isInteger(segment.start) ||
      !Number.isInteger(segment.end) ||
      segment.start < 0 ||
      segment.end <= segment.start ||
      segment.start < previousEnd
    ) {
      throw new AudioArgumentError(
        `trimToSpeech: segments must be integer, non-empty, sorted and non-overlapping (got [${segment.start}, ${segment.end}])`,
      );
    }
    previousEnd = segment.end;
  }
  if (last.end > Math.ceil(samples.length / frameLength)) {
    throw new AudioArgumentError(
      `trimToSpeech: segment end ${last.end} cs lies beyond the ${samples.length} samples given`,
    );
  }
  const startSample = first.start * frameLength;
  const endSample = last.end * frameLength;
  // a view where no padding is needed (every synthesized utterance), so no clip is copied here
  let trimmed = samples.subarray(startSample, endSample);
  if (endSample > samples.length) {
    trimmed = new Float32Array(endSample - startSample);
    trimmed.set(samples.subarray(startSample));
  }
  return {
    samples: trimmed,
    segments: segments.map((segment) => ({ start: segment.start - first.start, end: segment.end - first.start })),
    startCentiseconds: first.start,
  };
}
