/**
 * Kana readings of Japanese text for engines that misread kanji.
 *
 * CosyVoice2 is trained on Chinese, English, Japanese, Korean and Cantonese; kanji in Japanese text
 * are often read with their Chinese readings. Upstream's advice (FunAudioLLM/CosyVoice; the
 * `kanaReading` option of docs/services.md "Speech backends") is to feed kana. This module rewrites the text
 * morpheme by morpheme with kuromoji (IPADIC) readings converted by wanakana, and keeps everything it
 * cannot read as written. The original text stays the alignment text: word timing still uses the
 * original morphemes (synthesize-utterance.ts `alignmentText`, or remote engines that convert
 * internally and leave `request.text` untouched).
 *
 * Limits: kuromoji picks one reading per morpheme and can be wrong (行った -> オコナッタ instead of
 * イッタ); digits and Latin letters have no dictionary reading and stay as written (normalize numbers
 * to words before synthesis).
 */
import * as wanakana from 'wanakana';
import { loadJapaneseTokenizer } from '../alignment/spoken-words.ts';

/** How text is turned into kana. */
export interface KanaReadingOptions {
  /** Output script of the rewritten morphemes: 'hiragana' (default) or 'katakana'. */
  script: 'hiragana' | 'katakana';
  /**
   * Dictionary field read: 'reading' (読み, orthographic kana: 今日は -> きょう, 東京 -> とうきょう;
   * default) or 'pronunciation' (発音: きょー, とーきょー, and the particle は -> わ when it is rewritten).
   */
  source: 'reading' | 'pronunciation';
  /**
   * Which morphemes are rewritten: 'kanji-morphemes' (default: only morphemes with at least one kanji;
   * kana, punctuation, Latin letters and digits stay exactly as written) or 'all-morphemes' (every
   * morpheme that has a dictionary reading).
   */
  scope: 'kanji-morphemes' | 'all-morphemes';
}

/** Hiragana from the orthographic reading, kanji morphemes only: the least surprising text for a TTS model. */
export const DEFAULT_KANA_READING_OPTIONS: Readonly<KanaReadingOptions> = Object.freeze({
  script: 'hiragana',
  source: 'reading',
  scope: 'kanji-morphemes',
});

/** One morpheme of a {@link KanaReading}. */
export interface KanaMorpheme {
  /** The morpheme as written in the input. */
  surface: string;
  /** What the engine is given for it. */
  spoken: string;
  /** 'dictionary' when rewritten from a reading, 'kept' when left as written. */
  origin: 'dictionary' | 'kept';
}

/** A text rewritten in kana. */
export interface KanaReading {
  /** The text for the engine: the morphemes' `spoken` forms joined without separators. */
  text: string;
  morphemes: KanaMorpheme[];
  /** Morphemes with kanji that the dictionary cannot read (kept as written), in order. */
  unreadKanji: string[];
}

/** The part of kuromoji's IPADIC token this module reads. */
export interface ReadableToken {
  surface_form: string;
  reading?: string;
  pronunciation?: string;
}

const KANJI = /[\p{Script=Han}々〆ヵヶ]/u;
/** A dictionary reading: katakana or hiragana with long-vowel marks, nothing else (`*` = no reading). */
const KANA_ONLY = /^[\p{Script=Katakana}\p{Script=Hiragana}ー]+$/u;

/** True when `text` holds at least one kanji (CJK ideograph, or the marks 々 〆). */
export function containsKanji(text: string): boolean {
  return /[\p{Script=Han}々〆]/u.test(text);
}

/**
 * Rewrites already tokenized text (see {@link toKanaReading}).
 *
 * @param tokens kuromoji tokens in order (their surfaces joined must give the text).
 * @param options script, source field and scope; missing fields from {@link DEFAULT_KANA_READING_OPTIONS}.
 * @returns the kana text, the morphemes, and the kanji morphemes left unread.
 */
export function kanaReadingOfTokens(
  tokens: readonly ReadableToken[],
  options: Partial<KanaReadingOptions> = {},
): KanaReading {
  const resolved = { ...DEFAULT_KANA_READING_OPTIONS, ...options };
  const morphemes: KanaMorpheme[] = [];
  const unreadKanji: string[] = [];
  for (const token of tokens) {
    const surface = token.surface_form;
    const wanted = resolved.scope === 'all-morphemes' || KANJI.test(surface);
    const field = resolved.source === 'pronunciation' ? (token.pronunciation ?? token.reading) : token.reading;
    const readable = field !== undefined && KANA_ONLY.test(field);
    if (!wanted || !readable) {
      if (wanted && containsKanji(surface)) unreadKanji.push(surface);
      morphemes.push({ surface, spoken: surface, origin: 'kept' });
      continue;
    }
    const spoken =
      resolved.script === 'hiragana'
        ? wanakana.toHiragana(field, { passRomaji: true, convertLongVowelMark: false })
        : wanakana.toKatakana(field, { passRomaji: true });
    morphemes.push({ surface, spoken, origin: 'dictionary' });
  }
  return { text: morphemes.map((morpheme) => morpheme.spoken).join(''), morphemes, unreadKanji };
}

/**
 * Rewrites Japanese text in kana with kuromoji readings: `今日は東京で会議がありました。` ->
 * `きょうはとうきょうでかいぎがありました。` with the defaults. Punctuation, spaces, kana, Latin letters
 * and digits stay as written.
 *
 * @param text Japanese text.
 * @param options script, source field and scope; missing fields from {@link DEFAULT_KANA_READING_OPTIONS}.
 * @returns the kana text, the morphemes, and the kanji morphemes the dictionary could not read.
 * @throws WordTokenizerError when the kuromoji dictionary cannot be loaded.
 */
export async function toKanaReading(text: string, options: Partial<KanaReadingOptions> = {}): Promise<KanaReading> {
  const tokenizer = await loadJapaneseTokenizer();
  return kanaReadingOfTokens(tokenizer.tokenize(text), options);
}

/**
 * A short label of the options for engine version strings (so cache keys change with them), e.g.
 * `kana hiragana/reading/kanji-morphemes`.
 */
export function describeKanaReadingOptions(options: KanaReadingOptions): string {
  return `kana ${options.script}/${options.source}/${options.scope}`;
}
