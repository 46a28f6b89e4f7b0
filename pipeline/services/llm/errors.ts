/**
 * Typed errors of the LLM service layer. Every error thrown here is a {@link LanguageModelError} with
 * `isRetryable`, so a retry helper or the stage runner can decide without parsing messages.
 */
import type { FinishReason } from './language-model.ts';

/** Base class: `isRetryable` says whether sending the same request again may succeed. */
export class LanguageModelError extends Error {
  readonly isRetryable: boolean;

  constructor(message: string, options: { isRetryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.isRetryable = options.isRetryable;
  }
}

/**
 * How a call failed: the server answered with an error `status`, the client gave up waiting
 * (`timeout`), the connection failed (`network`), or a success response could not be read
 * (`malformed-response`).
 */
export type CallFailureKind = 'status' | 'timeout' | 'network' | 'malformed-response';

/**
 * A failed call to a model service (HTTP or SDK error), thrown by the Gemini and OpenAI-compatible
 * clients. Retryable for 408, 409, 429 and ≥ 500, and for failures without a status code (timeouts,
 * network failures, unreadable responses) unless `isRetryable` says otherwise.
 */
export class LanguageModelCallError extends LanguageModelError {
  readonly statusCode: number | undefined;
  /** Delay the server asked for (e.g. Gemini `RetryInfo.retryDelay`, HTTP `retry-after`), in milliseconds. */
  readonly retryAfterMilliseconds: number | undefined;
  readonly responseBody: string | undefined;
  /** How the call failed; `status` when a status code is given, else `network` unless told. */
  readonly failure: CallFailureKind;

  constructor(
    message: string,
    options: {
      statusCode?: number;
      retryAfterMilliseconds?: number;
      responseBody?: string;
      isRetryable?: boolean;
      failure?: CallFailureKind;
      cause?: unknown;
    } = {},
  ) {
    super(message, {
      isRetryable: options.isRetryable ?? isRetryableStatusCode(options.statusCode),
      cause: options.cause,
    });
    this.statusCode = options.statusCode;
    this.retryAfterMilliseconds = options.retryAfterMilliseconds;
    this.responseBody = options.responseBody;
    this.failure = options.failure ?? (options.statusCode !== undefined ? 'status' : 'network');
  }
}

/** A model capability that a provider may lack (see ./model-capabilities.ts). */
export type ModelCapabilityName = 'systemInstruction' | 'jsonMode';

/**
 * The server rejected a request because the model lacks a capability the request used (Gemini HTTP 400
 * `Developer instruction is not enabled …` or `JSON mode is not enabled …`). Not retryable: the
 * settings must switch the capability off (`capabilities.<name>: false`).
 */
export class ModelCapabilityError extends LanguageModelCallError {
  readonly capability: ModelCapabilityName;
  readonly model: string;

  constructor(
    message: string,
    options: {
      capability: ModelCapabilityName;
      model: string;
      statusCode: number;
      responseBody?: string;
      cause?: unknown;
    },
  ) {
    super(message, {
      statusCode: options.statusCode,
      responseBody: options.responseBody,
      isRetryable: false,
      cause: options.cause,
    });
    this.capability = options.capability;
    this.model = options.model;
  }
}

/** A real client needs an API key and the environment variable holding it is not set. Not retryable. */
export class MissingApiKeyError extends LanguageModelError {
  /** The environment variables that were looked at, in order. */
  readonly variableNames: readonly string[];

  constructor(message: string, options: { variableNames: readonly string[] }) {
    super(message, { isRetryable: false });
    this.variableNames = options.variableNames;
  }
}

/**
 * Whether an HTTP status code is worth retrying: 408, 409, 429, ≥ 500; `undefined` (no response, a
 * network failure) too.
 *
 * @param statusCode the HTTP status, or undefined when no response came.
 * @returns true when the same request may succeed later.
 */
export function isRetryableStatusCode(statusCode: number | undefined): boolean {
  if (statusCode === undefined) return true;
  return statusCode === 408 || statusCode === 409 || statusCode === 429 || statusCode >= 500;
}

/** The model stopped for another reason than `stop` (cut at max tokens, safety filter). Not retryable as is. */
export class UnfinishedGenerationError extends LanguageModelError {
  readonly finishReason: FinishReason;
  readonly dialogueId: string | undefined;

  constructor(message: string, options: { finishReason: FinishReason; dialogueId?: string }) {
    super(message, { isRetryable: false });
    this.finishReason = options.finishReason;
    this.dialogueId = options.dialogueId;
  }
}

/** A replay found no recorded response for a request. */
export class NoRecordedResponseError extends LanguageModelError {
  readonly key: string;
  readonly file: string;
  readonly dialogueId: string | undefined;

  constructor(message: string, options: { key: string; file: string; dialogueId?: string }) {
    super(message, { isRetryable: false });
    this.key = options.key;
    this.file = options.file;
    this.dialogueId = options.dialogueId;
  }
}

/** A recorded-response file cannot be read or is malformed. */
export class RecordedResponseFileError extends LanguageModelError {
  readonly file: string;
  readonly lineNumber: number | undefined;

  constructor(message: string, options: { file: string; lineNumber?: number; cause?: unknown }) {
    super(message, { isRetryable: false, cause: options.cause });
    this.file = options.file;
    this.lineNumber = options.lineNumber;
  }
}

/** A backend was asked for a task it cannot do (the rules backend cannot translate). */
export class UnsupportedTaskError extends LanguageModelError {
  readonly backendId: string;
  readonly task: string;

  constructor(message: string, options: { backendId: string; task: string }) {
    super(message, { isRetryable: false });
    this.backendId = options.backendId;
    this.task = options.task;
  }
}

/** One thing wrong with a dialogue text response; `turnNumber`/`field` are absent for whole-response problems. */
export interface DialogueTextProblem {
  turnNumber?: number;
  field?: 'question' | 'answer';
  message: string;
}

/**
 * A response that could not be parsed (`kind: 'unparseable'`) or whose turns failed validation
 * (`kind: 'invalid'`). Carries the raw text and the list of problems, which is what a later repair
 * request needs. Not retryable as the same request (the replay would answer the same), but repairable.
 */
export class DialogueTextError extends LanguageModelError {
  readonly dialogueId: string;
  readonly task: string;
  readonly kind: 'unparseable' | 'invalid';
  readonly problems: readonly DialogueTextProblem[];
  readonly responseText: string | undefined;

  constructor(options: {
    dialogueId: string;
    task: string;
    kind: 'unparseable' | 'invalid';
    problems: readonly DialogueTextProblem[];
    responseText?: string;
    cause?: unknown;
  }) {
    const listed = options.problems.map(describeProblem).join('; ');
    const what = options.kind === 'unparseable' ? 'could not be parsed' : 'is invalid';
    super(`dialogue ${options.dialogueId}: the ${options.task} response ${what}: ${listed}`, {
      isRetryable: false,
      cause: options.cause,
    });
    this.dialogueId = options.dialogueId;
    this.task = options.task;
    this.kind = options.kind;
    this.problems = options.problems;
    this.responseText = options.responseText;
  }
}

/**
 * Formats one problem as `turn 3 answer: message`.
 *
 * @param problem the problem to format.
 * @returns the formatted text.
 */
export function describeProblem(problem: DialogueTextProblem): string {
  const where = [problem.turnNumber !== undefined ? `turn ${problem.turnNumber}` : undefined, problem.field].filter(
    (part) => part !== undefined,
  );
  return where.length > 0 ? `${where.join(' ')}: ${problem.message}` : problem.message;
}

/**
 * Why a dialogue was quarantined: its reply stayed unparseable or invalid (after the repair request,
 * when repair is on), it was still cut at the output token limit after halving, or the model stopped
 * for another reason (safety filter, other).
 */
export type QuarantineCause = 'unparseable' | 'invalid' | 'max-tokens' | 'finish-reason';

/**
 * A dialogue whose text could not be produced after the recovery steps (one repair request, halving
 * on MAX_TOKENS): the build records it as failed and goes on. The message is one line,
 * `quarantined: <reason>`, with the reason naming the dialogue, task and problems; the last underlying
 * error is the `cause`. Not retryable.
 */
export class QuarantinedDialogueError extends LanguageModelError {
  readonly dialogueId: string;
  readonly task: string;
  readonly quarantineCause: QuarantineCause;
  /** The reason, as in the message after `quarantined: `. */
  readonly reason: string;

  constructor(options: {
    dialogueId: string;
    task: string;
    quarantineCause: QuarantineCause;
    reason: string;
    cause?: unknown;
  }) {
    super(`quarantined: ${options.reason.replace(/\s*\n\s*/g, ' ')}`, { isRetryable: false, cause: options.cause });
    this.dialogueId = options.dialogueId;
    this.task = options.task;
    this.quarantineCause = options.quarantineCause;
    this.reason = options.reason;
  }
}
