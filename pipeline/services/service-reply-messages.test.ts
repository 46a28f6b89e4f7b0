/**
 * A service that answers 200 with something other than its reply (an HTML page from a proxy or a web
 * UI at the configured address, a JSON body without the expected fields) ends in one line naming the
 * service's address (without a key written into the URL), the content type and the start of the body.
 * Every client is the real one, against a loopback HTTP server that answers every route the same way.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenAICompatibleModel } from './llm/openai-compatible-model.ts';
import { GeminiModel } from './llm/gemini-model.ts';
import type { GenerationRequest } from './llm/language-model.ts';
import { OpenAITranscriber } from './asr/openai-transcription.ts';
import { createCosyVoice2Synthesizer } from './tts/cosyvoice2-fastapi.ts';
import { fixtureDirectory, writePromptFixture, type PromptFixture } from './tts/testing/prompt-fixtures.ts';
import { replyExcerpt } from './reply-excerpt.ts';
import { rejectionMessage } from './testing/rejection-message.ts';

const KEY = 'sk-reply-never-in-a-message-77c1';
const PAGE =
  '<!DOCTYPE html>\n<html><head><title>Sign in to the proxy</title></head><body>Please sign in.</body></html>';
const request: GenerationRequest = { model: 'm', prompt: 'Say hi.', temperature: 0, seed: 1 };
const NO_RETRY = { maxRetries: 0, initialDelaySeconds: 0.01, maxDelaySeconds: 0.01, jitter: 0 };

/** What the loopback server answers to every request. */
let reply: { contentType: string; body: string };
let server: Server;
let base: string;
let directory: string;
let prompt: PromptFixture;

beforeAll(async () => {
  server = createServer((incoming, response) => {
    incoming.resume();
    incoming.on('end', () => {
      response.writeHead(200, { 'content-type': reply.contentType });
      response.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  directory = await fixtureDirectory();
  prompt = await writePromptFixture(directory, 'This is the voice of the first speaker, reading a short sentence.', {
    sampleRate: 24000,
  });
});

beforeEach(() => {
  reply = { contentType: 'text/html; charset=utf-8', body: PAGE };
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(directory, { recursive: true, force: true });
});

/** The message of what `promise` rejects with. */
const failure = rejectionMessage;

/** One line naming the address, the content type and the page's title; no key. */
function expectNamesWhatCameBack(message: string, address: string, contentType: string): void {
  expect(message.split('\n')).toHaveLength(1);
  expect(message).toContain(address);
  expect(message).toContain(`content type ${contentType}`);
  expect(message).not.toContain(KEY);
}

describe('the excerpt of a reply', () => {
  it('is one line, cut at 120 characters', () => {
    expect(replyExcerpt('a\n\n  b')).toBe('a b');
    expect(replyExcerpt('x'.repeat(500))).toBe(`${'x'.repeat(120)}…`);
    expect(replyExcerpt('')).toBe('(empty)');
    expect(replyExcerpt({ candidates: [] })).toBe('{"candidates":[]}');
  });
});

describe('a 200 answer that is not the service reply', () => {
  it('OpenAI-compatible, an HTML page: the address, the content type and the page start', async () => {
    const address = `${base}/v1`;
    const message = await failure(
      new OpenAICompatibleModel({ baseUrl: `${address}?key=${KEY}`, apiKey: KEY }).generate(request),
    );
    expect(message).toBe(
      `OpenAI-compatible m: the response from ${address} is not a chat completion (content type text/html; charset=utf-8, body: <!DOCTYPE html> <html><head><title>Sign in to the proxy</title></head><body>Please sign in.</body></html>)`,
    );
    expectNamesWhatCameBack(message, address, 'text/html; charset=utf-8');
  });

  it('OpenAI-compatible, JSON without choices: the address and the body', async () => {
    reply = { contentType: 'application/json', body: '{"object":"list","data":[]}' };
    const address = `${base}/v1`;
    const message = await failure(new OpenAICompatibleModel({ baseUrl: address }).generate(request));
    expect(message).toBe(
      `OpenAI-compatible m: the response from ${address} has no choices (content type application/json, body: {"object":"list","data":[]})`,
    );
  });

  it('Gemini, empty candidates: an error naming the address and body, not finish reason "other"', async () => {
    reply = { contentType: 'application/json; charset=UTF-8', body: '{"candidates": []}' };
    const message = await failure(
      new GeminiModel({ baseUrl: base, apiKey: KEY, timeoutMilliseconds: 5000 }).generate(request),
    );
    expect(message).toMatch(
      new RegExp(
        `^Gemini m: the response from ${base} has no candidates \\(content type application/json; charset=UTF-8, body: \\{"candidates":\\[\\]`,
      ),
    );
    expectNamesWhatCameBack(message, base, 'application/json; charset=UTF-8');
  });

  it('Gemini, an HTML page: the address is named', async () => {
    const message = await failure(
      new GeminiModel({ baseUrl: base, apiKey: KEY, timeoutMilliseconds: 5000 }).generate(request),
    );
    expect(message).toContain(`from ${base}`);
    expect(message).not.toContain(KEY);
  });

  it('transcription, an HTML page: the address, the content type and the page start', async () => {
    const address = `${base}/v1`;
    const message = await failure(
      new OpenAITranscriber({ baseUrl: `${address}?key=${KEY}`, apiKey: KEY, retry: NO_RETRY }).transcribe({
        wav: new Uint8Array(44),
        fileName: 'clip.wav',
      }),
    );
    expect(message).toContain(`transcription of clip.wav at ${address}: the answer has no "text" string`);
    expectNamesWhatCameBack(message, address, 'text/html; charset=utf-8');
    expect(message).toContain('<title>Sign in to the proxy</title>');
  });

  it('CosyVoice2 FastAPI, an HTML page: refused as no audio (not decoded as PCM), naming the endpoint', async () => {
    const synthesizer = await createCosyVoice2Synthesizer({
      urls: [base],
      retry: NO_RETRY,
      endpointCooldown: { initialSeconds: 0.01, maximumSeconds: 0.01 },
      probe: false,
    });
    const message = await failure(
      synthesizer.synthesize({
        text: 'Hello there.',
        language: 'en',
        voice: { mode: 'zero-shot', promptWav: prompt.path, promptText: prompt.transcript },
      }),
    );
    expect(message).toContain(
      'the server answered 200 with no audio (content type text/html; charset=utf-8, body: <!DOCTYPE html>',
    );
    expect(message).toContain(`[${base}/inference_zero_shot]`);
  });
});
