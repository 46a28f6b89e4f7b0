/**
 * Speaking rate of synthesized speech (./synthesis-checks.ts): the per-language bounds, the spoken
 * length of a text and the duration range it allows (truncated stream / runaway output), and the
 * watch over many utterances ({@link SpeechRateMonitor}) that catches a wrong sample rate.
 */
import type { Language } from '../../model/types.ts';
import { languagePackOf } from '../../model/language-pack.ts';
import { defaultWordTokenizer, type WordTokenizer } from '../../alignment/spoken-words.ts';

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
  en: Object.freeze({
    typicalUnitsPerSecond: 13.5,
    minimumUnitsPerSecond: 5,
    maximumUnitsPerSecond: 24,
    pauseAllowanceSeconds: 0.6,
    allowanceSeconds: 1.0,
  }),
  ja: Object.freeze({
    typicalUnitsPerSecond: 7.5,
    minimumUnitsPerSecond: 3,
    maximumUnitsPerSecond: 13,
    pauseAllowanceSeconds: 0.6,
    allowanceSeconds: 1.0,
  }),
});

/**
 * The speaking-rate bounds of a language: {@link DEFAULT_SPEECH_RATE_BOUNDS} for English and Japanese,
 * else its language pack's `speechRate` (letters per second for space-separated scripts, characters
 * for `intl-segmenter` ones: the units of pipeline/alignment/spoken-words.ts), with the same allowances.
 * @throws LanguagePackError for a language without a pack
 */
export function speechRateBoundsOf(language: Language): Readonly<SpeechRateBounds> {
  const built = Object.hasOwn(DEFAULT_SPEECH_RATE_BOUNDS, language) ? DEFAULT_SPEECH_RATE_BOUNDS[language] : undefined;
  if (built) return built;
  const rate = languagePackOf(language).speechRate;
  return {
    typicalUnitsPerSecond: rate.typical,
    minimumUnitsPerSecond: rate.minimum,
    maximumUnitsPerSecond: rate.maximum,
    pauseAllowanceSeconds: 0.6,
    allowanceSeconds: 1.0,
  };
}

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
export async function spokenLength(
  text: string,
  language: Language,
  tokenizer: WordTokenizer = defaultWordTokenizer,
): Promise<SpokenLength> {
  const words = await tokenizer.tokenize(text, language);
  const units = words.reduce((sum, word) => sum + word.weight, 0);
  const pauses = words.slice(0, -1).filter((word) => word.pauseAfter).length;
  // the tokenizer weighs kuromoji morphemes in morae, every other word in letters (spoken-words.ts)
  return {
    units,
    unit: languagePackOf(language).script.segmentation === 'japanese-morphemes' ? 'morae' : 'letters',
    pauses,
  };
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
    maximumSeconds:
      length.units / bounds.minimumUnitsPerSecond +
      length.pauses * bounds.pauseAllowanceSeconds +
      bounds.allowanceSeconds,
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
  /**
   * Utterances whose text predicts less speech than this (seconds at the language's typical rate,
   * {@link DurationRange.typicalSeconds}) are not looked at. Default 1.5.
   */
  minimumTypicalSeconds: number;
  /** Utterances of one voice (each against its own prompt) before its median counts. Default 8. */
  voiceWindowSize: number;
  /** Every voice's median below this is implausible (a rate read too low). Default 0.95. */
  minimumVoiceTempoRatio: number;
  /** Every voice's median above this is implausible (a rate read too high). Default 1.045. */
  maximumVoiceTempoRatio: number;
}

/**
 * Defaults: over 8 utterances, the median tempo relative to the reference (the voice prompt's tempo,
 * or the language's typical rate) must stay within [0.75, 1.4]. A model rate of 24000 Hz read as
 * 16000 Hz gives 0.667 and is caught; read as 22050 Hz gives 0.919, which speaking-rate statistics
 * cannot separate from a slower voice (keep `sampleRate` at the model's: 24000 for CosyVoice2).
 * Only utterances of at least 1.5 s (predicted) count: the tempo of short ones varies most (a pause
 * at a comma, a lengthened backchannel). Measured on a 26-utterance espeak-ng dialogue through the
 * CosyVoice2 loopback server: the ratios of texts under 1.5 s ran 0.48-0.94 ("Yes, it was.",
 * "mm-hmm", "And, how tall is it?"), those above 0.89-1.21; with the short ones counted, 8 in a row
 * in an unlucky completion order had a median of 0.72 and quarantined correct speech.
 *
 * Each voice with a prompt is also watched against its own prompt: a rate mismatch moves every voice
 * by the same factor, a voice's own pace moves only that voice. Once every voice with
 * `voiceWindowSize` utterances has a median above 1.045 (or every one below 0.95), and there are two
 * such voices (or only one voice was heard), the rate is taken for wrong: a CosyVoice 1 model (22050 Hz) read as 24000 Hz is 9 % fast. Measured through the
 * CosyVoice2 loopback server with two espeak-ng prompts over ten sentences: the medians of correct
 * speech were 0.965 and 0.993, of 22050 Hz speech read as 24000 Hz 1.052 and 1.082.
 */
export const DEFAULT_SPEECH_RATE_MONITOR_OPTIONS: Readonly<SpeechRateMonitorOptions> = Object.freeze({
  windowSize: 8,
  minimumTempoRatio: 0.75,
  maximumTempoRatio: 1.4,
  minimumTypicalSeconds: 1.5,
  voiceWindowSize: 8,
  minimumVoiceTempoRatio: 0.95,
  maximumVoiceTempoRatio: 1.045,
});

/** What {@link SpeechRateMonitor.assess} concludes. */
export interface SpeechRateAssessment {
  /** Median of the recorded tempo ratios in the window. */
  medianTempoRatio: number;
  /** Ratios in the window. */
  count: number;
  plausible: boolean;
  /**
   * Voices whose medians, each against its own prompt, concluded it (every watched voice beyond the
   * same voice bound); absent when the window over all utterances concluded.
   */
  voices?: number;
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
  /** Each voice's recent ratios (against its own prompt), by voice key. */
  private readonly voiceRatios = new Map<string, number[]>();

  constructor(options: Partial<SpeechRateMonitorOptions> = {}) {
    this.options = { ...DEFAULT_SPEECH_RATE_MONITOR_OPTIONS, ...options };
  }

  /**
   * Records one accepted utterance.
   *
   * @param tempoRatio the utterance's tempo divided by the reference tempo (> 0; others are ignored).
   * @param typicalSeconds the speech its text predicts at the language's typical rate, seconds
   *   (utterances under `minimumTypicalSeconds` are ignored)
   * @param voice the voice's key when the ratio is against the voice's own prompt (also watched per
   *   voice); undefined when the reference is the language's typical rate
   */
  record(tempoRatio: number, typicalSeconds: number, voice?: string): void {
    if (!(tempoRatio > 0) || !Number.isFinite(tempoRatio)) return;
    if (!(typicalSeconds >= this.options.minimumTypicalSeconds)) return;
    this.ratios.push(tempoRatio);
    if (this.ratios.length > this.options.windowSize) this.ratios.shift();
    if (voice === undefined) return;
    const ratios = this.voiceRatios.get(voice) ?? [];
    ratios.push(tempoRatio);
    if (ratios.length > this.options.voiceWindowSize) ratios.shift();
    this.voiceRatios.set(voice, ratios);
  }

  /** @returns the verdict over the window, or null while fewer than `windowSize` utterances were recorded. */
  assess(): SpeechRateAssessment | null {
    if (this.ratios.length < this.options.windowSize) return null;
    const medianTempoRatio = median(this.ratios);
    const plausible =
      medianTempoRatio >= this.options.minimumTempoRatio && medianTempoRatio <= this.options.maximumTempoRatio;
    if (!plausible) return { medianTempoRatio, count: this.ratios.length, plausible };
    const voiceMedians = [...this.voiceRatios.values()]
      .filter((ratios) => ratios.length >= this.options.voiceWindowSize)
      .map(median);
    // one voice's own pace never decides alone while another voice was heard
    const beyond =
      voiceMedians.length >= Math.min(2, this.voiceRatios.size) &&
      voiceMedians.length > 0 &&
      (voiceMedians.every((value) => value > this.options.maximumVoiceTempoRatio) ||
        voiceMedians.every((value) => value < this.options.minimumVoiceTempoRatio));
    if (beyond) {
      const count = voiceMedians.length * this.options.voiceWindowSize;
      return { medianTempoRatio: median(voiceMedians), count, plausible: false, voices: voiceMedians.length };
    }
    return { medianTempoRatio, count: this.ratios.length, plausible };
  }
}

/** Sample rates speech models output, Hz: what a rate suggested by the tempo is rounded to. */
export const MODEL_SAMPLE_RATES: readonly number[] = [8000, 16000, 22050, 24000, 32000, 44100, 48000];

/**
 * The model's likely sample rate when audio read at `configuredRate` runs `tempoRatio` times its
 * expected tempo: the nearest of {@link MODEL_SAMPLE_RATES} other than the configured one.
 * @param configuredRate the `sampleRate` setting, Hz.
 * @param tempoRatio the median tempo ratio (> 0).
 * @returns `{estimate, likely}`: the rate the tempo gives, rounded, and the nearest model rate.
 */
export function likelySampleRate(configuredRate: number, tempoRatio: number): { estimate: number; likely: number } {
  const estimate = Math.round(configuredRate / tempoRatio);
  const candidates = MODEL_SAMPLE_RATES.filter((rate) => rate !== configuredRate);
  const likely = candidates.reduce((best, rate) =>
    Math.abs(Math.log(rate / estimate)) < Math.abs(Math.log(best / estimate)) ? rate : best,
  );
  return { estimate, likely };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return sorted.length % 2 === 1
    ? (sorted[Math.floor(middle)] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
