/**
 * Makes questions and answers speakable as whole utterances, with simple templates (no model).
 *
 * Questions: spoken-style normalised, first letter capitalised, a lone "i" capitalised, and a question
 * mark added when missing (a full stop for requests such as "tell me about …").
 *
 * Answers (after {@link normaliseSpokenEnglish}):
 * - a bare "yes"/"no": when the question starts with an auxiliary verb, a short tag answer from it
 *   ("was it …?" → "Yes, it was." / "No, it wasn't."; "are you …?" → "Yes, I am."), otherwise
 *   "Yes, that's right." / "No, that's not right.";
 * - "yes, …"/"no, …" and answers that already read as sentences (a pronoun subject, or four or more
 *   words with a finite verb) are kept, capitalised and ended with a full stop;
 * - any other fragment is put into a frame chosen by the question word, in the question's tense
 *   ("was/were/did/had" or a past-tense verb → past):
 *   - when / what year: "It was in nineteen eighty-seven." ("on" before a full date, nothing before
 *     a preposition: "It was between …");
 *   - where: "It's in Paris." / "It was in Paris.";
 *   - why: "It's because …" when the fragment starts with because/to/due/since, else "The reason is …";
 *   - questions starting with "any": "Yes, there's …";
 *   - everything else (who, what, which, how many, how, …): "It's …" / "It was …", or "They're …" /
 *     "They were …" for a plural question (are/were/do/have) or a list answer. Lists of three or more
 *     short items get an "and" before the last.
 * - unanswerable turns: one of three apologies ("I'm sorry, I don't know that." …), chosen by turn
 *   number so the same input always gives the same text.
 */
import { normaliseSpokenEnglish } from './spoken-english.ts';
import { isPluralQuestion, lowerFirstWord, questionTense, readsAsSentence } from './english-answer-grammar.ts';
import { yesNoReply } from './yes-no-replies.ts';

/** The apologies used for unanswerable turns, in rotation by turn number. */
export const UNANSWERABLE_REPLIES: readonly string[] = [
  "I'm sorry, I don't know that.",
  "Sorry, I'm not sure about that one.",
  "I'm afraid I don't know the answer to that.",
];

/**
 * The apology for an unanswerable turn.
 *
 * @param turnNumber the 1-based turn number (picks the variant).
 * @returns one of {@link UNANSWERABLE_REPLIES}.
 */
export function unanswerableReply(turnNumber: number): string {
  const count = UNANSWERABLE_REPLIES.length;
  return UNANSWERABLE_REPLIES[(((turnNumber - 1) % count) + count) % count] ?? UNANSWERABLE_REPLIES[0]!;
}

const REQUEST_START = /^(?:please\s+)?(?:tell|give|name|list|describe|explain|say|show)\b/i;

/**
 * A question as spoken: normalised, capitalised, ending in "?" (or "." for a request).
 *
 * @param question the written question.
 * @returns the spoken question.
 * @throws Error when the question is empty after normalisation.
 */
export function spokenQuestion(question: string): string {
  const spoken = normaliseSpokenEnglish(question).replace(/\bi\b(?!\.)/g, 'I');
  const body = spoken.replace(/[\s.,;:!?]+$/, '');
  if (body === '') throw new Error(`empty question: "${question}"`);
  const ending = REQUEST_START.test(body) && !spoken.endsWith('?') ? '.' : '?';
  return `${capitalise(body)}${ending}`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function withFullStop(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

const PREPOSITION_START =
  /^(?:in|on|at|between|around|about|from|during|until|till|since|before|after|within|near|by|over|under|up|through|throughout|across|along|inside|outside|beside|among|toward|towards|into|onto|circa|approximately|roughly|nearly|almost|sometime)\b/i;
const MONTH_NAMES = 'January|February|March|April|May|June|July|August|September|October|November|December';
const FULL_DATE = new RegExp(
  `^(?:the \\S*(?:first|second|third|th) of |(?:${MONTH_NAMES}) \\S*(?:first|second|third|th)\\b)`,
  'i',
);

/**
 * Detects a list of short comma-separated items ("A, B, C" or "A, B and C", items of at most four
 * words) and inserts "and" before the last item when it has none.
 */
function joinList(body: string): { text: string; isList: boolean } {
  const items = body.split(/\s*,\s*/);
  const short = items.every((item) => item !== '' && item.split(/\s+/).length <= 4);
  const joined = /\b(?:and|or)\b/.test(items[items.length - 1] ?? '');
  if (!short || items.length < 2 || (items.length === 2 && !joined)) return { text: body, isList: false };
  if (joined || /\band so on\b/.test(body)) return { text: body, isList: true };
  return { text: `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`, isList: true };
}

/**
 * An answer as a full spoken sentence (templates in the file header).
 *
 * @param question the written question (its wording picks the template and tense).
 * @param answer the written answer.
 * @returns the spoken answer, ending in a full stop (or the answer's own "!"/"?").
 * @throws Error when the answer is empty after normalisation.
 */
export function spokenAnswer(question: string, answer: string): string {
  const spoken = normaliseSpokenEnglish(answer);
  const body = spoken.replace(/[\s.,;:]+$/, '');
  if (body === '') throw new Error(`empty answer to "${question}": "${answer}"`);
  const spokenQuestionText = normaliseSpokenEnglish(question).toLowerCase();

  const bare = /^(yes|yeah|yep|yup|no|nope)[.!]?$/i.exec(body);
  if (bare !== null) return yesNoReply(spokenQuestionText, !/^no/i.test(bare[1] ?? ''));
  if (/^(?:yes|no)\b/i.test(body) || readsAsSentence(body)) return withFullStop(capitalise(body));

  const tense = questionTense(spokenQuestionText);
  const { text: listed, isList } = joinList(body);
  const fragment = lowerFirstWord(listed);
  const plural = isList || isPluralQuestion(spokenQuestionText);
  const opening = plural ? (tense === 'past' ? 'They were' : "They're") : tense === 'past' ? 'It was' : "It's";
  const questionWord =
    /^(?:(?:and|so|but|then|also|ok|okay|well),?\s+)?(what year|which year|when|where|why|any|how(?= (?:do|does|did|is|are|was|were|can|could)\b))\b/.exec(
      spokenQuestionText,
    )?.[1];

  switch (questionWord) {
    case 'when':
    case 'what year':
    case 'which year': {
      const preposition = PREPOSITION_START.test(fragment) ? '' : FULL_DATE.test(fragment) ? 'on ' : 'in ';
      return `${tense === 'past' ? 'It was' : "It's"} ${preposition}${fragment}.`;
    }
    case 'where': {
      const preposition = PREPOSITION_START.test(fragment) ? '' : 'in ';
      return `${tense === 'past' ? 'It was' : "It's"} ${preposition}${fragment}.`;
    }
    case 'why':
      return /^(?:because|to|due|since|so)\b/i.test(fragment)
        ? `${tense === 'past' ? 'It was' : "It's"} ${fragment}.`
        : `The reason ${tense === 'past' ? 'was' : 'is'} ${fragment}.`;
    case 'any':
      return `Yes, there's ${fragment}.`;
    case 'how':
      return PREPOSITION_START.test(fragment) || /^(?:with|using|via|by)\b/i.test(fragment)
        ? `${tense === 'past' ? 'It was' : "It's"} done ${fragment}.`
        : `${opening} ${fragment}.`;
    default:
      return `${opening} ${fragment}.`;
  }
}
