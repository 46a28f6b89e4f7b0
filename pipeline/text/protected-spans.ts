/**
 * The places of an English question where a speaker would not pause, for the TURN_HOLD split of
 * `turn-hold-split.ts`. A person does not pause inside a name they are asking about ("the man ‖ with
 * the golden gun", "all I want ‖ for christmas"), so a split never falls inside a **protected span**
 * (`protectedBoundaries`): an occurrence of a protected phrase given by the caller (the
 * conversation's Topics, the turn's answer: `protectedPhrasesOf`), a quoted span, a capitalised
 * span (two or more capitalised words, joined by the short function words of titles), or a number
 * phrase ("nineteen ninety five", "2 million").
 */
import type { SourceTurn } from '../model/types.ts';

/** Words that join the capitalised words of a title ("The Man with the Golden Gun", "Lord of the Rings"). */
const TITLE_JOINERS = new Set([
  'of',
  'the',
  'with',
  'and',
  'for',
  'a',
  'an',
  'in',
  'on',
  'to',
  'at',
  'from',
  'by',
  'is',
  'me',
  'you',
]);
const NUMBER_WORDS = new Set(
  'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion trillion point first second third fourth fifth sixth seventh eighth ninth tenth twentieth hundredth thousandth oh'.split(
    ' ',
  ),
);

/** A word as compared with protected phrases: lower case, letters, digits and apostrophes only ("D.C." → "dc"). */
function comparable(word: string): string {
  return word.toLowerCase().replace(/[^\p{L}\p{N}']/gu, '');
}

/** The words of a phrase as compared (a trailing parenthetical such as "(film)" dropped; empty words removed). */
function phraseWords(phrase: string): string[] {
  return phrase
    .replace(/\s*\([^)]*\)\s*$/, '')
    .split(/[\s,;:]+/)
    .map(comparable)
    .filter((word) => word.length > 0);
}

/** Function words: a shared run of these alone ("of the") protects nothing. */
const FUNCTION_WORDS = new Set(
  "a an the of with and or but for in on to at from by as is was are were be been it its it's this that these those what which who whom whose when where why how do does did i me my you your he him his she her they them their we us our there here not no so than then any some all".split(
    ' ',
  ),
);

/**
 * Where a protected phrase occurs in a question's compared words: every maximal run of consecutive
 * words shared with the phrase (in the same order, contiguous in both) that is the whole phrase, or
 * holds at least two words that are not function words ("all I want for christmas" of the title
 * "All I Want for Christmas Is You"; "golden gun" of "The Man with the Golden Gun").
 * @returns inclusive word index ranges `[first, last]` in the question
 */
function phraseRuns(compared: readonly string[], phrase: string): [number, number][] {
  const target = phraseWords(phrase);
  const runs: [number, number][] = [];
  if (target.length === 0) return runs;
  for (let start = 0; start < compared.length; start += 1) {
    for (let from = 0; from < target.length; from += 1) {
      if (compared[start] !== target[from]) continue;
      if (start > 0 && from > 0 && compared[start - 1] === target[from - 1]) continue; // not maximal
      let length = 1;
      while (
        start + length < compared.length &&
        from + length < target.length &&
        compared[start + length] === target[from + length]
      )
        length += 1;
      const content = compared.slice(start, start + length).filter((word) => !FUNCTION_WORDS.has(word)).length;
      if (length >= 2 && (length === target.length || content >= 2)) runs.push([start, start + length - 1]);
    }
  }
  return runs;
}

/**
 * The phrases among `phrases` that word boundary `at` of `words` falls strictly inside (an occurrence
 * as {@link protectedBoundaries} finds them): the check that a written TURN_HOLD split is not inside
 * a title (scripts/check-pause-points.ts).
 */
export function phrasesAroundBoundary(words: readonly string[], at: number, phrases: readonly string[]): string[] {
  const compared = words.map(comparable);
  return phrases.filter((phrase) => phraseRuns(compared, phrase).some(([first, last]) => first < at && at <= last));
}

/**
 * The word boundaries of an English question where no pause may fall (module comment): boundary `at`
 * lies between `words[at − 1]` and `words[at]`; it is protected when it falls strictly inside an
 * occurrence of a protected phrase (compared case-insensitively without punctuation: the whole
 * phrase, or a run of it with two content words, `phraseRuns`), a quoted span, a capitalised span or
 * a number phrase.
 * @param words the question's words as written (punctuation attached)
 * @param phrases protected phrases (topic titles, answers), any case
 * @returns the protected boundary indices (1 … words.length − 1)
 */
export function protectedBoundaries(words: readonly string[], phrases: readonly string[] = []): Set<number> {
  const protectedAt = new Set<number>();
  const inside = (first: number, last: number) => {
    for (let at = first + 1; at <= last; at += 1) protectedAt.add(at);
  };
  const compared = words.map(comparable);
  for (const phrase of phrases) for (const [first, last] of phraseRuns(compared, phrase)) inside(first, last);
  // quoted spans: from a word opening a quote to the word closing it
  let quoteStart: number | null = null;
  words.forEach((word, index) => {
    if (quoteStart === null && /^["“‘']/.test(word) && !/^'(s|t|re|ll|d|ve|m)\b/i.test(word)) {
      quoteStart = index;
      if (/["”’']\W*$/.test(word.slice(1))) quoteStart = null;
    } else if (quoteStart !== null && /["”’']\W*$/.test(word)) {
      inside(quoteStart, index);
      quoteStart = null;
    }
  });
  // capitalised spans (not the question's first word alone, not "I"), joined by title function words
  const capitalised = (index: number) => index > 0 && /^["“‘(]?\p{Lu}/u.test(words[index]!) && words[index] !== 'I';
  for (let index = 0; index < words.length; index += 1) {
    if (!capitalised(index)) continue;
    let last = index;
    let probe = index + 1;
    while (probe < words.length) {
      if (capitalised(probe)) {
        last = probe;
        probe += 1;
      } else if (TITLE_JOINERS.has(compared[probe]!) && !/[,.;:!?]$/.test(words[probe - 1]!)) probe += 1;
      else break;
      if (/[,.;:!?]$/.test(words[last]!)) break;
    }
    if (last > index) inside(index, last);
    index = last;
  }
  // number phrases: digits and number words, with "and" between two of them
  const numeric = (index: number) =>
    /^\p{N}/u.test(compared[index] ?? '') ||
    NUMBER_WORDS.has(compared[index] ?? '') ||
    /^\p{N}.*(st|nd|rd|th|s)$/u.test(compared[index] ?? '');
  for (let index = 0; index < words.length; index += 1) {
    if (!numeric(index)) continue;
    let last = index;
    while (last + 1 < words.length && (numeric(last + 1) || (compared[last + 1] === 'and' && numeric(last + 2))))
      last += compared[last + 1] === 'and' ? 2 : 1;
    if (last > index) inside(index, last);
    index = last;
  }
  return protectedAt;
}

/**
 * The phrases no pause may fall inside, per turn of a source conversation (TopiOCQA gives each turn's
 * Topic, a Wikipedia title such as "The Man with the Golden Gun (film)", and its answer span): every
 * topic of the conversation (a question may name an earlier topic, and an opening question from
 * Natural Questions has no Topic of its own though it names the one the next turns carry: "what movie
 * is count on me by bruno mars in", Topic "" then "Count On Me (Bruno Mars song)"), this turn's answer
 * and the previous turn's (the key span a follow-up question takes up).
 * @returns protected phrases by turn number
 */
export function protectedPhrasesOf(
  turns: readonly Pick<SourceTurn, 'turnNumber' | 'topic' | 'answer'>[],
): Map<number, string[]> {
  const byTurn = new Map<number, string[]>();
  const topics = [...new Set(turns.map((turn) => turn.topic).filter((topic) => topic !== ''))];
  turns.forEach((turn, index) => {
    const answers = [turn.answer, turns[index - 1]?.answer ?? null].filter(
      (answer): answer is string => answer !== null && answer !== '',
    );
    byTurn.set(turn.turnNumber, [...topics, ...answers]);
  });
  return byTurn;
}
