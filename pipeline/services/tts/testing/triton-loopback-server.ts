/**
 * A loopback server that speaks the Triton KServe v2 HTTP/JSON protocol of the CosyVoice2 deployment
 * (FunAudioLLM/CosyVoice `runtime/triton_trtllm`, model `cosyvoice2`) for tests and benchmarks:
 * `GET /v2/health/ready`, `GET /v2/models/{model}` (metadata), `POST /v2/models/{model}/infer` with
 * inputs `reference_wav` FP32 [1,N], `reference_wav_len` INT32 [1,1], `reference_text` and
 * `target_text` BYTES [1,1], answered with output `waveform` FP32 [1,M] at the model's rate (24 kHz).
 * Triton's error shape: `{"error": "..."}` with 400 for bad input or an unknown model. Real speech:
 * espeak-ng reads `target_text`. Faults are scripted per request (loopback-speech.ts); `cut-stream`
 * `end` returns a clean but shortened waveform, `reset` breaks the connection mid-body.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tensorNumbers } from '../cosyvoice2-triton.ts';
import {
  applyAudioFaults,
  CapacityGate,
  closeServer,
  delay,
  extraDelay,
  faultList,
  httpErrorFault,
  loopbackSpeech,
  readRequestBody,
  RequestLog,
  sendJson,
  type FaultScript,
  type LoopbackServer,
  type LoopbackVoice,
} from './loopback-speech.ts';

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

interface InputTensor {
  name?: unknown;
  datatype?: unknown;
  shape?: unknown;
  data?: unknown;
}

/**
 * Starts a Triton-protocol CosyVoice2 server on 127.0.0.1 (a free port).
 *
 * @returns `{url, close, requests, peakOpenRequests}`.
 */
export async function startTritonLoopbackServer(options: Partial<TritonLoopbackOptions> = {}): Promise<LoopbackServer> {
  const settings: TritonLoopbackOptions = { latencyMs: 0, sampleRate: 24000, capacity: 1, modelName: 'cosyvoice2', voice: {}, ...options };
  const gate = new CapacityGate(settings.capacity);
  const log = new RequestLog();
  const error = (response: ServerResponse, status: number, message: string): void => sendJson(response, status, { error: message });

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
      sendJson(response, 200, { name: settings.modelName, versions: ['1'], platform: 'python', inputs: INPUTS, outputs: [{ name: 'waveform', datatype: 'FP32', shape: [-1, -1] }] });
      return;
    }
    if (method !== 'POST') return error(response, 405, 'Method Not Allowed');

    const { record, finish } = log.begin(method, route);
    response.on('close', finish);
    // The capacity slot is taken on arrival: parsing is part of the server's time per request.
    const release = await gate.acquire();
    record.startedAt = performance.now();
    try {
      let body: { inputs?: InputTensor[] };
      try {
        body = JSON.parse((await readRequestBody(request)).toString('utf8')) as { inputs?: InputTensor[] };
      } catch (caught) {
        record.status = 400;
        return error(response, 400, `failed to parse the request JSON buffer: ${(caught as Error).message}`);
      }
      const inputs = Array.isArray(body.inputs) ? body.inputs : [];
      const byName = new Map(inputs.map((input) => [input.name, input]));
      const problem = validate(byName, inputs.length, settings.modelName);
      if (problem) {
        record.status = 400;
        return error(response, 400, problem);
      }
      const wav = tensorNumbers(byName.get('reference_wav')?.data) as number[];
      const referenceText = String((byName.get('reference_text')?.data as unknown[]).flat(Infinity)[0]);
      const targetText = String((byName.get('target_text')?.data as unknown[]).flat(Infinity)[0]);
      record.fields = { reference_text: referenceText, target_text: targetText };
      record.prompt = { sampleRate: 16000, channels: 1, durationSeconds: wav.length / 16000, bytes: wav.length * 4 };

      const faults = faultList(settings.faults, { index: record.index, route, text: targetText });
      record.faults = faults;
      const voice = { pitch: 30 + (wav.length % 40), ...settings.voice };
      const speech = loopbackSpeech(targetText, settings.sampleRate, voice);
      speech.catch(() => undefined);
      await delay(record.startedAt + settings.latencyMs + extraDelay(faults) - performance.now());
      if (response.destroyed) return;
      const failure = httpErrorFault(faults);
      if (failure) {
        record.status = failure.status;
        return sendJson(response, failure.status, { error: failure.body ?? 'Failed to process the request(s) for model instance' }, failure.retryAfterSeconds !== undefined ? { 'retry-after': String(failure.retryAfterSeconds) } : {});
      }
      let samples = faults.some((fault) => fault.kind === 'empty') ? new Float32Array(0) : await applyAudioFaults(await speech, settings.sampleRate, faults, voice);
      const cut = faults.find((fault) => fault.kind === 'cut-stream');
      if (cut?.kind === 'cut-stream' && cut.how === 'end') samples = samples.subarray(0, Math.floor(samples.length * cut.fraction));
      const data = formatWaveform(samples);
      const answer = `{"model_name":"${settings.modelName}","model_version":"1","outputs":[{"name":"waveform","datatype":"FP32","shape":[1,${samples.length}],"data":[${data}]}]}`;
      record.status = 200;
      record.audioBytes = samples.length * 4;
      if (cut?.kind === 'cut-stream' && cut.how === 'reset') {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
        response.write(answer.slice(0, Math.floor(answer.length / 2)));
        await delay(5);
        response.socket?.destroy();
        response.destroy();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      response.end(answer);
    } finally {
      release();
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests: log.requests, peakOpenRequests: () => log.peakOpen(), close: () => closeServer(server) };
}

/** Triton's checks of an inference request against the model's inputs; the error message or null. */
function validate(byName: Map<unknown, InputTensor>, count: number, modelName: string): string | null {
  if (count !== INPUTS.length) return `expected ${INPUTS.length} inputs but got ${count} inputs for model '${modelName}'`;
  for (const expected of INPUTS) {
    const input = byName.get(expected.name);
    if (!input) return `unexpected inference input for model '${modelName}': missing '${expected.name}'`;
    if (input.datatype !== expected.datatype) return `inference input '${expected.name}' data-type is '${String(input.datatype)}', but model '${modelName}' expects '${expected.datatype}'`;
    if (!Array.isArray(input.shape) || !Array.isArray(input.data)) return `inference input '${expected.name}' needs a shape and data`;
    const elements = (input.shape as unknown[]).reduce<number>((product, size) => product * Number(size), 1);
    const count = expected.datatype === 'BYTES' ? (input.data as unknown[]).flat(Infinity).length : (tensorNumbers(input.data)?.length ?? -1);
    if (count < 0) return `inference input '${expected.name}' holds values that are not numbers`;
    if (elements !== count) return `unexpected number of elements for '${expected.name}': shape [${(input.shape as unknown[]).join(',')}] holds ${elements}, data holds ${count}`;
  }
  const wav = tensorNumbers(byName.get('reference_wav')?.data) as number[];
  const length = (tensorNumbers(byName.get('reference_wav_len')?.data) as number[])[0];
  if (length !== wav.length) return `reference_wav_len ${length} differs from the ${wav.length} samples of reference_wav`;
  return null;
}
