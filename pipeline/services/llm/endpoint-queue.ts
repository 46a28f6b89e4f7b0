/**
 * Throughput control: one p-queue per endpoint, shared by every dialogue (and by the rewrite and
 * translate backends when they use the same endpoint), so the number of requests in flight and the
 * request rate are limited per service, not per caller.
 *
 * {@link QueuedModel} sends each attempt through the endpoint's queue. Put it INSIDE the retry wrapper
 * (`new RetryingModel(new QueuedModel(client, queue))`) so a request waiting to be retried does not
 * hold a queue slot. When a call fails with a server-given delay (HTTP 429 with RetryInfo), the whole
 * queue holds new requests for that delay: the other requests would be refused too.
 */
import PQueue from 'p-queue';
import { LanguageModelCallError } from './errors.ts';
import type { GenerationRequest, GenerationResult, LanguageModel } from './language-model.ts';

/** Limits of one endpoint. */
export interface EndpointThroughput {
  /** Requests in flight at once. */
  concurrency: number;
  /** At most this many requests start per `intervalMilliseconds` (sliding window); undefined = no rate limit. */
  requestsPerInterval?: number;
  /** Length of the rate window, milliseconds (required with `requestsPerInterval`). */
  intervalMilliseconds?: number;
}

/** A p-queue for one endpoint, with a hold for server-requested delays. */
export class EndpointQueue {
  private readonly queue: PQueue;
  private holdTimer: NodeJS.Timeout | undefined;
  private holdUntil = 0;

  /**
   * @param name the endpoint, for messages (e.g. `gemini https://…/models/gemma-4-31b-it`).
   * @param throughput concurrency and optional rate limit.
   * @throws RangeError when concurrency is not a positive integer, or a rate limit lacks its interval.
   */
  constructor(
    readonly name: string,
    readonly throughput: EndpointThroughput,
  ) {
    if (!Number.isInteger(throughput.concurrency) || throughput.concurrency < 1) {
      throw new RangeError(`endpoint ${name}: concurrency must be a positive integer (got ${throughput.concurrency})`);
    }
    const rateLimited = throughput.requestsPerInterval !== undefined;
    if (rateLimited && !(throughput.intervalMilliseconds !== undefined && throughput.intervalMilliseconds > 0)) {
      throw new RangeError(`endpoint ${name}: requestsPerInterval needs a positive intervalMilliseconds`);
    }
    this.queue = new PQueue({
      concurrency: throughput.concurrency,
      ...(rateLimited ? { intervalCap: throughput.requestsPerInterval, interval: throughput.intervalMilliseconds, strict: true } : {}),
    });
  }

  /**
   * Runs `task` when a slot is free (and the rate window and any hold allow).
   *
   * @param task the request to send.
   * @returns what `task` returns.
   * @throws whatever `task` throws.
   */
  run<T>(task: () => Promise<T>): Promise<T> {
    return this.queue.add(task);
  }

  /**
   * Starts no new task for `milliseconds` (tasks in flight go on). A longer hold replaces a shorter one.
   *
   * @param milliseconds how long to hold, from now.
   */
  holdFor(milliseconds: number): void {
    const until = Date.now() + milliseconds;
    if (until <= this.holdUntil) return;
    this.holdUntil = until;
    this.queue.pause();
    clearTimeout(this.holdTimer);
    this.holdTimer = setTimeout(() => {
      this.holdTimer = undefined;
      this.holdUntil = 0;
      this.queue.start();
    }, milliseconds);
  }

  /** Requests waiting to start. */
  get waiting(): number {
    return this.queue.size;
  }

  /** Requests in flight. */
  get running(): number {
    return this.queue.pending;
  }

  /** Resolves when nothing waits and nothing runs. */
  onIdle(): Promise<void> {
    return this.queue.onIdle();
  }
}

/** A registry of endpoint queues by key; the build uses {@link SHARED_ENDPOINT_QUEUES}. */
export class EndpointQueues {
  private readonly queues = new Map<string, EndpointQueue>();

  /**
   * The queue of an endpoint, created on first use.
   *
   * @param key identifies the endpoint (see `endpointKey` uses in ./backend-settings.ts).
   * @param throughput its limits.
   * @returns the shared queue.
   * @throws Error when the endpoint already has a queue with different limits (two settings blocks
   *   name the same endpoint with different `throughput`); RangeError from {@link EndpointQueue}.
   */
  get(key: string, throughput: EndpointThroughput): EndpointQueue {
    const existing = this.queues.get(key);
    if (existing === undefined) {
      const queue = new EndpointQueue(key, throughput);
      this.queues.set(key, queue);
      return queue;
    }
    const same =
      existing.throughput.concurrency === throughput.concurrency &&
      existing.throughput.requestsPerInterval === throughput.requestsPerInterval &&
      existing.throughput.intervalMilliseconds === throughput.intervalMilliseconds;
    if (!same) {
      throw new Error(
        `endpoint ${key} is configured twice with different throughput limits ` +
          `(${JSON.stringify(existing.throughput)} and ${JSON.stringify(throughput)}); give llm.rewrite and llm.translate the same throughput`,
      );
    }
    return existing;
  }

  /** Number of endpoints with a queue. */
  get size(): number {
    return this.queues.size;
  }
}

/** The process-wide registry: every backend built from settings shares it unless given its own. */
export const SHARED_ENDPOINT_QUEUES = new EndpointQueues();

/** A {@link LanguageModel} that sends each call through an {@link EndpointQueue}. Its id is the inner id. */
export class QueuedModel implements LanguageModel {
  readonly id: string;

  /**
   * @param inner the client.
   * @param queue the endpoint's queue.
   * @param maxHoldMilliseconds a server-given delay up to this long holds the queue; a longer one does
   *   not (the retry helper gives up on it, and later requests should fail fast rather than wait);
   *   default two minutes, use the retry policy's `maxDelayMilliseconds`.
   */
  constructor(
    private readonly inner: LanguageModel,
    readonly queue: EndpointQueue,
    private readonly maxHoldMilliseconds = 120_000,
  ) {
    this.id = inner.id;
  }

  /**
   * Calls the inner model in a queue slot. A retryable failure with a server-given delay of at most
   * `maxHoldMilliseconds` holds the queue for that delay.
   *
   * @throws whatever the inner model throws.
   */
  async generate(request: GenerationRequest): Promise<GenerationResult> {
    try {
      return await this.queue.run(() => this.inner.generate(request));
    } catch (error) {
      const delay = error instanceof LanguageModelCallError && error.isRetryable ? error.retryAfterMilliseconds : undefined;
      if (delay !== undefined && delay <= this.maxHoldMilliseconds) this.queue.holdFor(delay);
      throw error;
    }
  }
}
