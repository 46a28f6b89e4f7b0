/**
 * The words of an utterance as they are written to word alignments: English whitespace tokens,
 * Japanese morphemes (kuromoji, IPADIC), with a weight for spreading them over speech and a flag for
 * punctuation that usually makes the engine pause.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import kuromoji from 'kuromoji';
import type { Language } from '../model/types.ts';
import { languagePackOf } from '../model/language-pack.ts';
import { countGraphemeClusters, graphemeClusters } from '../model/grapheme-clusters.ts';
import { countMorae, estimateMorae } from './japanese-morae.ts';

/** One word to be timed. */
export interface SpokenWord {
  /** The word as written to the alignment (English: punctuation stripped; Japanese: morpheme surface). */
  text: string;
  /** Relative length used when spreading words over speech: characters (English) or morae (Japanese); >= 1. */
  weight: number;
  /** Japanese: morae from the dictionary pronunciation; null when the dictionary has no reading (English: null). */
  morae: number | null;
  /** True when pausing punctuation (, . ; : ? ! 、 。 ・ ...) follows the word in the text. */
  pauseAfter: boolean;
}

/** Splits the text of an utterance into the words to time. */
export interface WordTokenizer {
  tokenize(text: string, language: Language): Promise<SpokenWord[]>;
}

/** The Japanese dictionary could not be loaded. */
export class WordTokenizerError extends Error {
  override readonly name = 'WordTokenizerError';
}

/** Punctuation after which espeak-ng and Open JTalk normally pause. */
const PAUSING_PUNCTUATION = /[,.;:?!…—–、。，．！？；：・]/u;
const LEADING_PUNCTUATION = /^\p{P}+/u;
const TRAILING_PUNCTUATION = /\p{P}+$/u;

/**
 * English words: whitespace-separated tokens with leading and trailing punctuation stripped (inner
 * punctuation stays: "don't", "U.S"). Tokens that are only punctuation are dropped (their pause flag
 * goes to the previous word). Weight = the word's spoken length in letters, estimated as its grapheme
 * clusters of letters and symbols plus 4 per digit (numbers are read as words: "1889" -> "eighteen
 * eighty-nine", "330" -> "three hundred and thirty"), at least 1. A cluster is a letter with the marks
 * written on it (pipeline/model/grapheme-clusters.ts): Devanagari "हि" and Thai "ดี" count 1 each, and
 * Latin letters without combining marks count one each.
 *
 * @param language BCP-47 code of the text, for the grapheme segmenter (default English).
 * @returns the words in order; empty when the text has none.
 */
export function splitEnglishWords(text: string, language: Language = 'en'): SpokenWord[] {
  const words: SpokenWord[] = [];
  for (const token of text.split(/\s+/u)) {
    if (!token) continue;
    const trailing = TRAILING_PUNCTUATION.exec(token)?.[0] ?? '';
    const word = token.replace(LEADING_PUNCTUATION, '').replace(TRAILING_PUNCTUATION, '');
    const pauses = PAUSING_PUNCTUATION.test(trailing) || (!word && PAUSING_PUNCTUATION.test(token));
    if (!word) {
      const previous = words[words.length - 1];
      if (previous && pauses) previous.pauseAfter = true;
      continue;
    }
    words.push({ text: word, weight: spokenLengthOfWord(word, language), morae: null, pauseAfter: pauses });
  }
  return words;
}

/** Letters a digit stands for when read out, on average (see {@link splitEnglishWords}). */
const LETTERS_PER_SPOKEN_DIGIT = 4;

function spokenLengthOfWord(word: string, language: Language): number {
  let length = 0;
  for (const cluster of graphemeClusters(word, language)) {
    const digits = cluster.match(/\p{Nd}/gu)?.length ?? 0;
    if (digits > 0) length += digits * LETTERS_PER_SPOKEN_DIGIT;
    else if (/[\p{L}\p{N}\p{S}]/u.test(cluster)) length += 1;
  }
  return Math.max(1, length);
}

type JapaneseTokenizer = kuromoji.Tokenizer<kuromoji.IpadicFeatures>;

/** Directory of the IPADIC dictionary bundled with the `kuromoji` package (`node_modules/kuromoji/dict`). */
export function kuromojiDictionaryDirectory(): string {
  return join(dirname(createRequire(import.meta.url).resolve('kuromoji/package.json')), 'dict');
}

let cachedTokenizer: Promise<JapaneseTokenizer> | undefined;

/**
 * Loads kuromoji's tokenizer once per process (about 1.7 s) and returns the same instance afterwards.
 * A failed load is not cached, so a later call tries again.
 *
 * @throws WordTokenizerError when the dictionary cannot be read.
 */
export function loadJapaneseTokenizer(): Promise<JapaneseTokenizer> {
  if (!cachedTokenizer) {
    const directory = kuromojiDictionaryDirectory();
    cachedTokenizer = new Promise<JapaneseTokenizer>((resolve, reject) => {
      kuromoji.builder({ dicPath: directory }).build((error, tokenizer) => {
        if (error)
          reject(
            new WordTokenizerError(`cannot load the kuromoji dictionary from ${directory}: ${error.message}`, {
              cause: error,
            }),
          );
        else resolve(tokenizer);
      });
    });
    cachedTokenizer.catch(() => {
      cachedTokenizer = undefined;
    });
  }
  return cachedTokenizer;
}

/** IPADIC second-level categories of 記号 (symbol) that are punctuation or space, never spoken. */
const UNSPOKEN_SYMBOL_CATEGORIES = new Set(['句点', '読点', '括弧開', '括弧閉', '空白']);

/**
 * Japanese words: kuromoji morphemes without punctuation and spaces (IPADIC 記号 of category 句点,
 * 読点, 括弧開, 括弧閉, 空白, and any token made only of punctuation or spaces; their pause flag goes to
 * the previous morpheme). Morae come from the pronunciation field (発音, e.g. 今日 -> キョー = 2) via
 * {@link countMorae}, else the reading field; weight = morae, or {@link estimateMorae} of the surface
 * when the dictionary has no reading (unknown words, digits, Latin letters; then `morae` is null).
 *
 * @returns the morphemes in order; empty when the text has none.
 */
export function splitJapaneseMorphemes(tokenizer: JapaneseTokenizer, text: string): SpokenWord[] {
  const words: SpokenWord[] = [];
  for (const token of tokenizer.tokenize(text)) {
    const surface = token.surface_form;
    const unspoken =
      (token.pos === '記号' && UNSPOKEN_SYMBOL_CATEGORIES.has(token.pos_detail_1)) ||
      /^[\p{P}\p{Z}\s]+$/u.test(surface);
    if (unspoken) {
      const previous = words[words.length - 1];
      if (previous && PAUSING_PUNCTUATION.test(surface)) previous.pauseAfter = true;
      continue;
    }
    const pronunciation = [token.pronunciation, token.reading].find(
      (field) => field && field !== '*' && countMorae(field) > 0,
    );
    const morae = pronunciation ? countMorae(pronunciation) : null;
    words.push({ text: surface, weight: Math.max(1, morae ?? estimateMorae(surface)), morae, pauseAfter: false });
  }
  return words;
}

const segmenters = new Map<string, Intl.Segmenter>();

/**
 * Words of a text written without spaces between words (Chinese, Thai, …): ICU's word boundaries
 * (`Intl.Segmenter` with word granularity, which segments Chinese, Japanese, Thai, Khmer, Lao and
 * Burmese by dictionary). Segments that are not word-like (punctuation, spaces) are dropped, their pause
 * flag going to the previous word; so the words joined equal the text without its punctuation and
 * spaces. Weight = the word's grapheme clusters holding a letter or digit (a Chinese character is one
 * syllable; a Thai consonant with its vowel sign and tone mark is one cluster), at least 1.
 *
 * @param language the BCP-47 code given to the segmenter.
 * @returns the words in order; empty when the text has none.
 */
export function splitSegmenterWords(text: string, language: Language): SpokenWord[] {
  let segmenter = segmenters.get(language);
  if (!segmenter) {
    segmenter = new Intl.Segmenter(language, { granularity: 'word' });
    segmenters.set(language, segmenter);
  }
  const words: SpokenWord[] = [];
  for (const segment of segmenter.segment(text)) {
    const spoken = segment.segment.replace(/[\p{P}\p{Z}\s]+/gu, '');
    if (!segment.isWordLike || spoken === '') {
      const previous = words[words.length - 1];
      if (previous && PAUSING_PUNCTUATION.test(segment.segment)) previous.pauseAfter = true;
      if (spoken === '') continue;
    }
    words.push({
      text: spoken,
      weight: Math.max(1, countGraphemeClusters(spoken, language, /[\p{L}\p{N}]/u)),
      morae: null,
      pauseAfter: false,
    });
  }
  return words;
}

/**
 * The project's word tokenizer, by the language pack's segmentation (pipeline/model/language-pack.ts):
 * {@link splitJapaneseMorphemes} with the cached kuromoji tokenizer for `japanese-morphemes` (Japanese),
 * {@link splitSegmenterWords} for `intl-segmenter` (Chinese, Thai), {@link splitEnglishWords} for
 * `spaces` (English, German, Spanish, Korean, …).
 * @throws WordTokenizerError when the Japanese dictionary cannot be loaded; LanguagePackError for a language without a pack
 */
export const defaultWordTokenizer: WordTokenizer = {
  async tokenize(text: string, language: Language): Promise<SpokenWord[]> {
    const segmentation = languagePackOf(language).script.segmentation;
    if (segmentation === 'japanese-morphemes') return splitJapaneseMorphemes(await loadJapaneseTokenizer(), text);
    if (segmentation === 'intl-segmenter') return splitSegmenterWords(text, language);
    return splitEnglishWords(text, language);
  },
};
