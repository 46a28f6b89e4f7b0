/**
 * A loopback server that speaks the OpenAI speech protocol (`POST /v1/audio/speech`, JSON
 * `{model, input, voice, response_format, speed}`) for tests and benchmarks, answering with a WAV
 * file (exact sizes, or a streamed header with placeholder sizes as some wrappers send) or raw
 * little-endian int16 PCM. OpenAI's error shape: `{"error": {"message", "type", "param", "code"}}`
 * with 400 for bad input. Real speech: espeak-ng reads `input` (`speed` scales its rate). Faults are
 * scripted per request (loopback-speech.ts).
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
  loopbackSpeech,
  readRequestBody,
  RequestLog,
  sendJson,
  streamBytes,
  type FaultScript,
  type LoopbackServer,
  type LoopbackVoice,
} from './loopback-speech.ts';
import type { Clock } from '../../clock.ts';

/** Settings of {@link startOpenAiSpeechLoopbackServer}. */
export interface OpenAiSpeechLoopbackOptions {
  /** Processing time of each request while it holds a capacity slot, milliseconds. Default 0. */
  latencyMs: number;
  faults?: FaultScript;
  /** Rate of the audio produced, Hz. Default 24000. */
  sampleRate: number;
  /** Requests processed at once. Default 1. */
  capacity: number;
  /** Route served. Default `/v1/audio/speech`. */
  path: string;
  /** Voice names accepted; null = any. Default null. */
  voices: readonly string[] | null;
  /** WAV header: 'exact' sizes (default) or 'streaming' (0xFFFFFFFF placeholders). */
  wavHeader: 'exact' | 'streaming';
  /** Bytes per streamed chunk. Default 9601. */
  chunkBytes: number;
  voice: Partial<LoopbackVoice>;
  /** Service time, `delay` faults and stream steps wait on it, request times are read on it; default the system clock (vitest's fake timers drive it). `close` ends the pending waits. */
  clock?: Clock;
}

function invalidRequest(response: ServerResponse, message: string, param: string | null = null): void {
  sendJson(response, 400, { error: { message, type: 'invalid_request_error', param, code: null } });
}

/** A 44-byte PCM16 mono WAV header; `dataBytes` null writes the streaming placeholders. */
function wavHeader(sampleRate: number, dataBytes: number | null): Uint8Array {
  const header = new Uint8Array(44);
  const view = new DataView(header.buffer);
  const ascii = (offset: number, text: string): void =>
    [...text].forEach((character, index) => (header[offset + index] = character.charCodeAt(0)));
  ascii(0, 'RIFF');
  view.setUint32(4, dataBytes === null ? 0xffffffff : 36 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, dataBytes === null ? 0xffffffff : dataBytes, true);
  return header;
}

/**
 * Starts an OpenAI-speech-protocol server on 127.0.0.1 (a free port).
 *
 * @returns `{url, close, requests, peakOpenRequests}`.
 */
export async function startOpenAiSpeechLoopbackServer(
  options: Partial<OpenAiSpeechLoopbackOptions> = {},
): Promise<LoopbackServer> {
  const settings: OpenAiSpeechLoopbackOptions = {
    latencyMs: 0,
    sampleRate: 24000,
    capacity: 1,
    path: '/v1/audio/speech',
    voices: null,
    wavHeader: 'exact',
    chunkBytes: 9601,
    voice: {},
    ...options,
  };
  const gate = new CapacityGate(settings.capacity);
  const time = new LoopbackTime(options.clock);
  const log = new RequestLog(time);

  const server = createServer((request, response) => {
    handle(request, response).catch((caught: unknown) => {
      if (!response.headersSent)
        sendJson(response, 500, { error: { message: String(caught), type: 'server_error', param: null, code: null } });
      else response.destroy();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const route = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (route !== settings.path) return sendJson(response, 404, { detail: 'Not Found' });
    if (request.method !== 'POST') return sendJson(response, 405, { detail: 'Method Not Allowed' });
    const { record, finish } = log.begin('POST', route);
    response.on('close', finish);
    // The capacity slot is taken on arrival: parsing is part of the server's time per request.
    const release = await gate.acquire();
    record.startedAt = time.now();
    try {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse((await readRequestBody(request)).toString('utf8')) as Record<string, unknown>;
      } catch {
        record.status = 400;
        return invalidRequest(response, 'We could not parse the JSON body of your request.');
      }
      for (const [name, value] of Object.entries(body))
        record.fields[name] = typeof value === 'string' ? value : JSON.stringify(value);
      const reject = (message: string, param: string): void => {
        record.status = 400;
        invalidRequest(response, message, param);
      };
      if (typeof body.input !== 'string' || body.input.length === 0)
        return reject("Missing required parameter: 'input'.", 'input');
      if (typeof body.voice !== 'string' || body.voice.length === 0)
        return reject("Missing required parameter: 'voice'.", 'voice');
      if (settings.voices && !settings.voices.includes(body.voice))
        return reject(`Invalid value for 'voice': '${body.voice}'.`, 'voice');
      const format = body.response_format ?? 'mp3';
      if (format !== 'wav' && format !== 'pcm')
        return reject(`Unsupported response_format '${String(format)}' (this server: wav, pcm).`, 'response_format');
      const speed = body.speed === undefined ? 1 : Number(body.speed);
      if (!(speed >= 0.25 && speed <= 4)) return reject(`Invalid value for 'speed': ${String(body.speed)}.`, 'speed');

      const faults = faultList(settings.faults, { index: record.index, route, text: body.input });
      record.faults = faults;
      const voice = { wordsPerMinute: 175 * speed, ...settings.voice };
      const speech = loopbackSpeech(body.input, settings.sampleRate, voice);
      speech.catch(() => undefined);
      await time.wait(extraDelay(faults));
      if (response.destroyed || time.closed) return;
      const failure = httpErrorFault(faults);
      if (failure) {
        record.status = failure.status;
        await time.wait(record.startedAt + settings.latencyMs - time.now());
        return sendJson(
          response,
          failure.status,
          {
            error: {
              message: failure.body ?? 'The server had an error while processing your request.',
              type: 'server_error',
              param: null,
              code: null,
            },
          },
          failure.retryAfterSeconds !== undefined ? { 'retry-after': String(failure.retryAfterSeconds) } : {},
        );
      }
      const samples = faults.some((fault) => fault.kind === 'empty')
        ? new Float32Array(0)
        : await applyAudioFaults(await speech, settings.sampleRate, faults, voice);
      const pcm = encodePcm16LittleEndian(samples);
      let bytes: Uint8Array = pcm;
      if (format === 'wav') {
        const header = wavHeader(settings.sampleRate, settings.wavHeader === 'exact' ? pcm.length : null);
        bytes = new Uint8Array(header.length + pcm.length);
        bytes.set(header);
        bytes.set(pcm, header.length);
      }
      record.status = 200;
      response.writeHead(200, { 'content-type': format === 'wav' ? 'audio/wav' : 'audio/pcm' });
      record.audioBytes = await streamBytes(response, bytes, settings.chunkBytes, faults, time, {
        startedAt: record.startedAt + extraDelay(faults),
        durationMilliseconds: settings.latencyMs,
      });
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
