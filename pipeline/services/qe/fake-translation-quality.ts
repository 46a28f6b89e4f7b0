/**
 * A stand-in translation quality estimator for tests of code that uses a
 * {@link TranslationQualityEstimator}: scores come from a function of the pair; every call is recorded.
 */
import type { CometKiwiResult, TranslationPair } from './cometkiwi.ts';
import type { TranslationQualityEstimator } from './translation-quality.ts';

/** A deterministic {@link TranslationQualityEstimator} that records its calls in {@link FakeTranslationQualityEstimator.calls}. */
export class FakeTranslationQualityEstimator implements TranslationQualityEstimator {
  /** The pairs of every call, in order. */
  readonly calls: TranslationPair[][] = [];

  /**
   * @param scoreOf the score of one pair (default 0.8)
   * @param model the model name reported
   */
  constructor(
    private readonly scoreOf: (pair: TranslationPair) => number = () => 0.8,
    private readonly model = 'fake-qe',
  ) {}

  /** Records the pairs; the system score is the mean of the pair scores. */
  async score(pairs: readonly TranslationPair[]): Promise<CometKiwiResult> {
    this.calls.push([...pairs]);
    if (pairs.length === 0) return { computed: false, reason: 'no translated utterances to score' };
    const segmentScores = pairs.map((pair) => this.scoreOf(pair));
    return {
      computed: true,
      scorer: 'http',
      model: this.model,
      segmentScores,
      systemScore: segmentScores.reduce((sum, score) => sum + score, 0) / segmentScores.length,
    };
  }
}
