/**
 * The one endpoint pool of every service client (speech servers, LLM endpoints): one p-queue per
 * endpoint (a CosyVoice FastAPI process handles one request at a time, so concurrency 1 by default),
 * each request handed to the least-busy endpoint at the moment one has a free slot, an optional cap
 * on requests started per time interval over the whole pool, a cool-down for endpoints that stopped
 * answering, a hold of the whole pool for a server-given delay (HTTP 429 with RetryInfo: the other
 * requests would be refused too), and progress counters.
 *
 * Requests wait in one pool-wide line and are assigned only when an endpoint has room, so a slow
 * endpoint never holds requests that another could serve. Retries are not done here: the callers
 * retry around {@link EndpointPool.run} (tts/remote-synthesizer.ts asks it to avoid the endpoint that
 * just failed; llm/queued-model.ts sits inside the retry wrapper so a request waiting to be retried
 * holds no slot). Time comes from an injected {@link Clock}, so tests run on fake timers.
 */
import PQueue from 'p-queue';
import { SYSTEM_CLOCK, type Clock } from './clock.ts';
import {
  DEFAULT_POOL_OPTIONS,
  type EndpointPoolOptions,
  type EndpointPoolStatistics,
  type EndpointRunOptions,
  type EndpointStatistics,
} from './endpoint-pool-settings.ts';

export {
  isEndpointUnavailableError,
  type EndpointPoolOptions,
  type EndpointPoolStatistics,
  type EndpointRunOptions,
  type EndpointStatistics,
  type RequestRateCap,
} from './endpoint-pool-settings.ts';

interface Endpoint {
  url: string;
  queue: PQueue;
  statistics: Omit<EndpointStatistics, 'url' | 'running' | 'queued' | 'coolingMilliseconds'>;
  coolingUntil: number;
  /** Assignment counter value when last assigned (round-robin among equally busy endpoints). */
  lastAssigned: number;
}

interface WaitingRequest {
  run: (endpoint: Endpoint) => void;
  avoid: string | undefined;
  cancel: () => void;
}

/** Several endpoints of one service behind one `run` call. */
export class EndpointPool {
  readonly options: EndpointPoolOptions;
  private readonly endpoints: Endpoint[];
  private readonly waiting: WaitingRequest[] = [];
  private readonly rateGate: PQueue | null;
  private submitted = 0;
  private waitingForRate = 0;
  private peakRunning = 0;
  private assignments = 0;
  /** Cancels the pending wake-up (one at a time). */
  private wake: AbortController | undefined;
  /** No request starts before this time (clock milliseconds); 0 = no hold. */
  private holdUntil = 0;

  /**
   * @param urls base URLs of the endpoints (at least one; duplicates are an error).
   * @param options concurrency, rate cap and cool-down; missing fields from the defaults.
   * @throws RangeError when there is no URL, a URL repeats, the concurrency is not a positive integer,
   *   or the rate cap is not positive.
   */
  constructor(urls: readonly string[], options: Partial<EndpointPoolOptions> = {}) {
    this.options = {
      ...DEFAULT_POOL_OPTIONS,
      ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)),
    };
    if (urls.length === 0) throw new RangeError('endpoint pool: no endpoint URL given');
    if (new Set(urls).size !== urls.length)
      throw new RangeError(`endpoint pool: repeated endpoint URL in ${urls.join(', ')}`);
    const concurrency = this.options.concurrencyPerEndpoint;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError(`endpoint pool: concurrencyPerEndpoint ${concurrency} is not a positive integer`);
    const rate = this.options.requestRate;
    if (rate && !(Number.isInteger(rate.count) && rate.count >= 1 && rate.intervalMilliseconds > 0)) {
      throw new RangeError(
        `endpoint pool: request rate cap ${JSON.stringify(rate)} needs a positive integer count and a positive interval`,
      );
    }
    this.rateGate = rate
      ? new PQueue({ intervalCap: rate.count, interval: rate.intervalMilliseconds, strict: true })
      : null;
    this.endpoints = urls.map((url) => ({
      url,
      queue: new PQueue({ concurrency }),
      statistics: { succeeded: 0, failed: 0, consecutiveUnavailable: 0, busyMilliseconds: 0 },
      coolingUntil: 0,
      lastAssigned: -1,
    }));
  }

  /** The endpoint URLs, in the order given. */
  get urls(): string[] {
    return this.endpoints.map((endpoint) => endpoint.url);
  }

  /** Requests the pool can run at once (endpoints x concurrency). */
  get capacity(): number {
    return this.endpoints.length * this.options.concurrencyPerEndpoint;
  }

  /**
   * Runs `task` on the least-busy endpoint once one has a free slot (and the rate cap allows).
   * Least busy = fewest running plus queued requests; ties go to the endpoint assigned longest ago.
   * Endpoints cooling down after failing to answer are skipped while another can take the request.
   *
   * @param task the request; gets the endpoint's base URL and the caller's signal.
   * @param options endpoint to avoid, cancellation.
   * @returns what `task` returns.
   * @throws whatever `task` throws; the signal's reason when cancelled while waiting.
   */
  run<T>(task: (endpoint: string, signal?: AbortSignal) => Promise<T>, options: EndpointRunOptions = {}): Promise<T> {
    this.submitted += 1;
    return new Promise<T>((resolve, reject) => {
      const enqueue = (): void => {
        if (options.signal?.aborted) {
          reject(options.signal.reason);
          return;
        }
        const onAbort = (): void => request.cancel();
        const request: WaitingRequest = {
          avoid: options.avoid,
          cancel: () => {
            const index = this.waiting.indexOf(request);
            if (index >= 0) {
              this.waiting.splice(index, 1);
              reject(options.signal?.reason);
            }
          },
          run: (endpoint) => {
            options.signal?.removeEventListener('abort', onAbort);
            const started = this.options.clock.now();
            endpoint.queue
              .add(async () => {
                this.peakRunning = Math.max(this.peakRunning, this.runningCount());
                return task(endpoint.url, options.signal);
              })
              .then(
                (value) => {
                  this.settle(endpoint, started, null);
                  resolve(value as T);
                },
                (error: unknown) => {
                  this.settle(endpoint, started, error);
                  reject(error);
                },
              );
          },
        };
        options.signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(request);
        this.dispatch();
      };
      if (!this.rateGate) {
        enqueue();
        return;
      }
      this.waitingForRate += 1;
      this.rateGate
        .add(async () => undefined, { signal: options.signal })
        .then(
          () => {
            this.waitingForRate -= 1;
            enqueue();
          },
          (error: unknown) => {
            this.waitingForRate -= 1;
            reject(error);
          },
        );
    });
  }

  /**
   * Starts no new request for `milliseconds` (requests in flight go on). A longer hold replaces a
   * shorter one. Used for a server-given delay (HTTP 429 with RetryInfo) that applies to every request.
   * @param milliseconds how long to hold, from now
   */
  holdFor(milliseconds: number): void {
    const until = this.options.clock.now() + milliseconds;
    if (until <= this.holdUntil) return;
    this.holdUntil = until;
    this.wakeAt(until);
  }

  /** A snapshot of the counters. */
  statistics(): EndpointPoolStatistics {
    const now = this.options.clock.now();
    const endpoints = this.endpoints.map((endpoint) => ({
      url: endpoint.url,
      running: endpoint.queue.pending,
      queued: endpoint.queue.size,
      coolingMilliseconds: Math.max(0, endpoint.coolingUntil - now),
      ...endpoint.statistics,
    }));
    return {
      submitted: this.submitted,
      waiting:
        this.waiting.length + this.waitingForRate + endpoints.reduce((sum, endpoint) => sum + endpoint.queued, 0),
      running: this.runningCount(),
      succeeded: endpoints.reduce((sum, endpoint) => sum + endpoint.succeeded, 0),
      failed: endpoints.reduce((sum, endpoint) => sum + endpoint.failed, 0),
      peakRunning: this.peakRunning,
      endpoints,
    };
  }

  /** Resolves when nothing waits or runs. */
  async onIdle(): Promise<void> {
    while (
      this.waiting.length > 0 ||
      this.waitingForRate > 0 ||
      this.endpoints.some((endpoint) => endpoint.queue.pending + endpoint.queue.size > 0)
    ) {
      await Promise.all(this.endpoints.map((endpoint) => endpoint.queue.onIdle()));
      if (this.waiting.length > 0 || this.waitingForRate > 0) await this.options.clock.sleep(5);
    }
  }

  private runningCount(): number {
    return this.endpoints.reduce((sum, endpoint) => sum + endpoint.queue.pending, 0);
  }

  private settle(endpoint: Endpoint, started: number, error: unknown): void {
    const now = this.options.clock.now();
    endpoint.statistics.busyMilliseconds += now - started;
    if (error === null) {
      endpoint.statistics.succeeded += 1;
      endpoint.statistics.consecutiveUnavailable = 0;
      endpoint.coolingUntil = 0;
    } else {
      endpoint.statistics.failed += 1;
      if (this.options.coolsDown(error)) {
        endpoint.statistics.consecutiveUnavailable += 1;
        const cooldown = Math.min(
          this.options.cooldownInitialMilliseconds * 2 ** (endpoint.statistics.consecutiveUnavailable - 1),
          this.options.cooldownMaximumMilliseconds,
        );
        endpoint.coolingUntil = now + cooldown;
      }
    }
    this.dispatch();
  }

  /** Assigns waiting requests, in order, to endpoints with a free slot. */
  private dispatch(): void {
    const now = this.options.clock.now();
    if (now < this.holdUntil) {
      this.wakeAt(this.holdUntil);
      return;
    }
    const concurrency = this.options.concurrencyPerEndpoint;
    const load = (endpoint: Endpoint): number => endpoint.queue.pending + endpoint.queue.size;
    for (let index = 0; index < this.waiting.length;) {
      const request = this.waiting[index] as WaitingRequest;
      const free = this.endpoints.filter((endpoint) => load(endpoint) < concurrency);
      if (free.length === 0) break;
      const healthy = free.filter((endpoint) => endpoint.coolingUntil <= now);
      const otherHealthyExists = this.endpoints.some(
        (endpoint) => endpoint.url !== request.avoid && endpoint.coolingUntil <= now,
      );
      let candidates = healthy.filter((endpoint) => endpoint.url !== request.avoid);
      if (candidates.length === 0 && !otherHealthyExists) candidates = healthy;
      if (candidates.length === 0 && this.endpoints.every((endpoint) => endpoint.coolingUntil > now)) {
        // Every endpoint is cooling down: do not wait longer than the first cool-down to end.
        this.wakeAt(Math.min(...this.endpoints.map((endpoint) => endpoint.coolingUntil)));
        break;
      }
      if (candidates.length === 0) {
        index += 1; // this request waits for another endpoint; later requests may fit now
        continue;
      }
      const chosen = candidates.reduce((best, endpoint) =>
        load(endpoint) < load(best) || (load(endpoint) === load(best) && endpoint.lastAssigned < best.lastAssigned)
          ? endpoint
          : best,
      );
      this.waiting.splice(index, 1);
      chosen.lastAssigned = this.assignments++;
      request.run(chosen);
    }
    const earliestCooling = Math.min(
      ...this.endpoints.filter((endpoint) => endpoint.coolingUntil > now).map((endpoint) => endpoint.coolingUntil),
    );
    if (this.waiting.length > 0 && Number.isFinite(earliestCooling)) this.wakeAt(earliestCooling);
  }

  /** Dispatches again at `time` (clock milliseconds), replacing an earlier wake-up. */
  private wakeAt(time: number): void {
    this.wake?.abort();
    const wake = new AbortController();
    this.wake = wake;
    this.options.clock.sleep(Math.max(1, time - this.options.clock.now()), wake.signal).then(
      () => {
        if (this.wake !== wake) return;
        this.wake = undefined;
        this.dispatch();
      },
      () => {}, // replaced by a later wake-up
    );
  }
}

/** Limits of one endpoint as the LLM settings give them (`throughput`). */
export interface EndpointThroughput {
  /** Requests in flight at once. */
  concurrency: number;
  /** At most this many requests start per `intervalMilliseconds` (sliding window); undefined = no rate limit. */
  requestsPerInterval?: number;
  /** Length of the rate window, milliseconds (required with `requestsPerInterval`). */
  intervalMilliseconds?: number;
}

/**
 * A pool of one endpoint with the given throughput: no cool-down (the LLM clients retry with their
 * own policy), holds for server-given delays.
 * @throws RangeError when concurrency is not a positive integer, or a rate limit lacks its interval
 */
export function singleEndpointPool(
  name: string,
  throughput: EndpointThroughput,
  clock: Clock = SYSTEM_CLOCK,
): EndpointPool {
  if (!Number.isInteger(throughput.concurrency) || throughput.concurrency < 1) {
    throw new RangeError(`endpoint ${name}: concurrency must be a positive integer (got ${throughput.concurrency})`);
  }
  const rateLimited = throughput.requestsPerInterval !== undefined;
  if (rateLimited && !(throughput.intervalMilliseconds !== undefined && throughput.intervalMilliseconds > 0)) {
    throw new RangeError(`endpoint ${name}: requestsPerInterval needs a positive intervalMilliseconds`);
  }
  return new EndpointPool([name], {
    concurrencyPerEndpoint: throughput.concurrency,
    requestRate: rateLimited
      ? {
          count: throughput.requestsPerInterval as number,
          intervalMilliseconds: throughput.intervalMilliseconds as number,
        }
      : null,
    coolsDown: () => false,
    clock,
  });
}

/** A registry of single-endpoint pools by key, shared by every client of the same endpoint; the build uses {@link SHARED_ENDPOINT_POOLS}. */
export class EndpointPools {
  private readonly pools = new Map<string, { pool: EndpointPool; throughput: EndpointThroughput }>();

  /** @param clock the clock of the pools it creates (default {@link SYSTEM_CLOCK}) */
  constructor(private readonly clock: Clock = SYSTEM_CLOCK) {}

  /**
   * The pool of an endpoint, created on first use.
   * @param key identifies the endpoint (see `endpointKey` in llm/backend-settings.ts)
   * @param throughput its limits
   * @throws Error when the endpoint already has a pool with different limits (two settings blocks
   *   name the same endpoint with different `throughput`); RangeError from {@link singleEndpointPool}
   */
  get(key: string, throughput: EndpointThroughput): EndpointPool {
    const existing = this.pools.get(key);
    if (existing === undefined) {
      const pool = singleEndpointPool(key, throughput, this.clock);
      this.pools.set(key, { pool, throughput });
      return pool;
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
    return existing.pool;
  }

  /** Number of endpoints with a pool. */
  get size(): number {
    return this.pools.size;
  }
}

/** The process-wide registry: every LLM backend built from settings shares it unless given its own. */
export const SHARED_ENDPOINT_POOLS = new EndpointPools();
