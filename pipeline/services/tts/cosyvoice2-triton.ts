/**
 * CosyVoice2 through the Triton Inference Server deployment (FunAudioLLM/CosyVoice
 * `runtime/triton_trtllm`, HTTP port 8000), which the maintainers recommend for throughput.
 *
 * Protocol (KServe v2 JSON, ../shared/docs/services.md; the layout follows the upstream
 * `client_http.py`): `POST /v2/models/cosyvoice2/infer` with
 * `{"inputs": [reference_wav FP32 [1,N] (16 kHz), reference_wav_len INT32 [1,1] = [[N]],
 * reference_text BYTES [1,1], target_text BYTES [1,1]]}`; the answer's `outputs` hold `waveform`
 * FP32 samples at 24 kHz (first output used when none is named so). Errors come as
 * `{"error": "..."}` with an HTTP status (400 invalid input, 500 model failure, 503 not ready).
 * Zero-shot only: the reference text must be the reference audio's transcript.
 */
import { z } from 'zod';
import type { Language } from '../../model/types.ts';
import type { RawAudio } from '../../audio/raw-audio.ts';
import { describeNetworkError, SpeechServiceError, type ServiceResponse } from './service-http.ts';
import {
  assertProbes,
  parseRemoteServiceSettings,
  RemoteSpeechSynthesizer,
  remoteServiceSettingsShape,
  remoteSynthesizerOptions,
  type EndpointProbe,
  type RemoteAttempt,
  type RemoteRequest,
  type RemoteSpeechBackend,
  type RemoteSynthesizerOptions,
} from './remote-synthesizer.ts';
import { SpeechSynthesisError } from './speech-synthesizer.ts';
import type { SpeechActivityDetector } from './synthesis-checks.ts';
import { guessTranscriptLanguage, VOICE_PROMPT_MAXIMUM_SECONDS, VoicePromptCache, voicePromptTempo } from './voice-prompt.ts';

/** Engine id of the CosyVoice2 Triton client. */
export const COSYVOICE2_TRITON_ENGINE_ID = 'cosyvoice2-triton';

/**
 * Voice settings of the Triton engine: `promptWav` (reference recording, >= 16 kHz, sent as 16 kHz
 * float samples, at most 30 s), `promptText` (its exact transcript), `promptLanguage` (when it cannot
 * be guessed), `promptId` and `speaker` (identity in the speaker prompt pool; not sent).
 */
export const cosyVoiceTritonVoiceSchema = z
  .object({
    promptWav: z.string().min(1),
    promptText: z.string().min(1),
    promptLanguage: z.enum(['en', 'ja']).optional(),
    promptId: z.string().optional(),
    speaker: z.string().optional(),
  })
  .strict();
/** Parsed voice settings of the `cosyvoice2-triton` engine. */
export type CosyVoiceTritonVoice = z.output<typeof cosyVoiceTritonVoiceSchema>;

/**
 * Settings of the `cosyvoice2-triton` engine: the shared service settings of remote-synthesizer.ts
 * (urls, sampleRate 24000, concurrencyPerEndpoint 1 (raise it: Triton batches), timeoutSeconds 60,
 * retry, endpointCooldown, kanaReading on, checks) plus `modelName` (the Triton model, default
 * `cosyvoice2`), `model` (label in the engine version) and `probe` (check `/v2/health/ready` and the
 * model's metadata when the engine is created).
 */
export const cosyVoice2TritonSettingsSchema = z
  .object({
    ...remoteServiceSettingsShape({ kanaEnabled: true, sampleRate: 24000, timeoutSeconds: 60 }),
    modelName: z.string().regex(/^[A-Za-z0-9_.-]+$/).default('cosyvoice2'),
    model: z.string().min(1).default('CosyVoice2-0.5B TensorRT-LLM'),
    probe: z.boolean().default(true),
  })
  .strict();
/** Settings of the `cosyvoice2-triton` engine after defaults. */
export type CosyVoice2TritonSettings = z.output<typeof cosyVoice2TritonSettingsSchema>;

/** One KServe v2 output tensor as this client reads it. */
interface OutputTensor {
  name?: unknown;
  datatype?: unknown;
  shape?: unknown;
  data?: unknown;
}

const formattedSamples = new WeakMap<Float32Array, string>();

/**
 * Formats float samples as the inside of a JSON array without the 17-digit noise of `JSON.stringify`
 * on float32 values: 6 decimals (1e-6 is below one 16-bit step, 3e-5). Remembered per sample array
 * (a prompt is formatted once, not once per request).
 */
function formatSamples(samples: Float32Array): string {
  let formatted = formattedSamples.get(samples);
  if (formatted === undefined) {
    const parts = new Array<string>(samples.length);
    for (let index = 0; index < samples.length; index++) parts[index] = String(Math.round((samples[index] as number) * 1e6) / 1e6);
    formatted = parts.join(',');
    formattedSamples.set(samples, formatted);
  }
  return formatted;
}

/**
 * The numbers of a KServe v2 JSON tensor, flattened: `data` may be flat (as Triton answers) or nested
 * row by row (as clients often send).
 *
 * @returns the values in row-major order, or null when one is not a number.
 */
export function tensorNumbers(data: unknown): number[] | null {
  if (!Array.isArray(data)) return null;
  const values: unknown[] = data.length > 0 && Array.isArray(data[0]) ? data.flat(Infinity) : data;
  for (const value of values) if (typeof value !== 'number') return null;
  return values as number[];
}

/** The Triton protocol as a {@link RemoteSpeechBackend}. */
export class CosyVoice2TritonBackend implements RemoteSpeechBackend<CosyVoiceTritonVoice> {
  readonly engine = COSYVOICE2_TRITON_ENGINE_ID;
  readonly languages: readonly Language[] = ['en', 'ja'];
  readonly voiceSchema = cosyVoiceTritonVoiceSchema;
  readonly description: string;
  private readonly prompts: VoicePromptCache;
  private readonly tempos = new Map<string, Promise<number | null>>();
  private readonly route: string;

  constructor(
    readonly settings: Pick<CosyVoice2TritonSettings, 'modelName' | 'model' | 'sampleRate'>,
    promptCacheSize = 64,
  ) {
    this.prompts = new VoicePromptCache(COSYVOICE2_TRITON_ENGINE_ID, promptCacheSize);
    this.description = `Triton ${settings.model} (model ${settings.modelName})`;
    this.route = `/v2/models/${settings.modelName}/infer`;
  }

  /**
   * Loads the prompt once (cached by path).
   *
   * @throws SpeechSynthesisError `invalid-voice` when it cannot be read, is below 16 kHz, or is longer
   *   than 30 s (cut, it would no longer match its transcript).
   */
  async prepareVoice(voice: CosyVoiceTritonVoice, text: string): Promise<void> {
    const prompt = await this.prompts.get(voice.promptWav);
    if (prompt.cut) {
      throw new SpeechSynthesisError(this.engine, text, 'invalid-voice', `the prompt ${voice.promptWav} lasts ${prompt.originalDurationSeconds.toFixed(1)} s; at most ${VOICE_PROMPT_MAXIMUM_SECONDS} s are accepted`);
    }
  }

  /** The prompt speaker's tempo (voice-prompt.ts `voicePromptTempo`). */
  referenceTempo(voice: CosyVoiceTritonVoice): Promise<number | null> {
    const key = `${voice.promptWav}\n${voice.promptText}`;
    let tempo = this.tempos.get(key);
    if (!tempo) {
      tempo = this.prompts.get(voice.promptWav).then((prompt) => voicePromptTempo(prompt, voice.promptText, voice.promptLanguage ?? guessTranscriptLanguage(voice.promptText)));
      tempo.catch(() => this.tempos.delete(key));
      this.tempos.set(key, tempo);
    }
    return tempo;
  }

  /** Builds the KServe v2 JSON request of one attempt (samples with 6 decimals). */
  async buildRequest(attempt: RemoteAttempt<CosyVoiceTritonVoice>): Promise<RemoteRequest> {
    const prompt = await this.prompts.get(attempt.voice.promptWav);
    const referenceText = await attempt.toSpoken(attempt.voice.promptText);
    const length = prompt.samples.length;
    const body =
      `{"inputs":[` +
      `{"name":"reference_wav","shape":[1,${length}],"datatype":"FP32","data":[[${formatSamples(prompt.samples)}]]},` +
      `{"name":"reference_wav_len","shape":[1,1],"datatype":"INT32","data":[[${length}]]},` +
      `{"name":"reference_text","shape":[1,1],"datatype":"BYTES","data":[${JSON.stringify(referenceText)}]},` +
      `{"name":"target_text","shape":[1,1],"datatype":"BYTES","data":[${JSON.stringify(attempt.spokenText)}]}]}`;
    return { route: this.route, headers: { 'content-type': 'application/json' }, body };
  }

  /**
   * Reads the `waveform` output (or the first output) as samples at the configured rate.
   *
   * @throws SpeechServiceError `service-error` (not retryable) when the answer is not KServe v2 JSON
   *   with FP32 numbers (retryable when the data does not fill the declared shape: a cut answer);
   *   `empty-audio` (retryable) when it holds no samples.
   */
  readAudio(response: ServiceResponse, request: RemoteRequest, context: { endpoint: string; text: string }): RawAudio {
    const fail = (failure: 'service-error' | 'empty-audio', detail: string, isRetryable: boolean): SpeechServiceError =>
      new SpeechServiceError(this.engine, context.text, failure, detail, { endpoint: context.endpoint, route: request.route, isRetryable, statusCode: response.status });
    let parsed: { outputs?: unknown };
    try {
      parsed = JSON.parse(new TextDecoder().decode(response.body)) as { outputs?: unknown };
    } catch (error) {
      throw fail('service-error', `the answer is not JSON (${(error as Error).message})`, false);
    }
    const outputs = Array.isArray(parsed.outputs) ? (parsed.outputs as OutputTensor[]) : [];
    const output = outputs.find((tensor) => tensor.name === 'waveform') ?? outputs[0];
    if (!output) throw fail('service-error', 'the answer has no outputs', false);
    if (output.datatype !== undefined && output.datatype !== 'FP32') throw fail('service-error', `output ${String(output.name)} is ${String(output.datatype)}, not FP32`, false);
    const values = tensorNumbers(output.data ?? []);
    if (!values) throw fail('service-error', `output ${String(output.name)} holds values that are not numbers`, false);
    if (Array.isArray(output.shape)) {
      const expected = (output.shape as unknown[]).reduce<number>((product, size) => product * Number(size), 1);
      if (expected !== values.length) throw fail('service-error', `output ${String(output.name)} has ${values.length} values for shape [${(output.shape as unknown[]).join(',')}]`, true);
    }
    if (values.length === 0) throw fail('empty-audio', 'the answer holds no samples', true);
    return { channels: [Float32Array.from(values)], sampleRate: this.settings.sampleRate };
  }
}

/**
 * Checks each server: `GET /v2/health/ready` must answer 200 and `GET /v2/models/{modelName}` must
 * list the four inputs.
 *
 * @returns one probe per URL; `detail` starts with `not ` when a server answered but lacks the model.
 */
export async function probeCosyVoice2TritonEndpoints(urls: readonly string[], modelName: string, timeoutMilliseconds = 5_000): Promise<EndpointProbe[]> {
  return Promise.all(
    urls.map(async (url): Promise<EndpointProbe> => {
      try {
        const ready = await fetch(`${url}/v2/health/ready`, { signal: AbortSignal.timeout(timeoutMilliseconds) });
        if (ready.status === 404) return { url, ready: false, detail: 'not a Triton server: GET /v2/health/ready answered HTTP 404' };
        if (!ready.ok) return { url, ready: false, detail: `unreachable: not ready (HTTP ${ready.status})` };
        const metadata = await fetch(`${url}/v2/models/${modelName}`, { signal: AbortSignal.timeout(timeoutMilliseconds) });
        if (!metadata.ok) return { url, ready: false, detail: `not serving model ${modelName}: HTTP ${metadata.status}` };
        const inputs = ((await metadata.json()) as { inputs?: { name?: string }[] }).inputs?.map((input) => input.name) ?? [];
        const missing = ['reference_wav', 'reference_wav_len', 'reference_text', 'target_text'].filter((name) => !inputs.includes(name));
        if (missing.length > 0) return { url, ready: false, detail: `not the CosyVoice2 model: ${modelName} lacks inputs ${missing.join(', ')}` };
        return { url, ready: true, detail: 'ready' };
      } catch (error) {
        return { url, ready: false, detail: `unreachable: ${describeNetworkError(error)}` };
      }
    }),
  );
}

/**
 * Creates the `cosyvoice2-triton` engine from its settings (see {@link cosyVoice2TritonSettingsSchema}).
 *
 * @param settings unvalidated settings, e.g. `{urls: ['http://gpu1:8000'], concurrencyPerEndpoint: 4}`.
 * @param overrides runtime options for tests (sleep, random) and a speech detector.
 * @throws RemoteServiceSettingsError when the settings are malformed; SpeechSynthesisError
 *   `service-unreachable` / `service-error` when probing finds no usable server.
 */
export async function createCosyVoice2TritonSynthesizer(
  settings: unknown,
  overrides: Partial<RemoteSynthesizerOptions> & { detector?: SpeechActivityDetector } = {},
): Promise<RemoteSpeechSynthesizer<CosyVoiceTritonVoice>> {
  const parsed = parseRemoteServiceSettings(COSYVOICE2_TRITON_ENGINE_ID, cosyVoice2TritonSettingsSchema, settings);
  const { detector, ...rest } = overrides;
  const options = { ...remoteSynthesizerOptions(parsed, detector), ...rest };
  if (parsed.probe) assertProbes(COSYVOICE2_TRITON_ENGINE_ID, await probeCosyVoice2TritonEndpoints(options.urls, parsed.modelName));
  return new RemoteSpeechSynthesizer(new CosyVoice2TritonBackend(parsed, options.promptCacheSize), options);
}
