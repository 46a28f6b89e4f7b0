/**
 * Counting the spoken units of a text, for speech-rate checks: English syllables, Japanese morae.
 *
 * English: the `syllable` npm package (wooorm, MIT; dictionary of exceptions plus rules) is used
 * when it is installed; it is not a dependency of this project today, so the default is the
 * vowel-group heuristic of {@link countEnglishWordSyllables}, documented there. The counter used is
 * named in every result so numbers from different counters are never mixed silently.
 *
 * Japanese: kuromoji (IPADIC) morphemes with the mora count of their pronunciation, as the word
 * alignments use (pipeline/alignment/spoken-words.ts, japanese-morae.ts).
 */
import type { Language } from '../model/types.ts';
import { findLanguagePack, languagePackOf } from '../model/language-pack.ts';
import { estimateMorae } from '../alignment/japanese-morae.ts';
import { graphemeClusters } from '../model/grapheme-clusters.ts';
import { loadJapaneseTokenizer, splitJapaneseMorphemes } from '../alignment/spoken-words.ts';

/** Spoken units of one text. */
export interface SpokenUnitCount {
  /** Syllables (English) or morae (Japanese). */
  units: number;
  /** `syllable` or `mora`. */
  unit: 'syllable' | 'mora';
  /** The counter that produced `units`. */
  counter: string;
  /** Words (English) or morphemes (Japanese) whose count is an estimate (no dictionary reading). */
  estimatedWords: number;
}

/** Name of the built-in English counter, as recorded in results. */
export const VOWEL_GROUP_COUNTER = 'vowel-group heuristic (pipeline/quality/speech-rate.ts)';

/** Syllables of the digit names zero..nine ("zero" 2, "one" 1, ..., "seven" 2, ...). */
const DIGIT_SYLLABLES = [2, 1, 1, 1, 1, 1, 1, 2, 1, 1];

/**
 * Syllables of one English word by a vowel-group heuristic:
 * 1. letters are lower-cased; apostrophes and other non-letters are dropped; a word of digits
 *    counts the syllables of each digit's name (a rough count: the pipeline writes numbers as words);
 * 2. each maximal run of the vowels a, e, i, o, u, y is one syllable, except a `y` that starts the
 *    word before a vowel (`yes`, `you`), which is a consonant;
 * 3. when the word has more than one group: minus one for a silent final `e` after a consonant
 *    (`make`, `were`), unless the word ends in consonant + `le` (`ta-ble`, `peo-ple`); else minus one
 *    for a silent `-ed` after a consonant other than `t`/`d` or after a vowel + `y` (`walked`,
 *    `played`; `wanted` keeps it); else minus one for a silent `-es` after a consonant other than
 *    s, x, z, ch, sh, c, g (`makes`; `boxes`, `places`, `changes` keep it);
 * 4. at least one syllable for any word with a letter.
 * Accuracy: right for most common words; hiatus words (`cre-ate`, `pi-a-no`) come out one short.
 * @returns syllables, 0 for a word without letters or digits.
 */
export function countEnglishWordSyllables(word: string): number {
  const lower = word.toLowerCase();
  if (/^\d+$/.test(lower)) return [...lower].reduce((sum, digit) => sum + DIGIT_SYLLABLES[Number(digit)]!, 0);
  const letters = lower.replace(/[^a-z]/g, '');
  if (letters === '') return /\d/.test(lower) ? 1 : 0;
  let groups = (letters.replace(/^y(?=[aeiou])/, '').match(/[aeiouy]+/g) ?? []).length;
  if (groups > 1) {
    if (/[^aeiouy]e$/.test(letters) && !/[^aeiouy]le$/.test(letters)) groups -= 1;
    else if (/(?:[^aeiouytd]|[aeiou]y)ed$/.test(letters)) groups -= 1;
    else if (/[^aeiouy]es$/.test(letters) && !/(s|x|z|ch|sh|c|g)es$/.test(letters)) groups -= 1;
  }
  return Math.max(1, groups);
}

/** English words of a text: split at white space and hyphens/dashes; punctuation is dropped by the counter. */
function englishWords(text: string): string[] {
  return text.split(/[\s\-‐‑‒–—]+/u).filter((word) => /[\p{L}\p{N}]/u.test(word));
}

type ExternalSyllableCounter = (text: string) => number;
let externalCounter: Promise<{ name: string; count: ExternalSyllableCounter } | null> | undefined;

/**
 * The `syllable` package when it can be imported (its `syllable(text)` export), else null. Tried
 * once per process.
 */
function loadExternalSyllableCounter(): Promise<{ name: string; count: ExternalSyllableCounter } | null> {
  externalCounter ??= (async () => {
    try {
      const moduleName = 'syllable';
      const imported = (await import(moduleName)) as { syllable?: unknown };
      if (typeof imported.syllable !== 'function') return null;
      return { name: 'syllable (npm package)', count: imported.syllable as ExternalSyllableCounter };
    } catch {
      return null;
    }
  })();
  return externalCounter;
}

/**
 * Syllables of an English text: with the `syllable` package when installed, else the sum of
 * {@link countEnglishWordSyllables} over the words (white space and hyphens separate words).
 * @param options.preferBuiltIn use the built-in heuristic even when `syllable` is installed.
 */
export async function countEnglishSyllables(
  text: string,
  options: { preferBuiltIn?: boolean } = {},
): Promise<SpokenUnitCount> {
  const external = options.preferBuiltIn ? null : await loadExternalSyllableCounter();
  if (external) return { units: external.count(text), unit: 'syllable', counter: external.name, estimatedWords: 0 };
  const words = englishWords(text);
  return {
    units: words.reduce((sum, word) => sum + countEnglishWordSyllables(word), 0),
    unit: 'syllable',
    counter: VOWEL_GROUP_COUNTER,
    estimatedWords: words.filter((word) => /\d/.test(word)).length,
  };
}

/**
 * Morae of a Japanese text: kuromoji morphemes (punctuation dropped) with the mora count of their
 * dictionary pronunciation; a morpheme without a reading (digits, Latin letters, unknown words)
 * counts `estimateMorae` of its surface and is counted in `estimatedWords`.
 * @throws WordTokenizerError when the kuromoji dictionary cannot be loaded.
 */
export async function countJapaneseMorae(text: string): Promise<SpokenUnitCount> {
  const morphemes = splitJapaneseMorphemes(await loadJapaneseTokenizer(), text);
  let units = 0;
  let estimatedWords = 0;
  for (const morpheme of morphemes) {
    if (morpheme.morae === null) {
      estimatedWords += 1;
      units += estimateMorae(morpheme.text);
    } else units += morpheme.morae;
  }
  // The counter's label is written into quality.json; it keeps the file's former path
  // (pipeline/alignment/spoken-words.ts now) so that datasets stay byte-identical to earlier builds.
  return {
    units,
    unit: 'mora',
    counter: 'kuromoji IPADIC pronunciation (pipeline/services/tts/spoken-words.ts)',
    estimatedWords,
  };
}

/**
 * Spoken units of `text` in `language`, by its language pack's `speechRate.qualityCounter`: English
 * syllables ({@link countEnglishSyllables}), Japanese morae ({@link countJapaneseMorae}) or the
 * syllables of its script ({@link countSyllablesOfScript}).
 * @throws WordTokenizerError for `japanese-morae` when the kuromoji dictionary cannot be loaded;
 *   LanguagePackError for a language without a pack.
 */
export function countSpokenUnits(text: string, language: Language): Promise<SpokenUnitCount> {
  const counter = languagePackOf(language).speechRate.qualityCounter;
  if (counter === 'japanese-morae') return countJapaneseMorae(text);
  if (counter === 'english-syllables') return countEnglishSyllables(text);
  return Promise.resolve(countSyllablesOfScript(text, language));
}

/** Letters that are one syllable each: Chinese characters, Hangul blocks, kana. */
const SYLLABIC_CHARACTER = /[\p{Script=Han}\p{Script=Hangul}\p{Script=Hiragana}\p{Script=Katakana}]/u;
/** Vowel letters of alphabetic scripts (Latin with diacritics, Greek, Cyrillic). */
const VOWEL_GROUP = /[aeiouyàáâãäåæèéêëìíîïòóôõöøœùúûüýÿāēīōūăĕĭŏŭąęįųαεηιοωυаеёиоуыэюяіїє]+/giu;
/** Letters of the alphabetic scripts whose syllables {@link VOWEL_GROUP} counts. */
const VOWEL_GROUP_SCRIPT = /[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]/u;

/**
 * Syllables of a text of a language without a counter of its own: one per Chinese character,
 * Hangul block or kana, one per vowel group in Latin, Greek and Cyrillic words (a heuristic: diphthongs
 * across a syllable boundary count once, silent vowels once each), and one per grapheme cluster of a
 * letter of any other script (Devanagari, Thai, Arabic, …: a consonant with the vowel sign and marks
 * written on it, pipeline/model/grapheme-clusters.ts; an abugida's syllable is about one such cluster,
 * a Thai leading vowel or final consonant counts one more).
 * @param language BCP-47 code of the text, for the grapheme segmenter (default `und`).
 */
export function countSyllablesOfScript(text: string, language: Language = 'und'): SpokenUnitCount {
  let units = 0;
  for (const cluster of graphemeClusters(text, language)) {
    if (SYLLABIC_CHARACTER.test(cluster)) units += 1;
    else if (/\p{L}/u.test(cluster) && !VOWEL_GROUP_SCRIPT.test(cluster)) units += 1;
  }
  units += (text.match(VOWEL_GROUP) ?? []).length;
  return {
    units,
    unit: 'syllable',
    counter: 'syllabic characters and vowel groups (pipeline/quality/speech-rate.ts)',
    estimatedWords: 0,
  };
}

/**
 * The unit of a language's quality speech rate (its pack's `speechRate.qualityUnit`): `mora` or
 * `syllable` (also for a language without a pack, e.g. a Chat dataset of any language).
 */
export function speechRateUnit(language: Language): 'mora' | 'syllable' {
  return findLanguagePack(language)?.speechRate.qualityUnit ?? 'syllable';
}

/** The column label of a language's speech rate: `morae/s` or `syllables/s`. */
export function speechRateUnitLabel(language: Language): string {
  return speechRateUnit(language) === 'mora' ? 'morae/s' : 'syllables/s';
}
