/**
 * One generic retry helper for every service client (TTS, LLM, ...): {@link retryWithBackoff} runs an
 * operation and retries the errors a predicate calls retryable, waiting with exponential backoff and
 * jitter between attempts, and honouring a delay the server asked for (HTTP `Retry-After`, Gemini
 * `RetryInfo.retryDelay`).
 *
 * Errors are typed, not parsed: by default an error is retried when it carries `isRetryable: true`
 * (the Vercel AI SDK convention: 408, 409, 429, >= 500, timeouts, network failures), and its
 * `retryAfterMilliseconds` (when a number) replaces the computed backoff. Both rules can be replaced.
 *
 * The TTS clients (pipeline/services/tts/remote-synthesizer.ts) call it directly; the LLM clients
 * through pipeline/services/llm/retrying-model.ts, which only adds which errors count and longer
 * default waits. Own code rather than p-retry or exponential-backoff: neither can replace its
 * computed backoff by the delay a server asked for (HTTP `Retry-After`, Gemini `RetryInfo`), which
 * is what a 429 from a quota needs.
 */
import { SYSTEM_CLOCK } from './clock.ts';

/** How often and how long to retry. */
export interface RetryPolicy {
  /** Retries after the first attempt (0 = try once). */
  maxRetries: number;
  /** Backoff before the first retry, milliseconds. */
  initialDelayMilliseconds: number;
  /**
   * The longest wait before one retry, milliseconds. Backoff is capped at it; when the server asks for
   * a longer delay, retrying earlier would fail again, so the error is thrown instead.
   */
  maxDelayMilliseconds: number;
  /** Backoff multiplier per retry (delay before retry k = initial * factor^k before jitter). */
  backoffFactor: number;
  /**
   * Relative jitter in [0, 1]: a backoff delay is spread uniformly over ±jitter of itself, and a
   * server-given delay is lengthened by up to +jitter of itself (never shortened). 0 = exact delays.
   * Jitter keeps many clients that failed together from retrying together.
   */
  jitter: number;
}

/** Four retries from one second, doubling, ±30 % jitter, at most thirty seconds apart. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 4,
  initialDelayMilliseconds: 1_000,
  maxDelayMilliseconds: 30_000,
  backoffFactor: 2,
  jitter: 0.3,
});

/** Why {@link retryWithBackoff} stopped retrying and threw. */
export type RetryGiveUpReason = 'not-retryable' | 'retries-exhausted' | 'server-delay-too-long' | 'aborted';

/** What {@link retryWithBackoff} reports before each wait. */
export interface RetryEvent {
  error: unknown;
  /** 0 for the first retry. */
  retryIndex: number;
  /** The wait before this retry, milliseconds. */
  delayMilliseconds: number;
}

/** What {@link retryWithBackoff} reports when it throws. */
export interface RetryGiveUpEvent {
  error: unknown;
  reason: RetryGiveUpReason;
  /** Attempts made, the failed one included (>= 1). */
  attempts: number;
}

/** One attempt's context, given to the operation. */
export interface RetryAttempt {
  /** 0 for the first attempt. */
  attemptIndex: number;
  /** Every error of the previous attempts of this call, oldest first. */
  previousErrors: readonly unknown[];
}

/** Options of {@link retryWithBackoff}: the policy (missing fields from {@link DEFAULT_RETRY_POLICY}) and hooks. */
export interface RetryOptions extends Partial<RetryPolicy> {
  /** Whether an error may succeed when tried again. Default: {@link isRetryableError}. */
  isRetryable?: (error: unknown) => boolean;
  /** Delay the server asked for, milliseconds, or undefined. Default: {@link serverRetryDelayMilliseconds}. */
  retryAfterMilliseconds?: (error: unknown) => number | undefined;
  /** Called before each wait (logs, counters). */
  onRetry?: (event: RetryEvent) => void;
  /** Called once when the helper throws (the error is thrown right after). */
  onGiveUp?: (event: RetryGiveUpEvent) => void;
  /** Waits; injectable so tests do not sleep. Default: a timer that the signal cancels. */
  sleep?: (milliseconds: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform random number in [0, 1) for jitter. Default `Math.random`. */
  random?: () => number;
  /** Stops waiting and retrying; the signal's reason is thrown. */
  signal?: AbortSignal;
}

/**
 * The default retry rule: true when the error is an object whose `isRetryable` property is `true`.
 *
 * @param error anything thrown.
 * @returns whether to try again.
 */
export function isRetryableError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { isRetryable?: unknown }).isRetryable === true;
}

/**
 * The default server delay rule: the error's `retryAfterMilliseconds` when it is a non-negative finite number.
 *
 * @param error anything thrown.
 * @returns milliseconds, or undefined when the error carries none.
 */
export function serverRetryDelayMilliseconds(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const value = (error as { retryAfterMilliseconds?: unknown }).retryAfterMilliseconds;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * The wait before retry number `retryIndex` (0-based): the server's delay when given (lengthened by
 * up to `jitter` of itself), else `initial * factor^retryIndex` spread uniformly over ±`jitter`,
 * capped at `maxDelayMilliseconds`.
 *
 * @param retryIndex 0 for the first retry.
 * @param policy the retry policy.
 * @param serverDelayMilliseconds the delay the server asked for, or undefined.
 * @param random uniform [0, 1) source; default `Math.random`.
 * @returns milliseconds to wait, or undefined when the server asked for more than `maxDelayMilliseconds`.
 */
export function backoffDelayMilliseconds(
  retryIndex: number,
  policy: RetryPolicy,
  serverDelayMilliseconds?: number,
  random: () => number = Math.random,
): number | undefined {
  const jitter = Math.min(Math.max(policy.jitter, 0), 1);
  if (serverDelayMilliseconds !== undefined) {
    if (serverDelayMilliseconds > policy.maxDelayMilliseconds) return undefined;
    return Math.min(serverDelayMilliseconds * (1 + jitter * random()), policy.maxDelayMilliseconds);
  }
  const backoff = policy.initialDelayMilliseconds * policy.backoffFactor ** retryIndex;
  return Math.min(backoff * (1 - jitter + 2 * jitter * random()), policy.maxDelayMilliseconds);
}

/**
 * Fills missing policy fields from {@link DEFAULT_RETRY_POLICY} and checks them.
 *
 * @throws RangeError when a count or delay is negative or not finite, the factor is below 1, or the
 *   jitter is outside [0, 1].
 */
export function resolveRetryPolicy(policy: Partial<RetryPolicy> = {}): RetryPolicy {
  const defined = Object.fromEntries(
    Object.entries(policy).filter(([, value]) => value !== undefined),
  ) as Partial<RetryPolicy>;
  const resolved: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...defined };
  if (!Number.isInteger(resolved.maxRetries) || resolved.maxRetries < 0)
    throw new RangeError(`retry policy: maxRetries ${resolved.maxRetries} is not a non-negative integer`);
  for (const key of ['initialDelayMilliseconds', 'maxDelayMilliseconds'] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0)
      throw new RangeError(`retry policy: ${key} ${resolved[key]} is not a non-negative number of milliseconds`);
  }
  if (!Number.isFinite(resolved.backoffFactor) || resolved.backoffFactor < 1)
    throw new RangeError(`retry policy: backoffFactor ${resolved.backoffFactor} is below 1`);
  if (!(resolved.jitter >= 0 && resolved.jitter <= 1))
    throw new RangeError(`retry policy: jitter ${resolved.jitter} is outside [0, 1]`);
  return resolved;
}

/**
 * Runs `operation`, retrying the errors `isRetryable` accepts, with exponential backoff and jitter.
 *
 * @param operation the work; gets the attempt number and the earlier attempts' errors (a caller can
 *   change what it sends after a given failure, e.g. fall back to another route).
 * @param policy retry counts and delays (milliseconds), plus the rules and hooks of {@link RetryOptions}.
 * @returns what `operation` returns.
 * @throws the first non-retryable error; the last error once `maxRetries` retries are used up; a
 *   retryable error at once when the server asked to wait longer than `maxDelayMilliseconds`; the
 *   signal's reason when `signal` aborts; RangeError when the policy is invalid. `onGiveUp` tells which.
 */
export async function retryWithBackoff<T>(
  operation: (attempt: RetryAttempt) => Promise<T>,
  policy: RetryOptions = {},
): Promise<T> {
  const resolved = resolveRetryPolicy(policy);
  const isRetryable = policy.isRetryable ?? isRetryableError;
  const serverDelay = policy.retryAfterMilliseconds ?? serverRetryDelayMilliseconds;
  const sleep = policy.sleep ?? SYSTEM_CLOCK.sleep;
  const previousErrors: unknown[] = [];
  for (let attemptIndex = 0; ; attemptIndex += 1) {
    policy.signal?.throwIfAborted();
    try {
      return await operation({ attemptIndex, previousErrors: [...previousErrors] });
    } catch (error) {
      previousErrors.push(error);
      const giveUp = (reason: RetryGiveUpReason): never => {
        policy.onGiveUp?.({ error, reason, attempts: attemptIndex + 1 });
        throw error;
      };
      if (policy.signal?.aborted) giveUp('aborted');
      if (!isRetryable(error)) giveUp('not-retryable');
      if (attemptIndex >= resolved.maxRetries) giveUp('retries-exhausted');
      const delay = backoffDelayMilliseconds(attemptIndex, resolved, serverDelay(error), policy.random);
      if (delay === undefined) giveUp('server-delay-too-long');
      policy.onRetry?.({ error, retryIndex: attemptIndex, delayMilliseconds: delay as number });
      try {
        await sleep(delay as number, policy.signal);
      } catch (abortReason) {
        policy.onGiveUp?.({ error, reason: 'aborted', attempts: attemptIndex + 1 });
        throw abortReason;
      }
    }
  }
}
