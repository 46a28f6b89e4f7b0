/**
 * Throughput control of the LLM clients: one endpoint pool per endpoint (../endpoint-pool.ts), shared
 * by every dialogue (and by the rewrite and translate backends when they use the same endpoint), so
 * the number of requests in flight and the request rate are limited per service, not per caller.
 *
 * {@link QueuedModel} sends each attempt through the endpoint's pool. Put it INSIDE the retry wrapper
 * (`new RetryingModel(new QueuedModel(client, pool))`) so a request waiting to be retried does not
 * hold a slot. When a call fails with a server-given delay (HTTP 429 with RetryInfo), the whole pool
 * holds new requests for that delay: the other requests would be refused too.
 */
import type { EndpointPool } from '../endpoint-pool.ts';
import { LanguageModelCallError } from './errors.ts';
import type { GenerationRequest, GenerationResult, LanguageModel } from './language-model.ts';

/** A {@link LanguageModel} that sends each call through an {@link EndpointPool}. Its id is the inner id. */
export class QueuedModel implements LanguageModel {
  readonly id: string;

  /**
   * @param inner the client.
   * @param pool the endpoint's pool (one endpoint: `singleEndpointPool`, or `EndpointPools.get`).
   * @param maxHoldMilliseconds a server-given delay up to this long holds the pool; a longer one does
   *   not (the retry helper gives up on it, and later requests should fail fast rather than wait);
   *   default two minutes, use the retry policy's `maxDelayMilliseconds`.
   */
  constructor(
    private readonly inner: LanguageModel,
    readonly pool: EndpointPool,
    private readonly maxHoldMilliseconds = 120_000,
  ) {
    this.id = inner.id;
  }

  /**
   * Calls the inner model in a pool slot. A retryable failure with a server-given delay of at most
   * `maxHoldMilliseconds` holds the pool for that delay.
   *
   * @throws whatever the inner model throws.
   */
  async generate(request: GenerationRequest): Promise<GenerationResult> {
    try {
      return await this.pool.run(() => this.inner.generate(request));
    } catch (error) {
      const delay =
        error instanceof LanguageModelCallError && error.isRetryable ? error.retryAfterMilliseconds : undefined;
      if (delay !== undefined && delay <= this.maxHoldMilliseconds) this.pool.holdFor(delay);
      throw error;
    }
  }
}
