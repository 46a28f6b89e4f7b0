/**
 * A loopback server that speaks the CosyVoice FastAPI protocol (FunAudioLLM/CosyVoice
 * `runtime/python/fastapi/server.py`) for tests and benchmarks: GET or POST `multipart/form-data` to
 * `/inference_zero_shot`, `/inference_cross_lingual`, `/inference_instruct2` (and `/inference_sft`,
 * which fails as it does on CosyVoice2: no built-in speakers), answered with a stream of raw
 * little-endian int16 mono PCM without header at the model's rate, in chunks. Real speech: espeak-ng
 * reads `tts_text`. FastAPI's error shapes: 422 with `detail` for missing fields, 404/405 `detail`,
 * and uvicorn's plain `Internal Server Error` (500) when the model code raises (unreadable prompt,
 * prompt below 16 kHz or over 30 s).
 *
 * Capacity: one request processed at a time by default (further requests wait, as on one GPU
 * process); `latencyMs` is the processing time of each, over which the audio chunks are streamed. Faults are scripted per request
 * (loopback-speech.ts). Multipart parsing uses Node's built-in `Request.formData()` (undici) on the
 * request body.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  applyAudioFaults,
  CapacityGate,
  closeServer,
  encodePcm16LittleEndian,
  extraDelay,
  faultList,
  httpErrorFault,
  LoopbackTime,
  loopbackAudio,
  readRequestBody,
  readWaveHeader,
  RequestLog,
  sendJson,
  streamBytes,
  type FaultScript,
  serviceMilliseconds,
  type LoopbackServer,
  type LoopbackSpeechSource,
  type LoopbackVoice,
} from './loopback-speech.ts';
import type { Clock } from '../../clock.ts';

/** Settings of {@link startCosyVoiceLoopbackServer}. */
export interface CosyVoiceLoopbackOptions {
  /** Processing time of each request while it holds a capacity slot, milliseconds; the chunks are spread over it. Default 0. */
  latencyMs: number;
  /** Faults per request. Default none. */
  faults?: FaultScript;
  /** The model's output rate, Hz (what the audio really is). Default 24000 (CosyVoice2). */
  sampleRate: number;
  /** Requests processed at once; more wait. Default 1 (one FastAPI process). */
  capacity: number;
  /** Bytes per streamed chunk; odd by default (9601) so chunks split samples, as TCP may. */
  chunkBytes: number;
  /** Every zero-shot request fails with HTTP 500 (the prompt-handling bug of some server versions). Default false. */
  zeroShotAlwaysFails: boolean;
  /** espeak-ng rate and pitch of the speech. */
  voice: Partial<LoopbackVoice>;
  /** Added to `latencyMs` per answer: this factor x the answer's audio duration (a GPU server's real-time factor). Default 0. */
  realTimeFactor: number;
  /** What is spoken: espeak-ng speech (default) or the cheap speech-like signal of saturation benchmarks. */
  speech: LoopbackSpeechSource;
  /** Service time, `delay` faults and stream steps wait on it, request times are read on it; default the system clock (vitest's fake timers drive it). `close` ends the pending waits. */
  clock?: Clock;
}

const ROUTE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  '/inference_zero_shot': ['tts_text', 'prompt_text', 'prompt_wav'],
  '/inference_cross_lingual': ['tts_text', 'prompt_wav'],
  '/inference_instruct2': ['tts_text', 'instruct_text', 'prompt_wav'],
  '/inference_sft': ['tts_text', 'spk_id'],
};

/** The OpenAPI description the server gives at `/openapi.json` (paths only, as the probe reads them). */
function openApiDescription(): unknown {
  const paths: Record<string, unknown> = {};
  for (const route of Object.keys(ROUTE_FIELDS))
    paths[route] = { get: { summary: route.slice(1) }, post: { summary: route.slice(1) } };
  return { openapi: '3.1.0', info: { title: 'FastAPI', version: '0.1.0' }, paths };
}

/**
 * Starts a CosyVoice FastAPI-protocol server on 127.0.0.1 (a free port).
 *
 * @param options latency (milliseconds), faults, model rate (Hz), capacity, chunk size, zero-shot bug, voice.
 * @returns `{url, close, requests, peakOpenRequests}`; `requests` records every request (fields, prompt, faults, timing).
 */
export async function startCosyVoiceLoopbackServer(
  options: Partial<CosyVoiceLoopbackOptions> = {},
): Promise<LoopbackServer> {
  const settings: CosyVoiceLoopbackOptions = {
    latencyMs: 0,
    sampleRate: 24000,
    capacity: 1,
    chunkBytes: 9601,
    zeroShotAlwaysFails: false,
    voice: {},
    realTimeFactor: 0,
    speech: 'espeak-ng',
    ...options,
  };
  const gate = new CapacityGate(settings.capacity);
  const time = new LoopbackTime(options.clock);
  const log = new RequestLog(time);

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) {
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        response.end('Internal Server Error');
      } else {
        response.destroy(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const route = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const method = request.method ?? 'GET';
    if (route === '/openapi.json' && method === 'GET') {
      sendJson(response, 200, openApiDescription());
      return;
    }
    const required = ROUTE_FIELDS[route];
    if (!required) {
      sendJson(response, 404, { detail: 'Not Found' });
      return;
    }
    if (method !== 'GET' && method !== 'POST') {
      sendJson(response, 405, { detail: 'Method Not Allowed' });
      return;
    }
    const { record, finish } = log.begin(method, route);
    response.on('close', finish);
    // The capacity slot is taken on arrival: parsing is part of the server's time per request.
    const release = await gate.acquire();
    record.startedAt = time.now();
    try {
      let form: FormData;
      try {
        const body = await readRequestBody(request);
        form = await new Request(`http://127.0.0.1${request.url ?? '/'}`, {
          method: 'POST',
          headers: { 'content-type': request.headers['content-type'] ?? '' },
          body,
        }).formData();
      } catch {
        record.status = 400;
        sendJson(response, 400, { detail: 'There was an error parsing the body' });
        return;
      }

      const missing = required.filter((field) => !form.has(field));
      if (missing.length > 0) {
        record.status = 422;
        sendJson(response, 422, {
          detail: missing.map((field) => ({
            type: 'missing',
            loc: ['body', field],
            msg: 'Field required',
            input: null,
          })),
        });
        return;
      }
      for (const [name, value] of form.entries()) if (typeof value === 'string') record.fields[name] = value;
      const upload = form.get('prompt_wav');
      if (required.includes('prompt_wav') && typeof upload === 'string') {
        record.status = 422;
        sendJson(response, 422, {
          detail: [
            {
              type: 'value_error',
              loc: ['body', 'prompt_wav'],
              msg: `Value error, Expected UploadFile, received: <class 'str'>`,
              input: upload,
            },
          ],
        });
        return;
      }

      const serverError = (): void => {
        record.status = 500;
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        response.end('Internal Server Error');
      };
      if (route === '/inference_sft') return serverError(); // CosyVoice2 has no built-in speakers: KeyError
      let promptSamples = 0;
      if (upload && typeof upload !== 'string') {
        const bytes = new Uint8Array(await upload.arrayBuffer());
        let header;
        try {
          header = readWaveHeader(bytes);
        } catch {
          return serverError(); // libsndfile cannot read it
        }
        record.prompt = {
          sampleRate: header.sampleRate,
          channels: header.channels,
          durationSeconds: header.frames / header.sampleRate,
          bytes: bytes.length,
        };
        promptSamples = header.frames;
        // load_wav asserts the rate is at least 16 kHz; the frontend asserts at most 30 s.
        if (header.sampleRate < 16000 || header.frames / header.sampleRate > 30) return serverError();
      }

      const text = record.fields.tts_text ?? '';
      const faults = faultList(settings.faults, { index: record.index, route, text });
      record.faults = faults;
      const voice = { pitch: 30 + (promptSamples % 40), ...settings.voice };
      const speech = loopbackAudio(text, settings.sampleRate, voice, settings.speech);
      speech.catch(() => undefined);
      await time.wait(extraDelay(faults));
      if (response.destroyed || time.closed) return;
      const failure = httpErrorFault(faults);
      if (failure || (settings.zeroShotAlwaysFails && route === '/inference_zero_shot')) {
        record.status = failure?.status ?? 500;
        response.writeHead(record.status, {
          'content-type': 'text/plain; charset=utf-8',
          ...(failure?.retryAfterSeconds !== undefined ? { 'retry-after': String(failure.retryAfterSeconds) } : {}),
        });
        await time.wait(record.startedAt + settings.latencyMs - time.now());
        response.end(failure?.body ?? 'Internal Server Error');
        return;
      }
      record.status = 200;
      if (faults.some((fault) => fault.kind === 'empty')) {
        response.writeHead(200);
        await time.wait(record.startedAt + settings.latencyMs - time.now());
        response.end();
        return;
      }
      const samples = await applyAudioFaults(await speech, settings.sampleRate, faults, voice);
      // StreamingResponse without a media type: no content-type, chunked transfer.
      response.writeHead(200);
      record.audioBytes = await streamBytes(
        response,
        encodePcm16LittleEndian(samples),
        settings.chunkBytes,
        faults,
        time,
        {
          startedAt: record.startedAt + extraDelay(faults),
          durationMilliseconds: serviceMilliseconds(
            settings.latencyMs,
            settings.realTimeFactor,
            samples.length,
            settings.sampleRate,
          ),
        },
      );
    } finally {
      release();
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: log.requests,
    peakOpenRequests: () => log.peakOpen(),
    close: () => closeServer(server, time),
  };
}
