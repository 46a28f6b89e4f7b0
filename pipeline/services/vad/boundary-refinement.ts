/**
 * Moves the boundaries a voice activity detector found onto the level edges of the signal itself:
 * the detector decides WHETHER there is speech, the 10 ms frame levels decide exactly WHEN it starts
 * and ends.
 *
 * Why: a frame-based detector quantizes its boundaries to its frames (Silero: 32 ms) and a recurrent
 * model answers late (Silero's probability stays high for 2-4 frames after speech stops). Measured on
 * 100 espeak-ng clips at 16 kHz (with and without a -60 dBFS noise floor), Silero alone puts starts
 * -0.02 to +0.10 s and ends -0.05 to +0.14 s off the level-based boundaries (mean absolute error
 * 0.04 s); no threshold in 0.3-0.9 combined with any fixed shift of starts and ends brought every
 * boundary within 0.05 s (at best 16 of 200 boundaries stayed outside). The synthetic timelines of this project define speech by frame
 * level (pipeline/audio/speech-regions.ts, -50 dBFS per 10 ms frame), so turn-taking statistics
 * measured on real recordings must use the same boundary definition to be comparable.
 *
 * Steps, in integer centiseconds (one 10 ms frame = one centisecond):
 * 1. Level threshold of the channel: `max(levelThresholdDbfs, noise floor + noiseFloorMarginDb)`, where
 *    the noise floor is the `noiseFloorPercentile` of the frame levels outside the detected segments
 *    (so a quiet channel keeps the synthetic timeline's -50 dBFS, a noisy one moves above its noise).
 * 2. Level segments: frames at or above that threshold, silences shorter than `bridgeSeconds` bridged —
 *    the steps of the clean speech detector (`detectSpeechSegments`, audio/speech-regions.ts), applied
 *    to the frame levels already computed for step 1 ({@link levelSegments}; a test keeps the two equal).
 * 3. Each detected start moves to the nearest level-segment start, each end to the nearest
 *    level-segment end, when one lies within `maxShiftSeconds`; otherwise the boundary stays.
 * 4. Two neighbours merge when they now touch or overlap, or when the silence the detector saw between
 *    them is at most `2 * maxShiftSeconds` long and lies inside one level segment (a weak stretch of
 *    speech, such as an /h/ or a fading nasal, that the detector scored as non-speech).
 */
import type { SpeechSegment } from '../../model/types.ts';
import { frameLevelsDbfs } from '../../audio/speech-regions.ts';
import { VoiceActivityOptionsError } from './errors.ts';

/** Settings of {@link refineSpeechBoundaries}; levels in dBFS (full scale = 1.0), durations in seconds. */
export interface BoundaryRefinementOptions {
  /** Lowest level threshold, dBFS. */
  levelThresholdDbfs: number;
  /** The threshold is at least this far above the channel's noise floor, dB. */
  noiseFloorMarginDb: number;
  /** Percentile (0-100) of the non-speech frame levels taken as the noise floor. */
  noiseFloorPercentile: number;
  /** Silences shorter than this inside level segments are bridged, seconds. */
  bridgeSeconds: number;
  /** A boundary moves at most this far, seconds. */
  maxShiftSeconds: number;
}

/**
 * Defaults and their sources:
 * - `levelThresholdDbfs: -50` and `bridgeSeconds: 0.15`: the clean speech detector's defaults
 *   (DEFAULT_SPEECH_DETECTOR_OPTIONS in pipeline/audio/speech-regions.ts), so the boundaries mean the
 *   same as in the synthetic timelines.
 * - `noiseFloorMarginDb: 10`: a frame must stand 10 dB above the noise to count as speech; the level
 *   of stationary noise varies by about ±1 dB between 10 ms frames, so noise alone never crosses it.
 * - `noiseFloorPercentile: 10`: robust to speech of the other party leaking into the channel, which
 *   fills the upper percentiles of the non-speech frames.
 * - `maxShiftSeconds: 0.2`: above the largest Silero boundary error measured (0.14 s) and below the
 *   0.3 s shortest pause the timelines place, so a boundary is not pulled onto a neighbouring utterance.
 */
export const DEFAULT_BOUNDARY_REFINEMENT_OPTIONS: Readonly<BoundaryRefinementOptions> = Object.freeze({
  levelThresholdDbfs: -50,
  noiseFloorMarginDb: 10,
  noiseFloorPercentile: 10,
  bridgeSeconds: 0.15,
  maxShiftSeconds: 0.2,
});

/**
 * Completes and checks refinement settings.
 *
 * @throws VoiceActivityOptionsError when a value is not finite, a duration or margin is negative, or the
 *   percentile is outside [0, 100].
 */
export function resolveBoundaryRefinementOptions(
  options: Partial<BoundaryRefinementOptions> = {},
): BoundaryRefinementOptions {
  const resolved = { ...DEFAULT_BOUNDARY_REFINEMENT_OPTIONS, ...options };
  if (!Number.isFinite(resolved.levelThresholdDbfs))
    throw new VoiceActivityOptionsError(`levelThresholdDbfs ${resolved.levelThresholdDbfs} is not finite`);
  for (const key of ['noiseFloorMarginDb', 'bridgeSeconds', 'maxShiftSeconds'] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0)
      throw new VoiceActivityOptionsError(`${key} ${resolved[key]} is not a non-negative number`);
  }
  if (!(resolved.noiseFloorPercentile >= 0 && resolved.noiseFloorPercentile <= 100)) {
    throw new VoiceActivityOptionsError(`noiseFloorPercentile ${resolved.noiseFloorPercentile} is not in [0, 100]`);
  }
  return resolved;
}

/**
 * The `percentile` (0-100, nearest rank) of the frame levels not covered by `segments`, dBFS;
 * -Infinity when every such frame is digital silence or no frame lies outside the segments.
 *
 * @param levels one level per 10 ms frame (frame k = centisecond k), dBFS.
 * @param segments centiseconds, sorted.
 */
export function noiseFloorDbfs(levels: Float64Array, segments: readonly SpeechSegment[], percentile: number): number {
  const outside: number[] = [];
  let segmentIndex = 0;
  for (let frame = 0; frame < levels.length; frame++) {
    while (segmentIndex < segments.length && (segments[segmentIndex] as SpeechSegment).end <= frame) segmentIndex++;
    const segment = segments[segmentIndex];
    if (segment && segment.start <= frame) continue;
    outside.push(levels[frame] as number);
  }
  if (outside.length === 0) return -Infinity;
  outside.sort((a, b) => a - b);
  const rank = Math.min(outside.length - 1, Math.max(0, Math.ceil((percentile / 100) * outside.length) - 1));
  return outside[rank] as number;
}

/** The level threshold {@link refineSpeechBoundaries} uses for a channel, dBFS (step 1). */
export function refinementThresholdDbfs(
  levels: Float64Array,
  segments: readonly SpeechSegment[],
  options: Readonly<BoundaryRefinementOptions>,
): number {
  return Math.max(
    options.levelThresholdDbfs,
    noiseFloorDbfs(levels, segments, options.noiseFloorPercentile) + options.noiseFloorMarginDb,
  );
}

/**
 * Speech segments from frame levels: runs of frames with level >= `thresholdDbfs`, with silent runs
 * shorter than `bridgeFrames` between two speech runs bridged. These are steps 1 and 2 of
 * `detectSpeechSegments` (audio/speech-regions.ts; with no minimum speech length), on levels computed
 * once.
 *
 * @param levels one level per 10 ms frame, dBFS (frame k = centisecond k).
 * @param thresholdDbfs a frame is speech at or above this level.
 * @param bridgeFrames silences shorter than this many frames are bridged.
 * @returns segments in integer centiseconds, sorted, non-overlapping.
 */
export function levelSegments(levels: Float64Array, thresholdDbfs: number, bridgeFrames: number): SpeechSegment[] {
  const segments: SpeechSegment[] = [];
  let runStart = -1;
  for (let frame = 0; frame <= levels.length; frame++) {
    const isSpeech = frame < levels.length && (levels[frame] as number) >= thresholdDbfs;
    if (isSpeech && runStart < 0) runStart = frame;
    if (!isSpeech && runStart >= 0) {
      const previous = segments[segments.length - 1];
      if (previous && runStart - previous.end < bridgeFrames) previous.end = frame;
      else segments.push({ start: runStart, end: frame });
      runStart = -1;
    }
  }
  return segments;
}

/** Index of the value in sorted `values` nearest to `target` within `limit` (ties: the earlier), or -1. */
function nearestWithin(values: readonly number[], target: number, limit: number): number {
  let best = -1;
  let bestDistance = Infinity;
  for (let index = 0; index < values.length; index++) {
    const distance = Math.abs((values[index] as number) - target);
    if (distance <= limit && distance < bestDistance) {
      best = index;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Refines detected speech segments (steps 1-4 of the file comment).
 *
 * @param segments detected segments of one channel, integer centiseconds relative to `samples[0]`, sorted, non-overlapping.
 * @param samples the channel's mono samples, nominal range [-1, 1].
 * @param sampleRate Hz, a multiple of 100 (10 ms frames must hold whole samples).
 * @param options complete settings (see {@link resolveBoundaryRefinementOptions}).
 * @returns new segments, integer centiseconds, sorted, non-overlapping, start < end.
 * @throws AudioArgumentError (from speech-regions.ts) when `sampleRate` is not a positive multiple of 100 Hz.
 */
export function refineSpeechBoundaries(
  segments: readonly SpeechSegment[],
  samples: Float32Array,
  sampleRate: number,
  options: Readonly<BoundaryRefinementOptions>,
): SpeechSegment[] {
  if (segments.length === 0) return [];
  const levels = frameLevelsDbfs(samples, sampleRate);
  const thresholdDbfs = refinementThresholdDbfs(levels, segments, options);
  const levelSpeech = levelSegments(levels, thresholdDbfs, Math.round(options.bridgeSeconds * 100));
  const levelStarts = levelSpeech.map((segment) => segment.start);
  const levelEnds = levelSpeech.map((segment) => segment.end);
  const maxShift = Math.round(options.maxShiftSeconds * 100);

  const moved = segments.map((segment) => {
    const startIndex = nearestWithin(levelStarts, segment.start, maxShift);
    const endIndex = nearestWithin(levelEnds, segment.end, maxShift);
    const start = startIndex >= 0 ? (levelStarts[startIndex] as number) : segment.start;
    const end = endIndex >= 0 ? (levelEnds[endIndex] as number) : segment.end;
    return end > start ? { start, end } : { ...segment };
  });

  const insideOneLevelSegment = (from: number, to: number): boolean =>
    levelSpeech.some((level) => level.start <= from && level.end >= to);
  const refined: SpeechSegment[] = [];
  moved.forEach((segment, index) => {
    const previous = refined[refined.length - 1];
    if (previous) {
      const detectedSilenceStart = (segments[index - 1] as SpeechSegment).end;
      const detectedSilenceEnd = (segments[index] as SpeechSegment).start;
      const touches = segment.start <= previous.end;
      const weakStretch =
        detectedSilenceEnd - detectedSilenceStart <= 2 * maxShift &&
        insideOneLevelSegment(detectedSilenceStart, detectedSilenceEnd);
      if (touches || weakStretch) {
        previous.end = Math.max(previous.end, segment.end);
        return;
      }
    }
    refined.push({ ...segment });
  });
  return refined;
}
