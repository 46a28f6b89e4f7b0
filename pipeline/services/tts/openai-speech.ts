/**
 * OpenAI-style speech servers (community wrappers around CosyVoice and other models, and OpenAI's
 * own API shape): `POST {base}/v1/audio/speech` (the path is a setting: some servers lack `/v1`) with
 * JSON `{model, input, voice, response_format, speed?}`, answered with audio bytes: a WAV file
 * (sample rate read from its header; streamed WAVs with a placeholder size are read to the bytes
 * present) or raw little-endian int16 mono PCM at the configured rate. Errors come as HTTP statuses
 * with `{"error": {"message": ...}}` or FastAPI's `{"detail": ...}`.
 *
 * These servers choose the voice by name (`voice`), not by an uploaded prompt.
 */
import { z } from 'zod';
import { knownLanguageCodes } from '../../model/language-pack.ts';
import type { Language } from '../../model/types.ts';
import { downmixToMono, WavDecodeError, type RawAudio } from '../../audio/raw-audio.ts';
import { decodePcm16LittleEndian, decodeWav } from '../../audio/wav.ts';
import { SpeechServiceError, type ServiceResponse } from './service-http.ts';
import {
  parseRemoteServiceSettings,
  RemoteSpeechSynthesizer,
  remoteServiceSettingsShape,
  remoteSynthesizerOptions,
  type RemoteAttempt,
  type RemoteRequest,
  type RemoteSpeechBackend,
  type RemoteSynthesizerOptions,
} from './remote-synthesizer.ts';
import type { SpeechActivityDetector } from './synthesis-checks.ts';

/** Engine id of the OpenAI-style speech client. */
export const OPENAI_SPEECH_ENGINE_ID = 'openai-speech';

/**
 * Voice settings: `voice` (the server's voice name), and optionally `model` (overrides the settings'
 * model), `speed` (0.25-4, omitted when absent), `instructions` (sent as is; servers that do not know
 * it ignore it).
 */
export const openAiSpeechVoiceSchema = z
  .object({
    voice: z.string().min(1),
    model: z.string().min(1).optional(),
    speed: z.number().min(0.25).max(4).optional(),
    instructions: z.string().min(1).optional(),
  })
  .strict();
/** Parsed voice settings of the `openai-speech` engine. */
export type OpenAiSpeechVoice = z.output<typeof openAiSpeechVoiceSchema>;

/**
 * Settings of the `openai-speech` engine: the shared service settings of remote-synthesizer.ts (urls,
 * sampleRate 24000 (used for `pcm` answers only), concurrencyPerEndpoint 1, timeoutSeconds 60, retry,
 * endpointCooldown, kanaReading OFF by default (turn it on for CosyVoice behind the wrapper), checks)
 * plus `path` (default `/v1/audio/speech`), `model` (default `tts-1`), `responseFormat` (`wav`
 * default, or `pcm`) and `apiKeyEnvironmentVariable` (name of an environment variable whose value is
 * sent as `Authorization: Bearer ...`; none by default).
 */
export const openAiSpeechSettingsSchema = z
  .object({
    ...remoteServiceSettingsShape({ kanaEnabled: false, sampleRate: 24000, timeoutSeconds: 60 }),
    path: z
      .string()
      .regex(/^\/[^\s?#]*$/)
      .default('/v1/audio/speech')
      .describe('Path of the speech endpoint below each URL.'),
    model: z.string().min(1).default('tts-1').describe('model of every request (a voice may override it).'),
    responseFormat: z
      .enum(['wav', 'pcm'])
      .default('wav')
      .describe('Audio format asked for: wav, or raw 16-bit pcm at sampleRate.'),
    apiKeyEnvironmentVariable: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .nullable()
      .default(null)
      .describe('Environment variable whose value is sent as Authorization: Bearer; null = none.'),
  })
  .strict();
/** Settings of the `openai-speech` engine after defaults. */
export type OpenAiSpeechSettings = z.output<typeof openAiSpeechSettingsSchema>;

/** The OpenAI speech protocol as a {@link RemoteSpeechBackend}. */
export class OpenAiSpeechBackend implements RemoteSpeechBackend<OpenAiSpeechVoice> {
  readonly engine = OPENAI_SPEECH_ENGINE_ID;
  readonly voiceSchema = openAiSpeechVoiceSchema;
  /** Every language with a pack: the request names no language, the served model decides what it speaks. */
  get languages(): readonly Language[] {
    return knownLanguageCodes();
  }
  readonly description: string;

  constructor(
    readonly settings: Pick<
      OpenAiSpeechSettings,
      'path' | 'model' | 'responseFormat' | 'sampleRate' | 'apiKeyEnvironmentVariable'
    >,
  ) {
    this.description = `OpenAI speech ${settings.path} model ${settings.model} (${settings.responseFormat})`;
  }

  /** Builds the JSON request of one attempt (with the bearer key when one is configured). */
  async buildRequest(attempt: RemoteAttempt<OpenAiSpeechVoice>): Promise<RemoteRequest> {
    const { voice } = attempt;
    const body: Record<string, unknown> = {
      model: voice.model ?? this.settings.model,
      input: attempt.spokenText,
      voice: voice.voice,
      response_format: this.settings.responseFormat,
    };
    if (voice.speed !== undefined) body.speed = voice.speed;
    if (voice.instructions !== undefined) body.instructions = voice.instructions;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const key = this.settings.apiKeyEnvironmentVariable
      ? process.env[this.settings.apiKeyEnvironmentVariable]
      : undefined;
    if (key) headers.authorization = `Bearer ${key}`;
    return { route: this.settings.path, headers, body: JSON.stringify(body) };
  }

  /**
   * Reads a WAV answer (rate from its header, channels averaged) or raw PCM (configured rate).
   *
   * @throws SpeechServiceError `service-error` (not retryable) when a WAV answer cannot be decoded or a
   *   200 answer is JSON; `truncated-audio` when a PCM answer has an odd byte count; `empty-audio`
   *   when the answer holds no bytes (both retryable).
   */
  readAudio(response: ServiceResponse, request: RemoteRequest, context: { endpoint: string; text: string }): RawAudio {
    const fail = (
      failure: 'service-error' | 'truncated-audio' | 'empty-audio',
      detail: string,
      isRetryable: boolean,
    ): SpeechServiceError =>
      new SpeechServiceError(this.engine, context.text, failure, detail, {
        endpoint: context.endpoint,
        route: request.route,
        isRetryable,
        statusCode: response.status,
      });
    if ((response.headers.get('content-type') ?? '').includes('json')) {
      throw fail(
        'service-error',
        `the server answered 200 with JSON instead of audio: ${new TextDecoder().decode(response.body.subarray(0, 300))}`,
        false,
      );
    }
    if (response.body.length === 0) throw fail('empty-audio', 'the server answered 200 with no audio', true);
    if (this.settings.responseFormat === 'pcm') {
      if (response.body.length % 2 !== 0)
        throw fail(
          'truncated-audio',
          `the stream ended inside a sample (${response.body.length} bytes, an odd count)`,
          true,
        );
      return { channels: [decodePcm16LittleEndian(response.body)], sampleRate: this.settings.sampleRate };
    }
    try {
      const audio = decodeWav(response.body, `${context.endpoint}${request.route}`);
      return { channels: [downmixToMono(audio)], sampleRate: audio.sampleRate };
    } catch (error) {
      if (error instanceof WavDecodeError) throw fail('service-error', error.message, false);
      throw error;
    }
  }
}

/**
 * Creates the `openai-speech` engine from its settings (see {@link openAiSpeechSettingsSchema}). No
 * probe: the protocol has no standard health route.
 *
 * @param settings unvalidated settings, e.g. `{urls: ['http://gpu1:8080'], path: '/audio/speech'}`.
 * @param overrides runtime options for tests (sleep, random) and a speech detector.
 * @throws RemoteServiceSettingsError when the settings are malformed.
 */
export async function createOpenAiSpeechSynthesizer(
  settings: unknown,
  overrides: Partial<RemoteSynthesizerOptions> & { detector?: SpeechActivityDetector } = {},
): Promise<RemoteSpeechSynthesizer<OpenAiSpeechVoice>> {
  const parsed = parseRemoteServiceSettings(OPENAI_SPEECH_ENGINE_ID, openAiSpeechSettingsSchema, settings);
  const { detector, ...rest } = overrides;
  const options = { ...remoteSynthesizerOptions(parsed, detector), ...rest };
  return new RemoteSpeechSynthesizer(new OpenAiSpeechBackend(parsed), options);
}
