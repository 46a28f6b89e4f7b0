/**
 * CANDOR's files (./candor.ts reads the conversation folders): the transcript segmentations and their
 * CSV columns, a transcript row with its backchannels, the assumed `channel_map.json`, and the parsers
 * of both files (every error names the file, row and column).
 */
import { CsvError, parse } from 'csv-parse/sync';
import { z } from 'zod';
import type { Centiseconds } from '../pipeline/model/types.ts';
import { parseSecondsToCentiseconds, ReferenceCorpusError } from './reference-recording.ts';
import { skippedRecordOf, type SkippedRecord } from './skipped-records.ts';

/** The three transcript segmentations CANDOR publishes. */
export const CANDOR_SEGMENTATIONS = ['audiophile', 'cliffhanger', 'backbiter'] as const;

/** One of {@link CANDOR_SEGMENTATIONS}. */
export type CandorSegmentation = (typeof CANDOR_SEGMENTATIONS)[number];

/** Options of {@link prepareCandor}. */
export interface CandorOptions {
  /** Which transcript to read; default `backbiter` (see the file comment for why). */
  segmentation?: CandorSegmentation;
  /**
   * Stop at the first malformed transcript row (default true); false skips it: the row is listed in
   * the recording's `skippedRecords` and counted in a note.
   */
  strict?: boolean;
}

/** Defaults of {@link CandorOptions}. */
export const DEFAULT_CANDOR_OPTIONS: Readonly<Required<CandorOptions>> = Object.freeze({
  segmentation: 'backbiter',
  strict: true,
});

/** Columns every segmentation must have. */
export const CANDOR_REQUIRED_COLUMNS = ['turn_id', 'speaker', 'start', 'stop', 'utterance'] as const;

/** Columns `backbiter` must have in addition. */
export const CANDOR_BACKCHANNEL_COLUMNS = [
  'backchannel',
  'backchannel_count',
  'backchannel_speaker',
  'backchannel_start',
  'backchannel_stop',
] as const;

/** Cell values that mean "no value" (pandas and R write these). */
const MISSING_VALUES = new Set(['', 'NA', 'NaN', 'nan', 'None']);

/** A backchannel listed on a backbiter row. */
export interface CandorBackchannel {
  speaker: string;
  start: Centiseconds;
  end: Centiseconds;
  /** Text, whitespace collapsed. */
  text: string;
  /** `backchannel_count` of the row (several backchannels share one span when above 1). */
  count: number;
}

/** One transcript row, times in integer centiseconds. */
export interface CandorTranscriptRow {
  /** 1-based data row (the header is not counted). */
  row: number;
  /** 1-based line of the file where the row starts. */
  line: number;
  turnId: string;
  /** Speaker id exactly as written (a string, never a number). */
  speaker: string;
  start: Centiseconds;
  end: Centiseconds;
  /** Utterance text, whitespace collapsed to single spaces and trimmed. */
  utterance: string;
  /** Backchannels of a backbiter row (empty for other segmentations and rows without one). */
  backchannels: CandorBackchannel[];
}

/** The content of `channel_map.json` (our documented assumption, see the file comment). */
export interface CandorChannelMap {
  /** Speaker id on channel 0 (left) and on channel 1 (right). */
  channels: [string, string];
  /** Audio file, relative to the conversation folder. */
  audio?: string;
}

const channelMapSchema = z.strictObject({
  channels: z
    .tuple([z.string().min(1), z.string().min(1)])
    .refine(([first, second]) => first !== second, 'the two channels need different speakers'),
  audio: z.string().min(1).optional(),
});

/**
 * Parses `channel_map.json`.
 *
 * @throws ReferenceCorpusError naming the file (and the field) when it is not JSON or does not match
 *   `{"channels": ["<speaker>", "<speaker>"], "audio"?: "<file>"}` (speaker ids must be JSON strings,
 *   so a hex id like `1e5` cannot silently become a number).
 */
export function parseCandorChannelMap(text: string, file: string): CandorChannelMap {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ReferenceCorpusError(file, {}, `not valid JSON (${(error as Error).message})`, { cause: error });
  }
  const result = channelMapSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue?.path.map(String).join('.') ?? '';
    throw new ReferenceCorpusError(
      file,
      field === '' ? {} : { column: field },
      `${issue?.message ?? 'invalid'}; expected {"channels": ["<speaker>", "<speaker>"], "audio"?: "<file>"}`,
    );
  }
  const { channels, audio } = result.data;
  return audio === undefined
    ? { channels: [channels[0], channels[1]] }
    : { channels: [channels[0], channels[1]], audio };
}

/** Collapses whitespace (line breaks included) to single spaces and trims. */
function collapseWhitespace(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/**
 * Parses one CANDOR transcript CSV, stopping at the first malformed row.
 *
 * @param text file content.
 * @param file path, for error messages.
 * @param segmentation which segmentation the file is (backbiter adds the backchannel columns).
 * @returns the rows in file order, times in integer centiseconds (rounded half up on the written decimal).
 * @throws ReferenceCorpusError as {@link parseCandorTranscriptRecords} with `strict: true`.
 */
export function parseCandorTranscript(
  text: string,
  file: string,
  segmentation: CandorSegmentation,
): CandorTranscriptRow[] {
  return parseCandorTranscriptRecords(text, file, segmentation, { strict: true }).rows;
}

/** The rows of a transcript and the malformed rows left out of them. */
export interface CandorTranscript {
  rows: CandorTranscriptRow[];
  /** Rows skipped (`strict: false`), in file order; empty when strict. */
  skippedRecords: SkippedRecord[];
}

/**
 * Parses one CANDOR transcript CSV; with `strict: false` a malformed row is skipped into
 * `skippedRecords` (its file, line and reason) and the others are read.
 *
 * @param text file content.
 * @param file path, for error messages.
 * @param segmentation which segmentation the file is (backbiter adds the backchannel columns).
 * @param options `strict` (default true): stop at the first malformed row.
 * @returns the rows in file order, times in integer centiseconds (rounded half up on the written
 *   decimal), and the skipped rows.
 * @throws ReferenceCorpusError naming the file, and the line, row and column where known: CSV that
 *   cannot be split into rows (an unclosed quote), a missing column, and, only when strict, a row's
 *   problem: a different number of cells than the header, an empty speaker, a start or stop that is
 *   not a non-negative decimal number of seconds, a stop before its start, a `backchannel_count`
 *   that is not a whole number, or a backchannel without speaker, start or stop.
 */
export function parseCandorTranscriptRecords(
  text: string,
  file: string,
  segmentation: CandorSegmentation,
  options: { strict?: boolean } = {},
): CandorTranscript {
  const strict = options.strict ?? true;
  let records: { record: string[]; info: { lines: number; records: number }; raw?: string }[];
  try {
    records = parse(text.replace(/^\uFEFF/, ''), {
      cast: false,
      columns: false,
      info: true,
      raw: true,
      skip_empty_lines: true,
      // not strict: a row with another number of cells is one skipped record (checked below)
      relax_column_count: !strict,
    }) as unknown as typeof records;
  } catch (error) {
    if (error instanceof CsvError) {
      const line = typeof error.lines === 'number' ? error.lines : undefined;
      throw new ReferenceCorpusError(file, line === undefined ? {} : { line }, `malformed CSV: ${error.message}`, {
        cause: error,
      });
    }
    throw error;
  }
  const [header, ...body] = records;
  if (header === undefined) throw new ReferenceCorpusError(file, {}, 'empty transcript (no header row)');
  const columns = header.record.map((name) => name.trim());
  const required =
    segmentation === 'backbiter'
      ? [...CANDOR_REQUIRED_COLUMNS, ...CANDOR_BACKCHANNEL_COLUMNS]
      : [...CANDOR_REQUIRED_COLUMNS];
  const index = new Map<string, number>();
  columns.forEach((name, position) => {
    if (!index.has(name)) index.set(name, position);
  });
  for (const name of required) {
    if (!index.has(name)) {
      throw new ReferenceCorpusError(
        file,
        { line: 1, column: name },
        `missing column in the header (found: ${columns.join(', ')})`,
      );
    }
  }
  const rows: CandorTranscriptRow[] = [];
  const skippedRecords: SkippedRecord[] = [];
  for (const entry of body) {
    try {
      rows.push(parseRow(entry, { file, segmentation, index, columnCount: columns.length }));
    } catch (error) {
      if (strict || !(error instanceof ReferenceCorpusError)) throw error;
      skippedRecords.push(skippedRecordOf(error));
    }
  }
  return { rows, skippedRecords };
}

/** What {@link parseRow} needs of the transcript: its file, segmentation and header. */
interface TranscriptShape {
  file: string;
  segmentation: CandorSegmentation;
  /** Column name → position in the header. */
  index: ReadonlyMap<string, number>;
  /** Cells of the header row. */
  columnCount: number;
}

/**
 * One data row of a transcript.
 * @throws ReferenceCorpusError naming the file, line, row and column of the row's problem
 */
function parseRow(
  { record, info, raw }: { record: string[]; info: { lines: number; records: number }; raw?: string },
  { file, segmentation, index, columnCount }: TranscriptShape,
): CandorTranscriptRow {
  const row = info.records - 1;
  const line = info.lines - ((raw ?? '').replace(/\r?\n$/, '').match(/\n/g)?.length ?? 0);
  const cell = (name: string): string => record[index.get(name) as number] ?? '';
  const fail = (column: string | undefined, reason: string): never => {
    throw new ReferenceCorpusError(file, column === undefined ? { line, row } : { line, row, column }, reason);
  };
  if (record.length !== columnCount) fail(undefined, `${record.length} cells, the header has ${columnCount}`);
  const time = (column: string): Centiseconds => {
    const value = cell(column);
    const parsed = MISSING_VALUES.has(value.trim()) ? undefined : parseSecondsToCentiseconds(value);
    return parsed ?? fail(column, `${JSON.stringify(value)} is not a non-negative decimal number of seconds`);
  };
  const speaker = cell('speaker').trim();
  if (MISSING_VALUES.has(speaker)) fail('speaker', 'empty speaker id');
  const start = time('start');
  const end = time('stop');
  if (end < start) fail('stop', `stop ${cell('stop')} is before start ${cell('start')}`);
  const backchannels: CandorBackchannel[] = [];
  if (segmentation === 'backbiter') {
    const countText = cell('backchannel_count').trim();
    let count = 0;
    if (!MISSING_VALUES.has(countText)) {
      if (!/^\d+(?:\.0*)?$/.test(countText))
        fail('backchannel_count', `${JSON.stringify(countText)} is not a whole number`);
      count = Number.parseInt(countText, 10);
    }
    const hasSpan = !MISSING_VALUES.has(cell('backchannel_start').trim());
    if (count > 0 || hasSpan) {
      const backchannelSpeaker = cell('backchannel_speaker').trim();
      if (MISSING_VALUES.has(backchannelSpeaker))
        fail('backchannel_speaker', 'a backchannel is listed but its speaker is empty');
      const backchannelStart = time('backchannel_start');
      const backchannelEnd = time('backchannel_stop');
      if (backchannelEnd < backchannelStart)
        fail(
          'backchannel_stop',
          `backchannel_stop ${cell('backchannel_stop')} is before backchannel_start ${cell('backchannel_start')}`,
        );
      backchannels.push({
        speaker: backchannelSpeaker,
        start: backchannelStart,
        end: backchannelEnd,
        text: collapseWhitespace(cell('backchannel')),
        count: Math.max(1, count),
      });
    }
  }
  return {
    row,
    line,
    turnId: cell('turn_id').trim(),
    speaker,
    start,
    end,
    utterance: collapseWhitespace(cell('utterance')),
    backchannels,
  };
}
