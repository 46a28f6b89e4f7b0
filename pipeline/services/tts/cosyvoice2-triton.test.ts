/**
 * The real CosyVoice2 Triton client against a loopback server that speaks KServe v2 (JSON, and
 * binary tensor data), and against a capture server here that decodes and encodes the binary tensor
 * data extension independently of the client and the loopback server.
 */
import { rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CosyVoice2TritonBackend, createCosyVoice2TritonSynthesizer } from './cosyvoice2-triton.ts';
import { SpeechSynthesisQuarantineError } from './remote-synthesizer.ts';
import { serviceResponse, SpeechServiceError, type ServiceResponse } from './service-http.ts';
import {
  closeServer,
  faultsByRequestIndex,
  loopbackSpeech,
  readRequestBody,
  type LoopbackServer,
} from './testing/loopback-speech.ts';
import { fixtureDirectory, writePromptFixture, type PromptFixture } from './testing/prompt-fixtures.ts';
import { startTritonLoopbackServer } from './testing/triton-loopback-server.ts';

const FAST = {
  retry: { maxRetries: 3, initialDelaySeconds: 0.01, maxDelaySeconds: 0.05, jitter: 0 },
  endpointCooldown: { initialSeconds: 0.02, maximumSeconds: 0.1 },
};
const TEXT = 'Could you tell me more about the history of the tower, please?';

let directory: string;
let prompt: PromptFixture;
const servers: { close(): Promise<void> }[] = [];

async function server(options: Parameters<typeof startTritonLoopbackServer>[0] = {}): Promise<LoopbackServer> {
  const started = await startTritonLoopbackServer(options);
  servers.push(started);
  return started;
}

beforeAll(async () => {
  directory = await fixtureDirectory();
  prompt = await writePromptFixture(directory, 'This is the voice of the second speaker, reading a sentence.', {
    sampleRate: 24000,
  });
});

afterAll(async () => {
  await Promise.all(servers.map((started) => started.close()));
  await rm(directory, { recursive: true, force: true });
});

describe('cosyvoice2 Triton client', () => {
  it('sends the four KServe v2 inputs and reads the FP32 waveform at 24 kHz', async () => {
    const loopback = await server();
    const synthesizer = await createCosyVoice2TritonSynthesizer({ urls: [loopback.url], ...FAST });
    const output = await synthesizer.synthesize({
      text: TEXT,
      language: 'en',
      voice: { promptWav: prompt.path, promptText: prompt.transcript },
    });
    expect(output.audio.sampleRate).toBe(24000);
    const seconds = (output.audio.channels[0] as Float32Array).length / 24000;
    expect(seconds).toBeGreaterThan(3);
    expect(seconds).toBeLessThan(7);
    const request = loopback.requests[0];
    expect(request?.route).toBe('/v2/models/cosyvoice2/infer');
    expect(request?.fields).toEqual({ reference_text: prompt.transcript, target_text: TEXT });
    // The 24 kHz prompt was resampled to 16 kHz before sending.
    expect(Math.abs((request?.prompt?.durationSeconds ?? 0) - (request?.prompt?.bytes ?? 0) / 4 / 16000)).toBe(0);
    expect(synthesizer.version).toMatch(/^cosyvoice2-triton Triton/);
  });

  it('answers invalid requests like Triton (400 with an error message)', async () => {
    const loopback = await server();
    const bad = await fetch(`${loopback.url}/v2/models/cosyvoice2/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [] }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/expected 4 inputs/);
    const unknown = await fetch(`${loopback.url}/v2/models/other/infer`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(400);
  });

  it('retries 500, a reset connection and a shortened waveform, then quarantines a persistent failure', async () => {
    const loopback = await server({
      faults: faultsByRequestIndex({
        0: {
          kind: 'http-error',
          status: 500,
          body: 'Failed to process the request(s) for model instance cosyvoice2_0',
        },
        1: { kind: 'cut-stream', fraction: 0.5, how: 'reset' },
        2: { kind: 'cut-stream', fraction: 0.4, how: 'end' },
      }),
    });
    const synthesizer = await createCosyVoice2TritonSynthesizer({ urls: [loopback.url], ...FAST });
    await synthesizer.synthesize({
      text: TEXT,
      language: 'en',
      voice: { promptWav: prompt.path, promptText: prompt.transcript },
    });
    expect(loopback.requests.map((request) => request.status)).toEqual([500, 200, 200, 200]);
    expect(synthesizer.statistics().failures).toEqual({ 'service-error': 1, 'truncated-audio': 2 });

    const broken = await server({
      faults: () => ({ kind: 'http-error', status: 400, body: 'in ensemble, unexpected shape' }),
    });
    const failing = await createCosyVoice2TritonSynthesizer({ urls: [broken.url], ...FAST });
    const error = await failing
      .synthesize({ text: TEXT, language: 'en', voice: { promptWav: prompt.path, promptText: prompt.transcript } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SpeechSynthesisQuarantineError);
    expect((error as SpeechSynthesisQuarantineError).reason).toBe('not-retryable');
    expect((error as Error).message).toMatch(/unexpected shape/);
  });

  it('sends Japanese target and reference texts as kana', async () => {
    const loopback = await server();
    const synthesizer = await createCosyVoice2TritonSynthesizer({ urls: [loopback.url], ...FAST });
    const japanese = await writePromptFixture(directory, 'わたしのなまえはたなかです。');
    await synthesizer.synthesize({
      text: '東京は大きな都市です。',
      language: 'ja',
      voice: { promptWav: japanese.path, promptText: '私の名前は田中です。' },
    });
    expect(loopback.requests[0]?.fields).toEqual({
      reference_text: 'わたしのなまえはたなかです。',
      target_text: 'とうきょうはおおきなとしです。',
    });
  });

  it('probes health and model metadata when created', async () => {
    const loopback = await server({ modelName: 'another_model' });
    await expect(createCosyVoice2TritonSynthesizer({ urls: [loopback.url], ...FAST })).rejects.toMatchObject({
      failure: 'service-error',
    });
    await expect(
      createCosyVoice2TritonSynthesizer({ urls: [loopback.url], modelName: 'another_model', ...FAST }),
    ).resolves.toBeDefined();
  });
});

/** A request as the capture server received it. */
interface CapturedRequest {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A server that records each inference request and answers `samples` as Triton would: binary data
 * (header, JSON, float32 LE bytes) when the request carries Inference-Header-Content-Length and asks
 * for binary output, JSON `data` otherwise. Encoded here, not with the client's helpers.
 */
async function captureServer(samples: Float32Array): Promise<{ url: string; captured: CapturedRequest[] }> {
  const captured: CapturedRequest[] = [];
  const http = createServer((request, response) => {
    void readRequestBody(request).then((body) => {
      captured.push({ headers: request.headers, body });
      const headerLength = request.headers['inference-header-content-length'];
      const asked =
        headerLength === undefined
          ? {}
          : (JSON.parse(body.subarray(0, Number(headerLength)).toString('utf8')) as {
              outputs?: { parameters?: { binary_data?: boolean } }[];
            });
      if (asked.outputs?.[0]?.parameters?.binary_data === true) {
        const bytes = Buffer.alloc(samples.length * 4);
        samples.forEach((sample, index) => bytes.writeFloatLE(sample, index * 4));
        const json = Buffer.from(
          JSON.stringify({
            model_name: 'cosyvoice2',
            model_version: '1',
            outputs: [
              {
                name: 'waveform',
                datatype: 'FP32',
                shape: [1, samples.length],
                parameters: { binary_data_size: bytes.length },
              },
            ],
          }),
        );
        response.writeHead(200, {
          'content-type': 'application/octet-stream',
          'inference-header-content-length': String(json.length),
          'content-length': json.length + bytes.length,
        });
        response.end(Buffer.concat([json, bytes]));
      } else {
        const json = JSON.stringify({
          model_name: 'cosyvoice2',
          model_version: '1',
          outputs: [{ name: 'waveform', datatype: 'FP32', shape: [1, samples.length], data: Array.from(samples) }],
        });
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
        response.end(json);
      }
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => closeServer(http) });
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, captured };
}

/** One input of a binary request, with its bytes cut from after the JSON header. */
interface BinaryInput {
  name: string;
  datatype: string;
  shape: number[];
  parameters: { binary_data_size: number };
  data?: unknown;
  bytes: Buffer;
}

/** Splits a binary tensor data request per the extension: JSON of Inference-Header-Content-Length bytes, then each input's binary_data_size bytes in order. */
function splitBinaryRequest(request: CapturedRequest): {
  json: { inputs: BinaryInput[]; outputs?: unknown };
  inputs: Map<string, BinaryInput>;
  leftOver: number;
} {
  const headerLength = Number(request.headers['inference-header-content-length']);
  const json = JSON.parse(request.body.subarray(0, headerLength).toString('utf8')) as {
    inputs: BinaryInput[];
    outputs?: unknown;
  };
  let offset = headerLength;
  const inputs = new Map<string, BinaryInput>();
  for (const input of json.inputs) {
    const bytes = request.body.subarray(offset, offset + input.parameters.binary_data_size);
    offset += input.parameters.binary_data_size;
    inputs.set(input.name, { ...input, bytes });
  }
  return { json, inputs, leftOver: request.body.length - offset };
}

/** One BYTES element: a 4-byte unsigned LE length, then that many UTF-8 bytes (which must be all the bytes). */
function bytesElement(bytes: Buffer): string {
  expect(bytes.readUInt32LE(0)).toBe(bytes.length - 4);
  return bytes.subarray(4).toString('utf8');
}

const NO_CHECKS = { checks: { enabled: false }, probe: false };

describe('cosyvoice2 Triton client, binary tensor data', () => {
  it('sends the JSON header, then each input as raw little-endian bytes in input order, and asks for binary output', async () => {
    const speech = await loopbackSpeech(TEXT, 24000);
    const capture = await captureServer(speech);
    const text = 'The café by the tower opens at nine — come early, please.';
    expect(Buffer.byteLength(text)).toBeGreaterThan(text.length); // multi-byte UTF-8: the length prefix counts bytes
    const voice = { promptWav: prompt.path, promptText: prompt.transcript };
    await (
      await createCosyVoice2TritonSynthesizer({ urls: [capture.url], ...FAST, ...NO_CHECKS })
    ).synthesize({ text, language: 'en', voice });
    await (
      await createCosyVoice2TritonSynthesizer({ urls: [capture.url], binaryTensors: false, ...FAST, ...NO_CHECKS })
    ).synthesize({ text, language: 'en', voice });
    const [binary, json] = capture.captured as [CapturedRequest, CapturedRequest];

    expect(binary.headers['content-type']).toBe('application/octet-stream');
    expect(Number(binary.headers['content-length'])).toBe(binary.body.length);
    const { json: header, inputs, leftOver } = splitBinaryRequest(binary);
    expect(leftOver).toBe(0);
    expect(header.outputs).toEqual([{ name: 'waveform', parameters: { binary_data: true } }]);
    expect(header.inputs.map((input) => [input.name, input.datatype])).toEqual([
      ['reference_wav', 'FP32'],
      ['reference_wav_len', 'INT32'],
      ['reference_text', 'BYTES'],
      ['target_text', 'BYTES'],
    ]);
    for (const input of header.inputs) expect(input).not.toHaveProperty('data');
    const wav = inputs.get('reference_wav') as BinaryInput;
    const length = wav.shape[1] as number;
    expect(wav.shape).toEqual([1, length]);
    expect(wav.bytes.length).toBe(length * 4);
    const samples = Array.from({ length }, (_, index) => wav.bytes.readFloatLE(index * 4));
    // The prompt is on the 16-bit grid: decoded as float32 little-endian, every value is k / 32768.
    expect(samples.every((sample) => Number.isInteger(sample * 32768) && Math.abs(sample) <= 1)).toBe(true);
    expect(samples.some((sample) => sample !== 0)).toBe(true);
    expect((inputs.get('reference_wav_len') as BinaryInput).shape).toEqual([1, 1]);
    expect((inputs.get('reference_wav_len') as BinaryInput).bytes.length).toBe(4);
    expect((inputs.get('reference_wav_len') as BinaryInput).bytes.readInt32LE(0)).toBe(length);
    expect(bytesElement((inputs.get('reference_text') as BinaryInput).bytes)).toBe(prompt.transcript);
    expect(bytesElement((inputs.get('target_text') as BinaryInput).bytes)).toBe(text);

    // binaryTensors: false sends the same tensors as KServe v2 JSON (samples to 6 decimals).
    expect(json.headers['content-type']).toBe('application/json');
    expect(json.headers['inference-header-content-length']).toBeUndefined();
    const body = JSON.parse(json.body.toString('utf8')) as {
      inputs: { name: string; data: unknown[]; parameters?: unknown }[];
      outputs?: unknown;
    };
    expect(body.outputs).toBeUndefined();
    const byName = new Map(body.inputs.map((input) => [input.name, input]));
    for (const input of body.inputs) expect(input.parameters).toBeUndefined();
    const jsonSamples = (byName.get('reference_wav')?.data as number[][])[0] as number[];
    expect(jsonSamples.length).toBe(length);
    expect(jsonSamples.every((value, index) => Math.abs(value - (samples[index] as number)) <= 5.01e-7)).toBe(true);
    expect(byName.get('reference_wav_len')?.data).toEqual([[length]]);
    expect(byName.get('target_text')?.data).toEqual([text]);
  });

  it('reads the binary waveform bit for bit (JSON would round it to 6 decimals)', async () => {
    const speech = await loopbackSpeech(TEXT, 24000);
    expect(speech.some((sample) => Math.fround(Math.round(sample * 1e6) / 1e6) !== sample)).toBe(true);
    const capture = await captureServer(speech);
    const voice = { promptWav: prompt.path, promptText: prompt.transcript };
    const binary = await (
      await createCosyVoice2TritonSynthesizer({ urls: [capture.url], ...FAST, ...NO_CHECKS })
    ).synthesize({ text: TEXT, language: 'en', voice });
    expect(binary.audio.sampleRate).toBe(24000);
    expect(binary.audio.channels[0]).toEqual(speech);
    // The same server answering JSON (the request asked for no binary output): the numbers are read too.
    const json = await (
      await createCosyVoice2TritonSynthesizer({ urls: [capture.url], binaryTensors: false, ...FAST, ...NO_CHECKS })
    ).synthesize({ text: TEXT, language: 'en', voice });
    expect(json.audio.channels[0]).toEqual(speech);
    expect(capture.captured.map((request) => request.headers['content-type'])).toEqual([
      'application/octet-stream',
      'application/json',
    ]);
  });

  it('makes the loopback server answer in the encoding asked for, and reads a JSON answer to a binary request', async () => {
    const backend = new CosyVoice2TritonBackend({ modelName: 'cosyvoice2', model: 'test', sampleRate: 24000 });
    const request = await backend.buildRequest({
      text: TEXT,
      spokenText: TEXT,
      language: 'en',
      voice: { promptWav: prompt.path, promptText: prompt.transcript },
      attemptIndex: 0,
      previousErrors: [],
      toSpoken: async (other) => other,
    });
    const send = (url: string): Promise<Response> =>
      fetch(`${url}${request.route}`, { method: 'POST', headers: request.headers, body: request.body });

    const binaryServer = await server();
    const binary = await send(binaryServer.url);
    expect(binary.status).toBe(200);
    const headerLength = Number(binary.headers.get('inference-header-content-length'));
    const bytes = Buffer.from(await binary.arrayBuffer());
    const header = JSON.parse(bytes.subarray(0, headerLength).toString('utf8')) as {
      outputs: { name: string; shape: number[]; parameters: { binary_data_size: number }; data?: unknown }[];
    };
    const output = header.outputs[0] as (typeof header.outputs)[0];
    expect(output.name).toBe('waveform');
    expect(output.data).toBeUndefined();
    expect(output.parameters.binary_data_size).toBe((output.shape[1] as number) * 4);
    expect(bytes.length - headerLength).toBe(output.parameters.binary_data_size);
    expect(binaryServer.requests[0]?.fields).toEqual({ reference_text: prompt.transcript, target_text: TEXT });

    const jsonServer = await server({ binaryAnswers: false });
    const json = await send(jsonServer.url);
    expect(json.headers.get('inference-header-content-length')).toBeNull();
    expect(((await json.json()) as { outputs: { data: number[] }[] }).outputs[0]?.data.length).toBe(output.shape[1]);
    const synthesizer = await createCosyVoice2TritonSynthesizer({ urls: [jsonServer.url], ...FAST });
    const answer = await synthesizer.synthesize({
      text: TEXT,
      language: 'en',
      voice: { promptWav: prompt.path, promptText: prompt.transcript },
    });
    expect((answer.audio.channels[0] as Float32Array).length / 24000).toBeGreaterThan(3);
    expect(synthesizer.statistics().failures).toEqual({});
  });

  it('rejects malformed binary requests like Triton (400)', async () => {
    const loopback = await server();
    const backend = new CosyVoice2TritonBackend({ modelName: 'cosyvoice2', model: 'test', sampleRate: 24000 });
    const request = await backend.buildRequest({
      text: TEXT,
      spokenText: TEXT,
      language: 'en',
      voice: { promptWav: prompt.path, promptText: prompt.transcript },
      attemptIndex: 0,
      previousErrors: [],
      toSpoken: async (other) => other,
    });
    const body = request.body as Uint8Array;
    const post = async (headers: Record<string, string>, sent: Uint8Array): Promise<string> => {
      const answer = await fetch(`${loopback.url}${request.route}`, { method: 'POST', headers, body: sent });
      expect(answer.status).toBe(400);
      return ((await answer.json()) as { error: string }).error;
    };
    expect(await post(request.headers, body.subarray(0, body.length - 3))).toMatch(
      /binary_data_size \d+ but only \d+ bytes remain/,
    );
    expect(await post(request.headers, Buffer.concat([body, Buffer.from([0])]))).toMatch(/additional input data/);
    expect(await post({ 'content-type': 'application/octet-stream' }, body)).toMatch(
      /failed to parse the request JSON/,
    );
  });

  it.each([
    { binaryTensors: true, detail: /declares \d+ bytes of binary data but only \d+ arrived/ },
    { binaryTensors: false, detail: /has \d+ values for shape \[1,\d+\]/ },
  ])(
    'retries an answer cut short (binaryTensors $binaryTensors), then quarantines a persistent one',
    async ({ binaryTensors, detail }) => {
      const voice = { promptWav: prompt.path, promptText: prompt.transcript };
      const loopback = await server({
        cutAnswers: 'truncated',
        faults: faultsByRequestIndex({
          0: { kind: 'cut-stream', fraction: 0.5, how: 'end' },
          1: { kind: 'cut-stream', fraction: 0.3, how: 'end' },
        }),
      });
      const synthesizer = await createCosyVoice2TritonSynthesizer({ urls: [loopback.url], binaryTensors, ...FAST });
      const output = await synthesizer.synthesize({ text: TEXT, language: 'en', voice });
      expect((output.audio.channels[0] as Float32Array).length / 24000).toBeGreaterThan(3);
      expect(loopback.requests.map((request) => request.status)).toEqual([200, 200, 200]);
      expect(synthesizer.statistics().failures).toEqual({ 'service-error': 2 });
      expect(synthesizer.statistics().retries).toBe(2);

      const always = await server({
        cutAnswers: 'truncated',
        faults: () => ({ kind: 'cut-stream', fraction: 0.5, how: 'end' }),
      });
      const failing = await createCosyVoice2TritonSynthesizer({ urls: [always.url], binaryTensors, ...FAST });
      const error = await failing.synthesize({ text: TEXT, language: 'en', voice }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SpeechSynthesisQuarantineError);
      expect((error as SpeechSynthesisQuarantineError).reason).toBe('retries-exhausted');
      expect((error as SpeechSynthesisQuarantineError).failure).toBe('service-error');
      expect((error as SpeechSynthesisQuarantineError).attempts).toHaveLength(4);
      expect((error as Error).message).toMatch(detail);
    },
  );
});

describe('cosyvoice2 Triton client, reading answers', () => {
  const backend = new CosyVoice2TritonBackend({ modelName: 'cosyvoice2', model: 'test', sampleRate: 24000 });
  const request = { route: '/v2/models/cosyvoice2/infer', headers: {}, body: '' };
  const context = { endpoint: 'http://gpu1:8000', text: TEXT };
  /** A 200 answer: `json` (an object, serialized) then `binary`, with the headers given. */
  const answer = (json: unknown, binary: Uint8Array, headers: Record<string, string> = {}): ServiceResponse => {
    const text = Buffer.from(JSON.stringify(json));
    return serviceResponse(200, new Headers(headers), [Buffer.concat([text, binary])]);
  };
  /** float32 LE bytes of `values`, encoded here. */
  const float32 = (values: number[]): Buffer => {
    const bytes = Buffer.alloc(values.length * 4);
    values.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
    return bytes;
  };
  const waveform = (size: number, shape = size / 4): unknown => ({
    outputs: [{ name: 'waveform', datatype: 'FP32', shape: [1, shape], parameters: { binary_data_size: size } }],
  });
  const headerLength = (json: unknown): Record<string, string> => ({
    'inference-header-content-length': String(Buffer.byteLength(JSON.stringify(json))),
  });
  const failureOf = (response: ServiceResponse): { failure: string; isRetryable: boolean; detail: string } => {
    try {
      backend.readAudio(response, request, context);
    } catch (error) {
      expect(error).toBeInstanceOf(SpeechServiceError);
      return {
        failure: (error as SpeechServiceError).failure,
        isRetryable: (error as SpeechServiceError).isRetryable,
        detail: (error as SpeechServiceError).detail,
      };
    }
    throw new Error('the answer was read');
  };

  it('finds the waveform bytes after other binary outputs, and reads JSON answers', () => {
    const json = {
      outputs: [
        { name: 'lengths', datatype: 'INT32', shape: [1], parameters: { binary_data_size: 4 } },
        { name: 'waveform', datatype: 'FP32', shape: [1, 3], parameters: { binary_data_size: 12 } },
      ],
    };
    const audio = backend.readAudio(
      answer(json, Buffer.concat([Buffer.from([9, 9, 9, 9]), float32([0.25, -0.5, 0.1])]), headerLength(json)),
      request,
      context,
    );
    expect(audio).toEqual({ channels: [new Float32Array([0.25, -0.5, 0.1])], sampleRate: 24000 });
    const plain = backend.readAudio(
      answer(
        { outputs: [{ name: 'waveform', datatype: 'FP32', shape: [1, 2], data: [0.5, -0.25] }] },
        new Uint8Array(0),
      ),
      request,
      context,
    );
    expect(plain.channels[0]).toEqual(new Float32Array([0.5, -0.25]));
  });

  it('calls a cut binary answer a retryable service-error', () => {
    const json = waveform(16);
    expect(failureOf(answer(json, float32([0.1, 0.2, 0.3]), headerLength(json)))).toMatchObject({
      failure: 'service-error',
      isRetryable: true,
      detail: expect.stringMatching(/declares 16 bytes of binary data but only 12 arrived/),
    });
    const odd = waveform(10, 3);
    expect(failureOf(answer(odd, Buffer.alloc(10), headerLength(odd)))).toMatchObject({
      failure: 'service-error',
      isRetryable: true,
      detail: expect.stringMatching(/10 bytes of binary data, not a whole number of float32/),
    });
    const short = waveform(8, 3);
    expect(failureOf(answer(short, float32([0.1, 0.2]), headerLength(short)))).toMatchObject({
      failure: 'service-error',
      isRetryable: true,
      detail: expect.stringMatching(/has 2 values for shape \[1,3\]/),
    });
    const cutHeader = answer(waveform(8), new Uint8Array(0), { 'inference-header-content-length': '5000' });
    expect(failureOf(cutHeader)).toMatchObject({
      failure: 'service-error',
      isRetryable: true,
      detail: expect.stringMatching(/inside its 5000-byte JSON header/),
    });
  });

  it('calls a missing or garbled header a service-error that is not retried', () => {
    const json = waveform(8);
    // Binary data after the JSON, but no header saying where the JSON ends.
    expect(failureOf(answer(json, float32([0.1, 0.2])))).toMatchObject({
      failure: 'service-error',
      isRetryable: false,
      detail: expect.stringMatching(/has no Inference-Header-Content-Length header and is not JSON/),
    });
    // Only the JSON, declaring binary outputs, without the header.
    expect(failureOf(answer(json, new Uint8Array(0)))).toMatchObject({
      failure: 'service-error',
      isRetryable: false,
      detail: expect.stringMatching(
        /holds binary data but the answer lacks the Inference-Header-Content-Length header/,
      ),
    });
    for (const garbled of ['twelve', '-4', '']) {
      expect(
        failureOf(answer(json, float32([0.1, 0.2]), { 'inference-header-content-length': garbled })),
      ).toMatchObject({ failure: 'service-error', isRetryable: false });
    }
    expect(failureOf(answer(json, float32([0.1, 0.2]), { 'inference-header-content-length': '7' }))).toMatchObject({
      isRetryable: false,
      detail: expect.stringMatching(/not JSON/),
    });
    expect(failureOf(answer(json, float32([0.1, 0.2, 0.3]), headerLength(json)))).toMatchObject({
      isRetryable: false,
      detail: expect.stringMatching(/4 bytes follow/),
    });
    const badSize = {
      outputs: [{ name: 'waveform', datatype: 'FP32', shape: [1, 2], parameters: { binary_data_size: 'eight' } }],
    };
    expect(failureOf(answer(badSize, float32([0.1, 0.2]), headerLength(badSize)))).toMatchObject({
      isRetryable: false,
      detail: expect.stringMatching(/not a byte count/),
    });
  });
});
