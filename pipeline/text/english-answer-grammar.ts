/**
 * What the templates of `spoken-turns.ts` read from an English question or answer: the question's
 * tense and number, whether an answer already reads as a sentence, and whether its first word is a
 * common word that goes lower case inside a frame ("It was in …").
 */

/** The tense an answer frame is put in. */
export type Tense = 'past' | 'present';

const PAST_AUXILIARIES = new Set(['was', 'were', 'did', 'had']);
const PRESENT_AUXILIARIES = new Set([
  'is',
  'are',
  'am',
  'do',
  'does',
  'has',
  'have',
  'can',
  'will',
  'would',
  'could',
  'should',
  'may',
  'might',
  'must',
]);
const IRREGULAR_PAST = new Set([
  'won',
  'began',
  'wrote',
  'made',
  'became',
  'built',
  'sang',
  'led',
  'took',
  'gave',
  'came',
  'went',
  'found',
  'held',
  'ran',
  'saw',
  'drew',
  'flew',
  'fought',
  'grew',
  'knew',
  'sold',
  'told',
  'thought',
  'brought',
  'bought',
  'taught',
  'left',
  'lost',
  'met',
  'paid',
  'said',
  'sent',
  'spent',
  'stood',
  'struck',
  'swam',
  'threw',
  'wore',
  'broke',
  'chose',
  'rose',
  'fell',
  'shot',
  'sank',
  'split',
  'beat',
  'bore',
  'born',
  'dug',
  'fed',
  'hid',
  'hung',
  'kept',
  'laid',
  'lay',
  'meant',
  'rode',
  'sat',
  'set',
  'shook',
  'spoke',
  'stole',
  'woke',
  'got',
]);
const FINITE_VERBS = new Set([...PAST_AUXILIARIES, ...PRESENT_AUXILIARIES, ...IRREGULAR_PAST, 'be', 'been', 'being']);
const PRONOUN_SUBJECT = /^(?:it|he|she|they|we|i|you|there|this|that|these|those)(?:'s|'re|'d|'ll|'ve)?\b/i;

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z']+/g) ?? [];
}

/** `past` when the question's first auxiliary is past (was/were/did/had) or it has a past-tense verb. */
export function questionTense(question: string): Tense {
  const questionWords = words(question);
  for (const word of questionWords) {
    if (PAST_AUXILIARIES.has(word)) return 'past';
    if (PRESENT_AUXILIARIES.has(word)) return 'present';
  }
  return questionWords.some((word) => IRREGULAR_PAST.has(word) || looksLikePastVerb(word)) ? 'past' : 'present';
}

/** "who are …", "what were …": the copula is plural, so the answer is too. */
export function isPluralQuestion(question: string): boolean {
  const first = words(question).find((word) => PAST_AUXILIARIES.has(word) || PRESENT_AUXILIARIES.has(word));
  return first === 'are' || first === 'were';
}

/** Words ending in "-ed" that are not verbs. */
const NOT_VERBS_ENDING_IN_ED = new Set([
  'hundred',
  'kindred',
  'sacred',
  'naked',
  'wicked',
  'rugged',
  'ragged',
  'crooked',
  'speed',
  'breed',
  'greed',
  'steed',
  'tweed',
  'shred',
]);

function looksLikePastVerb(word: string): boolean {
  return /^[a-z]{3,}ed$/.test(word) && !NOT_VERBS_ENDING_IN_ED.has(word);
}

/** Whether an answer already reads as a sentence: a pronoun subject and three words, or four words with a finite verb. */
export function readsAsSentence(body: string): boolean {
  const bodyWords = words(body);
  if (PRONOUN_SUBJECT.test(body) && bodyWords.length >= 3) return true;
  if (bodyWords.length < 4) return false;
  return bodyWords
    .slice(1)
    .some((word) => FINITE_VERBS.has(word) || looksLikePastVerb(word) || /^[a-z]+n't$/.test(word));
}

const LOWER_CASE_STARTS = new Set([
  'the',
  'a',
  'an',
  'about',
  'around',
  'approximately',
  'roughly',
  'nearly',
  'almost',
  'over',
  'under',
  'more',
  'less',
  'fewer',
  'up',
  'usually',
  'only',
  'just',
  'between',
  'in',
  'on',
  'at',
  'from',
  'with',
  'within',
  'until',
  'since',
  'by',
  'during',
  'before',
  'after',
  'some',
  'many',
  'several',
  'all',
  'both',
  'each',
  'every',
  'its',
  'his',
  'her',
  'their',
  'our',
  'my',
  'your',
  'this',
  'that',
  'these',
  'those',
  'because',
  'due',
  'to',
  'so',
  'mostly',
  'mainly',
  'generally',
  'probably',
  'still',
  'also',
  'not',
  'no',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'early',
  'late',
  'mid',
  'through',
  'across',
  'near',
  'along',
  'among',
  'above',
  'below',
  'outside',
  'inside',
  'towards',
  'toward',
  'for',
  'like',
  'as',
  'often',
  'always',
  'never',
  'sometimes',
  'once',
  'twice',
  'half',
  'most',
  'much',
  'any',
  'other',
  'red',
  'orange',
  'yellow',
  'green',
  'blue',
  'purple',
  'pink',
  'white',
  'black',
  'brown',
  'gray',
  'grey',
  'gold',
  'silver',
]);

/** The text with its first word lower-cased when it is a common word (not a name or an acronym). */
export function lowerFirstWord(text: string): string {
  const match = /^([A-Za-z']+)(.*)$/s.exec(text);
  if (match === null) return text;
  const first = match[1] ?? '';
  const lower = first.toLowerCase();
  const isCommon = LOWER_CASE_STARTS.has(lower) || looksLikePastVerb(lower);
  return isCommon && first !== first.toUpperCase() ? `${lower}${match[2] ?? ''}` : text;
}
