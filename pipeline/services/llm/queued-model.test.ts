import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { singleEndpointPool } from '../endpoint-pool.ts';
import { LanguageModelCallError } from './errors.ts';
import { FakeLanguageModel } from './fake-language-model.ts';
import { QueuedModel } from './queued-model.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const request = { model: 'm', prompt: 'p', temperature: 0, seed: 1 };
const rateLimited = (retryAfterMilliseconds: number) =>
  new FakeLanguageModel({
    respond: () => {
      throw new LanguageModelCallError('quota', { statusCode: 429, retryAfterMilliseconds });
    },
  });

/** When (fake milliseconds) the next call on `pool` starts. */
async function nextStart(pool: ReturnType<typeof singleEndpointPool>): Promise<number> {
  let startedAt = Number.NaN;
  const model = new FakeLanguageModel({
    respond: () => {
      startedAt = performance.now();
      return 'ok';
    },
  });
  const done = new QueuedModel(model, pool).generate(request);
  await vi.runAllTimersAsync();
  await done;
  return startedAt;
}

describe('QueuedModel', () => {
  it('holds the whole pool after a 429 with a retry delay', async () => {
    const pool = singleEndpointPool('test', { concurrency: 4 });
    await expect(new QueuedModel(rateLimited(150), pool, 1000).generate(request)).rejects.toThrow('quota');
    expect(await nextStart(pool)).toBe(150);
  });

  it('does not hold the pool for a delay beyond its limit (the retry gives up on it)', async () => {
    const pool = singleEndpointPool('other', { concurrency: 1 });
    await expect(new QueuedModel(rateLimited(60_000), pool, 1000).generate(request)).rejects.toThrow('quota');
    expect(await nextStart(pool)).toBe(0);
  });
});
