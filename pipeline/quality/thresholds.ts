/**
 * The thresholds of the signal and content checks, as one options object with defaults, each with
 * its source. They flag items for review in `quality.json`; they never change the dataset.
 */
import type { Language } from '../model/types.ts';

/** A plausible range of a rate, in units per second, with its source. */
export interface RateRange {
  minimum: number;
  maximum: number;
  /** Where the range comes from. */
  source: string;
}

/** Every threshold of the quality checks. */
export interface QualityThresholds {
  /**
   * A sample counts as full scale when its absolute value is at least this, on the [-1, 1] scale.
   * Default 32767 / 32768: the largest positive 16-bit PCM value as `decodeWav` scales it (-32768
   * reads as -1.0), so every sample at either 16-bit rail counts.
   */
  fullScaleLevel: number;
  /**
   * Consecutive full-scale samples that make one clipping run. Default 3: the default "start
   * threshold" of Audacity's Analyze > Find Clipping (3 samples); a single full-scale sample is a
   * peak, not yet clipping.
   */
  minimumClippingRunSamples: number;
  /**
   * A 10 ms frame is silent when its RMS level is below this, dBFS (full scale 1.0). Default -50, the
   * speech detector's threshold (pipeline/audio/speech-regions.ts, measured on this project's engines)
   * and DNSMOS's `channelHasSpeech` threshold, so "silence" means the same everywhere.
   */
  silenceThresholdDbfs: number;
  /**
   * An utterance is flagged when more than this fraction of its span [start, end] is silent frames.
   * Default 0.4: espeak-ng and Open JTalk place 0.15-0.5 s pauses at punctuation
   * (speech-regions.ts measurements), so a multi-clause answer is typically 10-25 % silent; above
   * 40 % points to hallucinated silence or a stretched tail (services.md, CosyVoice faults).
   */
  maximumUtteranceSilenceRatio: number;
  /**
   * Target programme loudness, LUFS. Default -23: EBU R 128 (2020), "Loudness normalisation and
   * permitted maximum level of audio signals", section 2.
   */
  targetLoudnessLufs: number;
  /**
   * Permitted deviation from the target, LU. Default 1.0: EBU R 128 allows +-1.0 LU where exact
   * normalisation is not practical (the general tolerance is +-0.5 LU). The build does not normalise
   * loudness, so this flags, not rejects.
   */
  loudnessToleranceLu: number;
  /** Maximum true peak, dBTP. Default -1: EBU R 128 (2020), "Maximum True Peak Level ... -1 dBTP". */
  maximumTruePeakDbtp: number;
  /**
   * Plausible articulation rates (speech time only, pauses of the speech detector excluded):
   * English in syllables per second, Japanese in morae per second. Defaults:
   * - English 3.0-7.5 syllables/s: D. Jones (An Outline of English Phonetics, 1967, section 43) puts
   *   conversational English at 300 syllables per minute = 5 syllables/s; F. Pellegrino, C. Coupe and
   *   E. Marsico ("A cross-language perspective on speech information rate", Language 87(3),
   *   539-558, 2011) measured 6.19 syllables/s for English read speech; the range spans slow, careful
   *   speech to fast reading, widened by the ~10 % error of the heuristic syllable count;
   * - Japanese 4.5-10.0 morae/s: Pellegrino et al. (2011) measured 7.84 syllables per second for
   *   Japanese read speech (the fastest of their languages; a Japanese syllable is one or two morae); H. Prafiyanto, T. Nose, Y. Chiba and A. Ito (Acoustical
   *   Science and Technology 39(2), 92-100, 2018) found 320-360 morae per minute (5.3-6.0 morae/s)
   *   the preferred slow rate for non-native listeners; the range spans that slow rate (less a
   *   margin) to fast reading.
   */
  speechRate: Record<Language, RateRange>;
  /**
   * The BC rule of the benchmark: an inter-pausal unit of at most this many seconds is a BC
   * (events.md rule 2). Used only to explain the role/label check in reports.
   */
  backchannelMaximumSeconds: number;
}

/** The default thresholds; see {@link QualityThresholds} for the source of each value. */
export const DEFAULT_QUALITY_THRESHOLDS: Readonly<QualityThresholds> = Object.freeze({
  fullScaleLevel: 32767 / 32768,
  minimumClippingRunSamples: 3,
  silenceThresholdDbfs: -50,
  maximumUtteranceSilenceRatio: 0.4,
  targetLoudnessLufs: -23,
  loudnessToleranceLu: 1.0,
  maximumTruePeakDbtp: -1,
  speechRate: {
    en: {
      minimum: 3.0,
      maximum: 7.5,
      source: 'Jones 1967 (5 syllables/s conversational); Pellegrino, Coupe & Marsico 2011, Language 87(3) (6.19 syllables/s read English)',
    },
    ja: {
      minimum: 4.5,
      maximum: 10.0,
      source: 'Pellegrino, Coupe & Marsico 2011, Language 87(3) (7.84/s read Japanese); Prafiyanto et al. 2018, Acoustical Science and Technology 39(2) (5.3-6.0 morae/s slow preferred rate)',
    },
  },
  backchannelMaximumSeconds: 0.8,
});

/**
 * Fills missing thresholds with {@link DEFAULT_QUALITY_THRESHOLDS} (speech-rate ranges per language).
 * @throws RangeError when a value is not finite, a ratio is outside 0..1, a run length is not a
 *   positive integer, or a range has minimum > maximum.
 */
export function resolveQualityThresholds(overrides: Partial<Omit<QualityThresholds, 'speechRate'>> & { speechRate?: Partial<Record<Language, RateRange>> } = {}): QualityThresholds {
  const resolved: QualityThresholds = {
    ...DEFAULT_QUALITY_THRESHOLDS,
    ...overrides,
    speechRate: { ...DEFAULT_QUALITY_THRESHOLDS.speechRate, ...(overrides.speechRate ?? {}) },
  };
  for (const key of ['fullScaleLevel', 'silenceThresholdDbfs', 'maximumUtteranceSilenceRatio', 'targetLoudnessLufs', 'loudnessToleranceLu', 'maximumTruePeakDbtp', 'backchannelMaximumSeconds'] as const) {
    if (!Number.isFinite(resolved[key])) throw new RangeError(`quality threshold ${key} is not a finite number: ${resolved[key]}`);
  }
  if (resolved.fullScaleLevel <= 0 || resolved.fullScaleLevel > 1) throw new RangeError(`fullScaleLevel must be in (0, 1], got ${resolved.fullScaleLevel}`);
  if (resolved.maximumUtteranceSilenceRatio < 0 || resolved.maximumUtteranceSilenceRatio > 1) {
    throw new RangeError(`maximumUtteranceSilenceRatio must be in [0, 1], got ${resolved.maximumUtteranceSilenceRatio}`);
  }
  if (!Number.isInteger(resolved.minimumClippingRunSamples) || resolved.minimumClippingRunSamples < 1) {
    throw new RangeError(`minimumClippingRunSamples must be a positive integer, got ${resolved.minimumClippingRunSamples}`);
  }
  for (const [language, range] of Object.entries(resolved.speechRate)) {
    if (!(Number.isFinite(range.minimum) && Number.isFinite(range.maximum) && range.minimum <= range.maximum)) {
      throw new RangeError(`speechRate.${language}: need finite minimum <= maximum, got ${range.minimum}..${range.maximum}`);
    }
  }
  return resolved;
}
