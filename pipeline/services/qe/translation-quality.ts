/**
 * The translation quality estimation (QE) seam: reference-free scores of (source, translation) pairs.
 * The real client is COMETKiwi (./cometkiwi.ts: an HTTP scorer or the `comet-score` command);
 * tests use {@link FakeTranslationQualityEstimator} (./fake-translation-quality.ts), which records
 * its calls, or the loopback HTTP scorer in ./testing.
 */
import { scoreTranslations, type CometKiwiOptions, type CometKiwiResult, type TranslationPair } from './cometkiwi.ts';

/** Scores translations without references. */
export interface TranslationQualityEstimator {
  /**
   * @param pairs source and translation texts
   * @returns one score per pair (0..1) and a system score, or `{computed: false, reason}`
   * @throws CometKiwiError when a configured scorer runs but fails
   */
  score(pairs: readonly TranslationPair[]): Promise<CometKiwiResult>;
}

/** The COMETKiwi client with `options` (HTTP scorer when `httpUrl` is set, else the command on PATH). */
export function cometKiwiEstimator(options: CometKiwiOptions = {}): TranslationQualityEstimator {
  return { score: (pairs) => scoreTranslations(pairs, options) };
}
