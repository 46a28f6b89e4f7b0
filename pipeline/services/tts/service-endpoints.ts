/**
 * Throughput over several servers of one speech service: one p-queue per endpoint (a CosyVoice
 * FastAPI process handles one request at a time, so concurrency 1 by default), each request handed
 * to the least-busy endpoint at the moment one has a free slot, an optional cap on requests started
 * per time interval over the whole pool, a cool-down for endpoints that stopped answering, and
 * progress counters.
 *
 * Requests wait in one pool-wide line and are assigned only when an endpoint has room, so a slow
 * endpoint never holds requests that another could serve. Retries are not done here (see
 * remote-synthesizer.ts, which retries around {@link EndpointPool.run} and asks it to avoid the
 * endpoint that just failed).
 */
import PQueue from 'p-queue';

/** A cap on requests started per interval over the whole pool (sliding window). */
export interface RequestRateCap {
  /** Requests started per interval, at most. */
  count: number;
  /** Interval length, milliseconds. */
  intervalMilliseconds: number;
}

/** Settings of an {@link EndpointPool}. */
export interface EndpointPoolOptions {
  /** Requests one endpoint serves at once. Default 1 (one CosyVoice FastAPI process). */
  concurrencyPerEndpoint: number;
  /** Pool-wide start rate cap; null = none (default). */
  requestRate: RequestRateCap | null;
  /** First cool-down after an endpoint failed to answer (unreachable, timeout, 503), milliseconds. Default 1000. */
  cooldownInitialMilliseconds: number;
  /** Cool-down doubles per consecutive failure up to this, milliseconds. Default 30000. */
  cooldownMaximumMilliseconds: number;
  /** Which task errors cool the endpoint down. Default {@link isEndpointUnavailableError}. */
  coolsDown: (error: unknown) => boolean;
  /** Clock, milliseconds; injectable for tests. Default `performance.now`. */
  now: () => number;
}

/**
 * The default cool-down rule: the endpoint did not answer (failure `service-unreachable` or
 * `timeout`) or said it is unavailable (HTTP 503). A 500 or a cut stream is about one request and
 * does not cool the endpoint down.
 */
export function isEndpointUnavailableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { failure, statusCode } = error as { failure?: unknown; statusCode?: unknown };
  return failure === 'service-unreachable' || failure === 'timeout' || statusCode === 503;
}

/** Counters of one endpoint. */
export interface EndpointStatistics {
  url: string;
  /** Requests running on it now. */
  running: number;
  /** Requests assigned to it and waiting in its queue. */
  queued: number;
  /** Requests it finished successfully. */
  succeeded: number;
  /** Requests that failed on it. */
  failed: number;
  /** Consecutive failures that cooled it down (0 when healthy). */
  consecutiveUnavailable: number;
  /** Milliseconds left in its cool-down (0 when none). */
  coolingMilliseconds: number;
  /** Sum of its requests' running times, milliseconds. */
  busyMilliseconds: number;
}

/** Counters of the pool. */
export interface EndpointPoolStatistics {
  /** Requests given to {@link EndpointPool.run}. */
  submitted: number;
  /** Requests waiting for a rate-cap slot or an endpoint. */
  waiting: number;
  /** Requests running on some endpoint. */
  running: number;
  succeeded: number;
  failed: number;
  /** Largest number of requests that ran at once over the pool. */
  peakRunning: number;
  endpoints: EndpointStatistics[];
}

/** Options of one {@link EndpointPool.run} call. */
export interface EndpointRunOptions {
  /** Prefer any other endpoint (e.g. the one that just failed for this request); used when no other can take it. */
  avoid?: string;
  /** Cancels the request while it waits (a running task gets the signal too). */
  signal?: AbortSignal;
}

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

const DEFAULT_POOL_OPTIONS: EndpointPoolOptions = {
  concurrencyPerEndpoint: 1,
  requestRate: null,
  cooldownInitialMilliseconds: 1_000,
  cooldownMaximumMilliseconds: 30_000,
  coolsDown: isEndpointUnavailableError,
  now: () => performance.now(),
};

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
  private wakeTimer: NodeJS.Timeout | undefined;

  /**
   * @param urls base URLs of the endpoints (at least one; duplicates are an error).
   * @param options concurrency, rate cap and cool-down; missing fields from the defaults.
   * @throws RangeError when there is no URL, a URL repeats, the concurrency is not a positive integer,
   *   or the rate cap is not positive.
   */
  constructor(urls: readonly string[], options: Partial<EndpointPoolOptions> = {}) {
    this.options = { ...DEFAULT_POOL_OPTIONS, ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) };
    if (urls.length === 0) throw new RangeError('endpoint pool: no endpoint URL given');
    if (new Set(urls).size !== urls.length) throw new RangeError(`endpoint pool: repeated endpoint URL in ${urls.join(', ')}`);
    const concurrency = this.options.concurrencyPerEndpoint;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`endpoint pool: concurrencyPerEndpoint ${concurrency} is not a positive integer`);
    const rate = this.options.requestRate;
    if (rate && !(Number.isInteger(rate.count) && rate.count >= 1 && rate.intervalMilliseconds > 0)) {
      throw new RangeError(`endpoint pool: request rate cap ${JSON.stringify(rate)} needs a positive integer count and a positive interval`);
    }
    this.rateGate = rate ? new PQueue({ intervalCap: rate.count, interval: rate.intervalMilliseconds, strict: true }) : null;
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
            const started = this.options.now();
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

  /** A snapshot of the counters. */
  statistics(): EndpointPoolStatistics {
    const now = this.options.now();
    const endpoints = this.endpoints.map((endpoint) => ({
      url: endpoint.url,
      running: endpoint.queue.pending,
      queued: endpoint.queue.size,
      coolingMilliseconds: Math.max(0, endpoint.coolingUntil - now),
      ...endpoint.statistics,
    }));
    return {
      submitted: this.submitted,
      waiting: this.waiting.length + this.waitingForRate + endpoints.reduce((sum, endpoint) => sum + endpoint.queued, 0),
      running: this.runningCount(),
      succeeded: endpoints.reduce((sum, endpoint) => sum + endpoint.succeeded, 0),
      failed: endpoints.reduce((sum, endpoint) => sum + endpoint.failed, 0),
      peakRunning: this.peakRunning,
      endpoints,
    };
  }

  /** Resolves when nothing waits or runs. */
  async onIdle(): Promise<void> {
    while (this.waiting.length > 0 || this.waitingForRate > 0 || this.endpoints.some((endpoint) => endpoint.queue.pending + endpoint.queue.size > 0)) {
      await Promise.all(this.endpoints.map((endpoint) => endpoint.queue.onIdle()));
      if (this.waiting.length > 0 || this.waitingForRate > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  private runningCount(): number {
    return this.endpoints.reduce((sum, endpoint) => sum + endpoint.queue.pending, 0);
  }

  private settle(endpoint: Endpoint, started: number, error: unknown): void {
    const now = this.options.now();
    endpoint.statistics.busyMilliseconds += now - started;
    if (error === null) {
      endpoint.statistics.succeeded += 1;
      endpoint.statistics.consecutiveUnavailable = 0;
      endpoint.coolingUntil = 0;
    } else {
      endpoint.statistics.failed += 1;
      if (this.options.coolsDown(error)) {
        endpoint.statistics.consecutiveUnavailable += 1;
        const cooldown = Math.min(this.options.cooldownInitialMilliseconds * 2 ** (endpoint.statistics.consecutiveUnavailable - 1), this.options.cooldownMaximumMilliseconds);
        endpoint.coolingUntil = now + cooldown;
      }
    }
    this.dispatch();
  }

  /** Assigns waiting requests, in order, to endpoints with a free slot. */
  private dispatch(): void {
    const now = this.options.now();
    const concurrency = this.options.concurrencyPerEndpoint;
    const load = (endpoint: Endpoint): number => endpoint.queue.pending + endpoint.queue.size;
    for (let index = 0; index < this.waiting.length; ) {
      const request = this.waiting[index] as WaitingRequest;
      const free = this.endpoints.filter((endpoint) => load(endpoint) < concurrency);
      if (free.length === 0) break;
      const healthy = free.filter((endpoint) => endpoint.coolingUntil <= now);
      const otherHealthyExists = this.endpoints.some((endpoint) => endpoint.url !== request.avoid && endpoint.coolingUntil <= now);
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
        load(endpoint) < load(best) || (load(endpoint) === load(best) && endpoint.lastAssigned < best.lastAssigned) ? endpoint : best,
      );
      this.waiting.splice(index, 1);
      chosen.lastAssigned = this.assignments++;
      request.run(chosen);
    }
    const earliestCooling = Math.min(...this.endpoints.filter((endpoint) => endpoint.coolingUntil > now).map((endpoint) => endpoint.coolingUntil));
    if (this.waiting.length > 0 && Number.isFinite(earliestCooling)) this.wakeAt(earliestCooling);
  }

  private wakeAt(time: number): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.dispatch();
    }, Math.max(1, time - this.options.now()));
  }
}
