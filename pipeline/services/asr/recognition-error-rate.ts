/**
 * How far what a speech recognizer heard is from the text the synthesizer was asked to say: the word
 * error rate (WER) for languages written with spaces between words, the character error rate (CER) for
 * languages written without (the pack's `script.segmentation` is not `spaces`: Japanese, Chinese, Thai).
 *
 * Both sides are normalised the same way before they are compared, so that only what was spoken
 * counts: Unicode NFKC, lower case (by the language's rules), punctuation and symbols removed, white
 * space collapsed. Digits in the transcript are spelled as the text has them (the text holds no digits:
 * every reply is checked for that), by the pack's number rules (`english-rules`, or its number
 * library); a pack whose numbers only an LLM writes keeps the digits.
 *
 * The edit distance is the Levenshtein distance over tokens (words, or grapheme clusters), computed
 * here on token arrays: the string distance libraries in node_modules (fast-levenshtein) compare
 * strings character by character, not word sequences.
 */
import { graphemeClusters } from '../../model/grapheme-clusters.ts';
import type { LanguagePack } from '../../model/language-pack.ts';
import { spellNumbers } from '../../text/spoken-numbers.ts';
import { normaliseSpokenEnglish } from '../../text/spoken-english.ts';

/** Which unit an error rate counts. */
export type ErrorRateUnit = 'word' | 'character';

/** Result of {@link recognitionErrorRate}. */
export interface RecognitionErrorRate {
  /** Edits (substitutions + deletions + insertions) / reference tokens; 0 when both are empty, 1 per inserted token over an empty reference. */
  rate: number;
  /** 'word' (WER) or 'character' (CER). */
  unit: ErrorRateUnit;
  /** Levenshtein distance between the token sequences. */
  edits: number;
  /** Tokens of the normalised reference. */
  referenceTokens: number;
  /** The normalised reference and hypothesis, as compared (tokens joined by a space for words, none for characters). */
  reference: string;
  hypothesis: string;
}

/** The unit a language's error rate counts: words when its script separates them with spaces, else characters. */
export function errorRateUnitOf(pack: LanguagePack): ErrorRateUnit {
  return pack.script.segmentation === 'spaces' ? 'word' : 'character';
}

/**
 * The Levenshtein distance between two token sequences (unit cost for substitution, insertion, deletion).
 * @returns the number of edits; O(|a|·|b|) time, O(|b|) memory.
 */
export function tokenEditDistance(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(substitution, previous[j]! + 1, current[j - 1]! + 1);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}

/**
 * Brings a text to the form both sides of the comparison share: digits spelled by the pack's number
 * rules, NFKC, lower case, punctuation and symbols gone, white space collapsed.
 * @param text a reference text or a transcript.
 * @param pack the language's pack (numbers, code for the case rules).
 */
export function normaliseForErrorRate(text: string, pack: LanguagePack): string {
  let spelled = text;
  if (/[0-9\uff10-\uff19]/u.test(text)) {
    if (pack.numbers === 'english-rules') spelled = normaliseSpokenEnglish(text);
    else if (typeof pack.numbers !== 'string') spelled = spellNumbers(text, pack);
  }
  return spelled
    .normalize('NFKC')
    .toLocaleLowerCase(pack.code)
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

/** The tokens an error rate counts: words for spaced scripts, grapheme clusters (no spaces) otherwise. */
function tokensOf(normalised: string, unit: ErrorRateUnit, language: string): string[] {
  if (normalised === '') return [];
  if (unit === 'word') return normalised.split(' ');
  return graphemeClusters(normalised.replace(/\s+/gu, ''), language);
}

/**
 * The word (or character) error rate of a transcript against the text the synthesizer was given.
 *
 * @param reference the text the utterance was asked to say.
 * @param hypothesis what the recognizer heard.
 * @param pack the language's pack: `script.segmentation` `spaces` counts words, any other counts
 *   grapheme clusters; `numbers` spells the transcript's digits.
 * @throws RangeError from the pack's number library when its locale is unknown (the pack schema checks this).
 */
export function recognitionErrorRate(reference: string, hypothesis: string, pack: LanguagePack): RecognitionErrorRate {
  const unit = errorRateUnitOf(pack);
  const normalisedReference = normaliseForErrorRate(reference, pack);
  const normalisedHypothesis = normaliseForErrorRate(hypothesis, pack);
  const referenceTokens = tokensOf(normalisedReference, unit, pack.code);
  const hypothesisTokens = tokensOf(normalisedHypothesis, unit, pack.code);
  const edits = tokenEditDistance(referenceTokens, hypothesisTokens);
  const separator = unit === 'word' ? ' ' : '';
  return {
    rate: referenceTokens.length === 0 ? hypothesisTokens.length : edits / referenceTokens.length,
    unit,
    edits,
    referenceTokens: referenceTokens.length,
    reference: referenceTokens.join(separator),
    hypothesis: hypothesisTokens.join(separator),
  };
}
