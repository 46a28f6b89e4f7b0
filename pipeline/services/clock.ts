/**
 * Time as the service machinery sees it: a clock to read and a sleep to wait. Endpoint pools, queues,
 * retries and the loopback servers take a {@link Clock} (default {@link SYSTEM_CLOCK}), so tests can
 * run them on vitest's fake timers (or a clock of their own) instead of sleeping against cool-downs
 * and timeouts.
 */

/** A clock and a sleep. */
export interface Clock {
  /** Milliseconds since an arbitrary origin, monotonic (`performance.now()` for the system clock). */
  now(): number;
  /**
   * Resolves after `milliseconds`; rejects with the signal's reason as soon as `signal` aborts.
   * @throws the signal's reason when aborted (before or during the wait)
   */
  sleep(milliseconds: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Waits `milliseconds`; rejects with the signal's reason as soon as `signal` aborts.
 *
 * @throws the signal's reason when aborted (before or during the wait).
 */
export function abortableSleep(milliseconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The real clock: `performance.now()` and a `setTimeout` sleep, both looked up at each call, so
 * vitest's fake timers (`vi.useFakeTimers({ toFake: [..., 'performance'] })`) drive them.
 */
export const SYSTEM_CLOCK: Clock = {
  now: () => performance.now(),
  sleep: abortableSleep,
};
