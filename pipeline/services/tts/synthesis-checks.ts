/**
 * Checks on audio that came back from a remote TTS service, before it is accepted:
 * - tail trimming: silence, stationary noise and a short hallucinated burst after a long gap are cut
 *   from the end (CosyVoice's known "silence or hallucinated tails", ../shared/docs/services.md);
 * - abrupt end: speech still loud in the last 20 ms means the stream was cut mid-word;
 * - duration plausibility: the speech must last between what the text predicts at a very fast and at a
 *   very slow speaking rate (truncated stream / runaway output), see {@link DEFAULT_SPEECH_RATE_BOUNDS};
 * - speech rate over many utterances ({@link SpeechRateMonitor}): a configured sample rate that is not
 *   the model's stretches every clip by the same factor, which no single clip shows but the median does.
 *
 * The energy detector here is meant for synthetic speech (near-silent pauses). A VAD can replace it
 * through {@link SpeechActivityDetector} (e.g. the Silero VAD of pipeline/services/vad/).
 */
import type { Language } from '../../model/types.ts';
import type { VoiceActivityDetector } from '../vad/voice-activity-detector.ts';
import { defaultWordTokenizer, type WordTokenizer } from '../../alignment/spoken-words.ts';

/** One stretch of speech, seconds from the start of the audio. */
export interface SpeechSpan {
  startSeconds: number;
  endSeconds: number;
}

/**
 * Finds speech in mono audio. Returns sorted, non-overlapping spans in seconds; pauses shorter than the
 * detector's own minimum silence are bridged.
 */
export type SpeechActivityDetector = (samples: Float32Array, sampleRate: number) => SpeechSpan[] | Promise<SpeechSpan[]>;

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
  return async (samples, sampleRate) => (await detector.detect(samples, sampleRate)).map((segment) => ({ startSeconds: segment.start / 100, endSeconds: segment.end / 100 }));
}

/** Speaking-rate bounds of one language; rates in spoken units (see {@link spokenLength}) per second of speech. */
export interface SpeechRateBounds {
  /** What ordinary conversational speech reaches; used for the predicted duration and the tempo ratio. */
  typicalUnitsPerSecond: number;
  /** Slower than this (with the allowances) is runaway output. */
  minimumUnitsPerSecond: number;
  /** Faster than this is truncated output (or a sample rate set too high). */
  maximumUnitsPerSecond: number;
  /** Longest pause one pausing punctuation mark may add, seconds (added to the maximum duration). */
  pauseAllowanceSeconds: number;
  /** Fixed slack added to the maximum duration, seconds (short utterances vary most). */
  allowanceSeconds: number;
}

/**
 * Bounds per language. Units: English letters (digits count 4, as read out; spoken-words.ts), Japanese
 * morae (kuromoji pronunciation; japanese-morae.ts).
 * - English: conversational speech runs at about 150-190 words per minute, 5.2 syllables per second
 *   (J. Yuan, M. Liberman, C. Cieri, "Towards an integrated understanding of speaking rate in
 *   conversation", Interspeech 2006), i.e. about 12-15 letters per second; espeak-ng at 175 words per
 *   minute measures 12.4-15.1 here. Bounds 5 (about 65 words per minute) to 24 (about 300) letters/s.
 * - Japanese: spontaneous speech averages 7-8 morae per second, fast speakers reach 10-11 (Corpus of
 *   Spontaneous Japanese, K. Maekawa, "Corpus of Spontaneous Japanese: its design and evaluation",
 *   SSPR 2003); Open JTalk and espeak-ng measure 6.5-7.5. Bounds 3 to 13 morae/s.
 * A stream cut at half the text doubles the apparent rate and crosses the maximum; a clean cut that
 * keeps 70 % or more of the text, or a cut of a one-word utterance, cannot be told from fast speech
 * (the abrupt-end check catches cuts inside a word).
 */
export const DEFAULT_SPEECH_RATE_BOUNDS: Readonly<Record<Language, Readonly<SpeechRateBounds>>> = Object.freeze({
  en: Object.freeze({ typicalUnitsPerSecond: 13.5, minimumUnitsPerSecond: 5, maximumUnitsPerSecond: 24, pauseAllowanceSeconds: 0.6, allowanceSeconds: 1.0 }),
  ja: Object.freeze({ typicalUnitsPerSecond: 7.5, minimumUnitsPerSecond: 3, maximumUnitsPerSecond: 13, pauseAllowanceSeconds: 0.6, allowanceSeconds: 1.0 }),
});

/** How long a text is when spoken, in the units of {@link DEFAULT_SPEECH_RATE_BOUNDS}. */
export interface SpokenLength {
  units: number;
  unit: 'letters' | 'morae';
  /** Words followed by pausing punctuation, the last word excluded. */
  pauses: number;
}

/**
 * The spoken length of a text: English letters (digits 4 each), Japanese morae (dictionary
 * pronunciation, estimated where unknown), and pausing punctuation marks inside the text.
 *
 * @param text the text as written (for Japanese, the original with kanji: kuromoji reads it).
 * @param tokenizer word splitter; default {@link defaultWordTokenizer}.
 * @throws WordTokenizerError when the Japanese dictionary cannot be loaded.
 */
export async function spokenLength(text: string, language: Language, tokenizer: WordTokenizer = defaultWordTokenizer): Promise<SpokenLength> {
  const words = await tokenizer.tokenize(text, language);
  const units = words.reduce((sum, word) => sum + word.weight, 0);
  const pauses = words.slice(0, -1).filter((word) => word.pauseAfter).length;
  return { units, unit: language === 'ja' ? 'morae' : 'letters', pauses };
}

/** Plausible speech durations of one text, seconds. */
export interface DurationRange {
  /** Shorter speech is truncated: units / maximum rate. */
  minimumSeconds: number;
  /** units / typical rate. */
  typicalSeconds: number;
  /** Longer speech is runaway: units / minimum rate + pauses * pause allowance + allowance. */
  maximumSeconds: number;
}

/**
 * The plausible speech duration range of a text of `length` under `bounds`.
 *
 * @returns seconds; minimum <= typical <= maximum.
 */
export function plausibleDurationRange(length: SpokenLength, bounds: SpeechRateBounds): DurationRange {
  return {
    minimumSeconds: length.units / bounds.maximumUnitsPerSecond,
    typicalSeconds: length.units / bounds.typicalUnitsPerSecond,
    maximumSeconds: length.units / bounds.minimumUnitsPerSecond + length.pauses * bounds.pauseAllowanceSeconds + bounds.allowanceSeconds,
  };
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

function spansFromLevels(frames: Frames, isSound: (level: number, frame: number) => boolean, options: TailTrimOptions): SpeechSpan[] {
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
  /** The kept samples (a copy; the input is not changed). */
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
  const finite = Array.from(frames.levels).filter((level) => Number.isFinite(level)).sort((a, b) => a - b);
  const peak = finite.length > 0 ? (finite[Math.floor(finite.length * 0.95)] as number) : -Infinity;
  // A partial last frame reads quieter than it is (its RMS divides by a whole frame): leave it out.
  let soundEndFrame = Math.floor(frames.sampleCount / frames.frameLength);
  while (soundEndFrame > 0 && !((frames.levels[soundEndFrame - 1] as number) >= resolved.silenceThresholdDbfs)) soundEndFrame--;
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
    if (gap >= resolved.hallucinationGapSeconds && burst <= resolved.hallucinationMaximumSeconds && covered >= resolved.hallucinationCoverage * typicalSeconds) {
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
  const kept = samples.slice(0, endSample);
  if (fade) fadeOutInPlace(kept, Math.min(kept.length, Math.round(0.01 * sampleRate)));
  return { samples: kept, removedSeconds: (samples.length - endSample) / sampleRate, removed, speech };
}

/** First frame of a steady trailing noise run ending at `soundEndFrame`, or null when there is none. */
function steadyNoiseStart(frames: Frames, soundEndFrame: number, ceilingDbfs: number, options: TailTrimOptions): number | null {
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
export function endsAbruptly(samples: Float32Array, sampleRate: number, abruptEndDbfs: number = DEFAULT_TAIL_TRIM_OPTIONS.abruptEndDbfs): boolean {
  const length = Math.min(samples.length, Math.round(0.02 * sampleRate));
  if (length === 0) return false;
  let energy = 0;
  for (let index = samples.length - length; index < samples.length; index++) energy += (samples[index] as number) ** 2;
  return 10 * Math.log10(energy / length) >= abruptEndDbfs;
}

/** Settings of {@link checkSynthesizedSpeech}. */
export interface SynthesisCheckOptions {
  /** Speaking-rate bounds per language; default {@link DEFAULT_SPEECH_RATE_BOUNDS}. */
  bounds: Readonly<Record<Language, SpeechRateBounds>>;
  /** Tail trimming and detector thresholds; default {@link DEFAULT_TAIL_TRIM_OPTIONS}. */
  tail: TailTrimOptions;
  /** Speech finder; default the energy detector of this module. */
  detector?: SpeechActivityDetector;
}

/** Resolves partial check settings. */
export function resolveSynthesisCheckOptions(options: { bounds?: Partial<Record<Language, Partial<SpeechRateBounds>>>; tail?: Partial<TailTrimOptions>; detector?: SpeechActivityDetector } = {}): SynthesisCheckOptions {
  const bounds = {
    en: { ...DEFAULT_SPEECH_RATE_BOUNDS.en, ...options.bounds?.en },
    ja: { ...DEFAULT_SPEECH_RATE_BOUNDS.ja, ...options.bounds?.ja },
  };
  const resolved: SynthesisCheckOptions = { bounds, tail: { ...DEFAULT_TAIL_TRIM_OPTIONS, ...options.tail } };
  if (options.detector) resolved.detector = options.detector;
  return resolved;
}

/** Verdict of {@link checkSynthesizedSpeech}. */
export type SpeechVerdict = 'plausible' | 'truncated' | 'runaway' | 'no-speech';

/** Result of {@link checkSynthesizedSpeech}. */
export interface SpeechCheck {
  verdict: SpeechVerdict;
  /** Why the verdict is not 'plausible' (empty when it is). */
  reason: string;
  /** The audio with its tail trimmed (mono, same sample rate). */
  samples: Float32Array;
  /** From the first speech start to the last speech end, seconds (0 without speech). */
  speechSeconds: number;
  /** Spoken units per second of speech (0 without speech). */
  unitsPerSecond: number;
  /** units per second / the language's typical rate (1 = ordinary tempo; 0 without speech). */
  tempo: number;
  length: SpokenLength;
  range: DurationRange;
  tail: Pick<TrimmedTail, 'removed' | 'removedSeconds'>;
  abruptEnd: boolean;
}

/**
 * Trims the tail of synthesized speech and judges its duration against the text.
 *
 * Order: abrupt end measured on the audio as received; tail trimmed ({@link trimTail}); then the
 * speech duration (first speech start to last speech end) is compared with
 * {@link plausibleDurationRange}: longer than the maximum is 'runaway'; an abrupt end or shorter than
 * the minimum is 'truncated'; no speech at all is 'no-speech'.
 *
 * @param samples mono samples, nominal range [-1, 1].
 * @param sampleRate Hz (the rate the samples are interpreted at: the configured model rate).
 * @param text the text as written (the spoken length is counted on it).
 * @param options bounds, tail settings and detector; default {@link resolveSynthesisCheckOptions}().
 * @param tokenizer word splitter for {@link spokenLength}.
 * @throws WordTokenizerError when the Japanese dictionary cannot be loaded.
 */
export async function checkSynthesizedSpeech(
  samples: Float32Array,
  sampleRate: number,
  text: string,
  language: Language,
  options: SynthesisCheckOptions = resolveSynthesisCheckOptions(),
  tokenizer?: WordTokenizer,
): Promise<SpeechCheck> {
  const bounds = options.bounds[language];
  const length = await spokenLength(text, language, tokenizer);
  const range = plausibleDurationRange(length, bounds);
  const abruptEnd = endsAbruptly(samples, sampleRate, options.tail.abruptEndDbfs);
  const trimmed = await trimTail(samples, sampleRate, range.typicalSeconds, options.tail, options.detector);
  const first = trimmed.speech[0];
  const last = trimmed.speech[trimmed.speech.length - 1];
  const speechSeconds = first && last ? last.endSeconds - first.startSeconds : 0;
  const unitsPerSecond = speechSeconds > 0 ? length.units / speechSeconds : 0;
  const tempo = unitsPerSecond / bounds.typicalUnitsPerSecond;
  const rate = `${unitsPerSecond.toFixed(1)} ${length.unit}/s`;
  let verdict: SpeechVerdict = 'plausible';
  let reason = '';
  if (speechSeconds === 0) {
    verdict = 'no-speech';
    reason = `no speech in ${(samples.length / sampleRate).toFixed(2)} s of audio`;
  } else if (speechSeconds > range.maximumSeconds) {
    verdict = 'runaway';
    reason = `${speechSeconds.toFixed(2)} s of speech for ${length.units} ${length.unit} (${rate}) is longer than the plausible ${range.maximumSeconds.toFixed(2)} s`;
  } else if (abruptEnd) {
    verdict = 'truncated';
    reason = `the audio ends inside speech (last 20 ms at or above ${options.tail.abruptEndDbfs} dBFS) after ${(samples.length / sampleRate).toFixed(2)} s`;
  } else if (speechSeconds < range.minimumSeconds) {
    verdict = 'truncated';
    reason = `${speechSeconds.toFixed(2)} s of speech for ${length.units} ${length.unit} (${rate}) is shorter than the plausible ${range.minimumSeconds.toFixed(2)} s`;
  }
  return {
    verdict,
    reason,
    samples: trimmed.samples,
    speechSeconds,
    unitsPerSecond,
    tempo,
    length,
    range,
    tail: { removed: trimmed.removed, removedSeconds: trimmed.removedSeconds },
    abruptEnd,
  };
}

/** Settings of {@link SpeechRateMonitor}. */
export interface SpeechRateMonitorOptions {
  /** Accepted utterances looked at (the most recent ones); no verdict before this many. Default 8. */
  windowSize: number;
  /** Median tempo ratio below this is implausible. Default 0.75. */
  minimumTempoRatio: number;
  /** Median tempo ratio above this is implausible. Default 1.4. */
  maximumTempoRatio: number;
}

/**
 * Defaults: over 8 utterances, the median tempo relative to the reference (the voice prompt's tempo,
 * or the language's typical rate) must stay within [0.75, 1.4]. A model rate of 24000 Hz read as
 * 16000 Hz gives 0.667 and is caught; read as 22050 Hz gives 0.919, which speaking-rate statistics
 * cannot separate from a slower voice (keep `sampleRate` at the model's: 24000 for CosyVoice2).
 */
export const DEFAULT_SPEECH_RATE_MONITOR_OPTIONS: Readonly<SpeechRateMonitorOptions> = Object.freeze({
  windowSize: 8,
  minimumTempoRatio: 0.75,
  maximumTempoRatio: 1.4,
});

/** What {@link SpeechRateMonitor.assess} concludes. */
export interface SpeechRateAssessment {
  /** Median of the recorded tempo ratios in the window. */
  medianTempoRatio: number;
  /** Ratios in the window. */
  count: number;
  plausible: boolean;
}

/**
 * Watches the tempo of accepted utterances (their units per second over the reference's). A sample
 * rate configured differently from the model's stretches every clip by the same factor: single clips
 * stay inside the per-utterance bounds, but the median over a window moves out of
 * [minimumTempoRatio, maximumTempoRatio].
 */
export class SpeechRateMonitor {
  readonly options: SpeechRateMonitorOptions;
  private readonly ratios: number[] = [];

  constructor(options: Partial<SpeechRateMonitorOptions> = {}) {
    this.options = { ...DEFAULT_SPEECH_RATE_MONITOR_OPTIONS, ...options };
  }

  /**
   * Records one accepted utterance.
   *
   * @param tempoRatio the utterance's tempo divided by the reference tempo (> 0; others are ignored).
   */
  record(tempoRatio: number): void {
    if (!(tempoRatio > 0) || !Number.isFinite(tempoRatio)) return;
    this.ratios.push(tempoRatio);
    if (this.ratios.length > this.options.windowSize) this.ratios.shift();
  }

  /** @returns the verdict over the window, or null while fewer than `windowSize` utterances were recorded. */
  assess(): SpeechRateAssessment | null {
    if (this.ratios.length < this.options.windowSize) return null;
    const sorted = [...this.ratios].sort((a, b) => a - b);
    const middle = sorted.length / 2;
    const medianTempoRatio = sorted.length % 2 === 1 ? (sorted[Math.floor(middle)] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
    return {
      medianTempoRatio,
      count: sorted.length,
      plausible: medianTempoRatio >= this.options.minimumTempoRatio && medianTempoRatio <= this.options.maximumTempoRatio,
    };
  }
}
