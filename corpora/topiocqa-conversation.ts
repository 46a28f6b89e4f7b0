/**
 * One TopiOCQA conversation from its raw records: validated against the raw schema, turns checked
 * for order and contiguity, text cleaned (control characters, whitespace) and limited in length,
 * quirks noted, then numbered 1..n with topic switches (`finishTurns`).
 */
import type { SourceTurn } from '../pipeline/model/types.ts';
import {
  KNOWN_FIELDS,
  TOPIOCQA_UNANSWERABLE,
  TopiocqaFormatError,
  topiocqaRawTurnSchema,
  type ResolvedTopiocqaOptions,
  type TopiocqaQuirk,
  type TopiocqaQuirkKind,
  type TopiocqaRawTurn,
} from './topiocqa-format.ts';
import { turnError } from './topiocqa-issues.ts';
import { lacksQuestionMark } from '../pipeline/model/question-marks.ts';

/**
 * Normalises whitespace the way the loader does: zero-width spaces removed, every run of whitespace (including NBSP
 * and the other Unicode space separators, tabs, newlines) turned into one ASCII space, outer spaces trimmed.
 */
export function normaliseTopiocqaText(text: string): string {
  return text
    .replace(/\u200b/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export interface IndexedRecord {
  index: number;
  record: Record<string, unknown>;
}

/** A turn before policies and topic-switch computation. */
export interface DraftTurn extends Omit<SourceTurn, 'topicSwitch' | 'turnNumber'> {
  sourceTurnNumber: number;
}

export interface BuiltConversation {
  turns: DraftTurn[];
  quirks: TopiocqaQuirk[];
}

/**
 * Builds one conversation from its records (file order).
 * @throws TopiocqaFormatError `invalid-turn` or `turn-sequence` naming the file, conversation, turn and field
 */
export function buildConversation(
  conversationNumber: number,
  records: IndexedRecord[],
  file: string,
  options: ResolvedTopiocqaOptions,
): BuiltConversation {
  const quirks: TopiocqaQuirk[] = [];
  // bounded before any turn is validated: a 10,000-turn conversation would run for hours
  if (records.length > options.maximumTurnsPerConversation) {
    throw new TopiocqaFormatError({
      kind: 'invalid-turn',
      file,
      conversationNumber,
      field: 'Turn_no',
      detail: `${records.length} turns, more than the ${options.maximumTurnsPerConversation} allowed per conversation (corpus.maximumTurnsPerConversation)`,
    });
  }
  const raw: TopiocqaRawTurn[] = records.map(({ index, record }) => {
    const parsed = topiocqaRawTurnSchema.safeParse(record);
    if (!parsed.success) throw turnError(parsed.error.issues, record, index, conversationNumber, file);
    return parsed.data;
  });

  // File order, then sort; duplicates and gaps are errors.
  if (raw.some((turn, i) => i > 0 && turn.Turn_no < raw[i - 1]!.Turn_no)) {
    quirks.push({ kind: 'turns-out-of-order', conversationNumber });
  }
  const sorted = [...raw].sort((a, b) => a.Turn_no - b.Turn_no);
  sorted.forEach((turn, i) => {
    const expected = i + 1;
    if (turn.Turn_no === expected) return;
    const previous = sorted[i - 1];
    const detail =
      previous !== undefined && previous.Turn_no === turn.Turn_no
        ? `duplicate Turn_no ${turn.Turn_no}`
        : `Turn_no not contiguous from 1: expected ${expected}, found ${turn.Turn_no} ` +
          `(Turn_no present: ${sorted.map((t) => t.Turn_no).join(', ')})`;
    throw new TopiocqaFormatError({ kind: 'turn-sequence', file, conversationNumber, detail });
  });

  const turns: DraftTurn[] = [];
  const history: string[] = [];
  for (const [i, rawTurn] of sorted.entries()) {
    const turnNumber = rawTurn.Turn_no;
    const note = (kind: TopiocqaQuirkKind, field?: string, detail?: string): void => {
      quirks.push({
        kind,
        conversationNumber,
        turnNumber,
        ...(field !== undefined && { field }),
        ...(detail !== undefined && { detail }),
      });
    };
    const clean = (field: string, value: string): string => {
      const found = findControlCharacters(value);
      if (found.length > 0) {
        const listed = describeControlCharacters(found);
        if (options.controlCharacters === 'reject') {
          throw new TopiocqaFormatError({
            kind: 'invalid-turn',
            file,
            conversationNumber,
            turnNumber,
            field,
            detail: `control characters ${listed}; remove them or set corpus.controlCharacters: remove`,
          });
        }
        note('control-characters-removed', field, listed);
        value = removeControlCharacters(value);
      }
      const normalised = normaliseTopiocqaText(value);
      if (normalised !== value) note('whitespace-normalised', field);
      return normalised;
    };
    const limitLength = (field: string, value: string): void => {
      if (value.length <= options.maximumUtteranceCharacters) return;
      throw new TopiocqaFormatError({
        kind: 'invalid-turn',
        file,
        conversationNumber,
        turnNumber,
        field,
        detail: `${value.length} characters, more than the ${options.maximumUtteranceCharacters} allowed per utterance (corpus.maximumUtteranceCharacters)`,
      });
    };

    for (const key of Object.keys(rawTurn)) if (!KNOWN_FIELDS.has(key)) note('unknown-field', key);

    const question = clean('Question', rawTurn.Question);
    if (question === '') {
      throw new TopiocqaFormatError({
        kind: 'invalid-turn',
        file,
        conversationNumber,
        turnNumber,
        field: 'Question',
        detail: 'empty question',
      });
    }
    limitLength('Question', question);
    if (lacksQuestionMark(question)) note('question-without-question-mark', 'Question');

    const answerText = clean('Answer', rawTurn.Answer);
    limitLength('Answer', answerText);
    let answer: string | null = answerText;
    let answerable = true;
    if (answerText === TOPIOCQA_UNANSWERABLE) {
      answer = null;
      answerable = false;
      note('unanswerable', 'Answer');
    } else if (answerText === '') {
      answer = null;
      note('empty-answer', 'Answer', i === sorted.length - 1 ? 'final turn' : 'not the final turn');
    }

    const topic = clean('Topic', rawTurn.Topic);
    if (topic === '') note('missing-topic', 'Topic');
    const topicSection = clean('Topic_section', rawTurn.Topic_section);
    const rationale = rawTurn.Rationale == null ? '' : clean('Rationale', rawTurn.Rationale);

    const additionalAnswers: string[] = [];
    for (const candidate of additionalAnswerTexts(rawTurn.Additional_answers)) {
      const text = clean('Additional_answers', candidate);
      if (text === '' || text === TOPIOCQA_UNANSWERABLE)
        note('additional-answer-left-out', 'Additional_answers', text || 'empty');
      else additionalAnswers.push(text);
    }

    // Context should repeat the earlier questions and answers; it is not used otherwise.
    const context = rawTurn.Context.map(normaliseTopiocqaText);
    if (context.length !== history.length || context.some((entry, k) => entry !== history[k])) {
      note('context-mismatch', 'Context', `${context.length} entries, expected ${history.length}`);
    }
    history.push(question, answerText);

    turns.push({
      sourceTurnNumber: turnNumber,
      question,
      answer,
      answerable,
      topic,
      ...(topicSection !== '' && { topicSection }),
      isNaturalQuestions: rawTurn.is_nq,
      ...(rationale !== '' && { rationale }),
      ...(additionalAnswers.length > 0 && { additionalAnswers }),
    });
  }
  return { turns, quirks };
}

/**
 * Terminal escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL|ESC \\`, two-character `ESC x`) and single
 * control characters: C0 except tab, line feed, vertical tab, form feed and carriage return (whitespace,
 * normalised to spaces), DEL,
 * C1, the byte-order mark / zero-width no-break space, and the bidirectional embedding, override and
 * isolate marks (U+202A–U+202E, U+2066–U+2069), which reorder text invisibly.
 */
const CONTROL_SEQUENCE =
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]|[\u0000-\u0008\u000e-\u001f\u007f-\u009f\ufeff\u202a-\u202e\u2066-\u2069]/gu;

interface ControlCharacterMatch {
  /** The sequence as found. */
  text: string;
  /** Offset in UTF-16 code units from the start of the field. */
  index: number;
}

function findControlCharacters(value: string): ControlCharacterMatch[] {
  return [...value.matchAll(CONTROL_SEQUENCE)].map((match) => ({ text: match[0], index: match.index }));
}

function removeControlCharacters(value: string): string {
  return value.replace(CONTROL_SEQUENCE, '');
}

/** `U+001B[31m at character 4, U+0000 at character 10` (the first five). */
function describeControlCharacters(found: readonly ControlCharacterMatch[]): string {
  const codePoint = (character: string) => `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  const shown = found
    .slice(0, 5)
    .map(({ text, index }) => `${codePoint(text)}${JSON.stringify(text.slice(1)).slice(1, -1)} at character ${index}`);
  return `${shown.join(', ')}${found.length > 5 ? ` and ${found.length - 5} more` : ''}`;
}

/** Numbers turns 1..n and computes topic switches (turns with an empty topic neither switch nor reset the topic). */
export function finishTurns(drafts: DraftTurn[]): SourceTurn[] {
  let previousTopic: string | null = null;
  return drafts.map(({ sourceTurnNumber: _source, ...draft }, i) => {
    let topicSwitch = false;
    if (draft.topic !== '') {
      topicSwitch = previousTopic !== null && draft.topic !== previousTopic;
      previousTopic = draft.topic;
    }
    return { turnNumber: i + 1, ...draft, topicSwitch };
  });
}

function additionalAnswerTexts(value: TopiocqaRawTurn['Additional_answers']): string[] {
  if (value == null) return [];
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? item : item.Answer));
  return value.Answer;
}
