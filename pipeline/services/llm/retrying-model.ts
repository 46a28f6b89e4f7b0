/**
 * Retries in one place, as a wrapper: `new RetryingModel(client, policy)` retries errors whose
 * `isRetryable` is true with exponential backoff, honouring a server-given delay (HTTP 429
 * `retryDelay`). Everything else (including non-`LanguageModelError`s) is thrown at once.
 */
import { LanguageModelCallError, LanguageModelError } from './errors.ts';
import type { GenerationRequest, GenerationResult, LanguageModel } from './language-model.ts';

/** How often and how long to retry. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  initialDelayMilliseconds: number;
  maxDelayMilliseconds: number;
  backoffFactor: number;
}

/** Four retries from two seconds, doubling, at most two minutes apart. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 4,
  initialDelayMilliseconds: 2_000,
  maxDelayMilliseconds: 120_000,
  backoffFactor: 2,
};

/** Waits; injectable so tests do not sleep. */
export type Sleep = (milliseconds: number) => Promise<void>;

const realSleep: Sleep = (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/**
 * The delay before retry number `retryIndex` (0-based): the server's delay when it gave one, else
 * `initial * factor^retryIndex`, capped at `maxDelayMilliseconds`.
 *
 * @param error the error that caused the retry.
 * @param retryIndex 0 for the first retry.
 * @param policy the retry policy.
 * @returns milliseconds to wait.
 */
export function retryDelayMilliseconds(error: LanguageModelError, retryIndex: number, policy: RetryPolicy): number {
  const serverDelay = error instanceof LanguageModelCallError ? error.retryAfterMilliseconds : undefined;
  const backoff = policy.initialDelayMilliseconds * policy.backoffFactor ** retryIndex;
  return Math.min(serverDelay ?? backoff, policy.maxDelayMilliseconds);
}

/** A {@link LanguageModel} that retries the wrapped model's retryable errors. Its id is the inner id. */
export class RetryingModel implements LanguageModel {
  readonly id: string;
  private readonly policy: RetryPolicy;

  /**
   * @param inner the model to call.
   * @param policy retry counts and delays; defaults to {@link DEFAULT_RETRY_POLICY}.
   * @param sleep waits between attempts; replace in tests.
   */
  constructor(
    private readonly inner: LanguageModel,
    policy: Partial<RetryPolicy> = {},
    private readonly sleep: Sleep = realSleep,
  ) {
    this.id = inner.id;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...policy };
  }

  /**
   * Calls the inner model, retrying retryable errors.
   *
   * @throws the last error when retries are exhausted, or the first non-retryable error.
   */
  async generate(request: GenerationRequest): Promise<GenerationResult> {
    for (let retryIndex = 0; ; retryIndex += 1) {
      try {
        return await this.inner.generate(request);
      } catch (error) {
        if (!(error instanceof LanguageModelError) || !error.isRetryable || retryIndex >= this.policy.maxRetries) {
          throw error;
        }
        await this.sleep(retryDelayMilliseconds(error, retryIndex, this.policy));
      }
    }
  }
}
