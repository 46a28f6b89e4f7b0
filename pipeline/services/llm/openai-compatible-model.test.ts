import { afterEach, describe, expect, it } from 'vitest';
import { LanguageModelCallError } from './errors.ts';
import type { GenerationRequest } from './language-model.ts';
import { mapOpenAIFinishReason, OpenAICompatibleModel, retryAfterFromHeaders } from './openai-compatible-model.ts';
import {
  openAIReplies,
  startOpenAILoopbackServer,
  type OpenAILoopbackReply,
  type OpenAILoopbackServer,
} from './testing/openai-loopback-server.ts';

let server: OpenAILoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(
  replies: ReadonlyArray<OpenAILoopbackReply | string>,
  options: { apiKey?: string; rejectSystemRole?: boolean } = {},
): Promise<OpenAILoopbackServer> {
  server = await startOpenAILoopbackServer({
    responder: (request) => replies[request.index] ?? 'unscripted',
    ...options,
  });
  return server;
}

const schema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { turns: { type: 'array' } },
  required: ['turns'],
};
const request: GenerationRequest = {
  model: 'google/gemma-3-27b-it',
  system: 'You translate.',
  prompt: 'Translate this.',
  temperature: 0,
  seed: 1234,
  responseSchema: schema,
};

describe('OpenAICompatibleModel request', () => {
  it('sends system and user messages, seed, max_tokens and response_format json_schema; no Authorization without a key', async () => {
    const { url, requests } = await serve(['{"turns": []}']);
    const model = new OpenAICompatibleModel({ baseUrl: `${url}/v1`, maxOutputTokens: 1024 });
    expect(await model.generate(request)).toEqual({
      text: '{"turns": []}',
      finishReason: 'stop',
      usage: { inputTokens: expect.any(Number), outputTokens: 4, totalTokens: expect.any(Number) },
    });
    expect(requests[0]!.body).toEqual({
      model: 'google/gemma-3-27b-it',
      messages: [
        { role: 'system', content: 'You translate.' },
        { role: 'user', content: 'Translate this.' },
      ],
      temperature: 0,
      seed: 1234,
      max_tokens: 1024,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'dialogue_turns',
          schema: { type: 'object', properties: { turns: { type: 'array' } }, required: ['turns'] },
        },
      },
    });
    expect(requests[0]!.headers.authorization).toBeUndefined();
  });

  it('sends the key as a bearer token when given', async () => {
    const { url, requests } = await serve(['ok'], { apiKey: 'secret-for-test' });
    await new OpenAICompatibleModel({ baseUrl: `${url}/v1`, apiKey: () => 'secret-for-test' }).generate(request);
    expect(requests[0]!.headers.authorization).toBe('Bearer secret-for-test');
    await expect(
      new OpenAICompatibleModel({ baseUrl: `${url}/v1`, apiKey: 'wrong' }).generate(request),
    ).rejects.toMatchObject({ statusCode: 401, isRetryable: false });
  });

  it('without the capabilities: one user message, schema asked for in the prompt', async () => {
    const { url, requests } = await serve(['{}']);
    await new OpenAICompatibleModel({
      baseUrl: `${url}/v1`,
      capabilities: { systemInstruction: false, jsonMode: false },
    }).generate(request);
    const body = requests[0]!.body;
    expect(body.messages).toHaveLength(1);
    expect(body.response_format).toBeUndefined();
    expect(requests[0]!.prompt).toMatch(/^You translate\.\n\nTranslate this\.\n\nReply with one JSON object only/);
  });

  it('maps finish_reason length and content_filter', async () => {
    const { url } = await serve([
      openAIReplies.length('{"turns": ['),
      { kind: 'text', text: '', finishReason: 'content_filter' },
    ]);
    const model = new OpenAICompatibleModel({ baseUrl: `${url}/v1` });
    expect(await model.generate(request)).toMatchObject({ text: '{"turns": [', finishReason: 'max-tokens' });
    expect(await model.generate(request)).toMatchObject({ finishReason: 'safety' });
    expect([null, 'tool_calls'].map(mapOpenAIFinishReason)).toEqual(['other', 'other']);
  });
});

describe('OpenAICompatibleModel errors (the package does not retry)', () => {
  it('429 with retry-after: retryable with the delay; 503 and 500 retryable; one request each', async () => {
    const { url, requests } = await serve([
      openAIReplies.rateLimited(2),
      openAIReplies.unavailable(),
      openAIReplies.internalError(),
    ]);
    const model = new OpenAICompatibleModel({ baseUrl: `${url}/v1` });
    const limited = await model.generate(request).catch((caught: unknown) => caught);
    expect(limited).toBeInstanceOf(LanguageModelCallError);
    expect(limited).toMatchObject({
      statusCode: 429,
      isRetryable: true,
      retryAfterMilliseconds: 2000,
      message: 'OpenAI-compatible google/gemma-3-27b-it: HTTP 429 Rate limit reached',
    });
    await expect(model.generate(request)).rejects.toMatchObject({ statusCode: 503, isRetryable: true });
    await expect(model.generate(request)).rejects.toMatchObject({ statusCode: 500, isRetryable: true });
    expect(requests).toHaveLength(3);
  });

  it('a server without a system role: 400, not retryable', async () => {
    const { url } = await serve(['ok', 'ok'], { rejectSystemRole: true });
    await expect(new OpenAICompatibleModel({ baseUrl: `${url}/v1` }).generate(request)).rejects.toMatchObject({
      statusCode: 400,
      isRetryable: false,
      message: expect.stringContaining('System role not supported'),
    });
    await expect(
      new OpenAICompatibleModel({ baseUrl: `${url}/v1`, capabilities: { systemInstruction: false } }).generate(request),
    ).resolves.toMatchObject({ text: 'ok' });
  });

  it('a slow response: a retryable timeout', async () => {
    const { url } = await serve([openAIReplies.slow(2000)]);
    await expect(
      new OpenAICompatibleModel({ baseUrl: `${url}/v1`, timeoutMilliseconds: 200 }).generate(request),
    ).rejects.toMatchObject({
      failure: 'timeout',
      isRetryable: true,
      message: `OpenAI-compatible google/gemma-3-27b-it: no response from ${url}/v1 within the 0.2 s timeout`,
    });
  });

  it('no choices, and a closed port: retryable', async () => {
    const { url } = await serve([
      { kind: 'raw', statusCode: 200, body: JSON.stringify({ id: 'x', object: 'chat.completion', choices: [] }) },
    ]);
    await expect(new OpenAICompatibleModel({ baseUrl: `${url}/v1` }).generate(request)).rejects.toMatchObject({
      failure: 'malformed-response',
      isRetryable: true,
    });
    await server!.close();
    await expect(new OpenAICompatibleModel({ baseUrl: `${url}/v1` }).generate(request)).rejects.toMatchObject({
      failure: 'network',
      isRetryable: true,
    });
  });

  it('reads retry-after-ms, retry-after seconds and dates', () => {
    expect(retryAfterFromHeaders(new Headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterFromHeaders(new Headers({ 'retry-after': '3' }))).toBe(3000);
    const inTwoSeconds = new Date(Date.now() + 2000).toUTCString();
    expect(retryAfterFromHeaders(new Headers({ 'retry-after': inTwoSeconds }))).toBeGreaterThan(500);
    expect(retryAfterFromHeaders(new Headers())).toBeUndefined();
  });
});
