/**
 * TopiOCQA corpus loader: the raw release (`topiocqa_dev.json`, `topiocqa_train.json`) in, `SourceConversation`s out.
 *
 * One corpus, one file (lhotse style): every quirk of the release is handled here, downstream stages only
 * ever see `SourceConversation` / `SourceTurn` (../pipeline/model/types.ts).
 *
 * The raw release is a flat JSON list of turn records:
 * `{Conversation_no, Turn_no, Question, Answer, Topic, Topic_section, is_nq, Context}`, and in later releases also
 * `Rationale`, `Additional_answers` (a list of `{Answer, Topic, Topic_section, Rationale}` objects in the GitHub
 * release, a dict of lists `{Answer: [...], ...}` in the Hugging Face export) and `Gold_passage` (`{id, title, text}`).
 *
 * Quirks of the real data (dev split, measured): 174 of 2,514 answers are the sentinel `UNANSWERABLE`, and those turns
 * also have an empty `Topic` and `Topic_section`; 180 questions have no `?`; 115 text fields carry NBSP or repeated
 * spaces; every question is lower case (left alone: the spoken-style rewrite handles casing).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { SourceConversation, SourceTurn } from '../pipeline/model/types.ts';

// ---------------------------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------------------------

/**
 * What to do with turns whose answer is the corpus sentinel `UNANSWERABLE`:
 * - `keep`: keep the turn with `answer: null, answerable: false` (the rewrite stage decides what the system says);
 * - `drop-turn`: remove the turn and renumber the remaining turns 1..n (a conversation left empty is dropped);
 * - `drop-conversation`: remove every conversation that has at least one such turn.
 */
export type UnanswerablePolicy = 'keep' | 'drop-turn' | 'drop-conversation';

/** What to do with a conversation that fails validation: throw at once, or skip it and report it in `rejected`. */
export type InvalidConversationPolicy = 'throw' | 'skip';

/** Options of {@link loadTopiocqa}. Every field is optional; see {@link DEFAULT_TOPIOCQA_OPTIONS}. */
export interface TopiocqaOptions {
  /** Id prefix; ids are `${idPrefix}_${number padded to 4}`. Default: the file name without extension. */
  idPrefix?: string;
  unanswerable?: UnanswerablePolicy;
  onInvalid?: InvalidConversationPolicy;
  /** Keep only the first N conversations by conversation number (before validation and policies). */
  limit?: number;
  /** Control characters in a text field: `remove` them (noted per turn, the default) or `reject` the conversation. */
  controlCharacters?: ControlCharacterPolicy;
  /** Longest question or answer in characters (after whitespace normalisation); longer rejects the conversation. Default 2000. */
  maximumUtteranceCharacters?: number;
}

/**
 * What to do with control characters in a text field (C0 but tab/newline, DEL, C1, the byte-order mark,
 * bidirectional embedding/override/isolate marks; a terminal escape sequence such as `ESC[31m` counts
 * whole): `remove` them, noting which in a `control-characters-removed` quirk of the turn, or `reject`
 * the conversation with an error naming turn and field.
 */
export type ControlCharacterPolicy = 'remove' | 'reject';

/** Options with every default applied, resolved once per load. */
export interface ResolvedTopiocqaOptions {
  idPrefix: string;
  unanswerable: UnanswerablePolicy;
  onInvalid: InvalidConversationPolicy;
  limit: number | undefined;
  controlCharacters: ControlCharacterPolicy;
  maximumUtteranceCharacters: number;
}

/** Defaults of {@link TopiocqaOptions} (the id prefix default depends on the file name). */
export const DEFAULT_TOPIOCQA_OPTIONS = {
  unanswerable: 'keep',
  onInvalid: 'throw',
  controlCharacters: 'remove',
  maximumUtteranceCharacters: 2000,
} as const satisfies Partial<ResolvedTopiocqaOptions>;

/** The answer text TopiOCQA uses for a question the annotator could not answer. */
export const TOPIOCQA_UNANSWERABLE = 'UNANSWERABLE';

// ---------------------------------------------------------------------------------------------------------------
// Result
// ---------------------------------------------------------------------------------------------------------------

/** Kinds of non-fatal quirk the loader notes. */
export type TopiocqaQuirkKind =
  /** Answer is `UNANSWERABLE`: the turn gets `answer: null, answerable: false`. */
  | 'unanswerable'
  /** Answer is empty (normally the final question of a conversation): the turn gets `answer: null`. */
  | 'empty-answer'
  /** Question has no `?`; kept as it is. */
  | 'question-without-question-mark'
  /** A text field had NBSP / other Unicode spaces / repeated spaces / outer spaces; normalised. */
  | 'whitespace-normalised'
  /** A text field had control characters or terminal escape sequences; removed (`detail` lists them). */
  | 'control-characters-removed'
  /** Empty `Topic` (all `UNANSWERABLE` turns): topic kept as `''`, never counted as a topic switch. */
  | 'missing-topic'
  /** The conversation's records were not in `Turn_no` order in the file; sorted. */
  | 'turns-out-of-order'
  /** `Context` does not equal the earlier questions and answers of the conversation (Context is otherwise ignored). */
  | 'context-mismatch'
  /** An additional answer that is `UNANSWERABLE` or empty; left out of `additionalAnswers`. */
  | 'additional-answer-left-out'
  /** A record field this loader does not know; ignored. */
  | 'unknown-field'
  /** Turn removed by `unanswerable: 'drop-turn'`. */
  | 'dropped-turn'
  /** Conversation removed by the unanswerable policy. */
  | 'dropped-conversation';

/** One non-fatal quirk, located in the source file. */
export interface TopiocqaQuirk {
  kind: TopiocqaQuirkKind;
  conversationNumber: number;
  /** `Turn_no` in the source file (not the renumbered `turnNumber` after `drop-turn`). */
  turnNumber?: number;
  /** Source field name, e.g. `Answer`. */
  field?: string;
  detail?: string;
}

/** A conversation skipped under `onInvalid: 'skip'`. */
export interface TopiocqaRejection {
  conversationNumber: number;
  /** The error message, which names the file, the conversation, the turn and the field. */
  reason: string;
  error: TopiocqaFormatError;
}

/** Counts over the returned conversations (after policies), plus what was dropped or rejected. */
export interface TopiocqaStats {
  conversations: number;
  turns: number;
  /** Returned turns with `answerable: false`. */
  unanswerable: number;
  /** Returned turns with an empty source answer (`answer: null`, `answerable: true`). */
  emptyAnswers: number;
  topicSwitches: number;
  questionsWithoutQuestionMark: number;
  droppedTurns: number;
  droppedConversations: number;
  rejectedConversations: number;
}

/** What {@link loadTopiocqa} returns. */
export interface TopiocqaLoadResult {
  /** Sorted by conversation number. */
  conversations: SourceConversation[];
  rejected: TopiocqaRejection[];
  /** One human-readable line per quirk kind, with counts. */
  warnings: string[];
  /** Every quirk found in the loaded (valid, within `limit`) conversations, in conversation/turn order. */
  quirks: TopiocqaQuirk[];
  stats: TopiocqaStats;
}

// ---------------------------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------------------------

/**
 * - `unreadable`: the file cannot be read; `invalid-utf8`: the bytes are not UTF-8 (the message gives the byte
 *   offset); `empty`: no content or an empty list; `not-json`; `not-array`: the top level is not a list (these are
 *   whole-file errors and always thrown);
 * - `invalid-record`: a record that cannot be assigned to a conversation (not an object, bad `Conversation_no`);
 *   always thrown, since skipping it could silently truncate a conversation;
 * - `invalid-turn`: a field of a turn is missing or has the wrong type or value;
 * - `turn-sequence`: duplicate `Turn_no`, or `Turn_no`s not contiguous from 1.
 */
export type TopiocqaErrorKind =
  | 'unreadable'
  | 'invalid-utf8'
  | 'empty'
  | 'not-json'
  | 'not-array'
  | 'invalid-record'
  | 'invalid-turn'
  | 'turn-sequence';

interface TopiocqaFormatErrorInit {
  kind: TopiocqaErrorKind;
  file: string;
  detail: string;
  conversationNumber?: number;
  turnNumber?: number;
  /** 0-based index of the record in the top-level list, used when the turn number is not usable. */
  recordIndex?: number;
  /** Field path, e.g. `Question` or `Additional_answers[0].Answer`. */
  field?: string;
  cause?: unknown;
}

/**
 * A problem with a TopiOCQA file. The message reads
 * `topiocqa_dev.json: conversation 17, turn 3: field "Question": expected string, got number`.
 */
export class TopiocqaFormatError extends Error {
  override readonly name = 'TopiocqaFormatError';
  readonly kind: TopiocqaErrorKind;
  /** Path of the file as given to the loader. */
  readonly file: string;
  readonly conversationNumber: number | undefined;
  readonly turnNumber: number | undefined;
  readonly recordIndex: number | undefined;
  readonly field: string | undefined;
  /** The message without the location prefix. */
  readonly detail: string;

  constructor(init: TopiocqaFormatErrorInit) {
    const location: string[] = [path.basename(init.file)];
    if (init.conversationNumber !== undefined) {
      let where = `conversation ${init.conversationNumber}`;
      if (init.turnNumber !== undefined) where += `, turn ${init.turnNumber}`;
      else if (init.recordIndex !== undefined) where += `, record [${init.recordIndex}]`;
      location.push(where);
    } else if (init.recordIndex !== undefined) {
      location.push(`record [${init.recordIndex}]`);
    }
    if (init.field !== undefined) location.push(`field "${init.field}"`);
    super(`${location.join(': ')}: ${init.detail}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.file = init.file;
    this.conversationNumber = init.conversationNumber;
    this.turnNumber = init.turnNumber;
    this.recordIndex = init.recordIndex;
    this.field = init.field;
    this.detail = init.detail;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Raw schema
// ---------------------------------------------------------------------------------------------------------------

const positiveInteger = z.int().positive();
const additionalAnswerItemSchema = z.union([z.string(), z.looseObject({ Answer: z.string() })]);

/** One record of the raw release. Unknown fields are allowed (and noted as quirks). */
export const topiocqaRawTurnSchema = z.looseObject({
  Conversation_no: positiveInteger,
  Turn_no: positiveInteger,
  Question: z.string(),
  Answer: z.string(),
  Topic: z.string(),
  Topic_section: z.string(),
  is_nq: z.boolean(),
  Context: z.array(z.string()),
  Rationale: z.string().nullish(),
  /** GitHub release: list of `{Answer, ...}`; Hugging Face export: dict of lists `{Answer: [...], ...}`. */
  Additional_answers: z
    .union([z.array(additionalAnswerItemSchema), z.looseObject({ Answer: z.array(z.string()) })])
    .nullish(),
  Gold_passage: z
    .looseObject({
      id: z.union([z.string(), z.number()]).optional(),
      title: z.string().optional(),
      text: z.string().optional(),
    })
    .nullish(),
});

/** One validated raw record. */
export type TopiocqaRawTurn = z.infer<typeof topiocqaRawTurnSchema>;

const KNOWN_FIELDS = new Set(Object.keys(topiocqaRawTurnSchema.shape));
const INTEGER_FIELDS = new Set(['Conversation_no', 'Turn_no']);

// ---------------------------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------------------------

/**
 * Reads a raw TopiOCQA release file (a JSON list of turn records) and returns its conversations.
 *
 * Turns are grouped by `Conversation_no` and sorted by `Turn_no`; text is whitespace-normalised; `UNANSWERABLE`
 * answers become `answer: null, answerable: false` (then `options.unanswerable` applies); empty answers become
 * `answer: null`; `topicSwitch` is true when a turn's topic differs from the topic of the closest earlier turn that
 * has one (turns with an empty topic never switch). `Context` is only checked for consistency.
 *
 * @throws TopiocqaFormatError always for whole-file problems (`unreadable`, `empty`, `not-json`, `not-array`) and for
 *   records that cannot be assigned to a conversation (`invalid-record`); for an invalid conversation (`invalid-turn`,
 *   `turn-sequence`) only when `options.onInvalid` is `'throw'` (the default), otherwise it lands in `rejected`.
 * @throws RangeError for invalid options (`limit` not a positive integer, empty `idPrefix`).
 */
export async function loadTopiocqa(file: string, options: TopiocqaOptions = {}): Promise<TopiocqaLoadResult> {
  const resolved = resolveTopiocqaOptions(file, options);
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new TopiocqaFormatError({
      kind: 'unreadable',
      file,
      detail: `cannot read ${file}${code ? ` (${code})` : ''}`,
      cause: error,
    });
  }
  return parseTopiocqa(decodeUtf8(bytes, file), file, resolved);
}

/**
 * Decodes UTF-8 strictly (a byte-order mark is kept for the parser to drop).
 * @throws TopiocqaFormatError `invalid-utf8` naming the file, the byte offset and line of the first bad sequence
 */
export function decodeUtf8(bytes: Buffer, file: string): string {
  const text = bytes.toString('utf8');
  // every U+FFFD the lenient decoder made marks a bad sequence, unless the file really holds EF BF BD there
  for (let index = text.indexOf('\uFFFD'); index !== -1; index = text.indexOf('\uFFFD', index + 1)) {
    const offset = Buffer.byteLength(text.slice(0, index), 'utf8');
    if (bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd) continue;
    const line = text.slice(0, index).split('\n').length;
    const shown = [...bytes.subarray(offset, offset + 4)].map((byte) => byte.toString(16).padStart(2, '0')).join(' ');
    throw new TopiocqaFormatError({
      kind: 'invalid-utf8',
      file,
      detail: `not valid UTF-8 at byte offset ${offset} (line ${line}: bytes ${shown}); save the file as UTF-8`,
    });
  }
  return text;
}

/**
 * Parses the text of a raw TopiOCQA release; `sourceFile` is only used for ids, messages and `sourceFile` fields.
 * Same behaviour and errors as {@link loadTopiocqa}, without the file read.
 *
 * @throws TopiocqaFormatError see {@link loadTopiocqa}.
 * @throws RangeError for invalid options.
 */
export function parseTopiocqa(
  text: string,
  sourceFile: string,
  options: TopiocqaOptions = {},
): TopiocqaLoadResult {
  const resolved = resolveTopiocqaOptions(sourceFile, options);
  const records = parseTopLevel(text, sourceFile);
  const groups = groupByConversation(records, sourceFile);

  let numbers = [...groups.keys()].sort((a, b) => a - b);
  if (resolved.limit !== undefined) numbers = numbers.slice(0, resolved.limit);

  const conversations: SourceConversation[] = [];
  const rejected: TopiocqaRejection[] = [];
  const quirks: TopiocqaQuirk[] = [];
  let droppedTurns = 0;
  let droppedConversations = 0;

  for (const conversationNumber of numbers) {
    let built: BuiltConversation;
    try {
      built = buildConversation(conversationNumber, groups.get(conversationNumber) ?? [], sourceFile, resolved);
    } catch (error) {
      if (error instanceof TopiocqaFormatError && resolved.onInvalid === 'skip') {
        rejected.push({ conversationNumber, reason: error.message, error });
        continue;
      }
      throw error;
    }
    quirks.push(...built.quirks);

    let turns = built.turns;
    const unanswerable = turns.filter((turn) => !turn.answerable);
    if (unanswerable.length > 0 && resolved.unanswerable === 'drop-conversation') {
      quirks.push({ kind: 'dropped-conversation', conversationNumber, detail: `${unanswerable.length} UNANSWERABLE` });
      droppedConversations += 1;
      continue;
    }
    if (unanswerable.length > 0 && resolved.unanswerable === 'drop-turn') {
      for (const turn of unanswerable) {
        quirks.push({ kind: 'dropped-turn', conversationNumber, turnNumber: turn.sourceTurnNumber });
      }
      droppedTurns += unanswerable.length;
      turns = turns.filter((turn) => turn.answerable);
      if (turns.length === 0) {
        quirks.push({ kind: 'dropped-conversation', conversationNumber, detail: 'no turn left' });
        droppedConversations += 1;
        continue;
      }
    }

    conversations.push({
      id: `${resolved.idPrefix}_${String(conversationNumber).padStart(4, '0')}`,
      sourceFile,
      conversationNumber,
      turns: finishTurns(turns),
    });
  }

  const allTurns = conversations.flatMap((conversation) => conversation.turns);
  const stats: TopiocqaStats = {
    conversations: conversations.length,
    turns: allTurns.length,
    unanswerable: allTurns.filter((turn) => !turn.answerable).length,
    emptyAnswers: allTurns.filter((turn) => turn.answerable && turn.answer === null).length,
    topicSwitches: allTurns.filter((turn) => turn.topicSwitch).length,
    questionsWithoutQuestionMark: allTurns.filter((turn) => !turn.question.includes('?')).length,
    droppedTurns,
    droppedConversations,
    rejectedConversations: rejected.length,
  };

  return { conversations, rejected, warnings: summariseQuirks(quirks, rejected, resolved), quirks, stats };
}

/**
 * Applies the defaults to `options`; the default id prefix is the file name without extension, with characters
 * other than letters, digits, `_` and `-` replaced by `_` (`topiocqa_dev.json` -> `topiocqa_dev`).
 *
 * @throws RangeError when `limit` is not a positive integer or `idPrefix` is empty.
 */
export function resolveTopiocqaOptions(
  sourceFile: string,
  options: TopiocqaOptions = {},
): ResolvedTopiocqaOptions {
  const idPrefix = options.idPrefix ?? defaultIdPrefix(sourceFile);
  if (idPrefix.length === 0) throw new RangeError('TopiOCQA option idPrefix must not be empty');
  const limit = options.limit;
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
    throw new RangeError(`TopiOCQA option limit must be a positive integer, got ${String(limit)}`);
  }
  return {
    idPrefix,
    unanswerable: options.unanswerable ?? DEFAULT_TOPIOCQA_OPTIONS.unanswerable,
    onInvalid: options.onInvalid ?? DEFAULT_TOPIOCQA_OPTIONS.onInvalid,
    limit,
    controlCharacters: options.controlCharacters ?? DEFAULT_TOPIOCQA_OPTIONS.controlCharacters,
    maximumUtteranceCharacters: options.maximumUtteranceCharacters ?? DEFAULT_TOPIOCQA_OPTIONS.maximumUtteranceCharacters,
  };
}

/**
 * Normalises whitespace the way the loader does: zero-width spaces removed, every run of whitespace (including NBSP
 * and the other Unicode space separators, tabs, newlines) turned into one ASCII space, outer spaces trimmed.
 */
export function normaliseTopiocqaText(text: string): string {
  return text.replace(/\u200b/g, '').replace(/\s+/g, ' ').trim();
}

// ---------------------------------------------------------------------------------------------------------------
// Internals
// ---------------------------------------------------------------------------------------------------------------

interface IndexedRecord {
  index: number;
  record: Record<string, unknown>;
}

/** A turn before policies and topic-switch computation. */
interface DraftTurn extends Omit<SourceTurn, 'topicSwitch' | 'turnNumber'> {
  sourceTurnNumber: number;
}

interface BuiltConversation {
  turns: DraftTurn[];
  quirks: TopiocqaQuirk[];
}

function defaultIdPrefix(sourceFile: string): string {
  const base = path.basename(sourceFile, path.extname(sourceFile));
  return base.replace(/[^A-Za-z0-9_-]/g, '_') || 'topiocqa';
}

function parseTopLevel(text: string, file: string): unknown[] {
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') throw new TopiocqaFormatError({ kind: 'empty', file, detail: 'file is empty' });
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch (error) {
    throw new TopiocqaFormatError({
      kind: 'not-json',
      file,
      detail: `not valid JSON (${(error as Error).message})`,
      cause: error,
    });
  }
  if (!Array.isArray(data)) {
    throw new TopiocqaFormatError({
      kind: 'not-array',
      file,
      detail: `expected a JSON list of turn records, got ${describeValue(data)}`,
    });
  }
  if (data.length === 0) throw new TopiocqaFormatError({ kind: 'empty', file, detail: 'the list holds no turn records' });
  return data;
}

function groupByConversation(records: unknown[], file: string): Map<number, IndexedRecord[]> {
  const groups = new Map<number, IndexedRecord[]>();
  records.forEach((record, index) => {
    if (!isPlainObject(record)) {
      throw new TopiocqaFormatError({
        kind: 'invalid-record',
        file,
        recordIndex: index,
        detail: `expected a turn record (object), got ${describeValue(record)}`,
      });
    }
    const conversationNumber = record['Conversation_no'];
    if (!isPositiveInteger(conversationNumber)) {
      throw new TopiocqaFormatError({
        kind: 'invalid-record',
        file,
        recordIndex: index,
        field: 'Conversation_no',
        detail: gotDetail('a positive integer', conversationNumber, true),
      });
    }
    let group = groups.get(conversationNumber);
    if (!group) groups.set(conversationNumber, (group = []));
    group.push({ index, record });
  });
  return groups;
}

function buildConversation(conversationNumber: number, records: IndexedRecord[], file: string, options: ResolvedTopiocqaOptions): BuiltConversation {
  const quirks: TopiocqaQuirk[] = [];
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
    if (!question.includes('?')) note('question-without-question-mark', 'Question');

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
      if (text === '' || text === TOPIOCQA_UNANSWERABLE) note('additional-answer-left-out', 'Additional_answers', text || 'empty');
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
  const shown = found.slice(0, 5).map(({ text, index }) => `${codePoint(text)}${JSON.stringify(text.slice(1)).slice(1, -1)} at character ${index}`);
  return `${shown.join(', ')}${found.length > 5 ? ` and ${found.length - 5} more` : ''}`;
}

/** Numbers turns 1..n and computes topic switches (turns with an empty topic neither switch nor reset the topic). */
function finishTurns(drafts: DraftTurn[]): SourceTurn[] {
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

function turnError(
  issues: readonly z.core.$ZodIssue[],
  record: Record<string, unknown>,
  recordIndex: number,
  conversationNumber: number,
  file: string,
): TopiocqaFormatError {
  const leaves = issues.map((issue) => leafIssue(issue, []));
  const first = leaves[0]!;
  const fieldPath = formatPath(first.path);
  const topField = String(first.path[0] ?? '');
  const value = valueAt(record, first.path);
  let expected: string;
  if (INTEGER_FIELDS.has(topField)) expected = 'a positive integer';
  else expected = describeExpected(first.issue);
  let detail = gotDetail(expected, value, INTEGER_FIELDS.has(topField));
  if (leaves.length > 1) detail += ` (and ${leaves.length - 1} more problem${leaves.length > 2 ? 's' : ''} in this record)`;
  const turnNumber = record['Turn_no'];
  return new TopiocqaFormatError({
    kind: 'invalid-turn',
    file,
    conversationNumber,
    ...(isPositiveInteger(turnNumber) ? { turnNumber } : { recordIndex }),
    field: fieldPath,
    detail,
  });
}

interface LeafIssue {
  path: PropertyKey[];
  issue: z.core.$ZodIssue;
}

/** For union failures, follows the branch that got deepest into the value (the one the data most likely meant). */
function leafIssue(issue: z.core.$ZodIssue, prefix: PropertyKey[]): LeafIssue {
  const fullPath = [...prefix, ...issue.path];
  let best: LeafIssue = { path: fullPath, issue };
  if (issue.code === 'invalid_union') {
    for (const branch of issue.errors) {
      for (const sub of branch) {
        const leaf = leafIssue(sub, fullPath);
        if (leaf.path.length > best.path.length) best = leaf;
      }
    }
  }
  return best;
}

function describeExpected(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type') return zodTypeName(issue.expected);
  if (issue.code === 'invalid_union') {
    const names = new Set<string>();
    for (const branch of issue.errors) {
      for (const sub of branch) {
        if (sub.path.length === 0 && sub.code === 'invalid_type') names.add(zodTypeName(sub.expected));
      }
    }
    if (names.size > 0) return [...names].join(' or ');
  }
  return issue.message;
}

function zodTypeName(expected: string): string {
  if (expected === 'array') return 'list';
  if (expected === 'int') return 'integer';
  return expected;
}

function gotDetail(expected: string, value: unknown, showNumbers: boolean): string {
  if (value === undefined) return `missing (expected ${expected})`;
  return `expected ${expected}, got ${describeValue(value, showNumbers)}`;
}

function describeValue(value: unknown, showNumbers = false): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'number' && showNumbers) return String(value);
  return typeof value;
}

function formatPath(parts: PropertyKey[]): string {
  let text = '';
  for (const part of parts) {
    if (typeof part === 'number') text += `[${part}]`;
    else text += text === '' ? String(part) : `.${String(part)}`;
  }
  return text;
}

function valueAt(root: unknown, parts: PropertyKey[]): unknown {
  let current: unknown = root;
  for (const part of parts) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

const QUIRK_ORDER: readonly TopiocqaQuirkKind[] = [
  'unanswerable',
  'empty-answer',
  'question-without-question-mark',
  'control-characters-removed',
  'whitespace-normalised',
  'missing-topic',
  'turns-out-of-order',
  'context-mismatch',
  'additional-answer-left-out',
  'unknown-field',
  'dropped-turn',
  'dropped-conversation',
];

function summariseQuirks(
  quirks: TopiocqaQuirk[],
  rejected: TopiocqaRejection[],
  options: ResolvedTopiocqaOptions,
): string[] {
  const byKind = new Map<TopiocqaQuirkKind, TopiocqaQuirk[]>();
  for (const quirk of quirks) {
    const list = byKind.get(quirk.kind);
    if (list) list.push(quirk);
    else byKind.set(quirk.kind, [quirk]);
  }
  const countBy = (list: TopiocqaQuirk[], key: (quirk: TopiocqaQuirk) => string): string =>
    [...countValues(list.map(key))].map(([value, count]) => `${value} ${count}`).join(', ');
  const conversationsOf = (list: TopiocqaQuirk[]): number => new Set(list.map((q) => q.conversationNumber)).size;

  const warnings: string[] = [];
  for (const kind of QUIRK_ORDER) {
    const list = byKind.get(kind);
    if (!list) continue;
    const n = list.length;
    switch (kind) {
      case 'unanswerable': {
        const action =
          options.unanswerable === 'keep'
            ? 'kept with answer null and answerable false'
            : options.unanswerable === 'drop-turn'
              ? 'turns dropped and the rest renumbered'
              : 'their conversations dropped';
        warnings.push(`${n} turns answered UNANSWERABLE in ${conversationsOf(list)} conversations: ${action}`);
        break;
      }
      case 'empty-answer': {
        const final = list.filter((q) => q.detail === 'final turn').length;
        warnings.push(`${n} turns with an empty answer: answer null (${final} final turns, ${n - final} earlier turns)`);
        break;
      }
      case 'question-without-question-mark':
        warnings.push(`${n} questions without "?": kept as they are`);
        break;
      case 'control-characters-removed':
        warnings.push(`${n} text fields had control characters removed (${countBy(list, (q) => q.field ?? '')})`);
        break;
      case 'whitespace-normalised':
        warnings.push(`${n} text fields had Unicode or repeated spaces normalised (${countBy(list, (q) => q.field ?? '')})`);
        break;
      case 'missing-topic':
        warnings.push(`${n} turns without a topic: topic "", never counted as a topic switch`);
        break;
      case 'turns-out-of-order':
        warnings.push(`${n} conversations had their turns out of order in the file: sorted by Turn_no`);
        break;
      case 'context-mismatch':
        warnings.push(`${n} turns whose Context does not repeat the earlier turns: Context ignored`);
        break;
      case 'additional-answer-left-out':
        warnings.push(`${n} additional answers were UNANSWERABLE or empty: left out`);
        break;
      case 'unknown-field':
        warnings.push(`${n} unknown record fields ignored (${countBy(list, (q) => q.field ?? '')})`);
        break;
      case 'dropped-turn':
        warnings.push(`${n} turns dropped by the unanswerable policy "${options.unanswerable}"`);
        break;
      case 'dropped-conversation':
        warnings.push(`${n} conversations dropped by the unanswerable policy "${options.unanswerable}"`);
        break;
    }
  }
  if (rejected.length > 0) {
    warnings.push(
      `${rejected.length} invalid conversations skipped: ${rejected.map((r) => r.conversationNumber).join(', ')}`,
    );
  }
  return warnings;
}

function countValues(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
