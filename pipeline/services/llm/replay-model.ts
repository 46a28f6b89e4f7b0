/**
 * Recorded responses: a JSONL file, one `{"key", "request", "result"}` per line, sorted by key, each
 * line canonical JSON (sorted object keys), so the file is deterministic and diffs well.
 *
 * - {@link ReplayModel} answers from such a file by {@link requestKey}; a miss fails clearly.
 * - {@link RecordingModel} wraps any model and adds each response to such a file, atomically
 *   (write a temporary file, then rename).
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { writeAtomic } from '../../storage/write-atomic.ts';
import { NoRecordedResponseError, RecordedResponseFileError } from './errors.ts';
import {
  describeRequest,
  generationRequestSchema,
  generationResultSchema,
  requestKey,
  type GenerationRequest,
  type GenerationResult,
  type LanguageModel,
} from './language-model.ts';
import { canonicalJson } from '../../storage/canonical-json.ts';
import { describeIssues } from '../../model/validation.ts';

/** One line of a recorded-response file. */
export interface RecordedResponse {
  key: string;
  request: GenerationRequest;
  result: GenerationResult;
}

const recordedResponseSchema = z.object({
  key: z.string().regex(/^[0-9a-f]{64}$/),
  request: generationRequestSchema,
  result: generationResultSchema,
});

/**
 * Reads a recorded-response file.
 *
 * @param file path of the JSONL file.
 * @param options.missingIsEmpty when true a missing file reads as no records (for recording).
 * @returns the records by key.
 * @throws RecordedResponseFileError when the file is missing (unless `missingIsEmpty`), a line is not
 *   valid JSON or not a record, a key does not match its request, or a key repeats.
 */
export async function readRecordedResponses(
  file: string,
  options: { missingIsEmpty?: boolean } = {},
): Promise<Map<string, RecordedResponse>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (options.missingIsEmpty === true && (error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new RecordedResponseFileError(`cannot read recorded responses ${file}: ${(error as Error).message}`, {
      file,
      cause: error,
    });
  }
  const records = new Map<string, RecordedResponse>();
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const lineNumber = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new RecordedResponseFileError(`${file}:${lineNumber}: not valid JSON (${(error as Error).message})`, {
        file,
        lineNumber,
        cause: error,
      });
    }
    const parsed = recordedResponseSchema.safeParse(value);
    if (!parsed.success) {
      throw new RecordedResponseFileError(
        `${file}:${lineNumber}: not a recorded response: ${describeIssues(parsed.error.issues, { root: '(line)' })}`,
        {
          file,
          lineNumber,
        },
      );
    }
    const record = parsed.data as RecordedResponse;
    const expectedKey = requestKey(record.request);
    if (record.key !== expectedKey) {
      throw new RecordedResponseFileError(
        `${file}:${lineNumber}: key ${record.key} does not match its request (expected ${expectedKey}); ` +
          'was the request edited by hand? Re-record it.',
        { file, lineNumber },
      );
    }
    if (records.has(record.key)) {
      throw new RecordedResponseFileError(`${file}:${lineNumber}: key ${record.key} appears twice`, {
        file,
        lineNumber,
      });
    }
    records.set(record.key, record);
  }
  return records;
}

/**
 * Formats records as the file's text: one canonical JSON line per record, sorted by key, final newline.
 *
 * @param records the records (any order).
 * @returns the file content ('' for no records).
 */
export function formatRecordedResponses(records: Iterable<RecordedResponse>): string {
  const sorted = [...records].sort((left, right) => (left.key < right.key ? -1 : left.key > right.key ? 1 : 0));
  return sorted.map((record) => `${canonicalJson(record)}\n`).join('');
}

/**
 * Writes records to `file` atomically: a temporary file beside it, then a rename. Creates the folder.
 * Every registered API key in the text is replaced by its variable name.
 *
 * @param file destination path.
 * @param records the records to write (replaces the file's content).
 * @throws the file system's error when writing or renaming fails (the temporary file is removed).
 */
export async function writeRecordedResponses(file: string, records: Iterable<RecordedResponse>): Promise<void> {
  // writeAtomic checks the written length and redacts every registered API key (../../run/redact.ts)
  await writeAtomic(file, formatRecordedResponses(records));
}

/** A {@link LanguageModel} that answers from a recorded-response file. Its id is `replay`. */
export class ReplayModel implements LanguageModel {
  readonly id = 'replay';
  private records: Promise<Map<string, RecordedResponse>> | undefined;

  /** @param file path of the recorded-response JSONL file; read on first use. */
  constructor(readonly file: string) {}

  /**
   * Returns the recorded result for the request's key.
   *
   * @throws NoRecordedResponseError when the file has no record for the key (the message names the
   *   dialogue, the key and the file); RecordedResponseFileError when the file is missing or malformed.
   */
  async generate(request: GenerationRequest): Promise<GenerationResult> {
    const key = requestKey(request);
    const record = (await this.load()).get(key);
    if (record === undefined) {
      throw new NoRecordedResponseError(
        `no recorded response for ${describeRequest(request)} (key ${key.slice(0, 12)}…) in ${this.file}; ` +
          'record it with a real backend (llm.record)',
        { key, file: this.file, dialogueId: request.trace?.dialogueId },
      );
    }
    return structuredClone(record.result);
  }

  /**
   * Whether the file holds a response for the request.
   *
   * @throws RecordedResponseFileError when the file is missing or malformed.
   */
  async has(request: GenerationRequest): Promise<boolean> {
    return (await this.load()).has(requestKey(request));
  }

  /**
   * All recorded keys.
   *
   * @throws RecordedResponseFileError when the file is missing or malformed.
   */
  async keys(): Promise<string[]> {
    return [...(await this.load()).keys()];
  }

  private load(): Promise<Map<string, RecordedResponse>> {
    this.records ??= readRecordedResponses(this.file);
    return this.records;
  }
}

/**
 * A {@link LanguageModel} that calls `inner` and adds every result to a recorded-response file (an
 * existing record with the same key is replaced). Writes are serialised within the process and each
 * one is atomic; two processes recording into one file at once may lose each other's records.
 * Results of every finish reason are recorded, so a replay reproduces exactly what the model said.
 * Its id is the inner model's id: it is transparent.
 */
export class RecordingModel implements LanguageModel {
  readonly id: string;
  private pendingWrite: Promise<void> = Promise.resolve();

  /**
   * @param inner the model that really answers.
   * @param file the recorded-response file to add to (created when missing).
   */
  constructor(
    private readonly inner: LanguageModel,
    readonly file: string,
  ) {
    this.id = inner.id;
  }

  /**
   * Calls the inner model, records its result, returns it.
   *
   * @throws whatever the inner model throws (nothing is recorded then); RecordedResponseFileError when
   *   the existing file is malformed; file system errors when writing fails.
   */
  async generate(request: GenerationRequest): Promise<GenerationResult> {
    const result = await this.inner.generate(request);
    const record: RecordedResponse = { key: requestKey(request), request, result };
    const write = this.pendingWrite.then(async () => {
      const records = await readRecordedResponses(this.file, { missingIsEmpty: true });
      records.set(record.key, record);
      await writeRecordedResponses(this.file, records.values());
    });
    this.pendingWrite = write.catch(() => undefined);
    await write;
    return result;
  }
}
