import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  backoffDelayMilliseconds,
  DEFAULT_RETRY_POLICY,
  resolveRetryPolicy,
  retryWithBackoff,
  type RetryGiveUpEvent,
} from './retry.ts';

class TypedError extends Error {
  constructor(
    message: string,
    readonly isRetryable: boolean,
    readonly retryAfterMilliseconds?: number,
  ) {
    super(message);
  }
}

const noJitter = { jitter: 0, initialDelayMilliseconds: 100, backoffFactor: 2, maxDelayMilliseconds: 1_000 };

describe('retryWithBackoff', () => {
  it('retries retryable errors with exponential delays and returns the first success', async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await retryWithBackoff(
      async ({ attemptIndex, previousErrors }) => {
        calls += 1;
        expect(previousErrors).toHaveLength(attemptIndex);
        if (attemptIndex < 3) throw new TypedError(`failure ${attemptIndex}`, true);
        return 'done';
      },
      { ...noJitter, maxRetries: 5, sleep: async (milliseconds) => void waits.push(milliseconds) },
    );
    expect(result).toBe('done');
    expect(calls).toBe(4);
    expect(waits).toEqual([100, 200, 400]);
  });

  it('throws non-retryable errors at once and says why', async () => {
    const events: RetryGiveUpEvent[] = [];
    let calls = 0;
    await expect(
      retryWithBackoff(
        async () => {
          calls += 1;
          throw new TypedError('bad request', false);
        },
        { onGiveUp: (event) => events.push(event), sleep: async () => {} },
      ),
    ).rejects.toThrow('bad request');
    expect(calls).toBe(1);
    expect(events.map((event) => event.reason)).toEqual(['not-retryable']);
  });

  it('throws the last error when retries are used up', async () => {
    const events: RetryGiveUpEvent[] = [];
    let calls = 0;
    await expect(
      retryWithBackoff(
        async () => {
          calls += 1;
          throw new TypedError(`failure ${calls}`, true);
        },
        { maxRetries: 2, onGiveUp: (event) => events.push(event), sleep: async () => {} },
      ),
    ).rejects.toThrow('failure 3');
    expect(events[0]).toMatchObject({ reason: 'retries-exhausted', attempts: 3 });
  });

  it('waits what the server asked for, and gives up when that exceeds the longest wait', async () => {
    const waits: number[] = [];
    let calls = 0;
    await retryWithBackoff(
      async () => {
        calls += 1;
        if (calls === 1) throw new TypedError('slow down', true, 700);
        return calls;
      },
      { ...noJitter, sleep: async (milliseconds) => void waits.push(milliseconds) },
    );
    expect(waits).toEqual([700]);
    const events: RetryGiveUpEvent[] = [];
    await expect(
      retryWithBackoff(async () => Promise.reject(new TypedError('come back in a minute', true, 60_000)), {
        ...noJitter,
        onGiveUp: (event) => events.push(event),
        sleep: async () => {},
      }),
    ).rejects.toThrow('come back');
    expect(events[0]?.reason).toBe('server-delay-too-long');
  });

  it('accepts a custom retry rule', async () => {
    let calls = 0;
    const result = await retryWithBackoff(
      async () => {
        calls += 1;
        if (calls < 2) throw new Error('plain error');
        return 'ok';
      },
      { isRetryable: (error) => error instanceof Error && error.message === 'plain error', sleep: async () => {} },
    );
    expect(result).toBe('ok');
  });

  describe('on fake timers', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('stops when the signal aborts during a wait (the default sleep, cancelled at once)', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
      const controller = new AbortController();
      let calls = 0;
      const events: RetryGiveUpEvent[] = [];
      const pending = retryWithBackoff(
        async () => {
          calls += 1;
          throw new TypedError('again', true);
        },
        {
          ...noJitter,
          initialDelayMilliseconds: 10_000,
          maxDelayMilliseconds: 10_000,
          signal: controller.signal,
          onGiveUp: (event) => events.push(event),
        },
      );
      const settled = pending.catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(20);
      expect(calls).toBe(1);
      expect(vi.getTimerCount()).toBe(1); // the 10 s backoff wait
      controller.abort(new Error('stopped by caller'));
      expect(await settled).toMatchObject({ message: 'stopped by caller' });
      expect(vi.getTimerCount()).toBe(0); // the wait was cancelled, not left to run out
      expect(performance.now()).toBe(20);
      expect(calls).toBe(1);
      expect(events.map((event) => [event.reason, event.attempts])).toEqual([['aborted', 1]]);
    });
  });
});

describe('backoffDelayMilliseconds', () => {
  it('spreads backoff over ±jitter and never shortens a server delay', () => {
    const policy = resolveRetryPolicy({ initialDelayMilliseconds: 1_000, jitter: 0.5, maxDelayMilliseconds: 100_000 });
    expect(backoffDelayMilliseconds(0, policy, undefined, () => 0)).toBe(500);
    expect(backoffDelayMilliseconds(0, policy, undefined, () => 0.999999)).toBeCloseTo(1_500, 0);
    expect(backoffDelayMilliseconds(2, policy, undefined, () => 0.5)).toBe(4_000);
    expect(backoffDelayMilliseconds(0, policy, 2_000, () => 0)).toBe(2_000);
    expect(backoffDelayMilliseconds(0, policy, 2_000, () => 0.999999)).toBeCloseTo(3_000, 0);
  });

  it('caps at the longest wait', () => {
    expect(backoffDelayMilliseconds(20, { ...DEFAULT_RETRY_POLICY, jitter: 0 })).toBe(
      DEFAULT_RETRY_POLICY.maxDelayMilliseconds,
    );
  });

  it('rejects invalid policies', () => {
    expect(() => resolveRetryPolicy({ jitter: 2 })).toThrow(RangeError);
    expect(() => resolveRetryPolicy({ maxRetries: -1 })).toThrow(RangeError);
    expect(() => resolveRetryPolicy({ backoffFactor: 0.5 })).toThrow(RangeError);
  });
});
