/**
 * Retries of language-model calls, over the project's one retry helper (pipeline/services/retry.ts
 * `retryWithBackoff`, shared with the TTS clients). {@link RetryingModel} is the {@link LanguageModel}
 * wrapper: `new RetryingModel(client, policy)` retries {@link LanguageModelError}s whose `isRetryable`
 * is true (5xx, 408, 409, 429, timeouts, network failures) with exponential backoff and jitter, and
 * honours a server-given delay (Gemini 429 `RetryInfo.retryDelay`, HTTP `retry-after`, carried as
 * `LanguageModelCallError.retryAfterMilliseconds`). Everything else (including errors that are not
 * `LanguageModelError`s) is thrown at once. The clients disable their SDKs' own retries, so this is
 * the only retry policy.
 *
 * Only the language-model specifics live here: which errors count, longer default waits (hosted LLM
 * quotas recover in tens of seconds, not in one), and the message that says why a 429 was not retried.
 */
import { retryWithBackoff, type RetryPolicy } from '../retry.ts';
import { LanguageModelCallError, LanguageModelError } from './errors.ts';
import type { GenerationRequest, GenerationResult, LanguageModel } from './language-model.ts';

export type { RetryPolicy } from '../retry.ts';

/**
 * Four retries from two seconds, doubling, ±20 % jitter, at most two minutes apart: the LLM defaults
 * (the TTS defaults in retry.ts wait less, a speech server recovers faster than a quota).
 */
export const LANGUAGE_MODEL_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 4,
  initialDelayMilliseconds: 2_000,
  maxDelayMilliseconds: 120_000,
  backoffFactor: 2,
  jitter: 0.2,
});

/** Waits; injectable so tests do not sleep. */
export type Sleep = (milliseconds: number) => Promise<void>;

/** A uniform random number in [0, 1); injectable for seeded jitter. Retries do not change outputs. */
export type RandomSource = () => number;

/** What {@link withRetries} reports before each retry (for logs and counters). */
export interface RetryEvent {
  error: LanguageModelError;
  /** 0 for the first retry. */
  retryIndex: number;
  /** The wait before this retry, milliseconds. */
  delayMilliseconds: number;
}

/** Hooks of {@link withRetries}. */
export interface RetryHooks {
  sleep?: Sleep;
  random?: RandomSource;
  onRetry?: (event: RetryEvent) => void;
}

/** Whether an error is a retryable language-model error (the only errors retried here). */
function isRetryableLanguageModelError(error: unknown): boolean {
  return error instanceof LanguageModelError && error.isRetryable;
}

/**
 * Runs `operation`, retrying its retryable {@link LanguageModelError}s per `policy`, through
 * `retryWithBackoff` (pipeline/services/retry.ts: delays, jitter and the server delay rule are defined there).
 *
 * @param operation the work; gets the 0-based attempt number.
 * @param policy retry counts and delays (milliseconds); missing fields from {@link LANGUAGE_MODEL_RETRY_POLICY}.
 * @param hooks `sleep` (default a timer), `random` (default `Math.random`), `onRetry` (called before
 *   each wait).
 * @returns what `operation` returns.
 * @throws the first non-retryable error or non-`LanguageModelError`; the last error when `maxRetries`
 *   retries are used up; a retryable error at once when the server asked to wait longer than
 *   `maxDelayMilliseconds` (its message then says so); RangeError for an invalid policy.
 */
export async function withRetries<T>(
  operation: (attempt: number) => Promise<T>,
  policy: Partial<RetryPolicy> = {},
  hooks: RetryHooks = {},
): Promise<T> {
  const resolved: RetryPolicy = { ...LANGUAGE_MODEL_RETRY_POLICY, ...definedOnly(policy) };
  return retryWithBackoff(({ attemptIndex }) => operation(attemptIndex), {
    ...resolved,
    isRetryable: isRetryableLanguageModelError,
    ...(hooks.sleep !== undefined ? { sleep: (milliseconds: number) => (hooks.sleep as Sleep)(milliseconds) } : {}),
    ...(hooks.random !== undefined ? { random: hooks.random } : {}),
    onRetry: (event) =>
      hooks.onRetry?.({
        error: event.error as LanguageModelError,
        retryIndex: event.retryIndex,
        delayMilliseconds: event.delayMilliseconds,
      }),
    onGiveUp: ({ error, reason }) => {
      if (reason !== 'server-delay-too-long' || !(error instanceof LanguageModelError)) return;
      const asked = error instanceof LanguageModelCallError ? (error.retryAfterMilliseconds ?? 0) : 0;
      error.message +=
        ` (the server asked to wait ${(asked / 1000).toFixed(1)} s, longer than the longest retry wait of ` +
        `${(resolved.maxDelayMilliseconds / 1000).toFixed(1)} s; not retried)`;
    },
  });
}

/** A {@link LanguageModel} that retries the wrapped model's retryable errors. Its id is the inner id. */
export class RetryingModel implements LanguageModel {
  readonly id: string;
  readonly policy: RetryPolicy;
  private readonly hooks: RetryHooks;

  /**
   * @param inner the model to call.
   * @param policy retry counts and delays; missing fields from {@link LANGUAGE_MODEL_RETRY_POLICY}.
   * @param sleep waits between attempts; replace in tests (default a timer).
   * @param hooks jitter source and a retry observer (see {@link withRetries}).
   */
  constructor(
    private readonly inner: LanguageModel,
    policy: Partial<RetryPolicy> = {},
    sleep?: Sleep,
    hooks: Omit<RetryHooks, 'sleep'> = {},
  ) {
    this.id = inner.id;
    this.policy = { ...LANGUAGE_MODEL_RETRY_POLICY, ...definedOnly(policy) };
    this.hooks = { ...hooks, ...(sleep !== undefined ? { sleep } : {}) };
  }

  /**
   * Calls the inner model, retrying retryable errors (see {@link withRetries}).
   *
   * @throws the last error when retries are exhausted, or the first non-retryable error.
   */
  generate(request: GenerationRequest): Promise<GenerationResult> {
    return withRetries(() => this.inner.generate(request), this.policy, this.hooks);
  }
}

function definedOnly<T extends object>(value: Partial<T>): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as Partial<T>;
}
