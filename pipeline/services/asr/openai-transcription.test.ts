/**
 * The OpenAI-compatible transcription client (the real `openai` package upload) against a loopback
 * server speaking `/v1/audio/transcriptions`, through each fault the real services show.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { encodeWavPcm16 } from '../../audio/wav.ts';
import { OpenAITranscriber } from './openai-transcription.ts';
import { TranscriptionError } from './speech-transcriber.ts';
import {
  startTranscriptionLoopbackServer,
  transcriptionReplies,
  type TranscriptionLoopbackReply,
  type TranscriptionLoopbackServer,
} from './testing/transcription-loopback-server.ts';

/** 1.5 s of a 220 Hz tone at 16 kHz, mono PCM16. */
const WAV = encodeWavPcm16({
  sampleRate: 16000,
  channels: [Float32Array.from({ length: 24000 }, (_, index) => 0.3 * Math.sin((2 * Math.PI * 220 * index) / 16000))],
});

let server: TranscriptionLoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A server whose replies follow `script` (then the default text), and a client with instant retries. */
async function setUp(
  script: (TranscriptionLoopbackReply | string)[],
  options: {
    apiKey?: string;
    clientKey?: string;
    model?: string;
    timeoutMilliseconds?: number;
    maxRetries?: number;
  } = {},
) {
  const queue = [...script];
  server = await startTranscriptionLoopbackServer({
    responder: (request) => queue.shift() ?? `clip of ${request.audio.durationSeconds.toFixed(2)} s`,
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
  });
  const waits: number[] = [];
  const client = new OpenAITranscriber({
    baseUrl: `${server.url}/v1`,
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.clientKey === undefined ? {} : { apiKey: options.clientKey }),
    timeoutMilliseconds: options.timeoutMilliseconds ?? 5_000,
    retry: { maxRetries: options.maxRetries ?? 2, jitter: 0 },
    sleep: async (milliseconds) => {
      waits.push(milliseconds);
    },
  });
  return { server, client, waits };
}

const request = { wav: WAV, fileName: 'clip-1.wav', language: 'ja' };

describe('OpenAITranscriber against a loopback /v1/audio/transcriptions server', () => {
  it('uploads the WAV as multipart form data with model, language, json format and temperature 0, and returns the text', async () => {
    const { server, client } = await setUp([' こんにちは。 ']);
    expect(await client.transcribe(request)).toBe('こんにちは。');
    const [received] = server.requests;
    expect(received).toMatchObject({
      model: 'whisper-1',
      language: 'ja',
      responseFormat: 'json',
      temperature: '0',
      fileName: 'clip-1.wav',
      audio: { sampleRate: 16000, channels: 1, durationSeconds: 1.5 },
    });
    expect(Buffer.from(received!.file).equals(Buffer.from(WAV))).toBe(true);
    expect(received!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(received!.headers.authorization).toBeUndefined();
  });

  it('sends the key as a bearer token; a wrong key is a 401 that marks the service unusable, not retried', async () => {
    const { server, client } = await setUp([], { apiKey: 'sk-right', clientKey: 'sk-right' });
    expect(await client.transcribe(request)).toBe('clip of 1.50 s');
    const wrong = new OpenAITranscriber({
      baseUrl: `${server.url}/v1`,
      apiKey: 'sk-wrong',
      retry: { maxRetries: 2 },
      sleep: async () => undefined,
    });
    const failure = await wrong.transcribe(request).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TranscriptionError);
    expect(failure).toMatchObject({
      failure: 'service-error',
      statusCode: 401,
      isRetryable: false,
      isServiceUnusable: true,
    });
    expect((failure as Error).message).not.toContain('sk-wrong');
    expect(server.received).toBe(2);
  });

  it('an unknown model is a 404 that marks the service unusable', async () => {
    const { client } = await setUp([], { model: 'large-v9' });
    await expect(client.transcribe(request)).rejects.toMatchObject({
      statusCode: 404,
      isServiceUnusable: true,
      message: expect.stringMatching(/large-v9.*does not exist/),
    });
  });

  it('retries 429 (waiting the retry-after the server asked for) and 5xx, then returns the text', async () => {
    const { server, client, waits } = await setUp([
      transcriptionReplies.rateLimited(2),
      transcriptionReplies.unavailable(),
      'はい',
    ]);
    expect(await client.transcribe(request)).toBe('はい');
    expect(server.requests).toHaveLength(3);
    expect(waits[0]).toBe(2000);
  });

  it('gives up after the retries on a server that keeps failing with 500', async () => {
    const { server, client } = await setUp([
      transcriptionReplies.internalError(),
      transcriptionReplies.internalError(),
      transcriptionReplies.internalError(),
    ]);
    await expect(client.transcribe(request)).rejects.toMatchObject({
      failure: 'service-error',
      statusCode: 500,
      isRetryable: true,
      isServiceUnusable: false,
    });
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry a 400 for audio the server cannot decode', async () => {
    const { server, client } = await setUp([transcriptionReplies.badAudio()]);
    await expect(client.transcribe(request)).rejects.toMatchObject({
      statusCode: 400,
      isRetryable: false,
      isServiceUnusable: false,
      message: expect.stringMatching(/clip-1\.wav.*corrupted or unsupported/),
    });
    expect(server.requests).toHaveLength(1);
  });

  it('the real server refuses a file that is not a WAV (the upload is checked, not assumed)', async () => {
    const { server, client } = await setUp([]);
    await expect(
      client.transcribe({ wav: new TextEncoder().encode('not audio'), fileName: 'x.wav' }),
    ).rejects.toMatchObject({ statusCode: 400 });
    expect(server.requests).toHaveLength(0);
  });

  it('a slow answer past the timeout is a timeout, retried, then reported', async () => {
    const { server, client } = await setUp([transcriptionReplies.slow(2_000), transcriptionReplies.slow(2_000)], {
      timeoutMilliseconds: 300,
      maxRetries: 1,
    });
    await expect(client.transcribe(request)).rejects.toMatchObject({
      failure: 'timeout',
      isRetryable: true,
      message: expect.stringMatching(/no answer within the 0\.3 s timeout/),
    });
    expect(server.requests).toHaveLength(2);
  });

  it('malformed JSON, an HTML page and JSON without "text" are malformed answers, retried', async () => {
    for (const fault of [
      transcriptionReplies.malformedJson(),
      transcriptionReplies.htmlPage(),
      transcriptionReplies.withoutText(),
    ]) {
      const { client } = await setUp([fault, fault, fault]);
      await expect(client.transcribe(request)).rejects.toMatchObject({
        failure: 'malformed-response',
        isRetryable: true,
      });
      await server?.close();
      server = undefined;
    }
    const { client } = await setUp([transcriptionReplies.malformedJson(), 'もしもし']);
    expect(await client.transcribe(request)).toBe('もしもし');
  });

  it('a connection closed without an answer, and a service that is not there, are unreachable and unusable', async () => {
    const { client } = await setUp([
      transcriptionReplies.hangUp(),
      transcriptionReplies.hangUp(),
      transcriptionReplies.hangUp(),
    ]);
    await expect(client.transcribe(request)).rejects.toMatchObject({
      failure: 'service-unreachable',
      isServiceUnusable: true,
    });
    const url = server!.url;
    await server!.close();
    server = undefined;
    const key = 'sk-asr-never-in-a-message-77';
    const gone = new OpenAITranscriber({
      baseUrl: `${url.replace('http://', `http://me:${key}@`)}/v1`,
      apiKey: key,
      retry: { maxRetries: 1 },
      sleep: async () => undefined,
    });
    const failure = (await gone.transcribe(request).catch((error: unknown) => error)) as TranscriptionError;
    expect(failure).toMatchObject({ failure: 'service-unreachable', isServiceUnusable: true });
    // one line naming the service's address, never the key (neither the key setting nor one written into the URL)
    expect(failure.message.split('\n')).toHaveLength(1);
    expect(failure.message).toContain(`at ${url}/v1: `);
    expect(failure.message).not.toContain(key);
  });
});
