/**
 * The question marks a script's writing uses, for the corpus check that flags questions without one.
 * Latin and Cyrillic "?"; Chinese, Japanese and Korean the full-width "？" or "?"; Arabic "؟"; Greek
 * ";" (the erotimatiko, U+037E, or a semicolon); Armenian "՞" (written on the stressed word); Ethiopic
 * "፧"; Devanagari "?" (Hindi, Marathi and Nepali borrow it). Thai, Lao, Khmer and Myanmar write no
 * question mark (a particle asks: Thai ไหม, ครับ), so no question of theirs is flagged.
 */

/** Question marks by Unicode script name; an empty list: the script writes none. */
export const QUESTION_MARKS_BY_SCRIPT: Readonly<Record<string, readonly string[]>> = Object.freeze({
  Latin: ['?'],
  Cyrillic: ['?'],
  Han: ['？', '?'],
  Hiragana: ['？', '?'],
  Katakana: ['？', '?'],
  Hangul: ['？', '?'],
  Arabic: ['؟', '?'],
  Greek: [';', '\u037e', '?'],
  Armenian: ['՞', '?'],
  Ethiopic: ['፧', '?'],
  Devanagari: ['?'],
  Thai: [],
  Lao: [],
  Khmer: [],
  Myanmar: [],
});

/** The script of most of the letters of `text` among {@link QUESTION_MARKS_BY_SCRIPT}, or null. */
export function dominantScript(text: string): string | null {
  const counts = new Map<string, number>();
  for (const character of text) {
    if (!/\p{L}/u.test(character)) continue;
    for (const script of Object.keys(QUESTION_MARKS_BY_SCRIPT)) {
      if (new RegExp(`\\p{Script=${script}}`, 'u').test(character)) {
        counts.set(script, (counts.get(script) ?? 0) + 1);
        break;
      }
    }
  }
  let best: string | null = null;
  for (const [script, count] of counts) if (best === null || count > counts.get(best)!) best = script;
  return best;
}

/**
 * Whether a question lacks the question mark its script writes: false for a script without one
 * (Thai, Lao, Khmer, Myanmar); a text in a script outside the table is held to "?".
 */
export function lacksQuestionMark(question: string): boolean {
  const script = dominantScript(question);
  const marks = script === null ? ['?'] : QUESTION_MARKS_BY_SCRIPT[script]!;
  if (marks.length === 0) return false;
  return !marks.some((mark) => question.includes(mark));
}
