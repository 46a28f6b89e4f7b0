import { afterEach, describe, expect, it, vi } from 'vitest';
import { kanjiNumeral, readDialogueRequest } from './dialogue-replies.ts';
import {
  GEMINI_LOOPBACK_API_KEY,
  startGeminiLoopbackServer,
  type GeminiLoopbackServer,
} from './gemini-loopback-server.ts';
import { startOpenAILoopbackServer, type OpenAILoopbackServer } from './openai-loopback-server.ts';

let gemini: GeminiLoopbackServer | undefined;
let openAI: OpenAILoopbackServer | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await gemini?.close();
  await openAI?.close();
  gemini = undefined;
  openAI = undefined;
});

const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] });

function post(
  url: string,
  headers: Record<string, string> = { 'x-goog-api-key': GEMINI_LOOPBACK_API_KEY },
  payload = body,
): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: payload });
}

describe('Gemini loopback server', () => {
  it('answers the real shapes: candidates, finishReason, usageMetadata; errors with code, message, status', async () => {
    gemini = await startGeminiLoopbackServer({ responder: () => 'hi there' });
    const ok = await post(`${gemini.url}/v1beta/models/gemma-4-31b-it:generateContent`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({
      candidates: [{ content: { parts: [{ text: 'hi there' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: 2,
        candidatesTokenCount: 2,
        totalTokenCount: 4,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: 2 }],
      },
      modelVersion: 'gemma-4-31b-it',
      responseId: 'loopback-0',
    });
    const missingKey = await post(`${gemini.url}/v1beta/models/gemma-4-31b-it:generateContent`, {});
    expect(missingKey.status).toBe(403);
    expect(await missingKey.json()).toMatchObject({ error: { code: 403, status: 'PERMISSION_DENIED' } });
    const wrongRoute = await post(`${gemini.url}/v1/models/x:generateContent`);
    expect(wrongRoute.status).toBe(404);
    const gemma3 = await post(
      `${gemini.url}/v1beta/models/gemma-3-4b-it:generateContent`,
      undefined,
      JSON.stringify({ contents: [], generationConfig: { responseMimeType: 'application/json' } }),
    );
    expect(await gemma3.json()).toEqual({
      error: { code: 400, message: 'JSON mode is not enabled for models/gemma-3-4b-it', status: 'INVALID_ARGUMENT' },
    });
  });

  it('capacity with reject: extra requests get 429 RESOURCE_EXHAUSTED with RetryInfo', async () => {
    gemini = await startGeminiLoopbackServer({
      responder: () => 'x',
      latencyMs: 100,
      capacity: 1,
      overCapacity: 'reject',
      overCapacityRetryDelay: '0.5s',
    });
    const url = `${gemini.url}/v1beta/models/m:generateContent`;
    const [first, second] = await Promise.all([post(url), post(url)]);
    expect([first.status, second.status].sort()).toEqual([200, 429]);
    const refused = first.status === 429 ? first : second;
    expect(await refused.json()).toEqual({
      error: {
        code: 429,
        message: 'loopback: over capacity',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.5s' }],
      },
    });
    expect(gemini.statistics).toMatchObject({ received: 2, rejectedOverCapacity: 1, peakConcurrency: 1 });
  });

  it('capacity with queue: extra requests wait, so N requests take N / capacity service times', async () => {
    gemini = await startGeminiLoopbackServer({ responder: () => 'x', latencyMs: 100, capacity: 2 });
    const url = `${gemini.url}/v1beta/models/m:generateContent`;
    // Fake timers for the service latency (setImmediate stays real, so the sockets keep working): the
    // clock moves only when advanced, so each reply's time is exact.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    const untilTrue = async (done: () => boolean): Promise<void> => {
      while (!done()) await new Promise((resolve) => setImmediate(resolve));
    };
    const answered: number[] = [];
    const statuses = Promise.all(
      Array.from({ length: 4 }, () =>
        post(url).then((response) => (answered.push(performance.now()), response.status)),
      ),
    );
    await untilTrue(() => gemini!.statistics.peakConcurrency === 2 && gemini!.statistics.received === 4);
    await vi.advanceTimersByTimeAsync(99);
    expect(answered).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await untilTrue(() => answered.length === 2);
    await vi.advanceTimersByTimeAsync(100);
    expect(await statuses).toEqual([200, 200, 200, 200]);
    expect(answered).toEqual([100, 100, 200, 200]);
    expect(gemini.statistics.peakConcurrency).toBe(2);
  });
});

describe('loopback servers on an injected clock', () => {
  it('the service latency and a reply delay are waited on the given clock', async () => {
    const waits: number[] = [];
    const clock = { now: () => 0, sleep: async (milliseconds: number) => void waits.push(milliseconds) };
    gemini = await startGeminiLoopbackServer({
      responder: () => ({ kind: 'text', text: 'x', delayMilliseconds: 250 }),
      latencyMs: 60_000,
      clock,
    });
    expect((await post(`${gemini.url}/v1beta/models/m:generateContent`)).status).toBe(200);
    openAI = await startOpenAILoopbackServer({ responder: () => 'y', latencyMs: 30_000, clock });
    expect(
      (
        await post(
          `${openAI.url}/v1/chat/completions`,
          {},
          JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
        )
      ).status,
    ).toBe(200);
    expect(waits).toEqual([60_250, 30_000]);
  });
});

describe('OpenAI-compatible loopback server', () => {
  it('answers chat.completion objects and OpenAI error bodies with retry-after', async () => {
    openAI = await startOpenAILoopbackServer({
      responder: (request) =>
        request.index === 0
          ? 'hello'
          : { kind: 'error', statusCode: 429, message: 'slow down', type: 'rate_limit_error', retryAfterSeconds: 2 },
    });
    const send = (): Promise<Response> =>
      post(
        `${openAI!.url}/v1/chat/completions`,
        {},
        JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      );
    const ok = await send();
    expect(await ok.json()).toMatchObject({
      object: 'chat.completion',
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
      usage: { total_tokens: expect.any(Number) },
    });
    const limited = await send();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(await limited.json()).toEqual({
      error: { message: 'slow down', type: 'rate_limit_error', param: null, code: null },
    });
  });
});

describe('dialogue replies', () => {
  it('reads the task and turns from a prompt and writes kanji numerals', () => {
    const prompt =
      'Translate this conversation of 2 turns into spoken Japanese.\n\n{"turns": [{"turn": 3, "question": "Q?", "answer": null}]}\n\nReply with {"turns":[...]}';
    expect(readDialogueRequest(undefined, prompt)).toEqual({
      task: 'translate',
      isRepair: false,
      turns: [{ turn: 3, question: 'Q?', answer: null }],
    });
    expect(readDialogueRequest(undefined, 'hello')).toBeUndefined();
    expect([1, 10, 11, 21, 100, 1987].map(kanjiNumeral)).toEqual(['一', '十', '十一', '二十一', '百', '千九百八十七']);
  });
});
