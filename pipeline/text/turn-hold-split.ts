/**
 * Splitting a question in two where a speaker would pause, for user TURN_HOLDs: the user says the
 * first part, pauses longer than 0.5 s (a TURN_HOLD by events.md rules 1 and 4), then says the rest.
 * The benchmark's Pause Handling task evaluates whether a model waits through such a pause.
 *
 * Where a speaker pauses inside a question (mid-utterance pauses fall at syntactic boundaries, most
 * of all at clause boundaries and after discourse markers; Goldman-Eisler 1972, "Pauses, clauses,
 * sentences", Language and Speech 15; Krivokapić 2007 on prosodic phrasing), in order of preference:
 * 1. at a comma (after an opening phrase such as "Okay, so", or between clauses) — 、 in Japanese;
 * 2. before a relative or subordinate clause ("the actor | who played …", "| because …", "| when …");
 * 3. before a coordinating conjunction ("… | and what …");
 * 4. before a preposition that opens a phrase ("what was his role | in the film"; not "of" or "to", which
 *    mostly sit inside a noun or verb phrase);
 * Japanese, after a particle that ends a phrase (は, が, を, に, で, について, …; kuromoji 助詞 not
 * followed by another particle, an auxiliary verb or a suffix).
 * Never inside a word. Each part must stay a TURN when spoken, i.e. longer than 0.8 s (events.md
 * rule 2): at least `minimumWords` words (English, default 4) or `minimumMorae` morae (Japanese,
 * default 8; about 1 s at a conversational 7–8 morae/s). The synthesis stage checks the spoken
 * lengths and keeps the question whole when a part is still too short.
 * Among the candidates of the best class, the one closest to the middle (in words or morae) is taken.
 *
 * A person does not pause inside a name they are asking about (issue 19: "the man ‖ with the golden
 * gun", "all I want ‖ for christmas"), so an English split never falls inside a **protected span**
 * (`protectedBoundaries`): an occurrence of a protected phrase given by the caller (the
 * conversation's Topics, the turn's answer: `protectedPhrasesOf`), a quoted span, a capitalised
 * span (two or more capitalised words, joined by the short function words of titles), or a number
 * phrase ("nineteen ninety five", "2 million"). Nor before a preposition that does not open a phrase
 * (a verb particle: "what does dc stand ‖ for in washington": a preposition followed by another one or
 * ending the question).
 *
 * The LLM rewrite may mark the place a speaker would pause with ` | ` (prompt `rewrite-spoken.v2`, rule
 * 11; read by {@link pausePointOf}): that place is taken when it is allowed (not protected, both parts
 * long enough, not after a sentence end), otherwise the rules above choose.
 */
import type { Language, SourceTurn } from '../model/types.ts';
import { estimateMorae } from '../alignment/japanese-morae.ts';
import { loadJapaneseTokenizer } from '../alignment/spoken-words.ts';
import { languagePackOf } from '../model/language-pack.ts';

/** A question split in two. `first` ends with a comma (、) so the engine ends it as a continuation. */
export interface QuestionParts {
  first: string;
  second: string;
  /** Which kind of place the split is at (`marked`: the pause point the LLM rewrite marked, `pausePointOf`). */
  boundary: 'marked' | 'comma' | 'clause' | 'conjunction' | 'phrase';
}

/** Minimum sizes of each part. */
export interface SplitOptions {
  minimumWords: number;
  minimumMorae: number;
}

export const DEFAULT_SPLIT_OPTIONS: Readonly<SplitOptions> = Object.freeze({ minimumWords: 4, minimumMorae: 8 });

/** The pause-point word lists of a language (its pack's `pausePoints`), lower case. */
export interface PauseWords {
  clauseWords: ReadonlySet<string>;
  conjunctions: ReadonlySet<string>;
  prepositions: ReadonlySet<string>;
}

/** The pause-point words of a language pack (English: pipeline/model/language-packs/en.yaml). */
export function pauseWordsOf(language: Language): PauseWords {
  const lists = languagePackOf(language).pausePoints;
  const lower = (words: readonly string[]) => new Set(words.map((word) => word.toLowerCase()));
  return {
    clauseWords: lower(lists.clauseWords),
    conjunctions: lower(lists.conjunctions),
    prepositions: lower(lists.prepositions),
  };
}
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
const RANK: Record<QuestionParts['boundary'], number> = { marked: -1, comma: 0, clause: 1, conjunction: 2, phrase: 3 };

function pickBest(candidates: { at: number; boundary: QuestionParts['boundary'] }[], total: number) {
  if (candidates.length === 0) return null;
  const best = Math.min(...candidates.map((candidate) => RANK[candidate.boundary]));
  return candidates
    .filter((candidate) => RANK[candidate.boundary] === best)
    .sort((a, b) => Math.abs(2 * a.at - total) - Math.abs(2 * b.at - total) || a.at - b.at)[0]!;
}

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
 * Whether a marked pause point (word boundary `at`: between `words[at − 1]` and `words[at]`) may be
 * used: both parts at least `minimumWords` words, outside every protected span, not after a sentence end.
 */
export function markedPauseAllowed(
  words: readonly string[],
  at: number,
  protectedAt: ReadonlySet<number>,
  options: SplitOptions = DEFAULT_SPLIT_OPTIONS,
): boolean {
  return (
    Number.isInteger(at) &&
    at >= options.minimumWords &&
    at <= words.length - options.minimumWords &&
    !protectedAt.has(at) &&
    !/[.;:!?]$/.test(words[at - 1]!)
  );
}

/** A question as the LLM rewrite wrote it, read for its pause mark (`pausePointOf`). */
export interface MarkedQuestion {
  /** The question without the mark (spaces collapsed). */
  text: string;
  /** The marked word boundary: the number of words before the mark; absent without a mark. */
  pausePoint?: number;
  /** Why the mark cannot be read (more than one, at the start or the end); absent when it can. */
  problem?: string;
}

/** The pause mark of the rewrite prompt (`rewrite-spoken.v2` rule 11): a vertical bar between words. */
const PAUSE_MARK = /\s*[|‖]\s*/g;

/**
 * Reads and removes the pause mark ` | ` a rewrite may put in a question (module comment). The text
 * comes back without any mark whatever the problem, so nothing unspeakable reaches the speech engine.
 * @param text one question of the rewrite's reply
 * @returns the text without the mark, the marked word boundary, or the problem with the mark
 */
export function pausePointOf(text: string): MarkedQuestion {
  const parts = text.split(PAUSE_MARK);
  const clean = parts.join(' ').replace(/\s+/g, ' ').trim();
  if (parts.length === 1) return { text: clean };
  if (parts.length > 2) return { text: clean, problem: `marks ${parts.length - 1} pause points with "|"; at most one` };
  const before = parts[0]!
    .trim()
    .split(/\s+/)
    .filter((word) => word.length > 0).length;
  const after = parts[1]!
    .trim()
    .split(/\s+/)
    .filter((word) => word.length > 0).length;
  if (before === 0 || after === 0)
    return { text: clean, problem: `has its pause mark "|" at the ${before === 0 ? 'start' : 'end'}` };
  return { text: clean, pausePoint: before };
}

/**
 * Where to split an English question (module comment), or null when no place leaves both parts at
 * least `minimumWords` words outside every protected span.
 * @param text one spoken-style question (words separated by spaces)
 * @param protectedPhrases phrases the split must not fall inside (the turn's topic, its answer; see `protectedPhrasesOf`)
 * @param pausePoint the word boundary the rewrite marked (`pausePointOf`), taken before any other when allowed
 */
export function splitEnglishQuestion(
  text: string,
  options: SplitOptions = DEFAULT_SPLIT_OPTIONS,
  protectedPhrases: readonly string[] = [],
  pausePoint?: number,
): QuestionParts | null {
  return splitQuestionAtWords(
    text
      .trim()
      .split(/\s+/)
      .filter((word) => word.length > 0),
    ' ',
    pauseWordsOf('en'),
    options,
    protectedPhrases,
    pausePoint,
  );
}

/**
 * The words of a question written without spaces between words (Chinese, Thai): ICU word segments
 * (`Intl.Segmenter`), each with the punctuation and spaces after it attached, so that joined they are
 * the text again.
 */
function segmenterWordsWithPunctuation(text: string, language: Language): string[] {
  const words: string[] = [];
  for (const segment of new Intl.Segmenter(language, { granularity: 'word' }).segment(text.trim())) {
    if (segment.isWordLike || words.length === 0) words.push(segment.segment);
    else words[words.length - 1] += segment.segment;
  }
  return words;
}

/**
 * Where to split a question given as words (module comment): at a comma, before a clause word, a
 * conjunction or a phrase-opening preposition of `pauseWords`, never inside a protected span, both
 * parts at least `minimumWords` words; or null.
 * @param words the question's words with their punctuation attached
 * @param separator what joins two words (a space, or nothing for a language written without spaces)
 * @param pausePoint the word boundary the rewrite marked (`pausePointOf`), taken before any other when allowed
 */
function splitQuestionAtWords(
  words: readonly string[],
  separator: string,
  pauseWords: PauseWords,
  options: SplitOptions,
  protectedPhrases: readonly string[],
  pausePoint?: number,
): QuestionParts | null {
  const protectedAt = protectedBoundaries(words, protectedPhrases);
  const candidates: { at: number; boundary: QuestionParts['boundary'] }[] = [];
  if (pausePoint !== undefined && markedPauseAllowed(words, pausePoint, protectedAt, options))
    candidates.push({ at: pausePoint, boundary: 'marked' });
  const bare = (word: string) => word.toLowerCase().replace(/[^\p{L}\p{M}']/gu, '');
  for (let at = options.minimumWords; at <= words.length - options.minimumWords; at += 1) {
    if (protectedAt.has(at)) continue;
    const before = words[at - 1]!;
    const next = bare(words[at]!);
    const afterNext = bare(words[at + 1] ?? '');
    if (/[,，、]$/.test(before)) candidates.push({ at, boundary: 'comma' });
    else if (/[.;:!?。；：！？]$/.test(before))
      continue; // a sentence end inside the question: no continuation there
    else if (pauseWords.clauseWords.has(next)) candidates.push({ at, boundary: 'clause' });
    else if (pauseWords.conjunctions.has(next)) candidates.push({ at, boundary: 'conjunction' });
    // a preposition opens a phrase only when words follow that are not another preposition ("stand for in ...")
    else if (
      pauseWords.prepositions.has(next) &&
      !/[.?!。？！]$/.test(words[at]!) &&
      afterNext !== '' &&
      !pauseWords.prepositions.has(afterNext)
    )
      candidates.push({ at, boundary: 'phrase' });
  }
  const chosen = pickBest(candidates, words.length);
  if (chosen === null) return null;
  const comma = separator === '' ? '，' : ',';
  const first = words
    .slice(0, chosen.at)
    .join(separator)
    .replace(/[,;:，；：、]?$/, comma);
  return { first, second: words.slice(chosen.at).join(separator), boundary: chosen.boundary };
}

/**
 * Where to split a Japanese question (module comment): after 、 or after a phrase-final particle, or
 * null when no place leaves both parts at least `minimumMorae` morae (`estimateMorae`).
 * @throws WordTokenizerError when the kuromoji dictionary cannot be loaded
 */
export async function splitJapaneseQuestion(
  text: string,
  options: SplitOptions = DEFAULT_SPLIT_OPTIONS,
): Promise<QuestionParts | null> {
  const tokens = (await loadJapaneseTokenizer()).tokenize(text.trim());
  const total = estimateMorae(text);
  const candidates: { at: number; boundary: QuestionParts['boundary']; characters: number }[] = [];
  let characters = 0;
  tokens.forEach((token, index) => {
    characters += token.surface_form.length;
    const next = tokens[index + 1];
    if (!next) return;
    let boundary: QuestionParts['boundary'] | null = null;
    if (token.surface_form === '、' || token.surface_form === ',') boundary = 'comma';
    else if (
      token.pos === '助詞' &&
      next.pos !== '助詞' &&
      next.pos !== '助動詞' &&
      next.pos !== '記号' &&
      next.pos_detail_1 !== '接尾'
    )
      boundary = 'phrase';
    if (boundary === null) return;
    const first = text.trim().slice(0, characters);
    const morae = estimateMorae(first);
    if (morae >= options.minimumMorae && total - morae >= options.minimumMorae)
      candidates.push({ at: morae, boundary, characters });
  });
  const chosen = pickBest(candidates, total) as (typeof candidates)[number] | null;
  if (chosen === null) return null;
  const trimmed = text.trim();
  const head = trimmed.slice(0, chosen.characters);
  return {
    first: /[、,]$/.test(head) ? head : `${head}、`,
    second: trimmed.slice(chosen.characters).replace(/^[、,\s]+/, ''),
    boundary: chosen.boundary,
  };
}

/**
 * The split of a question in a language, by its pack's `pausePoints` (pipeline/model/language-pack.ts):
 * `japanese-particles` ({@link splitJapaneseQuestion}), or `words` with the pack's word lists (words
 * at spaces, or segmenter words for a language written without spaces), or null. Protected phrases
 * are matched word for word (the source topics and answers are English); a marked pause point (a word
 * boundary: the English rewrite marks one, a translation carries none) applies to a language split at spaces.
 * @throws LanguagePackError for a language without a pack; WordTokenizerError when kuromoji cannot load
 */
export async function splitQuestion(
  text: string,
  language: Language,
  options: SplitOptions = DEFAULT_SPLIT_OPTIONS,
  protectedPhrases: readonly string[] = [],
  pausePoint?: number,
): Promise<QuestionParts | null> {
  const pack = languagePackOf(language);
  if (pack.pausePoints.rules === 'japanese-particles') return splitJapaneseQuestion(text, options);
  if (pack.script.segmentation === 'spaces')
    return splitQuestionAtWords(
      text
        .trim()
        .split(/\s+/)
        .filter((word) => word.length > 0),
      ' ',
      pauseWordsOf(language),
      options,
      protectedPhrases,
      pausePoint,
    );
  return splitQuestionAtWords(
    segmenterWordsWithPunctuation(text, language),
    '',
    pauseWordsOf(language),
    options,
    protectedPhrases,
  );
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

/** A uniform integer source (pipeline/model/random.ts `RandomStream` satisfies it). */
interface IntegerSource {
  integer(from: number, to: number): number;
}

/**
 * Chooses which questions of a dialogue are spoken in two parts: `round(share × questions)` of them,
 * drawn uniformly without replacement among the questions that can be split (`splitQuestion`); fewer
 * when fewer can be split.
 * @param questions each turn's number and question text, in dialogue order, with the phrases its split
 *   must not fall inside and the pause point the rewrite marked (TextTurn `pausePoint`)
 * @param share fraction of all questions, in [0, 1]
 * @param random the dialogue's own stream (so the choice is deterministic per seed and dialogue)
 * @returns the split of each chosen turn, by turn number
 * @throws RangeError when `share` is outside [0, 1]
 */
export async function planTurnHolds(
  questions: readonly {
    turnNumber: number;
    question: string;
    protectedPhrases?: readonly string[];
    pausePoint?: number | undefined;
  }[],
  language: Language,
  share: number,
  random: IntegerSource,
  options: SplitOptions = DEFAULT_SPLIT_OPTIONS,
): Promise<Map<number, QuestionParts>> {
  if (!(share >= 0 && share <= 1)) throw new RangeError(`turn hold share must lie in [0, 1], got ${share}`);
  const wanted = Math.round(share * questions.length);
  const chosen = new Map<number, QuestionParts>();
  if (wanted === 0) return chosen;
  const candidates: { turnNumber: number; parts: QuestionParts }[] = [];
  for (const { turnNumber, question, protectedPhrases, pausePoint } of questions) {
    const parts = await splitQuestion(question, language, options, protectedPhrases ?? [], pausePoint);
    if (parts !== null) candidates.push({ turnNumber, parts });
  }
  while (chosen.size < wanted && candidates.length > 0) {
    const [picked] = candidates.splice(random.integer(0, candidates.length - 1), 1);
    chosen.set(picked!.turnNumber, picked!.parts);
  }
  return chosen;
}
