/**
 * Retries in one place. {@link withRetries} is the one retry helper; {@link RetryingModel} is the
 * {@link LanguageModel} wrapper over it: `new RetryingModel(client, policy)` retries errors whose
 * `isRetryable` is true (5xx, 408, 409, 429, timeouts, network failures) with exponential backoff and
 * jitter, and honours a server-given delay (Gemini 429 `RetryInfo.retryDelay`, HTTP `retry-after`).
 * Everything else (including non-`LanguageModelError`s) is thrown at once. The clients disable their
 * SDKs' own retries, so this is the only retry policy.
 */
import { LanguageModelCallError, LanguageModelError } from './errors.ts';
import type { GenerationRequest, GenerationResult, LanguageModel } from './language-model.ts';

/** How often and how long to retry. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Backoff before the first retry, milliseconds. */
  initialDelayMilliseconds: number;
  /**
   * The longest wait before one retry, milliseconds. Backoff is capped at it; when the server asks for
   * a longer delay, retrying earlier would fail again, so the error is thrown instead.
   */
  maxDelayMilliseconds: number;
  /** Backoff multiplier per retry. */
  backoffFactor: number;
  /**
   * Relative jitter in [0, 1]: a backoff delay is spread uniformly over ±jitter of itself, and a
   * server-given delay is lengthened by up to +jitter of itself (never shortened). 0 = exact delays.
   */
  jitter: number;
}

/** Four retries from two seconds, doubling, ±20 % jitter, at most two minutes apart. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 4,
  initialDelayMilliseconds: 2_000,
  maxDelayMilliseconds: 120_000,
  backoffFactor: 2,
  jitter: 0.2,
};

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

const realSleep: Sleep = (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/**
 * The delay before retry number `retryIndex` (0-based): the server's delay when it gave one
 * (lengthened by up to `jitter`), else `initial * factor^retryIndex` spread by ±`jitter`, capped at
 * `maxDelayMilliseconds`.
 *
 * @param error the error that caused the retry.
 * @param retryIndex 0 for the first retry.
 * @param policy the retry policy (a policy without `jitter` uses none).
 * @param random uniform [0, 1) source for the jitter; default `Math.random`.
 * @returns milliseconds to wait, or `undefined` when the server asked for longer than
 *   `maxDelayMilliseconds` (retrying earlier is pointless).
 */
export function retryDelayMilliseconds(
  error: LanguageModelError,
  retryIndex: number,
  policy: Omit<RetryPolicy, 'jitter'> & { jitter?: number },
  random: RandomSource = Math.random,
): number | undefined {
  const jitter = Math.min(Math.max(policy.jitter ?? 0, 0), 1);
  const serverDelay = error instanceof LanguageModelCallError ? error.retryAfterMilliseconds : undefined;
  if (serverDelay !== undefined) {
    if (serverDelay > policy.maxDelayMilliseconds) return undefined;
    return Math.min(serverDelay * (1 + jitter * random()), policy.maxDelayMilliseconds);
  }
  const backoff = policy.initialDelayMilliseconds * policy.backoffFactor ** retryIndex;
  return Math.min(backoff * (1 - jitter + 2 * jitter * random()), policy.maxDelayMilliseconds);
}

/**
 * Runs `operation`, retrying its retryable {@link LanguageModelError}s per `policy`.
 *
 * @param operation the work; gets the 0-based attempt number.
 * @param policy retry counts and delays; missing fields from {@link DEFAULT_RETRY_POLICY}.
 * @param hooks `sleep` (default a timer), `random` (default `Math.random`), `onRetry` (called before
 *   each wait).
 * @returns what `operation` returns.
 * @throws the first non-retryable error or non-`LanguageModelError`; the last error when `maxRetries`
 *   retries are used up; a retryable error at once when the server asked to wait longer than
 *   `maxDelayMilliseconds` (its message then says so).
 */
export async function withRetries<T>(
  operation: (attempt: number) => Promise<T>,
  policy: Partial<RetryPolicy> = {},
  hooks: RetryHooks = {},
): Promise<T> {
  const resolved: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...definedOnly(policy) };
  const sleep = hooks.sleep ?? realSleep;
  for (let retryIndex = 0; ; retryIndex += 1) {
    try {
      return await operation(retryIndex);
    } catch (error) {
      if (!(error instanceof LanguageModelError) || !error.isRetryable || retryIndex >= resolved.maxRetries) throw error;
      const delay = retryDelayMilliseconds(error, retryIndex, resolved, hooks.random);
      if (delay === undefined) {
        const asked = error instanceof LanguageModelCallError ? error.retryAfterMilliseconds ?? 0 : 0;
        error.message +=
          ` (the server asked to wait ${(asked / 1000).toFixed(1)} s, longer than the longest retry wait of ` +
          `${(resolved.maxDelayMilliseconds / 1000).toFixed(1)} s; not retried)`;
        throw error;
      }
      hooks.onRetry?.({ error, retryIndex, delayMilliseconds: delay });
      await sleep(delay);
    }
  }
}

/** A {@link LanguageModel} that retries the wrapped model's retryable errors. Its id is the inner id. */
export class RetryingModel implements LanguageModel {
  readonly id: string;
  readonly policy: RetryPolicy;
  private readonly hooks: RetryHooks;

  /**
   * @param inner the model to call.
   * @param policy retry counts and delays; missing fields from {@link DEFAULT_RETRY_POLICY}.
   * @param sleep waits between attempts; replace in tests.
   * @param hooks jitter source and a retry observer (see {@link withRetries}).
   */
  constructor(
    private readonly inner: LanguageModel,
    policy: Partial<RetryPolicy> = {},
    sleep: Sleep = realSleep,
    hooks: Omit<RetryHooks, 'sleep'> = {},
  ) {
    this.id = inner.id;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...definedOnly(policy) };
    this.hooks = { ...hooks, sleep };
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
