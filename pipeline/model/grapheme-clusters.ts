/**
 * User-perceived characters (extended grapheme clusters, Unicode UAX #29) of a text, by ICU's
 * `Intl.Segmenter` with grapheme granularity. Spoken lengths and speech rates count clusters, not
 * code points: a Devanagari or Thai vowel sign, a virama or a tone mark (`\p{M}`) belongs to the
 * letter it is written on, so "हि" or "ดี" is one unit, as "é" is whether precomposed or not. Latin
 * text without combining marks has one cluster per code point, so its counts equal a count of
 * letters.
 */

const segmenters = new Map<string, Intl.Segmenter>();

/**
 * The grapheme clusters of `text` in order (their concatenation is `text`).
 * @param language BCP-47 code given to the segmenter (clusters do not depend on it in ICU today; it
 *   is passed for tailorings).
 */
export function graphemeClusters(text: string, language: string): string[] {
  let segmenter = segmenters.get(language);
  if (!segmenter) {
    segmenter = new Intl.Segmenter(language, { granularity: 'grapheme' });
    segmenters.set(language, segmenter);
  }
  return Array.from(segmenter.segment(text), (segment) => segment.segment);
}

/**
 * How many grapheme clusters of `text` hold a character matching `pattern` (default: a letter,
 * `\p{L}`).
 * @param pattern tested on each cluster; a pattern without the `g` flag (a `g` pattern keeps state).
 */
export function countGraphemeClusters(text: string, language: string, pattern: RegExp = /\p{L}/u): number {
  let count = 0;
  for (const cluster of graphemeClusters(text, language)) if (pattern.test(cluster)) count += 1;
  return count;
}
