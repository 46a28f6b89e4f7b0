/**
 * Splitting a question in two where a speaker would pause, for user TURN_HOLDs: the user says the
 * first part, pauses longer than 0.5 s (a TURN_HOLD by docs/events.md, steps 1 and 3), then says the rest.
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
 * Never inside a word. Each part must stay a TURN when spoken, i.e. longer than 0.8 s (docs/events.md,
 * step 2): at least `minimumWords` words (English, default 4) or `minimumMorae` morae (Japanese,
 * default 8; about 1 s at a conversational 7–8 morae/s). The synthesis stage checks the spoken
 * lengths and keeps the question whole when a part is still too short.
 * Among the candidates of the best class, the one closest to the middle (in words or morae) is taken.
 *
 * An English split never falls inside a protected span (a name, title, quotation or number phrase the
 * question asks about: `protected-spans.ts`, whose functions this module also exports). Nor before a
 * preposition that does not open a phrase (a verb particle: "what does dc stand ‖ for in washington":
 * a preposition followed by another one or ending the question).
 *
 * The LLM rewrite may mark the place a speaker would pause with ` | ` (prompt `rewrite-spoken.v2`, rule
 * 11; read by `pausePointOf` of `pause-mark.ts`): that place is taken when it is allowed (not protected, both parts
 * long enough, not after a sentence end), otherwise the rules above choose.
 */
import type { Language } from '../model/types.ts';
import { estimateMorae } from '../alignment/japanese-morae.ts';
import { loadJapaneseTokenizer } from '../alignment/spoken-words.ts';
import { languagePackOf } from '../model/language-pack.ts';
import { protectedBoundaries } from './protected-spans.ts';

export { phrasesAroundBoundary, protectedBoundaries, protectedPhrasesOf } from './protected-spans.ts';
export { pausePointOf, type MarkedQuestion } from './pause-mark.ts';

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
const RANK: Record<QuestionParts['boundary'], number> = { marked: -1, comma: 0, clause: 1, conjunction: 2, phrase: 3 };

function pickBest(candidates: { at: number; boundary: QuestionParts['boundary'] }[], total: number) {
  if (candidates.length === 0) return null;
  const best = Math.min(...candidates.map((candidate) => RANK[candidate.boundary]));
  return candidates
    .filter((candidate) => RANK[candidate.boundary] === best)
    .sort((a, b) => Math.abs(2 * a.at - total) - Math.abs(2 * b.at - total) || a.at - b.at)[0]!;
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
