/**
 * COMETKiwi of a translated dataset: the (source, translation) pairs of every translated utterance
 * (source = the English spoken-style text `text.spoken`, translation = the final text `text.final`),
 * scored in one run for the whole dataset, with the dataset's system score and each dialogue's mean,
 * or `{computed: false, reason}` when the scorer is off, does not cover a language, or fails.
 */
import type { DatasetDialogue, DatasetFolder } from '../pipeline/quality/dataset-files.ts';
import type { DatasetCometKiwi, DialogueCometKiwi } from '../pipeline/quality/quality-report.ts';
import { findLanguagePack, languagePackSource } from '../pipeline/model/language-pack.ts';
import { CometKiwiError, type CometKiwiOptions, type TranslationPair } from '../pipeline/services/qe/cometkiwi.ts';
import { cometKiwiEstimator, type TranslationQualityEstimator } from '../pipeline/services/qe/translation-quality.ts';
import { round4 } from './score-quality-dnsmos.ts';

/** The language translations are made from (the prompt templates translate English: build.ts checkBuildIsPossible). */
export const TRANSLATION_SOURCE_LANGUAGE = 'en';

/** Whether a dialogue is a translation: its metadata names a translation producer. */
export function isTranslated(dialogue: DatasetDialogue): boolean {
  return typeof dialogue.metadata.text?.translatedBy === 'string' && dialogue.metadata.text.translatedBy !== '';
}

/**
 * The (source, translation) pairs of a dialogue: every utterance whose `text.spoken` (English
 * spoken-style source) and `text.final` (translation) are both non-empty.
 * @returns pairs with the utterance index each came from, in metadata order.
 */
export function translationPairs(dialogue: DatasetDialogue): (TranslationPair & { utteranceIndex: number })[] {
  return dialogue.metadata.utterances.flatMap((utterance) => {
    const src = utterance.text.spoken?.trim() ?? '';
    const mt = utterance.text.final?.trim() ?? '';
    return src !== '' && mt !== '' ? [{ src, mt, utteranceIndex: utterance.index }] : [];
  });
}

/** How {@link scoreTranslations} scores: the COMETKiwi fields of ScoreQualityOptions (stages/score-quality.ts). */
export interface TranslationScoringOptions {
  /** COMETKiwi scorer settings (HTTP URL, command, GPUs, batch size). */
  cometKiwi?: CometKiwiOptions;
  /** The translation quality estimator to use. Default: the COMETKiwi client with `cometKiwi`. */
  translationQuality?: TranslationQualityEstimator;
  /** false: do not try COMETKiwi at all (recorded as not computed, reason "disabled"). Default true. */
  cometKiwiEnabled?: boolean;
  /** true: a COMETKiwi scorer that runs and fails throws; false (default): the failure is recorded. */
  cometKiwiRequired?: boolean;
}

/** COMETKiwi of a dataset: the dataset's result and each dialogue's, by id. */
export interface TranslationScores {
  dataset: DatasetCometKiwi;
  byDialogue: Map<string, DialogueCometKiwi>;
}

/**
 * Scores every translated utterance of a dataset with COMETKiwi in one run.
 * @param log progress lines (the scorer's direction, and why it was not computed)
 * @throws CometKiwiError when `cometKiwiRequired` and the scorer fails or is unavailable; the
 *   estimator's other errors
 */
export async function scoreTranslations(
  folder: Pick<DatasetFolder, 'language' | 'dialogues'>,
  options: TranslationScoringOptions,
  log: (line: string) => void,
): Promise<TranslationScores> {
  let datasetCometKiwi: DatasetCometKiwi;
  const cometByDialogue = new Map<string, DialogueCometKiwi>();
  const pairsByDialogue = folder.dialogues.map((dialogue) => ({
    id: dialogue.id,
    pairs: isTranslated(dialogue) ? translationPairs(dialogue) : [],
  }));
  const allPairs = pairsByDialogue.flatMap((entry) => entry.pairs);
  let scores: number[] | null = null;
  // the direction: source = the corpus's spoken-style text (English: a build translates from English
  // only, build.ts checkBuildIsPossible), target = the dataset's language; COMETKiwi (XLM-R) must cover both
  const unsupported = [TRANSLATION_SOURCE_LANGUAGE, folder.language]
    .map((code) => findLanguagePack(code))
    .find((pack) => pack !== undefined && !pack.cometKiwi.supported);
  if (options.cometKiwiEnabled === false) {
    datasetCometKiwi = { computed: false, reason: 'disabled by the caller (cometKiwiEnabled: false)' };
  } else if (unsupported !== undefined) {
    datasetCometKiwi = {
      computed: false,
      reason: `COMETKiwi does not cover ${unsupported.name} (${languagePackSource(unsupported)} cometKiwi.supported: false)`,
    };
    log(`[${folder.language}] COMETKiwi not computed: ${datasetCometKiwi.reason}`);
  } else {
    log(
      `[${folder.language}] COMETKiwi ${TRANSLATION_SOURCE_LANGUAGE}→${folder.language}: ${allPairs.length} translated utterances (source text.spoken, translation text.final)`,
    );
    try {
      const result = await (options.translationQuality ?? cometKiwiEstimator(options.cometKiwi ?? {})).score(allPairs);
      if (result.computed) {
        scores = result.segmentScores;
        datasetCometKiwi = {
          computed: true,
          scorer: result.scorer,
          model: result.model,
          systemScore: round4(result.systemScore),
          segments: result.segmentScores.length,
        };
      } else {
        if (options.cometKiwiRequired)
          throw new CometKiwiError(`COMETKiwi is required but not available: ${result.reason}`);
        datasetCometKiwi = { computed: false, reason: result.reason };
      }
    } catch (error) {
      if (options.cometKiwiRequired || !(error instanceof CometKiwiError)) throw error;
      datasetCometKiwi = { computed: false, reason: `scorer failed: ${error.message}` };
    }
    if (!datasetCometKiwi.computed) log(`[${folder.language}] COMETKiwi not computed: ${datasetCometKiwi.reason}`);
  }
  let offset = 0;
  for (const entry of pairsByDialogue) {
    const segmentScores = entry.pairs.map((pair, index) => ({
      utteranceIndex: pair.utteranceIndex,
      score: scores ? scores[offset + index]! : null,
    }));
    offset += entry.pairs.length;
    const values = segmentScores.flatMap((segment) => (segment.score === null ? [] : [segment.score]));
    cometByDialogue.set(entry.id, {
      mean: values.length ? round4(values.reduce((a, b) => a + b, 0) / values.length) : null,
      segments: segmentScores,
    });
  }
  return { dataset: datasetCometKiwi, byDialogue: cometByDialogue };
}
