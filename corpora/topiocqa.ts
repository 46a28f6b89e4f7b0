/**
 * TopiOCQA corpus loader: the raw release (`topiocqa_dev.json`, `topiocqa_train.json`) in, `SourceConversation`s out.
 *
 * One corpus, one loader (lhotse style): every quirk of the release is handled here, downstream stages only
 * ever see `SourceConversation` / `SourceTurn` (../pipeline/model/types.ts). This module reads the file and
 * groups its records; topiocqa-format.ts holds the options, results, errors and the raw record schema,
 * topiocqa-conversation.ts builds one conversation, topiocqa-issues.ts words bad records,
 * topiocqa-warnings.ts sums the quirks up.
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
import { describeFileSystemError } from '../pipeline/storage/file-system-errors.ts';
import path from 'node:path';
import type { SourceConversation } from '../pipeline/model/types.ts';
import { buildConversation, finishTurns, type BuiltConversation, type IndexedRecord } from './topiocqa-conversation.ts';
import {
  DEFAULT_TOPIOCQA_OPTIONS,
  TopiocqaFormatError,
  type ResolvedTopiocqaOptions,
  type TopiocqaLoadResult,
  type TopiocqaOptions,
  type TopiocqaQuirk,
  type TopiocqaRejection,
  type TopiocqaStats,
} from './topiocqa-format.ts';
import { describeValue, gotDetail, isPlainObject, isPositiveInteger } from './topiocqa-issues.ts';
import { summariseQuirks } from './topiocqa-warnings.ts';
import { InputFileError, readInputFile } from '../pipeline/storage/read-input-file.ts';
import { lacksQuestionMark } from '../pipeline/model/question-marks.ts';

export {
  DEFAULT_TOPIOCQA_OPTIONS,
  TOPIOCQA_UNANSWERABLE,
  TopiocqaFormatError,
  topiocqaRawTurnSchema,
  type ControlCharacterPolicy,
  type InvalidConversationPolicy,
  type ResolvedTopiocqaOptions,
  type TopiocqaErrorKind,
  type TopiocqaLoadResult,
  type TopiocqaOptions,
  type TopiocqaQuirk,
  type TopiocqaQuirkKind,
  type TopiocqaRawTurn,
  type TopiocqaRejection,
  type TopiocqaStats,
  type UnanswerablePolicy,
} from './topiocqa-format.ts';
export { normaliseTopiocqaText } from './topiocqa-conversation.ts';

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
    // the size is checked on the open handle: a file over the limit is never read into memory
    bytes = await readInputFile(file, { maximumBytes: resolved.maximumFileBytes });
  } catch (error) {
    if (error instanceof InputFileError && error.kind === 'too-large') {
      throw new TopiocqaFormatError({
        kind: 'too-large',
        file,
        detail: `${error.size} bytes, more than the ${resolved.maximumFileBytes} allowed for a corpus file (corpus.maximumFileBytes)`,
      });
    }
    throw new TopiocqaFormatError({
      kind: 'unreadable',
      file,
      // words for the errno and the code after them (pipeline/storage/file-system-errors.ts), without
      // the path that one line starts with: the error's message names the file once, before it
      detail: describeFileSystemError(error, file, 'cannot read').slice(file.length + 2),
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
export function parseTopiocqa(text: string, sourceFile: string, options: TopiocqaOptions = {}): TopiocqaLoadResult {
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
    questionsWithoutQuestionMark: allTurns.filter((turn) => lacksQuestionMark(turn.question)).length,
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
export function resolveTopiocqaOptions(sourceFile: string, options: TopiocqaOptions = {}): ResolvedTopiocqaOptions {
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
    maximumUtteranceCharacters:
      options.maximumUtteranceCharacters ?? DEFAULT_TOPIOCQA_OPTIONS.maximumUtteranceCharacters,
    maximumTurnsPerConversation:
      options.maximumTurnsPerConversation ?? DEFAULT_TOPIOCQA_OPTIONS.maximumTurnsPerConversation,
    maximumFileBytes: options.maximumFileBytes ?? DEFAULT_TOPIOCQA_OPTIONS.maximumFileBytes,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Internals
// ---------------------------------------------------------------------------------------------------------------

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
  if (data.length === 0)
    throw new TopiocqaFormatError({ kind: 'empty', file, detail: 'the list holds no turn records' });
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
