/**
 * Bad records of a corpus file that a reader skipped instead of stopping: one segment line with a
 * negative duration in a public corpus should not keep the rest of it from being read. A reader
 * collects them (its `strict` option stops at the first instead); the commands print each once and
 * count them in what they write.
 */

/** One skipped record: where it is and why it was not read. */
export interface SkippedRecord {
  /** The file, as the reader was given it. */
  source: string;
  /** 1-based line of the record, or null when the reader does not know it. */
  line: number | null;
  /** Why it was skipped, e.g. `duration "-399.394" is not a non-negative decimal number of seconds`. */
  reason: string;
}

/**
 * The one-line form `FILE:LINE: REASON` (`FILE: REASON` without a line).
 *
 * @param record a skipped record.
 * @returns the line, as a parse error of the same record would read.
 */
export function describeSkippedRecord(record: SkippedRecord): string {
  return `${record.source}${record.line === null ? '' : `:${record.line}`}: ${record.reason}`;
}

/**
 * The skipped record a reader's per-record error stands for: its file, its line (null when the
 * error names none) and the rest of its message as the reason (a column it names included).
 *
 * @param error a ReferenceCorpusError (corpora/reference-recording.ts, which imports this file, so its
 *   shape is written here) thrown for one record.
 * @returns the record, whose {@link describeSkippedRecord} line equals the error's message.
 */
export function skippedRecordOf(error: {
  file: string;
  location: { line?: number };
  reason: string;
  message: string;
}): SkippedRecord {
  const line = error.location.line ?? null;
  const prefix = `${error.file}${line === null ? '' : `:${line}`}: `;
  const reason = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.reason;
  return { source: error.file, line, reason };
}
