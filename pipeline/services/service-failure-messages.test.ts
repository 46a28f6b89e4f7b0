/**
 * A dead or silent service ends in one line naming the service's address, and never an API
 * key. Every remote client (the OpenAI-compatible and Gemini LLM backends, the CosyVoice2 FastAPI and
 * Triton speech servers, the COMETKiwi HTTP scorer; DNSMOS runs locally) is the real client, against
 * a closed loopback port (connection refused) and a loopback server that accepts the connection and
 * never answers (the client's timeout). The key is in the client's key setting and also written into
 * the URL (user info and query, as a user pasting a URL might); the message names the URL without it.
 */
import { rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAICompatibleModel } from './llm/openai-compatible-model.ts';
import { GeminiModel } from './llm/gemini-model.ts';
import type { GenerationRequest } from './llm/language-model.ts';
import { createCosyVoice2Synthesizer } from './tts/cosyvoice2-fastapi.ts';
import { createCosyVoice2TritonSynthesizer } from './tts/cosyvoice2-triton.ts';
import { fixtureDirectory, writePromptFixture, type PromptFixture } from './tts/testing/prompt-fixtures.ts';
import { scoreWithHttpScorer } from './qe/cometkiwi.ts';
import { serviceAddress } from './service-address.ts';
import { rejectionMessage } from './testing/rejection-message.ts';

const KEY = 'sk-issue21-never-in-a-message-4f9a';
const request: GenerationRequest = { model: 'm', prompt: 'Say hi.', temperature: 0, seed: 1 };
const NO_RETRY = {
  retry: { maxRetries: 0, initialDelaySeconds: 0.01, maxDelaySeconds: 0.01, jitter: 0 },
  endpointCooldown: { initialSeconds: 0.01, maximumSeconds: 0.01 },
  probe: false,
};

/** A TCP server on 127.0.0.1 that accepts connections and never sends a byte. */
let silent: { server: Server; sockets: Set<Socket>; port: number };
/** A port nothing listens on (a server opened and closed again). */
let closedPort: number;
let directory: string;
let prompt: PromptFixture;

beforeAll(async () => {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  silent = { server, sockets, port: (server.address() as AddressInfo).port };
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  directory = await fixtureDirectory();
  prompt = await writePromptFixture(directory, 'This is the voice of the first speaker, reading a short sentence.', {
    sampleRate: 24000,
  });
});

afterAll(async () => {
  for (const socket of silent.sockets) socket.destroy();
  await new Promise<void>((resolve) => silent.server.close(() => resolve()));
  await rm(directory, { recursive: true, force: true });
});

/** The message of what `promise` rejects with. */
const failure = rejectionMessage;

/** One line, the address named, no key anywhere (message or address). */
function expectNamedWithoutKey(message: string, address: string): void {
  expect(message.split('\n')).toHaveLength(1);
  expect(message).toContain(address);
  expect(message).not.toContain(KEY);
  expect(message).not.toContain('key=');
}

describe('the service address in messages', () => {
  it('drops user info, query and fragment, keeps scheme, host, port and path', () => {
    expect(serviceAddress(`http://me:${KEY}@llm.example:8000/v1?key=${KEY}#x`)).toBe('http://llm.example:8000/v1');
    expect(serviceAddress('http://127.0.0.1:50000')).toBe('http://127.0.0.1:50000');
    expect(serviceAddress('https://generativelanguage.googleapis.com')).toBe(
      'https://generativelanguage.googleapis.com',
    );
    expect(serviceAddress(`not a url?key=${KEY}`)).toBe('not a url');
  });
});

describe('LLM backends', () => {
  it('OpenAI-compatible, connection refused: one line with the URL, no key', async () => {
    const address = `http://127.0.0.1:${closedPort}/v1`;
    const message = await failure(
      new OpenAICompatibleModel({ baseUrl: `${address}?key=${KEY}`, apiKey: KEY }).generate(request),
    );
    expect(message).toMatch(new RegExp(`^OpenAI-compatible m: connection failed to ${address} \\(`));
    expectNamedWithoutKey(message, address);
  });

  it('OpenAI-compatible, a server that never answers: the timeout names the URL, no key', async () => {
    const address = `http://127.0.0.1:${silent.port}/v1`;
    const message = await failure(
      new OpenAICompatibleModel({ baseUrl: `${address}?key=${KEY}`, apiKey: KEY, timeoutMilliseconds: 300 }).generate(
        request,
      ),
    );
    expect(message).toBe(`OpenAI-compatible m: no response from ${address} within the 0.3 s timeout`);
  });

  it('Gemini, connection refused: one line with the URL, no key', async () => {
    const address = `http://127.0.0.1:${closedPort}`;
    const message = await failure(
      new GeminiModel({ baseUrl: address, apiKey: KEY, timeoutMilliseconds: 5000 }).generate(request),
    );
    expect(message).toMatch(new RegExp(`^Gemini m: connection failed to ${address} \\(`));
    expectNamedWithoutKey(message, address);
  });

  it('Gemini, a server that never answers: the timeout names the URL, no key', async () => {
    const address = `http://127.0.0.1:${silent.port}`;
    const message = await failure(
      new GeminiModel({ baseUrl: address, apiKey: KEY, timeoutMilliseconds: 300 }).generate(request),
    );
    expect(message).toBe(`Gemini m: no response from ${address} within the 0.3 s timeout`);
  });
});

describe('speech servers', () => {
  const voice = () => ({ mode: 'zero-shot' as const, promptWav: prompt.path, promptText: prompt.transcript });
  const tritonVoice = () => ({ promptWav: prompt.path, promptText: prompt.transcript });

  it('CosyVoice2 FastAPI, connection refused and a server that never answers: the endpoint named', async () => {
    const dead = `http://127.0.0.1:${closedPort}`;
    const refused = await failure(
      (await createCosyVoice2Synthesizer({ urls: [dead], ...NO_RETRY })).synthesize({
        text: 'Hello there.',
        language: 'en',
        voice: voice(),
      }),
    );
    expect(refused).toContain(`cannot reach the service`);
    expectNamedWithoutKey(refused, `[${dead}/inference_zero_shot]`);
    const hung = `http://127.0.0.1:${silent.port}`;
    const timedOut = await failure(
      (await createCosyVoice2Synthesizer({ urls: [hung], ...NO_RETRY, timeoutSeconds: 0.3 })).synthesize({
        text: 'Hello there.',
        language: 'en',
        voice: voice(),
      }),
    );
    expect(timedOut).toContain('no complete answer within 0.3 s');
    expectNamedWithoutKey(timedOut, `[${hung}/inference_zero_shot]`);
  });

  it('CosyVoice2 Triton, connection refused and a server that never answers: the endpoint named', async () => {
    const dead = `http://127.0.0.1:${closedPort}`;
    const refused = await failure(
      (await createCosyVoice2TritonSynthesizer({ urls: [dead], ...NO_RETRY })).synthesize({
        text: 'Hello there.',
        language: 'en',
        voice: tritonVoice(),
      }),
    );
    expect(refused).toContain('cannot reach the service');
    expectNamedWithoutKey(refused, `[${dead}/v2/models/`);
    const hung = `http://127.0.0.1:${silent.port}`;
    const timedOut = await failure(
      (await createCosyVoice2TritonSynthesizer({ urls: [hung], ...NO_RETRY, timeoutSeconds: 0.3 })).synthesize({
        text: 'Hello there.',
        language: 'en',
        voice: tritonVoice(),
      }),
    );
    expect(timedOut).toContain('no complete answer within 0.3 s');
    expectNamedWithoutKey(timedOut, `[${hung}/v2/models/`);
  });
});

describe('COMETKiwi HTTP scorer', () => {
  const pairs = [{ src: 'It is in Britain.', mt: 'イギリスにあります。' }];

  it('connection refused: one line with the URL, no key (query nor authorization header)', async () => {
    const address = `http://127.0.0.1:${closedPort}/score`;
    const message = await failure(
      scoreWithHttpScorer(`${address}?key=${KEY}`, pairs, { httpHeaders: { authorization: `Bearer ${KEY}` } }),
    );
    expect(message).toMatch(new RegExp(`^COMETKiwi HTTP scorer ${address} could not be reached: fetch failed: `));
    expectNamedWithoutKey(message, address);
  });

  it('a server that never answers: the timeout names the URL, no key', async () => {
    const address = `http://127.0.0.1:${silent.port}/score`;
    const message = await failure(
      scoreWithHttpScorer(`${address}?key=${KEY}`, pairs, {
        httpHeaders: { authorization: `Bearer ${KEY}` },
        timeoutMilliseconds: 300,
      }),
    );
    expect(message).toBe(`COMETKiwi HTTP scorer ${address}: no response within the 0.3 s timeout`);
  });
});
