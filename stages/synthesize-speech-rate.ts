/**
 * Implausibly slow speech and its repair: the mora rate below which a Japanese utterance counts as
 * stretched by the TTS engine, and the phrase breaks after particles that make the engine speak it at
 * a plausible rate.
 */
import type { Centiseconds } from '../pipeline/model/types.ts';
import { estimateMorae } from '../pipeline/alignment/japanese-morae.ts';
import { loadJapaneseTokenizer } from '../pipeline/alignment/spoken-words.ts';

/**
 * Slowest plausible Japanese speech rate, morae per second (the Japanese pack's
 * `speechRate.slowSpeechRepair.below`). Conversational Japanese runs at about 7–8
 * morae/s and careful read speech above 5 (Kitahara, "Speech rate in Japanese", reviewed in
 * Arai & Greenberg 1997; our Open JTalk voices speak 7–9); Open JTalk sometimes stretches a very long
 * accent phrase (a run of kanji numerals with no break) to about 2.5 morae/s.
 */
export const MINIMUM_JAPANESE_MORAE_PER_SECOND = 4;

/**
 * Whether a Japanese utterance was spoken implausibly slowly (below
 * `minimum`, default {@link MINIMUM_JAPANESE_MORAE_PER_SECOND}), by the mora estimate of its text.
 * @param durationCs speech duration, centiseconds
 * @param minimum slowest plausible rate, morae per second
 */
export function speechRateIsImplausiblySlow(
  text: string,
  durationCs: Centiseconds,
  minimum = MINIMUM_JAPANESE_MORAE_PER_SECOND,
): boolean {
  if (durationCs <= 0) return false;
  return estimateMorae(text) / (durationCs / 100) < minimum;
}

/**
 * The text with a 、 after each particle (kuromoji 助詞) that ends a phrase (not followed by another
 * particle, an auxiliary verb or punctuation), so the TTS engine gets accent-phrase breaks: Open JTalk
 * speaks 「エッフェル塔は千八百八十七年から千八百八十九年にかけて建てられました。」 in 22.7 s, and with
 * breaks after は, から, にかけて in 8.3 s. Words and their order are unchanged (、 is not a word).
 */
export async function japanesePhraseBreaks(text: string): Promise<string> {
  const tokens = (await loadJapaneseTokenizer()).tokenize(text);
  let result = '';
  tokens.forEach((token, index) => {
    result += token.surface_form;
    const next = tokens[index + 1];
    if (token.pos !== '助詞' || !next) return;
    if (next.pos === '助詞' || next.pos === '助動詞' || next.pos === '記号' || next.pos_detail_1 === '接尾') return;
    result += '、';
  });
  return result;
}
