import { describe, expect, it } from 'vitest';
import { EndpointPool } from './service-endpoints.ts';

const wait = (milliseconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** A task that records where and when it ran. */
function recorder() {
  const running = new Map<string, number>();
  const peaks = new Map<string, number>();
  const calls: { endpoint: string; start: number }[] = [];
  const task = (milliseconds: number, failWith?: unknown) => async (endpoint: string): Promise<string> => {
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
    await Promise.all(Array.from({ length: 18 }, () => pool.run(task(20))));
    expect([...peaks.values()]).toEqual([2, 2, 2]);
    for (const endpoint of ['a', 'b', 'c']) expect(calls.filter((call) => call.endpoint === endpoint).length).toBeGreaterThanOrEqual(4);
    const statistics = pool.statistics();
    expect(statistics).toMatchObject({ submitted: 18, succeeded: 18, failed: 0, running: 0, waiting: 0, peakRunning: 6 });
    expect(pool.capacity).toBe(6);
  });

  it('gives work to a free endpoint rather than queueing it behind a slow one', async () => {
    const pool = new EndpointPool(['slow', 'fast']);
    const slowTask = async (endpoint: string): Promise<string> => {
      await wait(endpoint === 'slow' ? 300 : 10);
      return endpoint;
    };
    const results = await Promise.all(Array.from({ length: 8 }, () => pool.run(slowTask)));
    expect(results.filter((endpoint) => endpoint === 'slow')).toHaveLength(1);
  });

  it('avoids the endpoint a retry asks to avoid', async () => {
    const pool = new EndpointPool(['a', 'b']);
    const { task } = recorder();
    expect(await pool.run(task(1), { avoid: 'a' })).toBe('b');
    expect(await pool.run(task(1), { avoid: 'b' })).toBe('a');
    const single = new EndpointPool(['only']);
    expect(await single.run(task(1), { avoid: 'only' })).toBe('only');
  });

  it('cools down an endpoint that does not answer and uses it again afterwards', async () => {
    const pool = new EndpointPool(['down', 'up'], { cooldownInitialMilliseconds: 150 });
    const unreachable = Object.assign(new Error('refused'), { failure: 'service-unreachable' });
    await expect(pool.run(async (endpoint) => (endpoint === 'down' ? Promise.reject(unreachable) : endpoint), { avoid: 'up' })).rejects.toThrow('refused');
    expect(pool.statistics().endpoints[0]).toMatchObject({ url: 'down', failed: 1, consecutiveUnavailable: 1 });
    const during = await Promise.all([pool.run(async (endpoint) => endpoint), pool.run(async (endpoint) => endpoint)]);
    expect(during).toEqual(['up', 'up']);
    await wait(170);
    const after = await Promise.all([0, 1].map(() => pool.run(async (endpoint) => { await wait(10); return endpoint; })));
    expect(after.sort()).toEqual(['down', 'up']);
  });

  it('waits for the first cool-down to end when every endpoint is cooling', async () => {
    const pool = new EndpointPool(['one'], { cooldownInitialMilliseconds: 100 });
    await expect(pool.run(async () => Promise.reject(Object.assign(new Error('timed out'), { failure: 'timeout' })))).rejects.toThrow();
    const started = performance.now();
    expect(await pool.run(async (endpoint) => endpoint)).toBe('one');
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
  });

  it('does not cool down after an error about one request (HTTP 500)', async () => {
    const pool = new EndpointPool(['one'], { cooldownInitialMilliseconds: 10_000 });
    await expect(pool.run(async () => Promise.reject(Object.assign(new Error('500'), { failure: 'service-error', statusCode: 500 })))).rejects.toThrow();
    const started = performance.now();
    await pool.run(async () => 'ok');
    // far less than the 10 s cooldown an endpoint error would have caused
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('caps the request rate over the pool', async () => {
    const pool = new EndpointPool(['a', 'b', 'c', 'd'], { requestRate: { count: 2, intervalMilliseconds: 100 } });
    const { task, calls } = recorder();
    const started = performance.now();
    await Promise.all(Array.from({ length: 6 }, () => pool.run(task(1))));
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    const starts = calls.map((call) => call.start).sort((a, b) => a - b);
    for (let index = 2; index < starts.length; index++) expect((starts[index] as number) - (starts[index - 2] as number)).toBeGreaterThanOrEqual(95);
  });

  it('cancels a waiting request with its signal', async () => {
    const pool = new EndpointPool(['a']);
    const busy = pool.run(() => wait(100).then(() => 'done'));
    const controller = new AbortController();
    const waiting = pool.run(async () => 'never', { signal: controller.signal });
    controller.abort(new Error('not needed any more'));
    await expect(waiting).rejects.toThrow('not needed any more');
    expect(await busy).toBe('done');
    await pool.onIdle();
    expect(pool.statistics()).toMatchObject({ submitted: 2, succeeded: 1, waiting: 0 });
  });

  it('rejects invalid settings', () => {
    expect(() => new EndpointPool([])).toThrow(RangeError);
    expect(() => new EndpointPool(['a', 'a'])).toThrow(RangeError);
    expect(() => new EndpointPool(['a'], { concurrencyPerEndpoint: 0 })).toThrow(RangeError);
    expect(() => new EndpointPool(['a'], { requestRate: { count: 0, intervalMilliseconds: 10 } })).toThrow(RangeError);
  });
});
