/**
 * Records on disk through their zod schemas (pipeline/model): every JSON file duplexsynth writes is
 * checked against its schema before it is written, and every one it reads is checked when read, with
 * one message shape for every failure: `{file}: not valid JSON (…)` or `{file}: {field}: {problem}`
 * (pipeline/model/validation.ts).
 */
import { InputFileError, readInputText } from './read-input-file.ts';
import type { z } from 'zod';
import { describeIssues } from '../model/validation.ts';
import { writeAtomic } from './write-atomic.ts';

/** A record file is missing, unreadable, not JSON, or does not fit its schema (the message names the file). */
export class RecordFileError extends Error {
  override readonly name = 'RecordFileError';
  constructor(
    readonly file: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** How a reader turns a failure into its own error type (default {@link RecordFileError}). */
export type RecordErrorFactory = (message: string, file: string, cause?: unknown) => Error;

const defaultError: RecordErrorFactory = (message, file, cause) =>
  new RecordFileError(file, message, cause === undefined ? undefined : { cause });

/**
 * Parses and validates the text of a record.
 * @param file names the record in messages (a path, or `path:line` for a JSONL line)
 * @returns the schema's output
 * @throws the factory's error (default RecordFileError) naming `file` and the field
 */
export function parseRecord<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
  makeError: RecordErrorFactory = defaultError,
): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw makeError(`${file}: not valid JSON (${(error as Error).message})`, file, error);
  }
  const result = schema.safeParse(value);
  if (!result.success) throw makeError(`${file}: ${describeIssues(result.error.issues)}`, file);
  return result.data;
}

/**
 * Reads, parses and validates a record file.
 * @returns the schema's output; undefined when the file does not exist and `optional` is set
 * @throws the factory's error naming the file when it cannot be read, is not JSON or does not fit
 */
export async function readRecord<S extends z.ZodType>(
  file: string,
  schema: S,
  options: { optional: true; makeError?: RecordErrorFactory },
): Promise<z.output<S> | undefined>;
export async function readRecord<S extends z.ZodType>(
  file: string,
  schema: S,
  options?: { optional?: false; makeError?: RecordErrorFactory },
): Promise<z.output<S>>;
export async function readRecord<S extends z.ZodType>(
  file: string,
  schema: S,
  options: { optional?: boolean; makeError?: RecordErrorFactory } = {},
): Promise<z.output<S> | undefined> {
  const makeError = options.makeError ?? defaultError;
  let text: string;
  try {
    text = await readInputText(file); // a FIFO or a device is refused at once (./read-input-file.ts)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && options.optional) return undefined;
    if (error instanceof InputFileError) throw makeError(error.message, file, error);
    throw makeError(`${file}: cannot be read (${code ?? (error as Error).message})`, file, error);
  }
  return parseRecord(text, file, schema, makeError);
}

/**
 * The text a record is written as, after checking it against its schema: `JSON.stringify(value, null,
 * 2)` and a newline, of the value as given (so its key order, and the bytes, are the writer's).
 * @throws RecordFileError naming `file` and the field when the value does not fit the schema (a bug)
 */
export function formatRecord<S extends z.ZodType>(file: string, schema: S, value: z.input<S>): string {
  const result = schema.safeParse(value);
  if (!result.success)
    throw new RecordFileError(
      file,
      `${file}: the record to write does not fit its schema: ${describeIssues(result.error.issues)}`,
    );
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Checks `value` against `schema` and writes it atomically ({@link formatRecord}, ./write-atomic.ts). */
export async function writeRecord<S extends z.ZodType>(file: string, schema: S, value: z.input<S>): Promise<void> {
  await writeAtomic(file, formatRecord(file, schema, value));
}

/**
 * One JSONL line of a record (`JSON.stringify(value)` and a newline), after checking it against its schema.
 * @param file names the line in messages (`path:line`)
 * @throws RecordFileError naming `file` and the field when the value does not fit the schema (a bug)
 */
export function formatRecordLine<S extends z.ZodType>(file: string, schema: S, value: z.input<S>): string {
  const result = schema.safeParse(value);
  if (!result.success)
    throw new RecordFileError(
      file,
      `${file}: the record to write does not fit its schema: ${describeIssues(result.error.issues)}`,
    );
  return `${JSON.stringify(value)}\n`;
}
