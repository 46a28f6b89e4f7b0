/** The endpoint pool on vitest's fake timers: every time below is the fake clock's, exact. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EndpointPool, EndpointPools, singleEndpointPool } from './endpoint-pool.ts';

const wait = (milliseconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, milliseconds));

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs the fake timers until `work` settles. */
async function settle<T>(work: Promise<T>): Promise<T> {
  const outcome = work.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await vi.runAllTimersAsync();
  const result = await outcome;
  if ('error' in result) throw result.error;
  return result.value;
}

/** A task that records where and when (fake milliseconds) it ran. */
function recorder() {
  const running = new Map<string, number>();
  const peaks = new Map<string, number>();
  const calls: { endpoint: string; start: number }[] = [];
  const task =
    (milliseconds: number, failWith?: unknown) =>
    async (endpoint: string): Promise<string> => {
      calls.push({ endpoint, start: performance.now() });
      running.set(endpoint, (running.get(endpoint) ?? 0) + 1);
      peaks.set(endpoint, Math.max(peaks.get(endpoint) ?? 0, running.get(endpoint) as number));
      await wait(milliseconds);
      running.set(endpoint, (running.get(endpoint) as number) - 1);
      if (failWith) throw failWith;
      return endpoint;
    };
  return { task, calls, peaks };
}

describe('EndpointPool', () => {
  it('keeps each endpoint at its concurrency and spreads work evenly', async () => {
    const pool = new EndpointPool(['a', 'b', 'c'], { concurrencyPerEndpoint: 2 });
    const { task, calls, peaks } = recorder();
    await settle(Promise.all(Array.from({ length: 18 }, () => pool.run(task(20)))));
    expect([...peaks.values()]).toEqual([2, 2, 2]);
    for (const endpoint of ['a', 'b', 'c']) expect(calls.filter((call) => call.endpoint === endpoint)).toHaveLength(6);
    expect(pool.statistics()).toMatchObject({
      submitted: 18,
      succeeded: 18,
      failed: 0,
      running: 0,
      waiting: 0,
      peakRunning: 6,
    });
    expect(pool.statistics().endpoints.map((endpoint) => endpoint.busyMilliseconds)).toEqual([120, 120, 120]);
    expect(pool.capacity).toBe(6);
  });

  it('gives work to a free endpoint rather than queueing it behind a slow one', async () => {
    const pool = new EndpointPool(['slow', 'fast']);
    const task = async (endpoint: string): Promise<string> => {
      await wait(endpoint === 'slow' ? 300 : 10);
      return endpoint;
    };
    const results = await settle(Promise.all(Array.from({ length: 8 }, () => pool.run(task))));
    expect(results.filter((endpoint) => endpoint === 'slow')).toHaveLength(1);
  });

  it('avoids the endpoint a retry asks to avoid', async () => {
    const pool = new EndpointPool(['a', 'b']);
    const { task } = recorder();
    expect(await settle(pool.run(task(1), { avoid: 'a' }))).toBe('b');
    expect(await settle(pool.run(task(1), { avoid: 'b' }))).toBe('a');
    const single = new EndpointPool(['only']);
    expect(await settle(single.run(task(1), { avoid: 'only' }))).toBe('only');
  });

  it('cools down an endpoint that does not answer and uses it again afterwards', async () => {
    const pool = new EndpointPool(['down', 'up'], { cooldownInitialMilliseconds: 150 });
    const unreachable = Object.assign(new Error('refused'), { failure: 'service-unreachable' });
    await expect(
      settle(
        pool.run(async (endpoint) => (endpoint === 'down' ? Promise.reject(unreachable) : endpoint), { avoid: 'up' }),
      ),
    ).rejects.toThrow('refused');
    expect(pool.statistics().endpoints[0]).toMatchObject({
      url: 'down',
      failed: 1,
      consecutiveUnavailable: 1,
      coolingMilliseconds: 150,
    });
    const during = await settle(
      Promise.all([pool.run(async (endpoint) => endpoint), pool.run(async (endpoint) => endpoint)]),
    );
    expect(during).toEqual(['up', 'up']);
    await vi.advanceTimersByTimeAsync(150);
    const after = await settle(
      Promise.all(
        [0, 1].map(() =>
          pool.run(async (endpoint) => {
            await wait(10);
            return endpoint;
          }),
        ),
      ),
    );
    expect(after.sort()).toEqual(['down', 'up']);
  });

  it('doubles the cool-down per consecutive failure and waits for the first one to end when every endpoint is cooling', async () => {
    const pool = new EndpointPool(['one'], { cooldownInitialMilliseconds: 100, cooldownMaximumMilliseconds: 300 });
    const timeout = () => Promise.reject(Object.assign(new Error('timed out'), { failure: 'timeout' }));
    const starts: number[] = [];
    for (let failure = 0; failure < 3; failure++) {
      await expect(
        settle(
          pool.run(() => {
            starts.push(performance.now());
            return timeout();
          }),
        ),
      ).rejects.toThrow();
    }
    expect(starts).toEqual([0, 100, 300]);
    expect(
      await settle(
        pool.run(async (endpoint) => {
          starts.push(performance.now());
          return endpoint;
        }),
      ),
    ).toBe('one');
    expect(starts[3]).toBe(600); // 300 + the cool-down capped at 300
  });

  it('does not cool down after an error about one request (HTTP 500)', async () => {
    const pool = new EndpointPool(['one'], { cooldownInitialMilliseconds: 10_000 });
    await expect(
      settle(
        pool.run(async () =>
          Promise.reject(Object.assign(new Error('500'), { failure: 'service-error', statusCode: 500 })),
        ),
      ),
    ).rejects.toThrow();
    let startedAt: number | undefined;
    await settle(
      pool.run(async () => {
        startedAt = performance.now();
        return 'ok';
      }),
    );
    expect(startedAt).toBe(0);
    expect(pool.statistics().endpoints[0]).toMatchObject({
      failed: 1,
      consecutiveUnavailable: 0,
      coolingMilliseconds: 0,
    });
  });

  it('caps the request rate over the pool', async () => {
    const pool = new EndpointPool(['a', 'b', 'c', 'd'], { requestRate: { count: 2, intervalMilliseconds: 100 } });
    const { task, calls } = recorder();
    await settle(Promise.all(Array.from({ length: 6 }, () => pool.run(task(1)))));
    expect(calls.map((call) => call.start).sort((a, b) => a - b)).toEqual([0, 0, 100, 100, 200, 200]);
  });

  it('holds every new request for a server-given delay; requests in flight go on', async () => {
    const pool = new EndpointPool(['a', 'b']);
    const { task, calls } = recorder();
    const inFlight = pool.run(task(50));
    pool.holdFor(120);
    pool.holdFor(60); // a shorter hold does not shorten it
    await settle(Promise.all([inFlight, pool.run(task(1)), pool.run(task(1))]));
    expect(calls.map((call) => call.start)).toEqual([0, 120, 120]);
  });

  it('cancels a waiting request with its signal', async () => {
    const pool = new EndpointPool(['a']);
    const busy = pool.run(() => wait(100).then(() => 'done'));
    const controller = new AbortController();
    const waiting = pool.run(async () => 'never', { signal: controller.signal });
    controller.abort(new Error('not needed any more'));
    await expect(waiting).rejects.toThrow('not needed any more');
    expect(await settle(busy)).toBe('done');
    await settle(pool.onIdle());
    expect(pool.statistics()).toMatchObject({ submitted: 2, succeeded: 1, waiting: 0 });
  });

  it('rejects invalid settings', () => {
    expect(() => new EndpointPool([])).toThrow(RangeError);
    expect(() => new EndpointPool(['a', 'a'])).toThrow(RangeError);
    expect(() => new EndpointPool(['a'], { concurrencyPerEndpoint: 0 })).toThrow(RangeError);
    expect(() => new EndpointPool(['a'], { requestRate: { count: 0, intervalMilliseconds: 10 } })).toThrow(RangeError);
  });
});

describe('singleEndpointPool (an LLM endpoint)', () => {
  it('limits requests in flight', async () => {
    const pool = singleEndpointPool('test', { concurrency: 2 });
    const { task, peaks } = recorder();
    await settle(Promise.all(Array.from({ length: 6 }, () => pool.run(task(20)))));
    expect(peaks.get('test')).toBe(2);
  });

  it('limits the request rate with a sliding window', async () => {
    const pool = singleEndpointPool('test', { concurrency: 10, requestsPerInterval: 2, intervalMilliseconds: 150 });
    const { task, calls } = recorder();
    await settle(Promise.all(Array.from({ length: 5 }, () => pool.run(task(0)))));
    expect(calls.map((call) => call.start)).toEqual([0, 0, 150, 150, 300]);
  });

  it('never cools down, and refuses impossible limits', async () => {
    const pool = singleEndpointPool('test', { concurrency: 1 });
    await expect(
      settle(pool.run(() => Promise.reject(Object.assign(new Error('down'), { failure: 'service-unreachable' })))),
    ).rejects.toThrow('down');
    expect(pool.statistics().endpoints[0]).toMatchObject({ consecutiveUnavailable: 0, coolingMilliseconds: 0 });
    expect(() => singleEndpointPool('x', { concurrency: 0 })).toThrow(RangeError);
    expect(() => singleEndpointPool('x', { concurrency: 1, requestsPerInterval: 5 })).toThrow(/intervalMilliseconds/);
  });
});

describe('EndpointPools', () => {
  it('shares one pool per endpoint and refuses conflicting limits', () => {
    const pools = new EndpointPools();
    const first = pools.get('gemini http://a/models/m', { concurrency: 4 });
    expect(pools.get('gemini http://a/models/m', { concurrency: 4 })).toBe(first);
    expect(pools.get('gemini http://a/models/other', { concurrency: 4 })).not.toBe(first);
    expect(() => pools.get('gemini http://a/models/m', { concurrency: 8 })).toThrow(
      /configured twice with different throughput/,
    );
    expect(pools.size).toBe(2);
  });
});
