/**
 * A loopback server that speaks the Triton KServe v2 HTTP protocol of the CosyVoice2 deployment
 * (FunAudioLLM/CosyVoice `runtime/triton_trtllm`, model `cosyvoice2`) for tests and benchmarks:
 * `GET /v2/health/ready`, `GET /v2/models/{model}` (metadata), `POST /v2/models/{model}/infer` with
 * inputs `reference_wav` FP32 [1,N], `reference_wav_len` INT32 [1,1], `reference_text` and
 * `target_text` BYTES [1,1], answered with output `waveform` FP32 [1,M] at the model's rate (24 kHz).
 * Inputs come as JSON `data` or, with Triton's binary tensor data extension
 * (triton-inference-server/server `docs/protocol/extension_binary_data.md`), as raw bytes after the
 * JSON header (`Inference-Header-Content-Length`, per input `parameters.binary_data_size`); the
 * waveform is answered as binary data when the request asks for it (`outputs[].parameters.binary_data`
 * or `parameters.binary_data_output`), else as JSON `data`.
 * Triton's error shape: `{"error": "..."}` with 400 for bad input or an unknown model. Real speech:
 * espeak-ng reads `target_text`. Faults are scripted per request (loopback-speech.ts), the same in
 * both encodings: `cut-stream` `reset` breaks the connection mid-body; `cut-stream` `end` returns a
 * complete answer with a shortened waveform, or with {@link TritonLoopbackOptions.cutAnswers}
 * `truncated` an answer that declares the whole waveform (shape, `binary_data_size`) but whose body
 * stops after `fraction` of it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeFloat32LittleEndian, INFERENCE_HEADER_CONTENT_LENGTH } from '../kserve-tensors.ts';
import {
  BadInferenceRequest,
  checkRequestedOutputs,
  type DecodedInput,
  type InferenceRequestHeader,
  INPUTS,
  parseInferenceRequest,
  checkInferenceInputs,
  wantsBinaryWaveform,
} from './triton-inference-request.ts';
import {
  applyAudioFaults,
  CapacityGate,
  closeServer,
  extraDelay,
  faultList,
  httpErrorFault,
  LoopbackTime,
  loopbackAudio,
  readRequestBody,
  RequestLog,
  sendJson,
  type FaultScript,
  serviceMilliseconds,
  type LoopbackServer,
  type LoopbackSpeechSource,
  type LoopbackVoice,
} from './loopback-speech.ts';
import type { Clock } from '../../clock.ts';

/** Settings of {@link startTritonLoopbackServer}. */
export interface TritonLoopbackOptions {
  /** Processing time of each request while it holds a capacity slot, milliseconds. Default 0. */
  latencyMs: number;
  faults?: FaultScript;
  /** Output rate of the model, Hz. Default 24000. */
  sampleRate: number;
  /** Requests processed at once. Default 1. */
  capacity: number;
  /** Model name served. Default `cosyvoice2`. */
  modelName: string;
  voice: Partial<LoopbackVoice>;
  /** Added to `latencyMs` per answer: this factor x the answer's audio duration (a GPU server's real-time factor). Default 0. */
  realTimeFactor: number;
  /** What is spoken: espeak-ng speech (default) or the cheap speech-like signal of saturation benchmarks. */
  speech: LoopbackSpeechSource;
  /**
   * Whether the waveform is answered as binary data when the request asks for it. Default true;
   * false answers JSON `data` always (as a KServe v2 server that ignores `binary_data`).
   */
  binaryAnswers: boolean;
  /**
   * How a `cut-stream` fault with `how: 'end'` is answered: `shortened` (default) a well-formed answer
   * holding the first `fraction` of the waveform (a model that stopped early); `truncated` an answer
   * whose JSON declares the whole waveform (`shape`, and `binary_data_size` in binary) but whose
   * body ends after `fraction` of its values (JSON) or bytes (binary), with a matching
   * Content-Length (a body cut by a proxy or a server bug, not a broken connection).
   */
  cutAnswers: 'shortened' | 'truncated';
  /** Service time, `delay` faults and stream steps wait on it, request times are read on it; default the system clock (vitest's fake timers drive it). `close` ends the pending waits. */
  clock?: Clock;
}

const formattedWaveforms = new WeakMap<Float32Array, string>();

/** Samples as the inside of a JSON array (6 decimals), remembered per sample array (cached speech is formatted once). */
function formatWaveform(samples: Float32Array): string {
  let formatted = formattedWaveforms.get(samples);
  if (formatted === undefined) {
    formatted = Array.from(samples, (sample) => Math.round(sample * 1e6) / 1e6).join(',');
    formattedWaveforms.set(samples, formatted);
  }
  return formatted;
}

/**
 * Starts a Triton-protocol CosyVoice2 server on 127.0.0.1 (a free port).
 *
 * @returns `{url, close, requests, peakOpenRequests}`.
 */
export async function startTritonLoopbackServer(options: Partial<TritonLoopbackOptions> = {}): Promise<LoopbackServer> {
  const settings: TritonLoopbackOptions = {
    latencyMs: 0,
    sampleRate: 24000,
    capacity: 1,
    modelName: 'cosyvoice2',
    voice: {},
    binaryAnswers: true,
    cutAnswers: 'shortened',
    realTimeFactor: 0,
    speech: 'espeak-ng',
    ...options,
  };
  const gate = new CapacityGate(settings.capacity);
  const time = new LoopbackTime(options.clock);
  const log = new RequestLog(time);
  const error = (response: ServerResponse, status: number, message: string): void =>
    sendJson(response, status, { error: message });

  const server = createServer((request, response) => {
    handle(request, response).catch((caught: unknown) => {
      if (!response.headersSent) error(response, 500, String(caught));
      else response.destroy();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const route = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const method = request.method ?? 'GET';
    if (method === 'GET' && (route === '/v2/health/ready' || route === '/v2/health/live')) {
      response.writeHead(200, { 'content-length': 0 });
      response.end();
      return;
    }
    const model = /^\/v2\/models\/([^/]+)(?:\/versions\/\d+)?(\/infer)?$/.exec(route);
    if (!model) {
      error(response, 404, 'Not Found');
      return;
    }
    if (model[1] !== settings.modelName) {
      error(response, 400, `Request for unknown model: '${model[1]}' is not found`);
      return;
    }
    if (!model[2]) {
      if (method !== 'GET') return error(response, 405, 'Method Not Allowed');
      sendJson(response, 200, {
        name: settings.modelName,
        versions: ['1'],
        platform: 'python',
        inputs: INPUTS,
        outputs: [{ name: 'waveform', datatype: 'FP32', shape: [-1, -1] }],
      });
      return;
    }
    if (method !== 'POST') return error(response, 405, 'Method Not Allowed');

    const { record, finish } = log.begin(method, route);
    response.on('close', finish);
    // The capacity slot is taken on arrival: parsing is part of the server's time per request.
    const release = await gate.acquire();
    record.startedAt = time.now();
    try {
      let parsed: { header: InferenceRequestHeader; inputs: DecodedInput[] };
      try {
        parsed = parseInferenceRequest(
          await readRequestBody(request),
          request.headers[INFERENCE_HEADER_CONTENT_LENGTH],
        );
      } catch (caught) {
        if (!(caught instanceof BadInferenceRequest)) throw caught;
        record.status = 400;
        return error(response, 400, caught.message);
      }
      const byName = new Map(parsed.inputs.map((input) => [input.name, input]));
      const problem =
        checkInferenceInputs(byName, parsed.inputs.length, settings.modelName) ??
        checkRequestedOutputs(parsed.header, settings.modelName);
      if (problem) {
        record.status = 400;
        return error(response, 400, problem);
      }
      const wavLength = (byName.get('reference_wav')?.numbers as ArrayLike<number>).length;
      const referenceText = byName.get('reference_text')?.texts[0] as string;
      const targetText = byName.get('target_text')?.texts[0] as string;
      record.fields = { reference_text: referenceText, target_text: targetText };
      record.prompt = { sampleRate: 16000, channels: 1, durationSeconds: wavLength / 16000, bytes: wavLength * 4 };
      const binaryAnswer = settings.binaryAnswers && wantsBinaryWaveform(parsed.header);

      const faults = faultList(settings.faults, { index: record.index, route, text: targetText });
      record.faults = faults;
      const voice = { pitch: 30 + (wavLength % 40), ...settings.voice };
      const speech = loopbackAudio(targetText, settings.sampleRate, voice, settings.speech);
      speech.catch(() => undefined);
      // the answer comes whole after the service time (with a real-time factor: that of the speech, before faults)
      const serviceTime =
        settings.realTimeFactor > 0
          ? serviceMilliseconds(settings.latencyMs, settings.realTimeFactor, (await speech).length, settings.sampleRate)
          : settings.latencyMs;
      await time.wait(record.startedAt + serviceTime + extraDelay(faults) - time.now());
      if (response.destroyed || time.closed) return;
      const failure = httpErrorFault(faults);
      if (failure) {
        record.status = failure.status;
        return sendJson(
          response,
          failure.status,
          { error: failure.body ?? 'Failed to process the request(s) for model instance' },
          failure.retryAfterSeconds !== undefined ? { 'retry-after': String(failure.retryAfterSeconds) } : {},
        );
      }
      let samples = faults.some((fault) => fault.kind === 'empty')
        ? new Float32Array(0)
        : await applyAudioFaults(await speech, settings.sampleRate, faults, voice);
      const cut = faults.find((fault) => fault.kind === 'cut-stream');
      if (cut?.kind === 'cut-stream' && cut.how === 'end' && settings.cutAnswers === 'shortened')
        samples = samples.subarray(0, Math.floor(samples.length * cut.fraction));
      const truncated =
        cut?.kind === 'cut-stream' && cut.how === 'end' && settings.cutAnswers === 'truncated' ? cut.fraction : 1;
      const answer = binaryAnswer
        ? binaryWaveformAnswer(settings.modelName, samples, truncated)
        : jsonWaveformAnswer(settings.modelName, samples, truncated);
      record.status = 200;
      record.audioBytes = answer.audioBytes;
      const headers = { 'content-type': answer.contentType, 'content-length': answer.length, ...answer.headers };
      if (cut?.kind === 'cut-stream' && cut.how === 'reset') {
        response.writeHead(200, headers);
        let left = Math.floor(answer.length / 2);
        for (const part of answer.parts) {
          if (left <= 0) break;
          response.write(part.subarray(0, left));
          left -= part.length;
        }
        await time.wait(5);
        response.socket?.destroy();
        response.destroy();
        return;
      }
      response.writeHead(200, headers);
      for (const part of answer.parts) response.write(part);
      response.end();
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

/** An answer body in parts (JSON header, then binary data when there is some), with its headers. */
interface WaveformAnswer {
  parts: Uint8Array[];
  /** Bytes of all parts. */
  length: number;
  contentType: string;
  headers: Record<string, string>;
  /** Audio bytes (binary) or values x 4 (JSON) sent. */
  audioBytes: number;
}

/** The JSON answer: `shape` declares all samples, `data` holds the first `fraction` of them. */
function jsonWaveformAnswer(modelName: string, samples: Float32Array, fraction: number): WaveformAnswer {
  const sent = fraction < 1 ? samples.subarray(0, Math.floor(samples.length * fraction)) : samples;
  const body = Buffer.from(
    `{"model_name":"${modelName}","model_version":"1","outputs":[{"name":"waveform","datatype":"FP32","shape":[1,${samples.length}],"data":[${formatWaveform(sent)}]}]}`,
  );
  return {
    parts: [body],
    length: body.length,
    contentType: 'application/json',
    headers: {},
    audioBytes: sent.length * 4,
  };
}

/**
 * The binary answer: the JSON header (with `binary_data_size` = all samples x 4), then the first
 * `fraction` of the float32 little-endian bytes.
 */
function binaryWaveformAnswer(modelName: string, samples: Float32Array, fraction: number): WaveformAnswer {
  const bytes = encodeFloat32LittleEndian(samples);
  const header = Buffer.from(
    `{"model_name":"${modelName}","model_version":"1","outputs":[{"name":"waveform","datatype":"FP32","shape":[1,${samples.length}],"parameters":{"binary_data_size":${bytes.length}}}]}`,
  );
  const sent = fraction < 1 ? bytes.subarray(0, Math.floor(bytes.length * fraction)) : bytes;
  return {
    parts: [header, sent],
    length: header.length + sent.length,
    contentType: 'application/octet-stream',
    headers: { [INFERENCE_HEADER_CONTENT_LENGTH]: String(header.length) },
    audioBytes: sent.length,
  };
}
