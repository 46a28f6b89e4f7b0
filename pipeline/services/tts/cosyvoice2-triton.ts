/**
 * CosyVoice2 through the Triton Inference Server deployment (FunAudioLLM/CosyVoice
 * `runtime/triton_trtllm`, HTTP port 8000), which the maintainers recommend for throughput.
 *
 * Protocol (KServe v2, docs/services.md "Speech backends"; the layout follows the upstream
 * `client_http.py`): `POST /v2/models/cosyvoice2/infer` with the inputs reference_wav FP32 [1,N]
 * (16 kHz), reference_wav_len INT32 [1,1] = [[N]], reference_text BYTES [1,1], target_text BYTES
 * [1,1]; the answer's `outputs` hold `waveform` FP32 samples at 24 kHz. Errors come as
 * `{"error": "..."}` with an HTTP status (400 invalid input, 500 model failure, 503 not ready).
 * Zero-shot only: the reference text must be the reference audio's transcript.
 *
 * Two encodings (setting `binaryTensors`):
 * - binary (default), Triton's binary tensor data extension, as NVIDIA's `tritonclient.http` sends
 *   by default (triton-inference-server/server `docs/protocol/extension_binary_data.md`,
 *   https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/protocol/extension_binary_data.html):
 *   the body is the JSON inference request followed by each input's raw bytes in input order
 *   (little-endian, row-major; a BYTES element is a 4-byte little-endian length then its bytes), the
 *   header `Inference-Header-Content-Length` gives the JSON part's byte length, each input carries
 *   `"parameters":{"binary_data_size":bytes}` instead of `data`, and `"outputs":[{"name":"waveform",
 *   "parameters":{"binary_data":true}}]` asks for the waveform as raw bytes. The answer then sets
 *   `Inference-Header-Content-Length` and its output carries `binary_data_size`, the bytes following
 *   the JSON. Sends 4 bytes per prompt sample instead of about 9 characters, and nothing is printed
 *   or parsed as decimal text.
 * - JSON (`binaryTensors: false`): every tensor as JSON `data` (prompt samples with 6 decimals), the
 *   answer's `outputs` in JSON (the first output is used when none is named `waveform`).
 * Either way a JSON answer (no `Inference-Header-Content-Length`) is read too.
 */
import { z } from 'zod';
import { languageCodeSchema } from '../../model/language-code.ts';
import type { Language } from '../../model/types.ts';
import type { RawAudio } from '../../audio/raw-audio.ts';
import { concatenateBytes, SpeechServiceError, type ServiceResponse } from './service-http.ts';
import { describeReply } from '../reply-excerpt.ts';
import {
  assertProbes,
  parseRemoteServiceSettings,
  RemoteSpeechSynthesizer,
  remoteServiceSettingsShape,
  remoteSynthesizerOptions,
  type RemoteAttempt,
  type RemoteRequest,
  type RemoteSpeechBackend,
  type RemoteSynthesizerOptions,
} from './remote-synthesizer.ts';
import { SpeechSynthesisError } from './speech-synthesizer.ts';
import { cosyVoiceGeneration, cosyVoiceLanguages, cosyVoiceText } from './cosyvoice-languages.ts';
import type { SpeechActivityDetector } from './synthesis-checks.ts';
import {
  guessTranscriptLanguage,
  VOICE_PROMPT_MAXIMUM_SECONDS,
  VoicePromptCache,
  voicePromptTempo,
} from './voice-prompt.ts';
import {
  decodeFloat32LittleEndian,
  encodeBytesElement,
  encodeFloat32LittleEndian,
  formatSamples,
  INFERENCE_HEADER_CONTENT_LENGTH,
  type OutputTensor,
  tensorNumbers,
} from './kserve-tensors.ts';
import { probeCosyVoice2TritonEndpoints } from './cosyvoice2-triton-probe.ts';

export { probeCosyVoice2TritonEndpoints } from './cosyvoice2-triton-probe.ts';
export {
  decodeFloat32LittleEndian,
  encodeBytesElement,
  encodeFloat32LittleEndian,
  INFERENCE_HEADER_CONTENT_LENGTH,
  tensorNumbers,
} from './kserve-tensors.ts';

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
    promptLanguage: languageCodeSchema.optional(),
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
 * `cosyvoice2`), `model` (label in the engine version), `probe` (check `/v2/health/ready` and the
 * model's metadata when the engine is created) and `binaryTensors` (default true: send and ask for
 * tensors as raw bytes, Triton's binary tensor data extension; false: KServe v2 JSON only, for a
 * server without the extension).
 */
export const cosyVoice2TritonSettingsSchema = z
  .object({
    ...remoteServiceSettingsShape({ kanaEnabled: true, sampleRate: 24000, timeoutSeconds: 60 }),
    modelName: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+$/)
      .default('cosyvoice2')
      .describe('The Triton model name requests go to.'),
    model: z
      .string()
      .min(1)
      .default('CosyVoice2-0.5B TensorRT-LLM')
      .describe('Label of the served model, part of the engine version (cache keys).'),
    probe: z
      .boolean()
      .default(true)
      .describe("Check /v2/health/ready and the model's metadata when the engine is created."),
    binaryTensors: z
      .boolean()
      .default(true)
      .describe(
        "Send and ask for tensors as raw bytes (Triton's binary tensor data extension); false: KServe v2 JSON only.",
      ),
  })
  .strict();
/** Settings of the `cosyvoice2-triton` engine after defaults. */
export type CosyVoice2TritonSettings = z.output<typeof cosyVoice2TritonSettingsSchema>;

/** The Triton protocol as a {@link RemoteSpeechBackend}. */
export class CosyVoice2TritonBackend implements RemoteSpeechBackend<CosyVoiceTritonVoice> {
  readonly engine = COSYVOICE2_TRITON_ENGINE_ID;
  readonly voiceSchema = cosyVoiceTritonVoiceSchema;
  readonly description: string;
  private readonly prompts: VoicePromptCache;
  private readonly tempos = new Map<string, Promise<number | null>>();
  private readonly route: string;
  private readonly binaryTensors: boolean;

  /**
   * @param settings model name and label, output rate (Hz), and whether to use binary tensors
   *   (default true).
   * @param promptCacheSize prompts kept decoded.
   */
  constructor(
    readonly settings: Pick<CosyVoice2TritonSettings, 'modelName' | 'model' | 'sampleRate'> &
      Partial<Pick<CosyVoice2TritonSettings, 'binaryTensors'>>,
    promptCacheSize = 64,
  ) {
    this.binaryTensors = settings.binaryTensors ?? true;
    this.prompts = new VoicePromptCache(COSYVOICE2_TRITON_ENGINE_ID, promptCacheSize);
    this.description = `Triton ${settings.model} (model ${settings.modelName})`;
    this.route = `/v2/models/${settings.modelName}/infer`;
  }

  /** The languages the served model speaks, by the language packs (cosyvoice-languages.ts). */
  get languages(): readonly Language[] {
    return cosyVoiceLanguages(cosyVoiceGeneration(this.settings.model));
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
      throw new SpeechSynthesisError(
        this.engine,
        text,
        'invalid-voice',
        `the prompt ${voice.promptWav} lasts ${prompt.originalDurationSeconds.toFixed(1)} s; at most ${VOICE_PROMPT_MAXIMUM_SECONDS} s are accepted`,
      );
    }
  }

  /** The prompt speaker's tempo (voice-prompt.ts `voicePromptTempo`). */
  referenceTempo(voice: CosyVoiceTritonVoice): Promise<number | null> {
    const key = `${voice.promptWav}\n${voice.promptText}`;
    let tempo = this.tempos.get(key);
    if (!tempo) {
      tempo = this.prompts
        .get(voice.promptWav)
        .then((prompt) =>
          voicePromptTempo(prompt, voice.promptText, voice.promptLanguage ?? guessTranscriptLanguage(voice.promptText)),
        );
      tempo.catch(() => this.tempos.delete(key));
      this.tempos.set(key, tempo);
    }
    return tempo;
  }

  /**
   * Builds the request of one attempt: binary tensors (see the file comment) unless `binaryTensors`
   * is false, then KServe v2 JSON (samples with 6 decimals).
   */
  async buildRequest(attempt: RemoteAttempt<CosyVoiceTritonVoice>): Promise<RemoteRequest> {
    const prompt = await this.prompts.get(attempt.voice.promptWav);
    const referenceText = await attempt.toSpoken(attempt.voice.promptText);
    const length = prompt.samples.length;
    const targetText = cosyVoiceText(attempt.spokenText, attempt.language);
    if (this.binaryTensors) return this.buildBinaryRequest(prompt.samples, referenceText, targetText);
    const body =
      `{"inputs":[` +
      `{"name":"reference_wav","shape":[1,${length}],"datatype":"FP32","data":[[${formatSamples(prompt.samples)}]]},` +
      `{"name":"reference_wav_len","shape":[1,1],"datatype":"INT32","data":[[${length}]]},` +
      `{"name":"reference_text","shape":[1,1],"datatype":"BYTES","data":[${JSON.stringify(referenceText)}]},` +
      `{"name":"target_text","shape":[1,1],"datatype":"BYTES","data":[${JSON.stringify(targetText)}]}]}`;
    return { route: this.route, headers: { 'content-type': 'application/json' }, body };
  }

  /**
   * The binary tensor data request: JSON header with each input's `binary_data_size`, then the raw
   * bytes of reference_wav (float32 LE), reference_wav_len (int32 LE), reference_text and target_text
   * (4-byte LE length + UTF-8 each), asking for `waveform` as binary data.
   */
  private buildBinaryRequest(samples: Float32Array, referenceText: string, targetText: string): RemoteRequest {
    const wav = encodeFloat32LittleEndian(samples);
    const wavLength = new Uint8Array(4);
    new DataView(wavLength.buffer).setInt32(0, samples.length, true);
    const reference = encodeBytesElement(referenceText);
    const target = encodeBytesElement(targetText);
    const header = new TextEncoder().encode(
      `{"inputs":[` +
        `{"name":"reference_wav","shape":[1,${samples.length}],"datatype":"FP32","parameters":{"binary_data_size":${wav.length}}},` +
        `{"name":"reference_wav_len","shape":[1,1],"datatype":"INT32","parameters":{"binary_data_size":4}},` +
        `{"name":"reference_text","shape":[1,1],"datatype":"BYTES","parameters":{"binary_data_size":${reference.length}}},` +
        `{"name":"target_text","shape":[1,1],"datatype":"BYTES","parameters":{"binary_data_size":${target.length}}}],` +
        `"outputs":[{"name":"waveform","parameters":{"binary_data":true}}]}`,
    );
    const body = concatenateBytes([header, wav, wavLength, reference, target]);
    return {
      route: this.route,
      headers: { 'content-type': 'application/octet-stream', [INFERENCE_HEADER_CONTENT_LENGTH]: String(header.length) },
      body,
    };
  }

  /**
   * Reads the `waveform` output (or the first output) as samples at the configured rate, from a
   * binary answer (`Inference-Header-Content-Length` set, the output's `binary_data_size` bytes after
   * the JSON) or a JSON one (`data` numbers), whichever the server sent.
   *
   * @throws SpeechServiceError `service-error`, retryable for a cut answer: fewer bytes than the
   *   JSON header length or an output's `binary_data_size` declare, binary data that is not a whole
   *   number of float32 values, or values that do not fill the declared shape; not retryable when the
   *   answer is not KServe v2 JSON with FP32 data (`Inference-Header-Content-Length` missing before
   *   binary data or not a byte count, bytes left over after the binary outputs);
   *   `empty-audio` (retryable) when it holds no samples.
   */
  readAudio(response: ServiceResponse, request: RemoteRequest, context: { endpoint: string; text: string }): RawAudio {
    const fail = (failure: 'service-error' | 'empty-audio', detail: string, isRetryable: boolean): SpeechServiceError =>
      new SpeechServiceError(this.engine, context.text, failure, detail, {
        endpoint: context.endpoint,
        route: request.route,
        isRetryable,
        statusCode: response.status,
      });
    const body = response.body;
    const declaredHeaderLength = response.headers.get(INFERENCE_HEADER_CONTENT_LENGTH);
    let headerLength = body.length;
    if (declaredHeaderLength !== null) {
      if (!/^\s*\d+\s*$/.test(declaredHeaderLength))
        throw fail(
          'service-error',
          `the Inference-Header-Content-Length header "${declaredHeaderLength.slice(0, 40)}" is not a byte count`,
          false,
        );
      headerLength = Number(declaredHeaderLength);
      if (headerLength > body.length)
        throw fail(
          'service-error',
          `the answer ends after ${body.length} bytes, inside its ${headerLength}-byte JSON header`,
          true,
        );
    }
    let parsed: { outputs?: unknown };
    try {
      parsed = JSON.parse(new TextDecoder().decode(body.subarray(0, headerLength))) as { outputs?: unknown };
    } catch (error) {
      const without = declaredHeaderLength === null ? 'has no Inference-Header-Content-Length header and ' : '';
      const reply = describeReply(
        response.headers.get('content-type'),
        new TextDecoder().decode(body.subarray(0, 1000)),
      );
      throw fail('service-error', `the answer ${without}is not JSON (${(error as Error).message}; ${reply})`, false);
    }
    const outputs = Array.isArray(parsed.outputs) ? (parsed.outputs as OutputTensor[]) : [];
    const output = outputs.find((tensor) => tensor.name === 'waveform') ?? outputs[0];
    if (!output)
      throw fail(
        'service-error',
        `the answer has no outputs (${describeReply(response.headers.get('content-type'), new TextDecoder().decode(body.subarray(0, Math.min(headerLength, 1000))))})`,
        false,
      );
    if (output.datatype !== undefined && output.datatype !== 'FP32')
      throw fail('service-error', `output ${String(output.name)} is ${String(output.datatype)}, not FP32`, false);

    // Binary outputs follow the JSON in output order, each `binary_data_size` bytes long.
    let binary: Uint8Array | undefined;
    let offset = headerLength;
    for (const tensor of outputs) {
      const size = tensor.parameters?.binary_data_size;
      if (size === undefined) continue;
      if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
        throw fail(
          'service-error',
          `output ${String(tensor.name)} has binary_data_size ${JSON.stringify(size)}, not a byte count`,
          false,
        );
      if (declaredHeaderLength === null)
        throw fail(
          'service-error',
          `output ${String(tensor.name)} holds binary data but the answer lacks the Inference-Header-Content-Length header`,
          false,
        );
      if (offset + size > body.length)
        throw fail(
          'service-error',
          `output ${String(tensor.name)} declares ${size} bytes of binary data but only ${body.length - offset} arrived`,
          true,
        );
      if (tensor === output) binary = body.subarray(offset, offset + size);
      offset += size;
    }
    if (offset < body.length)
      throw fail(
        'service-error',
        `${body.length - offset} bytes follow the ${outputs.length} output(s) the JSON header declares`,
        false,
      );

    let samples: Float32Array;
    if (binary) {
      if (binary.length % 4 !== 0)
        throw fail(
          'service-error',
          `output ${String(output.name)} holds ${binary.length} bytes of binary data, not a whole number of float32 values`,
          true,
        );
      samples = decodeFloat32LittleEndian(binary);
    } else {
      const values = tensorNumbers(output.data ?? []);
      if (!values)
        throw fail('service-error', `output ${String(output.name)} holds values that are not numbers`, false);
      samples = Float32Array.from(values);
    }
    if (Array.isArray(output.shape)) {
      const expected = (output.shape as unknown[]).reduce<number>((product, size) => product * Number(size), 1);
      if (expected !== samples.length)
        throw fail(
          'service-error',
          `output ${String(output.name)} has ${samples.length} values for shape [${(output.shape as unknown[]).join(',')}]`,
          true,
        );
    }
    if (samples.length === 0) throw fail('empty-audio', 'the answer holds no samples', true);
    return { channels: [samples], sampleRate: this.settings.sampleRate };
  }
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
  if (parsed.probe)
    assertProbes(COSYVOICE2_TRITON_ENGINE_ID, await probeCosyVoice2TritonEndpoints(options.urls, parsed.modelName));
  return new RemoteSpeechSynthesizer(new CosyVoice2TritonBackend(parsed, options.promptCacheSize), options);
}
