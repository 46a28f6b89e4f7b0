import { describe, expect, it } from 'vitest';
import { LanguageModelCallError, NoRecordedResponseError, isRetryableStatusCode } from './errors.ts';
import { FakeLanguageModel } from './fake-language-model.ts';
import type { GenerationRequest } from './language-model.ts';
import { backoffDelayMilliseconds } from '../retry.ts';
import { LANGUAGE_MODEL_RETRY_POLICY, RetryingModel, withRetries } from './retrying-model.ts';

const request: GenerationRequest = { model: 'm', prompt: 'p', temperature: 0, seed: 1 };

describe('isRetryableStatusCode', () => {
  it('retries 408, 409, 429, 5xx and network failures only', () => {
    expect([408, 409, 429, 500, 503, undefined].map(isRetryableStatusCode)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([400, 401, 403, 404].map(isRetryableStatusCode)).toEqual([false, false, false, false]);
  });
});

describe('RetryingModel', () => {
  it('retries retryable errors with backoff, honouring the server delay', async () => {
    const delays: number[] = [];
    const inner = new FakeLanguageModel({
      respond: (_request, callIndex) => {
        if (callIndex === 0)
          throw new LanguageModelCallError('rate limited', { statusCode: 429, retryAfterMilliseconds: 58_000 });
        if (callIndex === 1) throw new LanguageModelCallError('overloaded', { statusCode: 503 });
        return 'ok';
      },
    });
    const model = new RetryingModel(
      inner,
      { initialDelayMilliseconds: 100, backoffFactor: 3, jitter: 0 },
      async (milliseconds) => {
        delays.push(milliseconds);
      },
    );
    expect((await model.generate(request)).text).toBe('ok');
    expect(delays).toEqual([58_000, 300]);
    expect(inner.calls).toHaveLength(3);
  });

  it('throws non-retryable errors at once and gives up after maxRetries', async () => {
    const noSleep = async (): Promise<void> => {};
    const missing = new FakeLanguageModel({
      respond: () => {
        throw new NoRecordedResponseError('miss', { key: 'k', file: 'f' });
      },
    });
    await expect(new RetryingModel(missing, {}, noSleep).generate(request)).rejects.toThrow('miss');
    expect(missing.calls).toHaveLength(1);

    const bad = new FakeLanguageModel({
      respond: () => {
        throw new LanguageModelCallError('bad request', { statusCode: 400 });
      },
    });
    await expect(new RetryingModel(bad, {}, noSleep).generate(request)).rejects.toMatchObject({
      statusCode: 400,
      isRetryable: false,
    });
    expect(bad.calls).toHaveLength(1);

    const down = new FakeLanguageModel({
      respond: () => {
        throw new LanguageModelCallError('down', { statusCode: 500 });
      },
    });
    await expect(new RetryingModel(down, { maxRetries: 2 }, noSleep).generate(request)).rejects.toThrow('down');
    expect(down.calls).toHaveLength(3);
  });
});

describe('withRetries / jitter', () => {
  const noSleep = async (): Promise<void> => {};

  it('waits as the shared helper computes: backoff spread by ±jitter, a server delay only lengthened', async () => {
    const delays: number[] = [];
    let call = 0;
    await withRetries(
      async () => {
        call += 1;
        if (call === 1) throw new LanguageModelCallError('down', { statusCode: 503 });
        if (call === 2) throw new LanguageModelCallError('quota', { statusCode: 429, retryAfterMilliseconds: 4000 });
        return 'ok';
      },
      { maxRetries: 3, initialDelayMilliseconds: 1000, maxDelayMilliseconds: 10_000, backoffFactor: 2, jitter: 0.5 },
      { sleep: async (milliseconds) => void delays.push(milliseconds), random: () => 0.5 },
    );
    expect(delays).toEqual([
      backoffDelayMilliseconds(
        0,
        { ...LANGUAGE_MODEL_RETRY_POLICY, initialDelayMilliseconds: 1000, maxDelayMilliseconds: 10_000, jitter: 0.5 },
        undefined,
        () => 0.5,
      ),
      5000,
    ]);
    expect(delays[0]).toBe(1000);
  });

  it('gives up at once when the server asks for longer than the longest wait, saying so', async () => {
    const calls: number[] = [];
    const operation = async (attempt: number): Promise<string> => {
      calls.push(attempt);
      throw new LanguageModelCallError('quota exhausted', { statusCode: 429, retryAfterMilliseconds: 3_600_000 });
    };
    await expect(withRetries(operation, { maxDelayMilliseconds: 60_000 }, { sleep: noSleep })).rejects.toThrow(
      'quota exhausted (the server asked to wait 3600.0 s, longer than the longest retry wait of 60.0 s; not retried)',
    );
    expect(calls).toEqual([0]);
  });

  it('reports each retry and passes the attempt number', async () => {
    const events: Array<{ retryIndex: number; delayMilliseconds: number; statusCode: number | undefined }> = [];
    const result = await withRetries(
      async (attempt) => {
        if (attempt < 2) throw new LanguageModelCallError('timeout', { failure: 'timeout' });
        return `done after ${attempt + 1}`;
      },
      { initialDelayMilliseconds: 10, jitter: 0 },
      {
        sleep: noSleep,
        onRetry: (event) =>
          events.push({
            retryIndex: event.retryIndex,
            delayMilliseconds: event.delayMilliseconds,
            statusCode: (event.error as LanguageModelCallError).statusCode,
          }),
      },
    );
    expect(result).toBe('done after 3');
    expect(events).toEqual([
      { retryIndex: 0, delayMilliseconds: 10, statusCode: undefined },
      { retryIndex: 1, delayMilliseconds: 20, statusCode: undefined },
    ]);
  });

  it('does not retry errors that are not LanguageModelErrors', async () => {
    let calls = 0;
    await expect(
      withRetries(
        async () => {
          calls += 1;
          throw new TypeError('bug');
        },
        {},
        { sleep: noSleep },
      ),
    ).rejects.toThrow('bug');
    expect(calls).toBe(1);
  });
});
