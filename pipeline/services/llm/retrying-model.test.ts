import { describe, expect, it } from 'vitest';
import { LanguageModelCallError, NoRecordedResponseError, isRetryableStatusCode } from './errors.ts';
import { FakeLanguageModel } from './fake-language-model.ts';
import type { GenerationRequest } from './language-model.ts';
import { RetryingModel } from './retrying-model.ts';

const request: GenerationRequest = { model: 'm', prompt: 'p', temperature: 0, seed: 1 };

describe('isRetryableStatusCode', () => {
  it('retries 408, 409, 429, 5xx and network failures only', () => {
    expect([408, 409, 429, 500, 503, undefined].map(isRetryableStatusCode)).toEqual([true, true, true, true, true, true]);
    expect([400, 401, 403, 404].map(isRetryableStatusCode)).toEqual([false, false, false, false]);
  });
});

describe('RetryingModel', () => {
  it('retries retryable errors with backoff, honouring the server delay', async () => {
    const delays: number[] = [];
    const inner = new FakeLanguageModel({
      respond: (_request, callIndex) => {
        if (callIndex === 0) throw new LanguageModelCallError('rate limited', { statusCode: 429, retryAfterMilliseconds: 58_000 });
        if (callIndex === 1) throw new LanguageModelCallError('overloaded', { statusCode: 503 });
        return 'ok';
      },
    });
    const model = new RetryingModel(inner, { initialDelayMilliseconds: 100, backoffFactor: 3 }, async (milliseconds) => {
      delays.push(milliseconds);
    });
    expect((await model.generate(request)).text).toBe('ok');
    expect(delays).toEqual([58_000, 300]);
    expect(inner.calls).toHaveLength(3);
  });

  it('throws non-retryable errors at once and gives up after maxRetries', async () => {
    const noSleep = async (): Promise<void> => {};
    const missing = new FakeLanguageModel({ respond: () => { throw new NoRecordedResponseError('miss', { key: 'k', file: 'f' }); } });
    await expect(new RetryingModel(missing, {}, noSleep).generate(request)).rejects.toThrow('miss');
    expect(missing.calls).toHaveLength(1);

    const bad = new FakeLanguageModel({ respond: () => { throw new LanguageModelCallError('bad request', { statusCode: 400 }); } });
    await expect(new RetryingModel(bad, {}, noSleep).generate(request)).rejects.toMatchObject({ statusCode: 400, isRetryable: false });
    expect(bad.calls).toHaveLength(1);

    const down = new FakeLanguageModel({ respond: () => { throw new LanguageModelCallError('down', { statusCode: 500 }); } });
    await expect(new RetryingModel(down, { maxRetries: 2 }, noSleep).generate(request)).rejects.toThrow('down');
    expect(down.calls).toHaveLength(3);
  });
});
