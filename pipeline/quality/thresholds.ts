/**
 * The thresholds of the signal and content checks, as one options object with defaults, each with
 * its source. They flag items for review in `quality.json`; they never change the dataset.
 */
import type { Language } from '../model/types.ts';
import type { QualityThresholds, RateRange } from '../model/quality-report.ts';

export type { QualityThresholds, RateRange } from '../model/quality-report.ts';

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
      source:
        'Jones 1967 (5 syllables/s conversational); Pellegrino, Coupe & Marsico 2011, Language 87(3) (6.19 syllables/s read English)',
    },
    ja: {
      minimum: 4.5,
      maximum: 10.0,
      source:
        'Pellegrino, Coupe & Marsico 2011, Language 87(3) (7.84/s read Japanese); Prafiyanto et al. 2018, Acoustical Science and Technology 39(2) (5.3-6.0 morae/s slow preferred rate)',
    },
  },
  backchannelMaximumSeconds: 0.8,
});

/**
 * Fills missing thresholds with {@link DEFAULT_QUALITY_THRESHOLDS} (speech-rate ranges per language).
 * @throws RangeError when a value is not finite, a ratio is outside 0..1, a run length is not a
 *   positive integer, or a range has minimum > maximum.
 */
export function resolveQualityThresholds(
  overrides: Partial<Omit<QualityThresholds, 'speechRate'>> & { speechRate?: Record<Language, RateRange> } = {},
): QualityThresholds {
  const resolved: QualityThresholds = {
    ...DEFAULT_QUALITY_THRESHOLDS,
    ...overrides,
    speechRate: { ...DEFAULT_QUALITY_THRESHOLDS.speechRate, ...(overrides.speechRate ?? {}) },
  };
  for (const key of [
    'fullScaleLevel',
    'silenceThresholdDbfs',
    'maximumUtteranceSilenceRatio',
    'targetLoudnessLufs',
    'loudnessToleranceLu',
    'maximumTruePeakDbtp',
    'backchannelMaximumSeconds',
  ] as const) {
    if (!Number.isFinite(resolved[key]))
      throw new RangeError(`quality threshold ${key} is not a finite number: ${resolved[key]}`);
  }
  if (resolved.fullScaleLevel <= 0 || resolved.fullScaleLevel > 1)
    throw new RangeError(`fullScaleLevel must be in (0, 1], got ${resolved.fullScaleLevel}`);
  if (resolved.maximumUtteranceSilenceRatio < 0 || resolved.maximumUtteranceSilenceRatio > 1) {
    throw new RangeError(
      `maximumUtteranceSilenceRatio must be in [0, 1], got ${resolved.maximumUtteranceSilenceRatio}`,
    );
  }
  if (!Number.isInteger(resolved.minimumClippingRunSamples) || resolved.minimumClippingRunSamples < 1) {
    throw new RangeError(
      `minimumClippingRunSamples must be a positive integer, got ${resolved.minimumClippingRunSamples}`,
    );
  }
  for (const [language, range] of Object.entries(resolved.speechRate)) {
    if (!(Number.isFinite(range.minimum) && Number.isFinite(range.maximum) && range.minimum <= range.maximum)) {
      throw new RangeError(
        `speechRate.${language}: need finite minimum <= maximum, got ${range.minimum}..${range.maximum}`,
      );
    }
  }
  return resolved;
}
