/**
 * Finding speech in synthesized audio and cutting its tail (./synthesis-checks.ts): speech spans and
 * the detector seam (a VAD or the energy detector here, meant for synthetic speech with near-silent
 * pauses), tail trimming of silence, stationary noise and a short hallucinated burst after a long gap
 * (CosyVoice's known silent or hallucinated tails, docs/services.md "Faults the speech client survives"),
 * and the abrupt-end
 * test (speech still loud in the last 20 ms: the stream was cut mid-word).
 */
import type { VoiceActivityDetector } from '../vad/voice-activity-detector.ts';

/** One stretch of speech, seconds from the start of the audio. */
export interface SpeechSpan {
  startSeconds: number;
  endSeconds: number;
}

/**
 * Finds speech in mono audio. Returns sorted, non-overlapping spans in seconds; pauses shorter than the
 * detector's own minimum silence are bridged.
 */
export type SpeechActivityDetector = (
  samples: Float32Array,
  sampleRate: number,
) => SpeechSpan[] | Promise<SpeechSpan[]>;

/**
 * A voice activity detector of pipeline/services/vad (Silero, WebRTC VAD) as the speech finder of
 * these checks: its centisecond segments become spans in seconds. Use it where output may carry noise
 * an energy threshold takes for speech: `createCosyVoice2Synthesizer(settings, {detector:
 * speechActivityDetectorFrom(await createVoiceActivityDetector('silero'))})`.
 *
 * @param detector any engine of pipeline/services/vad.
 * @throws whatever the detector throws (VoiceActivityDetectionError), when the returned function runs.
 */
export function speechActivityDetectorFrom(detector: VoiceActivityDetector): SpeechActivityDetector {
  return async (samples, sampleRate) =>
    (await detector.detect(samples, sampleRate)).map((segment) => ({
      startSeconds: segment.start / 100,
      endSeconds: segment.end / 100,
    }));
}

/** Settings of the energy detector and of tail trimming. Levels in dBFS (full scale 1.0), durations in seconds. */
export interface TailTrimOptions {
  /** A 10 ms frame at or above this RMS level is sound (not silence). Default -50, as speech-regions.ts. */
  silenceThresholdDbfs: number;
  /** Silences shorter than this are bridged inside speech. Default 0.15, as speech-regions.ts. */
  minimumSilenceSeconds: number;
  /** Sound runs shorter than this are ignored. Default 0.03. */
  minimumSpeechSeconds: number;
  /** A trailing stretch at least this far below the loudest frames, level steady within `noiseSpreadDb`, is noise. Default 20. */
  noiseBelowPeakDb: number;
  /** Largest distance of a noise frame's level from the noise's median level. Default 6. */
  noiseSpreadDb: number;
  /** A steady trailing stretch must last this long to be called noise. Default 0.3. */
  minimumNoiseSeconds: number;
  /** Kept after the last speech, seconds (a short fade-out ends it when noise is cut). Default 0.05. */
  marginSeconds: number;
  /** A silence gap at least this long before a final short burst marks a hallucinated tail. Default 0.8. */
  hallucinationGapSeconds: number;
  /** The burst after the gap is cut only when it is at most this long. Default 2.0. */
  hallucinationMaximumSeconds: number;
  /** ...and when the speech before the gap already lasts this share of the typical duration. Default 0.8. */
  hallucinationCoverage: number;
  /** The last 20 ms at or above this RMS level means the audio was cut mid-speech. Default -30. */
  abruptEndDbfs: number;
}

/**
 * Defaults: silence threshold and bridging as pipeline/audio/speech-regions.ts (measured on this
 * project's engines); noise 20 dB under the loudest speech frames and steady within ±6 dB for 0.3 s
 * (speech is modulated by 10-30 dB at the syllable rate, steady hiss is not); a hallucinated tail is a
 * burst of at most 2 s after a gap of 0.8 s or more (CosyVoice's pauses at sentence ends are 0.2-0.6 s)
 * once the speech before the gap covers 80 % of the text's typical duration; an abrupt end is the
 * last 20 ms at -30 dBFS or louder (vowels sit at -15 to -30 dBFS; every engine ends on silence).
 */
export const DEFAULT_TAIL_TRIM_OPTIONS: Readonly<TailTrimOptions> = Object.freeze({
  silenceThresholdDbfs: -50,
  minimumSilenceSeconds: 0.15,
  minimumSpeechSeconds: 0.03,
  noiseBelowPeakDb: 20,
  noiseSpreadDb: 6,
  minimumNoiseSeconds: 0.3,
  marginSeconds: 0.05,
  hallucinationGapSeconds: 0.8,
  hallucinationMaximumSeconds: 2.0,
  hallucinationCoverage: 0.8,
  abruptEndDbfs: -30,
});

interface Frames {
  /** RMS level per frame, dBFS (-Infinity for digital silence). */
  levels: Float64Array;
  /** Samples per frame (round(sampleRate / 100)). */
  frameLength: number;
  sampleRate: number;
  /** Samples the frames cover (the last frame may be partial). */
  sampleCount: number;
}

function frameLevels(samples: Float32Array, sampleRate: number): Frames {
  const frameLength = Math.max(1, Math.round(sampleRate / 100));
  const count = Math.ceil(samples.length / frameLength);
  const levels = new Float64Array(count);
  for (let frame = 0; frame < count; frame++) {
    const end = Math.min(samples.length, (frame + 1) * frameLength);
    let energy = 0;
    for (let index = frame * frameLength; index < end; index++) energy += (samples[index] as number) ** 2;
    levels[frame] = 10 * Math.log10(energy / frameLength);
  }
  return { levels, frameLength, sampleRate, sampleCount: samples.length };
}

/** Start time of `frame` in seconds, at most the end of the samples. */
function frameSeconds(frames: Frames, frame: number): number {
  return Math.min(frame * frames.frameLength, frames.sampleCount) / frames.sampleRate;
}

/**
 * The energy detector of this module as a {@link SpeechActivityDetector}: 10 ms frames (round(rate /
 * 100) samples, so any sample rate works) at or above `silenceThresholdDbfs` are sound; silences
 * shorter than `minimumSilenceSeconds` are bridged; runs shorter than `minimumSpeechSeconds` dropped.
 *
 * @param options any of the thresholds; the rest from {@link DEFAULT_TAIL_TRIM_OPTIONS}.
 */
export function energySpeechDetector(options: Partial<TailTrimOptions> = {}): SpeechActivityDetector {
  const resolved = { ...DEFAULT_TAIL_TRIM_OPTIONS, ...options };
  return (samples, sampleRate) => {
    const frames = frameLevels(samples, sampleRate);
    return spansFromLevels(frames, (level) => level >= resolved.silenceThresholdDbfs, resolved);
  };
}

function spansFromLevels(
  frames: Frames,
  isSound: (level: number, frame: number) => boolean,
  options: TailTrimOptions,
): SpeechSpan[] {
  const frameDuration = frames.frameLength / frames.sampleRate;
  const runs: [number, number][] = [];
  let runStart = -1;
  for (let frame = 0; frame <= frames.levels.length; frame++) {
    const sound = frame < frames.levels.length && isSound(frames.levels[frame] as number, frame);
    if (sound && runStart < 0) runStart = frame;
    if (!sound && runStart >= 0) {
      runs.push([runStart, frame]);
      runStart = -1;
    }
  }
  const bridged: [number, number][] = [];
  for (const run of runs) {
    const previous = bridged[bridged.length - 1];
    if (previous && (run[0] - previous[1]) * frameDuration < options.minimumSilenceSeconds) previous[1] = run[1];
    else bridged.push([...run]);
  }
  return bridged
    .filter(([start, end]) => (end - start) * frameDuration >= options.minimumSpeechSeconds)
    .map(([start, end]) => ({ startSeconds: frameSeconds(frames, start), endSeconds: frameSeconds(frames, end) }));
}

/** What {@link trimTail} removed. */
export type TailKind = 'silence' | 'noise' | 'hallucination';

/** Result of {@link trimTail}. */
export interface TrimmedTail {
  /**
   * The kept samples: a view of the input's first samples when nothing was faded (no copy: the two
   * share memory), else a copy with the fade (the input is never changed).
   */
  samples: Float32Array;
  /** Seconds removed from the end. */
  removedSeconds: number;
  /** What was removed, strongest first ('hallucination' > 'noise' > 'silence'); empty when nothing. */
  removed: TailKind[];
  /** Speech spans of the kept samples, seconds. */
  speech: SpeechSpan[];
}

/**
 * Cuts what follows the last speech: trailing silence, a steady noise tail, and a hallucinated burst
 * (see {@link TailTrimOptions}); keeps `marginSeconds` after the last speech, fading the last 10 ms
 * out when noise was cut.
 *
 * @param samples mono samples, nominal range [-1, 1].
 * @param sampleRate Hz.
 * @param typicalSeconds the text's typical speech duration (for the hallucination rule); 0 disables that rule.
 * @param options thresholds; the rest from {@link DEFAULT_TAIL_TRIM_OPTIONS}.
 * @param detector speech finder; default the energy detector with the same options.
 * @returns the kept samples and their speech spans; when no speech is found, the samples unchanged
 *   and no spans.
 */
export async function trimTail(
  samples: Float32Array,
  sampleRate: number,
  typicalSeconds: number,
  options: Partial<TailTrimOptions> = {},
  detector?: SpeechActivityDetector,
): Promise<TrimmedTail> {
  const resolved = { ...DEFAULT_TAIL_TRIM_OPTIONS, ...options };
  const frames = frameLevels(samples, sampleRate);
  const removed: TailKind[] = [];

  // 1. Steady noise at the end: frames well below the loudest speech whose level stays near one value.
  const finite = Array.from(frames.levels)
    .filter((level) => Number.isFinite(level))
    .sort((a, b) => a - b);
  const peak = finite.length > 0 ? (finite[Math.floor(finite.length * 0.95)] as number) : -Infinity;
  // A partial last frame reads quieter than it is (its RMS divides by a whole frame): leave it out.
  let soundEndFrame = Math.floor(frames.sampleCount / frames.frameLength);
  while (soundEndFrame > 0 && !((frames.levels[soundEndFrame - 1] as number) >= resolved.silenceThresholdDbfs))
    soundEndFrame--;
  const noiseStart = steadyNoiseStart(frames, soundEndFrame, peak - resolved.noiseBelowPeakDb, resolved);
  let endSample = samples.length;
  let fade = false;
  if (noiseStart !== null) {
    endSample = noiseStart * frames.frameLength;
    fade = true;
    removed.push('noise');
  }

  // 2. Speech spans of what is left; a short final burst after a long gap is a hallucination.
  const find = detector ?? energySpeechDetector(resolved);
  let speech = await find(samples.subarray(0, endSample), sampleRate);
  if (speech.length >= 2 && typicalSeconds > 0) {
    const last = speech[speech.length - 1] as SpeechSpan;
    const beforeGap = speech[speech.length - 2] as SpeechSpan;
    const gap = last.startSeconds - beforeGap.endSeconds;
    const burst = last.endSeconds - last.startSeconds;
    const covered = beforeGap.endSeconds - (speech[0] as SpeechSpan).startSeconds;
    if (
      gap >= resolved.hallucinationGapSeconds &&
      burst <= resolved.hallucinationMaximumSeconds &&
      covered >= resolved.hallucinationCoverage * typicalSeconds
    ) {
      speech = speech.slice(0, -1);
      endSample = Math.min(endSample, Math.round(beforeGap.endSeconds * sampleRate));
      removed.unshift('hallucination');
      fade = true;
    }
  }

  // 3. Silence after the last speech, keeping a margin.
  const lastSpeech = speech[speech.length - 1];
  if (lastSpeech) {
    const speechEndSample = Math.min(samples.length, Math.ceil(lastSpeech.endSeconds * sampleRate));
    const withMargin = Math.min(endSample, speechEndSample + Math.round(resolved.marginSeconds * sampleRate));
    if (withMargin < endSample) {
      if (!removed.includes('noise') && !removed.includes('hallucination')) removed.push('silence');
      endSample = withMargin;
    }
  }
  // a view when nothing is faded (the synthesis path keeps every clip, so a copy per utterance would
  // add up over a build); a fade is written into a copy, never into the input
  const kept = fade ? samples.slice(0, endSample) : samples.subarray(0, endSample);
  if (fade) fadeOutInPlace(kept, Math.min(kept.length, Math.round(0.01 * sampleRate)));
  return { samples: kept, removedSeconds: (samples.length - endSample) / sampleRate, removed, speech };
}

/** First frame of a steady trailing noise run ending at `soundEndFrame`, or null when there is none. */
function steadyNoiseStart(
  frames: Frames,
  soundEndFrame: number,
  ceilingDbfs: number,
  options: TailTrimOptions,
): number | null {
  const minimumFrames = Math.ceil((options.minimumNoiseSeconds * frames.sampleRate) / frames.frameLength);
  if (soundEndFrame < minimumFrames) return null;
  // The noise level: median of the last `minimumFrames` sound frames; they must all be quiet and steady.
  const tail = Array.from(frames.levels.subarray(soundEndFrame - minimumFrames, soundEndFrame));
  const median = [...tail].sort((a, b) => a - b)[Math.floor(tail.length / 2)] as number;
  const steady = (level: number): boolean => level < ceilingDbfs && Math.abs(level - median) <= options.noiseSpreadDb;
  if (!tail.every(steady)) return null;
  let start = soundEndFrame - minimumFrames;
  while (start > 0 && steady(frames.levels[start - 1] as number)) start--;
  return start === 0 ? null : start;
}

function fadeOutInPlace(samples: Float32Array, length: number): void {
  for (let index = 0; index < length; index++) {
    const position = samples.length - length + index;
    samples[position] = (samples[position] as number) * (1 - (index + 1) / length);
  }
}

/**
 * True when the audio ends inside speech: the RMS level of its last 20 ms is at least `abruptEndDbfs`.
 * Every engine ends an utterance on silence or a fade, so a loud last frame means the stream was cut.
 *
 * @param samples mono samples, nominal range [-1, 1].
 * @param sampleRate Hz.
 */
export function endsAbruptly(
  samples: Float32Array,
  sampleRate: number,
  abruptEndDbfs: number = DEFAULT_TAIL_TRIM_OPTIONS.abruptEndDbfs,
): boolean {
  const length = Math.min(samples.length, Math.round(0.02 * sampleRate));
  if (length === 0) return false;
  let energy = 0;
  for (let index = samples.length - length; index < samples.length; index++) energy += (samples[index] as number) ** 2;
  return 10 * Math.log10(energy / length) >= abruptEndDbfs;
}
