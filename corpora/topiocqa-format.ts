/**
 * The TopiOCQA loader's vocabulary (corpora/topiocqa.ts is the loader): its options, what it returns
 * (conversations, quirks, rejections, counts), its error type, and the zod schema of one raw record of
 * the release.
 */
import path from 'node:path';
import { z } from 'zod';
import type { SourceConversation } from '../pipeline/model/types.ts';

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
  /** Most turns in one conversation; more rejects the conversation. Default 100 (TopiOCQA's longest has 25). */
  maximumTurnsPerConversation?: number;
  /** Largest corpus file, bytes; a larger one stops before it is read. Default 256 MB (half the longest string V8 holds, 2^29 characters: the file is parsed as one string). */
  maximumFileBytes?: number;
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
  maximumTurnsPerConversation: number;
  maximumFileBytes: number;
}

/** Defaults of {@link TopiocqaOptions} (the id prefix default depends on the file name). */
export const DEFAULT_TOPIOCQA_OPTIONS = {
  unanswerable: 'keep',
  onInvalid: 'throw',
  controlCharacters: 'remove',
  maximumUtteranceCharacters: 2000,
  maximumTurnsPerConversation: 100,
  maximumFileBytes: 256_000_000,
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
  | 'too-large'
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
 * `topiocqa_dev.json: conversation 17, turn 3: field "Question": expected string, got number`, or
 * `/data/topiocqa_dev.json: file is empty` for a problem of the whole file (named by its full path).
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
    // a problem of the whole file (empty, not JSON, unreadable) names it by its full path, the one a
    // user must open; a problem inside a record names the file's base name before the record's place
    const wholeFile =
      init.conversationNumber === undefined && init.recordIndex === undefined && init.field === undefined;
    const location: string[] = [wholeFile ? path.resolve(init.file) : path.basename(init.file)];
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

/** The fields of {@link topiocqaRawTurnSchema}; any other is noted as an `unknown-field` quirk. */
export const KNOWN_FIELDS = new Set(Object.keys(topiocqaRawTurnSchema.shape));
/** Fields whose messages say "a positive integer" and show the number found. */
export const INTEGER_FIELDS = new Set(['Conversation_no', 'Turn_no']);
