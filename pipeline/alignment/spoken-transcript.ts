/**
 * The transcript of the part of an utterance that was actually spoken, from its text and the words of
 * its word alignment (a barge-in variant's cut answer keeps only the words that start before the cut:
 * stages/place-timeline.ts `truncateUtterance`).
 */

/**
 * The prefix of `text` that ends with the last of `spokenWords`, found in order in the text: English
 * words are whitespace tokens without their outer punctuation, Japanese words kuromoji morphemes
 * (pipeline/alignment/spoken-words.ts), so each is a substring of the text. Punctuation after the last
 * spoken word is not included (the speaker stopped there).
 *
 * @param text the text the engine spoke (padding included)
 * @param spokenWords the alignment words kept, in order (a prefix of the text's words)
 * @param separator joins the words when one of them is not found in the text (an alignment written by
 *   another tool): `' '` for English, `''` for Japanese
 * @returns `text` itself when every word of it was spoken (nothing but punctuation follows the last
 *   word); `''` when no word was spoken
 */
export function spokenPrefix(text: string, spokenWords: readonly string[], separator: string): string {
  if (spokenWords.length === 0) return '';
  let cursor = 0;
  for (const word of spokenWords) {
    const index = text.indexOf(word, cursor);
    if (index < 0) return spokenWords.join(separator);
    cursor = index + word.length;
  }
  // nothing but punctuation and spaces left: the whole text was spoken
  if (!/[\p{L}\p{N}]/u.test(text.slice(cursor))) return text;
  return text.slice(0, cursor);
}
