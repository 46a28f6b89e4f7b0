/**
 * Japanese morae: counted from kana readings, and recovered with times from an Open JTalk phoneme trace.
 */
import type { EngineTiming } from '../model/types.ts';

/** Small kana that merge with the preceding kana into one mora (拗音 and small vowels), hiragana and katakana. */
const NON_MORAIC_SMALL_KANA = new Set('ぁぃぅぇぉゃゅょゎァィゥェォャュョヮ');

function isKana(character: string): boolean {
  const code = character.codePointAt(0) as number;
  return (code >= 0x3041 && code <= 0x3096) || (code >= 0x30a1 && code <= 0x30fa) || code === 0x30fc; // ぁ..ゖ, ァ..ヺ, ー
}

/**
 * Counts the morae of a kana reading (hiragana or katakana).
 *
 * Standard definition (H. Kubozono, "Mora and syllable", in N. Tsujimura (ed.), The Handbook of
 * Japanese Linguistics, Blackwell 1999; NHK 日本語発音アクセント新辞典): every kana is one mora, except the
 * small ゃゅょ / ぁぃぅぇぉ / ゎ (and katakana ャュョ ァィゥェォ ヮ), which join the preceding kana into
 * one mora (キャ = 1). The special morae each count as one: the moraic nasal ン, the geminate ッ/っ
 * (きって = 3) and the long-vowel mark ー (コーヒー = 4). Small ヵ/ヶ are read か/け and count.
 *
 * @param reading kana text; characters that are not kana (kanji, Latin letters, digits, punctuation) are ignored.
 * @returns the number of morae (0 when the text holds no counted kana).
 */
export function countMorae(reading: string): number {
  let count = 0;
  for (const character of reading) {
    if (isKana(character) && !NON_MORAIC_SMALL_KANA.has(character)) count++;
  }
  return count;
}

/**
 * A rough mora count for text without a known reading (digits, Latin letters, unknown kanji): kana are
 * counted with {@link countMorae}; a digit counts 3 (numbers are read with place words: 330 ->
 * さんびゃくさんじゅう is 9, 1889 -> せんはっぴゃくはちじゅうきゅう is 13); every other letter (Latin, kanji)
 * counts 2 (AI -> エーアイ is 4, 塔 -> トー is 2); punctuation and spaces count 0. Used only to weight a word when spreading words by
 * mora count, never to check an engine trace.
 *
 * @returns at least 1 for text with any letter, digit or kana; else 0.
 */
export function estimateMorae(text: string): number {
  let count = countMorae(text);
  for (const character of text) {
    if (isKana(character)) continue;
    if (/\p{Nd}/u.test(character)) count += 3;
    else if (/[\p{L}\p{N}]/u.test(character)) count += 2;
  }
  return count;
}

/** Open JTalk phonemes that end a mora: the five vowels, their devoiced forms, the moraic nasal and the geminate closure. */
const MORA_NUCLEI = new Set(['a', 'i', 'u', 'e', 'o', 'A', 'I', 'U', 'E', 'O', 'N', 'cl']);
/** Open JTalk phonemes that are not speech sounds. */
const PAUSE_PHONEMES = new Set(['sil', 'pau']);

/** One mora of an engine trace, in seconds from the start of the synthesized audio. */
export interface TimedMora {
  start: number;
  end: number;
  /** The phonemes of the mora, e.g. `ky o`. */
  phonemes: string;
}

/**
 * Groups an Open JTalk phoneme trace into morae: consonants are collected until a mora nucleus (vowel
 * `a i u e o`, devoiced `A I U E O`, `N`, `cl`) closes the mora, so each mora starts at its first
 * consonant and ends at its nucleus. `sil` and `pau` are not part of any mora. A consonant left without
 * a nucleus (not expected from Open JTalk) is added to the preceding mora.
 *
 * @param phonemes engine timings whose labels are Open JTalk phonemes, in order.
 * @returns the morae in order; their count is the utterance's mora count as Open JTalk spoke it.
 */
export function moraeFromOpenJtalkPhonemes(phonemes: readonly EngineTiming[]): TimedMora[] {
  const morae: TimedMora[] = [];
  let pending: EngineTiming[] = [];
  const flushPending = (): void => {
    const previous = morae[morae.length - 1];
    const last = pending[pending.length - 1];
    if (previous && last) {
      previous.end = last.end;
      previous.phonemes += ` ${pending.map((phoneme) => phoneme.label).join(' ')}`;
    }
    pending = [];
  };
  for (const phoneme of phonemes) {
    if (PAUSE_PHONEMES.has(phoneme.label)) {
      flushPending();
      continue;
    }
    pending.push(phoneme);
    if (MORA_NUCLEI.has(phoneme.label)) {
      morae.push({
        start: (pending[0] as EngineTiming).start,
        end: phoneme.end,
        phonemes: pending.map((item) => item.label).join(' '),
      });
      pending = [];
    }
  }
  flushPending();
  return morae;
}
