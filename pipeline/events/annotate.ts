/**
 * `duplexsynth annotate --alignment FILE --id ID`: a `txt_align` word file -> one benchmark JSONL line.
 */
import { readFile } from 'node:fs/promises';
import { parseAlignment, segmentsFromWords } from './alignment.ts';
import { formatEventsLine } from './jsonl.ts';
import { computeEvents, DEFAULT_EVENT_THRESHOLDS, type EventThresholds } from './rules.ts';

/** Thrown by `annotateAlignmentFile`; the one-line message starts with the file name. */
export class AnnotateError extends Error {
  override readonly name = 'AnnotateError';
  constructor(
    readonly file: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${detail}`, options);
  }
}

/**
 * Reads a `txt_align` file (docs/dataset-format.md), derives speech segments from its words (touching or
 * overlapping words of a channel merge; docs/events.md "Speech segments from words and from events"),
 * computes the events (docs/events.md steps 1-4) and formats them as one JSONL line.
 * @param path alignment file, times in seconds with at most 2 decimals.
 * @param id dialogue id to write (the WAV file name without `.wav`).
 * @param thresholds centiseconds; defaults to `DEFAULT_EVENT_THRESHOLDS` (docs/events.md "The thresholds").
 * @returns the JSONL line without its newline.
 * @throws AlignmentParseError (message `FILE:LINE: FIELD: ...`) for a malformed line; AnnotateError
 *   (message `FILE: ...`) when the file cannot be read, has no words, or the id or thresholds are
 *   rejected. Both messages are one line.
 */
export async function annotateAlignmentFile(
  path: string,
  id: string,
  thresholds: EventThresholds = DEFAULT_EVENT_THRESHOLDS,
): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new AnnotateError(path, `cannot read alignment file${code ? ` (${code})` : ''}`, { cause: error });
  }
  const words = parseAlignment(text, path);
  if (words.length === 0) throw new AnnotateError(path, 'alignment file has no words');
  try {
    return formatEventsLine(id, computeEvents(segmentsFromWords(words), thresholds));
  } catch (error) {
    const message = (error as Error).message.replace(/\s*\n\s*/g, ' ');
    throw new AnnotateError(path, message, { cause: error });
  }
}
