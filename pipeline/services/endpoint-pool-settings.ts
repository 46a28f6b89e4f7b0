/**
 * The settings and counters of an endpoint pool (./endpoint-pool.ts): the pool-wide request rate cap,
 * concurrency and cool-down settings with the default rule of which failures cool an endpoint down,
 * the options of one request, and the counters per endpoint and over the pool.
 */
import { SYSTEM_CLOCK, type Clock } from './clock.ts';

/** A cap on requests started per interval over the whole pool (sliding window). */
export interface RequestRateCap {
  /** Requests started per interval, at most. */
  count: number;
  /** Interval length, milliseconds. */
  intervalMilliseconds: number;
}

/** Settings of an `EndpointPool`. */
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
  /** Clock and sleep; injectable for tests. Default {@link SYSTEM_CLOCK}. */
  clock: Clock;
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
  /** Requests given to `EndpointPool.run`. */
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

/** Options of one `EndpointPool.run` call. */
export interface EndpointRunOptions {
  /** Prefer any other endpoint (e.g. the one that just failed for this request); used when no other can take it. */
  avoid?: string;
  /** Cancels the request while it waits (a running task gets the signal too). */
  signal?: AbortSignal;
}

/** The settings of a pool where its options leave them out. */
export const DEFAULT_POOL_OPTIONS: EndpointPoolOptions = {
  concurrencyPerEndpoint: 1,
  requestRate: null,
  cooldownInitialMilliseconds: 1_000,
  cooldownMaximumMilliseconds: 30_000,
  coolsDown: isEndpointUnavailableError,
  clock: SYSTEM_CLOCK,
};
