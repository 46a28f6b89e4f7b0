/**
 * Checks that a line of text is speakable in its language: no digits, no markup, and for Japanese the
 * right script with no English left untranslated. Shared by the rewrite and translate validation.
 */
import type { Language } from '../model/types.ts';
import { languagePackOf } from '../model/language-pack.ts';

/** Options of {@link findSpeakableTextProblems}. */
export interface SpeakableTextOptions {
  /**
   * Latin-letter words allowed in Japanese text besides the acronym rule (all-capital words of at most
   * five letters, e.g. `NHK`, `DNA`, and single capitals as in `Tシャツ`). Compared after NFKC.
   */
  allowedLatinWords?: ReadonlySet<string>;
}

const CHINESE_OR_JAPANESE_SCRIPT = /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]/u;
const ACRONYM = /^[A-Z]{1,5}$/;
/** Markup and bracket characters a spoken line must not contain (Japanese 「」 quotes are fine). */
const MARKUP = /[*_#`<>[\]{}()|\\~^=]/;

/**
 * Lists what keeps a line from being spoken as is. Text is NFKC-normalised first, so full-width
 * digits and letters count as their ASCII forms.
 *
 * - every language: not empty; no Arabic digits; no markup or bracket characters;
 * - by the language pack's `script`: letters of its scripts (else "contains no {missingLetters}"); for a
 *   language written in Latin letters no Chinese or Japanese characters ("contains {foreignLetters}");
 *   for any other, no Latin words but acronyms and allowed words (with `latinAdvice` appended).
 *
 * @param text one question or answer.
 * @param language the language the text must be in.
 * @param options extra allowed Latin words for Japanese.
 * @returns problem messages, empty when the text is fine.
 */
export function findSpeakableTextProblems(
  text: string,
  language: Language,
  options: SpeakableTextOptions = {},
): string[] {
  const normalised = text.normalize('NFKC');
  if (normalised.trim() === '') return ['is empty'];
  const problems: string[] = [];
  const digits = normalised.match(/[0-9](?:[0-9,.]*[0-9])?/g);
  if (digits !== null) problems.push(`contains Arabic digits (${quoteList(digits)}); numbers must be written as words`);
  const markup = normalised.match(new RegExp(MARKUP.source, 'g'));
  if (markup !== null) problems.push(`contains markup or bracket characters (${quoteList(markup)})`);

  // the language's script, by its pack (pipeline/model/language-pack.ts `script`)
  const pack = languagePackOf(language);
  const inScript = new RegExp(pack.script.scripts.map((name) => `\\p{Script=${name}}`).join('|'), 'u');
  if (!inScript.test(normalised))
    problems.push(
      `contains no ${pack.script.missingLetters ?? `${pack.script.scripts.join(' or ')} letters (${pack.name})`}`,
    );
  if (!pack.script.scripts.includes('Latin')) {
    const latinWords = (normalised.match(/[A-Za-z]+(?:['’.-][A-Za-z]+)*/g) ?? []).filter(
      (word) => !ACRONYM.test(word) && options.allowedLatinWords?.has(word) !== true,
    );
    if (latinWords.length > 0)
      problems.push(
        `contains untranslated Latin text (${quoteList(latinWords)})${pack.script.latinAdvice ? `; ${pack.script.latinAdvice}` : ''}`,
      );
  } else if (CHINESE_OR_JAPANESE_SCRIPT.test(normalised))
    problems.push(`contains ${pack.script.foreignLetters ?? 'Japanese or Chinese characters'}`);
  return problems;
}

function quoteList(items: readonly string[]): string {
  const unique = [...new Set(items)];
  const shown = unique.slice(0, 5).map((item) => `"${item}"`);
  return unique.length > 5 ? `${shown.join(', ')}, …` : shown.join(', ');
}
