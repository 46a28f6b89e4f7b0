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
 */
import type { Language } from '../model/types.ts';
import { estimateMorae } from '../alignment/japanese-morae.ts';
import { loadJapaneseTokenizer } from '../alignment/spoken-words.ts';

/** A question split in two. `first` ends with a comma (、) so the engine ends it as a continuation. */
export interface QuestionParts {
  first: string;
  second: string;
  /** Which kind of place the split is at. */
  boundary: 'comma' | 'clause' | 'conjunction' | 'phrase';
}

/** Minimum sizes of each part. */
export interface SplitOptions {
  minimumWords: number;
  minimumMorae: number;
}

export const DEFAULT_SPLIT_OPTIONS: Readonly<SplitOptions> = Object.freeze({ minimumWords: 4, minimumMorae: 8 });

const CLAUSE_WORDS = new Set(['who', 'whom', 'whose', 'which', 'that', 'where', 'when', 'because', 'if', 'while', 'since', 'although', 'though', 'after', 'before', 'until', 'whether']);
const CONJUNCTIONS = new Set(['and', 'but', 'or', 'so']);
const PREPOSITIONS = new Set(['in', 'on', 'at', 'for', 'about', 'from', 'with', 'during', 'by', 'into', 'between', 'against', 'over', 'under', 'through', 'like']);
const RANK: Record<QuestionParts['boundary'], number> = { comma: 0, clause: 1, conjunction: 2, phrase: 3 };

function pickBest(candidates: { at: number; boundary: QuestionParts['boundary'] }[], total: number) {
  if (candidates.length === 0) return null;
  const best = Math.min(...candidates.map((candidate) => RANK[candidate.boundary]));
  return candidates
    .filter((candidate) => RANK[candidate.boundary] === best)
    .sort((a, b) => Math.abs(2 * a.at - total) - Math.abs(2 * b.at - total) || a.at - b.at)[0]!;
}

/**
 * Where to split an English question (module comment), or null when no place leaves both parts at
 * least `minimumWords` words.
 * @param text one spoken-style question (words separated by spaces)
 */
export function splitEnglishQuestion(text: string, options: SplitOptions = DEFAULT_SPLIT_OPTIONS): QuestionParts | null {
  const words = text.trim().split(/\s+/).filter((word) => word.length > 0);
  const candidates: { at: number; boundary: QuestionParts['boundary'] }[] = [];
  for (let at = options.minimumWords; at <= words.length - options.minimumWords; at += 1) {
    const before = words[at - 1]!;
    const next = words[at]!.toLowerCase().replace(/[^a-z']/g, '');
    if (/,$/.test(before)) candidates.push({ at, boundary: 'comma' });
    else if (/[.;:!?]$/.test(before)) continue; // a sentence end inside the question: no continuation there
    else if (CLAUSE_WORDS.has(next)) candidates.push({ at, boundary: 'clause' });
    else if (CONJUNCTIONS.has(next)) candidates.push({ at, boundary: 'conjunction' });
    else if (PREPOSITIONS.has(next)) candidates.push({ at, boundary: 'phrase' });
  }
  const chosen = pickBest(candidates, words.length);
  if (chosen === null) return null;
  const first = words.slice(0, chosen.at).join(' ').replace(/[,;:]?$/, ',');
  return { first, second: words.slice(chosen.at).join(' '), boundary: chosen.boundary };
}

/**
 * Where to split a Japanese question (module comment): after 、 or after a phrase-final particle, or
 * null when no place leaves both parts at least `minimumMorae` morae (`estimateMorae`).
 * @throws WordTokenizerError when the kuromoji dictionary cannot be loaded
 */
export async function splitJapaneseQuestion(text: string, options: SplitOptions = DEFAULT_SPLIT_OPTIONS): Promise<QuestionParts | null> {
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
    else if (token.pos === '助詞' && next.pos !== '助詞' && next.pos !== '助動詞' && next.pos !== '記号' && next.pos_detail_1 !== '接尾') boundary = 'phrase';
    if (boundary === null) return;
    const first = text.trim().slice(0, characters);
    const morae = estimateMorae(first);
    if (morae >= options.minimumMorae && total - morae >= options.minimumMorae) candidates.push({ at: morae, boundary, characters });
  });
  const chosen = pickBest(candidates, total) as (typeof candidates)[number] | null;
  if (chosen === null) return null;
  const trimmed = text.trim();
  const head = trimmed.slice(0, chosen.characters);
  return { first: /[、,]$/.test(head) ? head : `${head}、`, second: trimmed.slice(chosen.characters).replace(/^[、,\s]+/, ''), boundary: chosen.boundary };
}

/** The split of a question in either language (see the two functions), or null. */
export async function splitQuestion(text: string, language: Language, options: SplitOptions = DEFAULT_SPLIT_OPTIONS): Promise<QuestionParts | null> {
  return language === 'ja' ? splitJapaneseQuestion(text, options) : splitEnglishQuestion(text, options);
}

/** A uniform integer source (pipeline/model/random.ts `RandomStream` satisfies it). */
interface IntegerSource {
  integer(from: number, to: number): number;
}

/**
 * Chooses which questions of a dialogue are spoken in two parts: `round(share × questions)` of them,
 * drawn uniformly without replacement among the questions that can be split (`splitQuestion`); fewer
 * when fewer can be split.
 * @param questions each turn's number and question text, in dialogue order
 * @param share fraction of all questions, in [0, 1]
 * @param random the dialogue's own stream (so the choice is deterministic per seed and dialogue)
 * @returns the split of each chosen turn, by turn number
 * @throws RangeError when `share` is outside [0, 1]
 */
export async function planTurnHolds(
  questions: readonly { turnNumber: number; question: string }[],
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
  for (const { turnNumber, question } of questions) {
    const parts = await splitQuestion(question, language, options);
    if (parts !== null) candidates.push({ turnNumber, parts });
  }
  while (chosen.size < wanted && candidates.length > 0) {
    const [picked] = candidates.splice(random.integer(0, candidates.length - 1), 1);
    chosen.set(picked!.turnNumber, picked!.parts);
  }
  return chosen;
}
