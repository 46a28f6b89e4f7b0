import { afterEach, describe, expect, it } from 'vitest';
import { LanguageModelCallError, ModelCapabilityError } from './errors.ts';
import {
  GeminiModel,
  mapGeminiFinishReason,
  parseGoogleRpcError,
  parseProtobufDurationMilliseconds,
} from './gemini-model.ts';
import type { GenerationRequest } from './language-model.ts';
import {
  GEMINI_LOOPBACK_API_KEY,
  geminiReplies,
  startGeminiLoopbackServer,
  type GeminiLoopbackReply,
  type GeminiLoopbackServer,
} from './testing/gemini-loopback-server.ts';

let server: GeminiLoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(replies: ReadonlyArray<GeminiLoopbackReply | string>): Promise<GeminiLoopbackServer> {
  server = await startGeminiLoopbackServer({ responder: (request) => replies[request.index] ?? 'unscripted' });
  return server;
}

function client(url: string, options: Partial<ConstructorParameters<typeof GeminiModel>[0]> = {}): GeminiModel {
  return new GeminiModel({ apiKey: GEMINI_LOOPBACK_API_KEY, baseUrl: url, timeoutMilliseconds: 5000, ...options });
}

const schema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    turns: {
      type: 'array',
      minItems: 2,
      maxItems: 2,
      items: {
        type: 'object',
        properties: { answer: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
        required: ['answer'],
        additionalProperties: false,
      },
    },
  },
  required: ['turns'],
  additionalProperties: false,
};
const request: GenerationRequest = {
  model: 'gemini-2.5-flash',
  system: 'You translate.',
  prompt: 'Translate this.',
  temperature: 0,
  seed: 1234,
  responseSchema: schema,
};

describe('GeminiModel request', () => {
  it('sends the REST shape: key header, contents, systemInstruction, generationConfig with JSON mode', async () => {
    const { url, requests } = await serve(['{"turns": []}']);
    const result = await client(url, { maxOutputTokens: 2048 }).generate(request);
    expect(result).toEqual({
      text: '{"turns": []}',
      finishReason: 'stop',
      usage: { inputTokens: expect.any(Number), outputTokens: 4, totalTokens: expect.any(Number) },
    });
    const received = requests[0]!;
    expect(received.model).toBe('gemini-2.5-flash');
    expect(received.apiKey).toBe(GEMINI_LOOPBACK_API_KEY);
    expect(received.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Translate this.' }] }],
      systemInstruction: { parts: [{ text: 'You translate.' }] },
      generationConfig: {
        temperature: 0,
        seed: 1234,
        maxOutputTokens: 2048,
        responseMimeType: 'application/json',
        responseSchema: {
          type: 'OBJECT',
          properties: {
            turns: {
              type: 'ARRAY',
              minItems: 2,
              maxItems: 2,
              items: {
                type: 'OBJECT',
                properties: { answer: { type: 'STRING', nullable: true } },
                required: ['answer'],
              },
            },
          },
          required: ['turns'],
        },
      },
    });
  });

  it('gemma-4: system instruction yes, JSON mode off (schema asked for in the prompt)', async () => {
    const { url, requests } = await serve(['{}']);
    await client(url).generate({ ...request, model: 'gemma-4-31b-it' });
    const body = requests[0]!.body;
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'You translate.' }] });
    expect(body.generationConfig).toEqual({ temperature: 0, seed: 1234 });
    expect(requests[0]!.prompt).toMatch(/^Translate this\.\n\nReply with one JSON object only.*\n\{"type":"object"/s);
  });

  it('gemma-3: the prompt-only way, no 400', async () => {
    const { url, requests } = await serve(['{}']);
    await expect(client(url).generate({ ...request, model: 'gemma-3-27b-it' })).resolves.toMatchObject({
      finishReason: 'stop',
    });
    expect(requests[0]!.body.systemInstruction).toBeUndefined();
    expect(requests[0]!.prompt.startsWith('You translate.\n\nTranslate this.')).toBe(true);
  });

  it('joins all text parts and leaves thought parts out', async () => {
    const { url } = await serve([
      {
        kind: 'raw',
        statusCode: 200,
        body: JSON.stringify({
          candidates: [
            {
              content: {
                role: 'model',
                parts: [{ text: 'thinking…', thought: true }, { text: '{"a":' }, { text: ' 1}' }],
              },
              finishReason: 'STOP',
            },
          ],
        }),
      },
    ]);
    expect((await client(url).generate(request)).text).toBe('{"a": 1}');
  });

  it('maps MAX_TOKENS, SAFETY and a blocked prompt', async () => {
    const { url } = await serve([
      geminiReplies.maxTokens('{"turns": [{"q'),
      { kind: 'text', text: '', finishReason: 'SAFETY' },
      { kind: 'blocked', blockReason: 'SAFETY' },
      { kind: 'text', text: 'x', finishReason: 'LANGUAGE' },
    ]);
    const model = client(url);
    expect(await model.generate(request)).toMatchObject({ text: '{"turns": [{"q', finishReason: 'max-tokens' });
    expect(await model.generate(request)).toMatchObject({ finishReason: 'safety' });
    expect(await model.generate(request)).toMatchObject({ text: '', finishReason: 'safety' });
    expect(await model.generate(request)).toMatchObject({ finishReason: 'other' });
    expect(['STOP', 'MAX_TOKENS', 'RECITATION', 'OTHER', undefined].map(mapGeminiFinishReason)).toEqual([
      'stop',
      'max-tokens',
      'safety',
      'other',
      'other',
    ]);
  });
});

describe('GeminiModel errors', () => {
  it('429 RESOURCE_EXHAUSTED with RetryInfo: retryable with the server delay', async () => {
    const { url } = await serve([geminiReplies.rateLimited('58s')]);
    const error = await client(url)
      .generate(request)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LanguageModelCallError);
    expect(error).toMatchObject({
      statusCode: 429,
      isRetryable: true,
      retryAfterMilliseconds: 58_000,
      failure: 'status',
    });
    expect((error as Error).message).toBe(
      'Gemini gemini-2.5-flash: HTTP 429 RESOURCE_EXHAUSTED: You exceeded your current quota, please check your plan and billing details.',
    );
  });

  it('503 UNAVAILABLE and 500 INTERNAL: retryable, no delay given', async () => {
    const { url } = await serve([geminiReplies.unavailable(), geminiReplies.internalError()]);
    await expect(client(url).generate(request)).rejects.toMatchObject({
      statusCode: 503,
      isRetryable: true,
      retryAfterMilliseconds: undefined,
    });
    await expect(client(url).generate(request)).rejects.toMatchObject({ statusCode: 500, isRetryable: true });
  });

  it('400 for a capability the model lacks: not retryable, says what to switch off', async () => {
    server = await startGeminiLoopbackServer();
    const forced = client(server.url, { capabilities: { systemInstruction: true } });
    const error = await forced.generate({ ...request, model: 'gemma-3-27b-it' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelCapabilityError);
    expect(error).toMatchObject({ capability: 'systemInstruction', statusCode: 400, isRetryable: false });
    expect((error as Error).message).toContain('Developer instruction is not enabled for models/gemma-3-27b-it');
    expect((error as Error).message).toContain('capabilities: {systemInstruction: false}');

    const json = client(server.url, { capabilities: { systemInstruction: false, jsonMode: true } });
    await expect(json.generate({ ...request, model: 'gemma-3-12b-it' })).rejects.toMatchObject({
      capability: 'jsonMode',
      message: expect.stringContaining('capabilities: {jsonMode: false}'),
    });
  });

  it('a wrong key: 400 INVALID_ARGUMENT, not retryable', async () => {
    server = await startGeminiLoopbackServer();
    const error = await client(server.url, { apiKey: 'wrong' })
      .generate(request)
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      statusCode: 400,
      isRetryable: false,
      message: expect.stringContaining('API key not valid'),
    });
  });

  it('a slow response: a retryable timeout', async () => {
    const { url } = await serve([geminiReplies.slow(2000)]);
    await expect(client(url, { timeoutMilliseconds: 200 }).generate(request)).rejects.toMatchObject({
      failure: 'timeout',
      isRetryable: true,
      message: `Gemini gemini-2.5-flash: no response from ${url} within the 0.2 s timeout`,
    });
  });

  it('an unreadable 200 body and a closed port: retryable', async () => {
    const { url } = await serve([{ kind: 'raw', statusCode: 200, body: '<html>proxy error</html>' }]);
    await expect(client(url).generate(request)).rejects.toMatchObject({
      failure: 'malformed-response',
      isRetryable: true,
    });
    await server!.close();
    await expect(client(url).generate(request)).rejects.toMatchObject({
      failure: 'network',
      isRetryable: true,
      message: expect.stringContaining('connection failed'),
    });
  });

  it('looks the key up on the first request only', async () => {
    let lookups = 0;
    const { url } = await serve(['a', 'b']);
    const model = client(url, {
      apiKey: () => {
        lookups += 1;
        return GEMINI_LOOPBACK_API_KEY;
      },
    });
    expect(lookups).toBe(0);
    await model.generate(request);
    await model.generate(request);
    expect(lookups).toBe(1);
  });
});

describe('Google RPC error bodies', () => {
  it('reads code, status, message and RetryInfo', () => {
    const body = JSON.stringify({
      error: {
        code: 429,
        message: 'quota',
        status: 'RESOURCE_EXHAUSTED',
        details: [
          { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [] },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.2s' },
        ],
      },
    });
    expect(parseGoogleRpcError(body)).toEqual({
      code: 429,
      message: 'quota',
      status: 'RESOURCE_EXHAUSTED',
      retryDelayMilliseconds: 200,
    });
    expect(parseGoogleRpcError('not json')).toBeUndefined();
    expect(parseGoogleRpcError('{"message": "x"}')).toBeUndefined();
  });

  it('parses protobuf durations', () => {
    expect(['58s', '0.2s', '1.500s', '58', 'soon'].map(parseProtobufDurationMilliseconds)).toEqual([
      58_000,
      200,
      1500,
      undefined,
      undefined,
    ]);
    expect(parseProtobufDurationMilliseconds({ seconds: '3', nanos: 500_000_000 })).toBe(3500);
  });
});
