/**
 * Checks on audio that came back from a remote TTS service, before it is accepted:
 * - tail trimming: silence, stationary noise and a short hallucinated burst after a long gap are cut
 *   from the end (CosyVoice's known silent or hallucinated tails, docs/services.md "Faults the speech
 *   client survives");
 * - abrupt end: speech still loud in the last 20 ms means the stream was cut mid-word;
 * - duration plausibility: the speech must last between what the text predicts at a very fast and at a
 *   very slow speaking rate (truncated stream / runaway output), see {@link DEFAULT_SPEECH_RATE_BOUNDS};
 * - speech rate over many utterances ({@link SpeechRateMonitor}): a configured sample rate that is not
 *   the model's stretches every clip by the same factor, which no single clip shows but the median does.
 *
 * The energy detector here is meant for synthetic speech (near-silent pauses). A VAD can replace it
 * through {@link SpeechActivityDetector} (e.g. the Silero VAD of pipeline/services/vad/).
 *
 * Speech spans, the detectors and tail trimming: synthesis-tail.ts; speaking-rate bounds, spoken
 * length and the speech-rate watch: synthesis-speech-rate.ts (both re-exported).
 */
import type { Language } from '../../model/types.ts';
import { entryOfLanguage } from '../../model/language-code.ts';
import type { WordTokenizer } from '../../alignment/spoken-words.ts';
import {
  DEFAULT_SPEECH_RATE_BOUNDS,
  plausibleDurationRange,
  speechRateBoundsOf,
  spokenLength,
  type DurationRange,
  type SpeechRateBounds,
  type SpokenLength,
} from './synthesis-speech-rate.ts';
import {
  DEFAULT_TAIL_TRIM_OPTIONS,
  endsAbruptly,
  trimTail,
  type SpeechActivityDetector,
  type TailTrimOptions,
  type TrimmedTail,
} from './synthesis-tail.ts';

export {
  DEFAULT_SPEECH_RATE_BOUNDS,
  speechRateBoundsOf,
  DEFAULT_SPEECH_RATE_MONITOR_OPTIONS,
  plausibleDurationRange,
  SpeechRateMonitor,
  spokenLength,
  type DurationRange,
  type SpeechRateAssessment,
  type SpeechRateBounds,
  type SpeechRateMonitorOptions,
  type SpokenLength,
} from './synthesis-speech-rate.ts';
export {
  DEFAULT_TAIL_TRIM_OPTIONS,
  endsAbruptly,
  energySpeechDetector,
  speechActivityDetectorFrom,
  trimTail,
  type SpeechActivityDetector,
  type SpeechSpan,
  type TailKind,
  type TailTrimOptions,
  type TrimmedTail,
} from './synthesis-tail.ts';

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
export function resolveSynthesisCheckOptions(
  options: {
    bounds?: Partial<Record<Language, Partial<SpeechRateBounds>>>;
    tail?: Partial<TailTrimOptions>;
    detector?: SpeechActivityDetector;
  } = {},
): SynthesisCheckOptions {
  const bounds: Record<Language, SpeechRateBounds> = {};
  for (const language of new Set([...Object.keys(DEFAULT_SPEECH_RATE_BOUNDS), ...Object.keys(options.bounds ?? {})])) {
    bounds[language] = { ...speechRateBoundsOf(language), ...options.bounds?.[language] };
  }
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
  const bounds = Object.hasOwn(options.bounds, language)
    ? entryOfLanguage(options.bounds, language, 'speech-rate bounds')
    : speechRateBoundsOf(language);
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
