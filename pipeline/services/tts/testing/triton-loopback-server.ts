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
import { encodeFloat32LittleEndian, INFERENCE_HEADER_CONTENT_LENGTH, tensorNumbers } from '../cosyvoice2-triton.ts';
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

const INPUTS = [
  { name: 'reference_wav', datatype: 'FP32', shape: [-1, -1] },
  { name: 'reference_wav_len', datatype: 'INT32', shape: [-1, 1] },
  { name: 'reference_text', datatype: 'BYTES', shape: [-1, 1] },
  { name: 'target_text', datatype: 'BYTES', shape: [-1, 1] },
];

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

/** One input tensor of the request JSON. */
interface InputTensor {
  name?: unknown;
  datatype?: unknown;
  shape?: unknown;
  data?: unknown;
  parameters?: { binary_data_size?: unknown };
}

/** One requested output of the request JSON. */
interface RequestedOutput {
  name?: unknown;
  parameters?: { binary_data?: unknown };
}

/** The inference request JSON (the whole body, or the part before the binary data). */
interface InferenceRequestHeader {
  inputs?: unknown;
  outputs?: unknown;
  parameters?: { binary_data_output?: unknown };
}

/** An input with its values decoded from JSON `data` or from binary data. */
interface DecodedInput {
  name: unknown;
  datatype: unknown;
  shape: unknown;
  /** FP32 and INT32 values, row-major; null when a JSON value is not a number. */
  numbers: ArrayLike<number> | null;
  /** BYTES elements as UTF-8 text. */
  texts: string[];
}

/** An HTTP 400 answer: Triton rejected the request. */
class BadInferenceRequest extends Error {}

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
        validate(byName, parsed.inputs.length, settings.modelName) ??
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

/**
 * Splits a request body into its JSON header and decoded inputs: the whole body is JSON without an
 * `Inference-Header-Content-Length` header; with one, the inputs that carry `binary_data_size` take
 * their bytes, in input order, from what follows the JSON (FP32/INT32 little-endian, BYTES as 4-byte
 * little-endian length + bytes per element).
 *
 * @throws BadInferenceRequest (answered 400) when the header, the JSON or the binary data are malformed.
 */
function parseInferenceRequest(
  body: Buffer,
  headerLengthValue: string | string[] | undefined,
): { header: InferenceRequestHeader; inputs: DecodedInput[] } {
  let headerLength = body.length;
  if (headerLengthValue !== undefined) {
    const value = Array.isArray(headerLengthValue) ? headerLengthValue.join(',') : headerLengthValue;
    if (!/^\s*\d+\s*$/.test(value))
      throw new BadInferenceRequest(`Unable to parse Inference-Header-Content-Length "${value}"`);
    headerLength = Number(value);
    if (headerLength > body.length)
      throw new BadInferenceRequest(
        `Inference-Header-Content-Length ${headerLength} exceeds the ${body.length}-byte body`,
      );
  }
  let header: InferenceRequestHeader;
  try {
    header = JSON.parse(body.subarray(0, headerLength).toString('utf8')) as InferenceRequestHeader;
  } catch (caught) {
    throw new BadInferenceRequest(`failed to parse the request JSON buffer: ${(caught as Error).message}`);
  }
  const tensors = Array.isArray(header.inputs) ? (header.inputs as InputTensor[]) : [];
  let offset = headerLength;
  const inputs = tensors.map((tensor): DecodedInput => {
    const size = tensor.parameters?.binary_data_size;
    if (size === undefined) {
      const data = Array.isArray(tensor.data) ? (tensor.data as unknown[]) : [];
      return {
        name: tensor.name,
        datatype: tensor.datatype,
        shape: tensor.shape,
        numbers: tensor.datatype === 'BYTES' ? [] : tensorNumbers(data),
        texts: tensor.datatype === 'BYTES' ? data.flat(Infinity).map(String) : [],
      };
    }
    const name = String(tensor.name);
    if (headerLengthValue === undefined)
      throw new BadInferenceRequest(
        `input '${name}' has binary data but the request lacks Inference-Header-Content-Length`,
      );
    if (tensor.data !== undefined) throw new BadInferenceRequest(`input '${name}' has both binary data and JSON data`);
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
      throw new BadInferenceRequest(`input '${name}' has binary_data_size ${JSON.stringify(size)}`);
    if (offset + size > body.length)
      throw new BadInferenceRequest(
        `unexpected size for input '${name}': binary_data_size ${size} but only ${body.length - offset} bytes remain`,
      );
    const bytes = body.subarray(offset, offset + size);
    offset += size;
    return {
      name: tensor.name,
      datatype: tensor.datatype,
      shape: tensor.shape,
      ...decodeBinaryInput(name, tensor.datatype, bytes),
    };
  });
  if (offset !== body.length)
    throw new BadInferenceRequest(
      `unexpected additional input data: ${body.length - offset} bytes after the inputs' binary data`,
    );
  return { header, inputs };
}

/** The values of one binary input; throws BadInferenceRequest for an unsupported datatype or bytes that do not split into elements. */
function decodeBinaryInput(name: string, datatype: unknown, bytes: Buffer): Pick<DecodedInput, 'numbers' | 'texts'> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (datatype === 'FP32' || datatype === 'INT32') {
    if (bytes.length % 4 !== 0)
      throw new BadInferenceRequest(
        `input '${name}' holds ${bytes.length} bytes, not a whole number of ${datatype} values`,
      );
    const numbers = new Array<number>(bytes.length / 4);
    for (let index = 0; index < numbers.length; index++)
      numbers[index] = datatype === 'FP32' ? view.getFloat32(index * 4, true) : view.getInt32(index * 4, true);
    return { numbers, texts: [] };
  }
  if (datatype === 'BYTES') {
    const texts: string[] = [];
    for (let position = 0; position < bytes.length;) {
      if (position + 4 > bytes.length)
        throw new BadInferenceRequest(
          `input '${name}': a BYTES element length is cut after ${bytes.length - position} bytes`,
        );
      const length = view.getUint32(position, true);
      if (position + 4 + length > bytes.length)
        throw new BadInferenceRequest(`input '${name}': a BYTES element of ${length} bytes exceeds the binary data`);
      texts.push(bytes.subarray(position + 4, position + 4 + length).toString('utf8'));
      position += 4 + length;
    }
    return { numbers: [], texts };
  }
  throw new BadInferenceRequest(
    `input '${name}' has datatype '${String(datatype)}', which this server does not read as binary data`,
  );
}

/** Whether the request asks for `waveform` as binary data (its own `binary_data`, else the request's `binary_data_output`). */
function wantsBinaryWaveform(header: InferenceRequestHeader): boolean {
  const outputs = Array.isArray(header.outputs) ? (header.outputs as RequestedOutput[]) : [];
  const own = outputs.find((output) => output.name === 'waveform')?.parameters?.binary_data;
  return (own ?? header.parameters?.binary_data_output) === true;
}

/** Triton's check of the requested outputs: each must be one of the model's; the error message or null. */
function checkRequestedOutputs(header: InferenceRequestHeader, modelName: string): string | null {
  if (header.outputs === undefined) return null;
  if (!Array.isArray(header.outputs)) return `outputs of the request for model '${modelName}' are not a list`;
  for (const output of header.outputs as RequestedOutput[])
    if (output.name !== 'waveform')
      return `unexpected inference output '${String(output.name)}' for model '${modelName}'`;
  return null;
}

/** Triton's checks of an inference request against the model's inputs; the error message or null. */
function validate(byName: Map<unknown, DecodedInput>, count: number, modelName: string): string | null {
  if (count !== INPUTS.length)
    return `expected ${INPUTS.length} inputs but got ${count} inputs for model '${modelName}'`;
  for (const expected of INPUTS) {
    const input = byName.get(expected.name);
    if (!input) return `unexpected inference input for model '${modelName}': missing '${expected.name}'`;
    if (input.datatype !== expected.datatype)
      return `inference input '${expected.name}' data-type is '${String(input.datatype)}', but model '${modelName}' expects '${expected.datatype}'`;
    if (!Array.isArray(input.shape)) return `inference input '${expected.name}' needs a shape`;
    if (input.numbers === null) return `inference input '${expected.name}' holds values that are not numbers`;
    const elements = (input.shape as unknown[]).reduce<number>((product, size) => product * Number(size), 1);
    const held = expected.datatype === 'BYTES' ? input.texts.length : input.numbers.length;
    if (elements !== held)
      return `unexpected number of elements for '${expected.name}': shape [${(input.shape as unknown[]).join(',')}] holds ${elements}, data holds ${held}`;
  }
  const wavLength = (byName.get('reference_wav')?.numbers as ArrayLike<number>).length;
  const length = (byName.get('reference_wav_len')?.numbers as ArrayLike<number>)[0];
  if (length !== wavLength) return `reference_wav_len ${length} differs from the ${wavLength} samples of reference_wav`;
  return null;
}
