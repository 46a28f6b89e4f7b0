/**
 * Padded phrasings of a too-short question or answer (stages/synthesize-speech.ts): an IPU of at most
 * 0.8 s is labelled BC by docs/events.md "Step 2: TURN or BC", so a question or answer spoken shorter is
 * re-synthesized with a natural lead-in ("Well," / 「ええと、」), up to two steps.
 */
import type { Language, ScriptUtterance } from '../model/types.ts';
import { entryOfLanguage } from '../model/language-code.ts';
import { languagePackOf } from '../model/language-pack.ts';

const PADDING: Record<Language, Record<'question' | 'answer', ((text: string) => string)[]>> = {
  en: {
    question: [(text) => `And, ${lowerFirst(text)}`, (text) => `Could you tell me, ${lowerFirst(text)}`],
    answer: [(text) => `Well, ${lowerFirst(text)}`, (text) => `Well, ${lowerFirst(text)} That is what I know.`],
  },
  ja: {
    question: [(text) => `あの、${text}`, (text) => `あの、すみません、${text}`],
    answer: [(text) => `ええと、${text}`, (text) => `ええと、${text}、ということです。`],
  },
};

/** Sentence-initial function words that are lower-cased after a lead-in ("Well, the …"); names keep their capital. */
const FUNCTION_WORDS = new Set([
  'A',
  'An',
  'The',
  'It',
  'Its',
  "It's",
  'Yes',
  'No',
  'This',
  'That',
  'These',
  'Those',
  'There',
  'He',
  'She',
  'They',
  'We',
  'You',
  'In',
  'On',
  'At',
  'And',
  'But',
  'So',
  'What',
  'Which',
  'Who',
  'When',
  'Where',
  'Why',
  'How',
  'Is',
  'Are',
  'Was',
  'Were',
  'Do',
  'Does',
  'Did',
  'Can',
  'Could',
]);

function lowerFirst(text: string): string {
  const first = /^[^\s,.!?]+/.exec(text)?.[0] ?? '';
  return FUNCTION_WORDS.has(first) ? text[0]!.toLowerCase() + text.slice(1) : text;
}

/**
 * The padded phrasings tried, in order, for a too-short utterance.
 * @returns the texts of padding steps 1 and 2 (empty for backchannels, which are meant to be short)
 */
export function paddedTexts(language: Language, kind: ScriptUtterance['kind'], text: string): string[] {
  if (kind === 'backchannel') return [];
  const rules = Object.hasOwn(PADDING, language) ? entryOfLanguage(PADDING, language, 'padded phrasings') : undefined;
  if (rules) return rules[kind].map((pad) => pad(text.trim()));
  // a language without rules: its language pack's templates
  return languagePackOf(language).phrases.padding[kind].map((template) => template.replace('{text}', text.trim()));
}
