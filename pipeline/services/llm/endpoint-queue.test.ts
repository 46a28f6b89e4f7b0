import { describe, expect, it } from 'vitest';
import { EndpointQueue, EndpointQueues, QueuedModel } from './endpoint-queue.ts';
import { LanguageModelCallError } from './errors.ts';
import { FakeLanguageModel } from './fake-language-model.ts';

const wait = (milliseconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, milliseconds));

describe('EndpointQueue', () => {
  it('limits requests in flight', async () => {
    const queue = new EndpointQueue('test', { concurrency: 2 });
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 6 }, () =>
        queue.run(async () => {
          running += 1;
          peak = Math.max(peak, running);
          await wait(20);
          running -= 1;
        }),
      ),
    );
    expect(peak).toBe(2);
  });

  it('limits the request rate with a sliding window', async () => {
    const queue = new EndpointQueue('test', { concurrency: 10, requestsPerInterval: 2, intervalMilliseconds: 150 });
    const started: number[] = [];
    const origin = performance.now();
    await Promise.all(Array.from({ length: 5 }, () => queue.run(async () => { started.push(performance.now() - origin); })));
    expect(started.filter((time) => time < 100)).toHaveLength(2);
    expect(started[4]).toBeGreaterThanOrEqual(290);
  });

  it('holds new requests for a server-given delay', async () => {
    const queue = new EndpointQueue('test', { concurrency: 4 });
    queue.holdFor(120);
    const origin = performance.now();
    await queue.run(async () => undefined);
    expect(performance.now() - origin).toBeGreaterThanOrEqual(110);
  });

  it('refuses impossible limits', () => {
    expect(() => new EndpointQueue('x', { concurrency: 0 })).toThrow(RangeError);
    expect(() => new EndpointQueue('x', { concurrency: 1, requestsPerInterval: 5 })).toThrow(/intervalMilliseconds/);
  });
});

describe('EndpointQueues', () => {
  it('shares one queue per endpoint and refuses conflicting limits', () => {
    const queues = new EndpointQueues();
    const first = queues.get('gemini http://a/models/m', { concurrency: 4 });
    expect(queues.get('gemini http://a/models/m', { concurrency: 4 })).toBe(first);
    expect(queues.get('gemini http://a/models/other', { concurrency: 4 })).not.toBe(first);
    expect(() => queues.get('gemini http://a/models/m', { concurrency: 8 })).toThrow(/configured twice with different throughput/);
    expect(queues.size).toBe(2);
  });
});

describe('QueuedModel', () => {
  it('holds the whole queue after a 429 with a retry delay, but not for a delay beyond the limit', async () => {
    const queue = new EndpointQueue('test', { concurrency: 4 });
    const limited = new QueuedModel(
      new FakeLanguageModel({ respond: () => { throw new LanguageModelCallError('quota', { statusCode: 429, retryAfterMilliseconds: 150 }); } }),
      queue,
      1000,
    );
    const request = { model: 'm', prompt: 'p', temperature: 0, seed: 1 };
    await expect(limited.generate(request)).rejects.toThrow('quota');
    const origin = performance.now();
    await new QueuedModel(new FakeLanguageModel({ results: ['ok'] }), queue).generate(request);
    expect(performance.now() - origin).toBeGreaterThanOrEqual(140);

    const other = new EndpointQueue('other', { concurrency: 1 });
    const long = new QueuedModel(
      new FakeLanguageModel({ respond: () => { throw new LanguageModelCallError('quota', { statusCode: 429, retryAfterMilliseconds: 60_000 }); } }),
      other,
      1000,
    );
    await expect(long.generate(request)).rejects.toThrow('quota');
    const quick = performance.now();
    await new QueuedModel(new FakeLanguageModel({ results: ['ok'] }), other).generate(request);
    // far less than the 60 s retry delay of the other model's 429: it did not pause this queue's callers for it
    expect(performance.now() - quick).toBeLessThan(10_000);
  });
});
