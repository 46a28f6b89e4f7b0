/**
 * CosyVoice2 through its FastAPI server (FunAudioLLM/CosyVoice `runtime/python/fastapi/server.py`,
 * default port 50000), voice-prompted with a reference speaker.
 *
 * Protocol (docs/services.md, "Speech backends"): POST (GET also works) `multipart/form-data` to
 * - `/inference_zero_shot`: `tts_text`, `prompt_text` (the prompt's transcript), `prompt_wav` (file);
 * - `/inference_cross_lingual`: `tts_text`, `prompt_wav`;
 * - `/inference_instruct2`: `tts_text`, `instruct_text`, `prompt_wav`.
 * The answer is a stream of raw little-endian mono int16 PCM without header, one chunk per internal
 * text segment; the sample rate is the model's and not in the answer (24000 Hz for CosyVoice2, a
 * setting here). One server process handles one request at a time: throughput comes from several
 * URLs (service-endpoints.ts). No language tag is put in the text (upstream: tags cause leading
 * garbage) unless the language pack sets `cosyVoice.tag`; the languages spoken are the packs' (CosyVoice2
 * or 3 by the `model` label: cosyvoice-languages.ts).
 *
 * Faults handled (remote-synthesizer.ts): HTTP 500 (some versions fail on zero-shot: optional
 * fallback to cross-lingual), streams cut early, silence or hallucinated tails, slow servers.
 */
import { z } from 'zod';
import { languageCodeSchema } from '../../model/language-code.ts';
import type { Language } from '../../model/types.ts';
import type { RawAudio } from '../../audio/raw-audio.ts';
import { decodePcm16LittleEndianChunks } from '../../audio/wav.ts';
import { describeNetworkError, SpeechServiceError, type ServiceResponse } from './service-http.ts';
import { describeReply } from '../reply-excerpt.ts';
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
import { cosyVoiceGeneration, cosyVoiceLanguages, cosyVoiceText } from './cosyvoice-languages.ts';
import type { SpeechActivityDetector } from './synthesis-checks.ts';
import {
  guessTranscriptLanguage,
  VOICE_PROMPT_MAXIMUM_SECONDS,
  VoicePromptCache,
  voicePromptTempo,
} from './voice-prompt.ts';

/** Engine id of the CosyVoice2 FastAPI client. */
export const COSYVOICE2_ENGINE_ID = 'cosyvoice2';

/** CosyVoice2's output sample rate, Hz (CosyVoice-300M: 22050). */
export const COSYVOICE2_SAMPLE_RATE = 24000;

/** Inference modes of the FastAPI server that take a voice prompt. */
export type CosyVoiceMode = 'zero-shot' | 'cross-lingual' | 'instruct2';

/** Route of each mode. */
export const COSYVOICE2_ROUTES: Readonly<Record<CosyVoiceMode, string>> = Object.freeze({
  'zero-shot': '/inference_zero_shot',
  'cross-lingual': '/inference_cross_lingual',
  instruct2: '/inference_instruct2',
});

/**
 * CosyVoice2 voice settings (a flat record, part of cache keys):
 * - `mode`: 'zero-shot' (default; needs `promptText`), 'cross-lingual', 'instruct2' (needs `instructText`);
 * - `promptWav`: path of the reference recording (WAV, >= 16 kHz; sent as 16 kHz mono PCM16, cut to 30 s);
 * - `promptText`: its exact transcript (zero-shot; a wrong one leaks prompt words into the output);
 * - `instructText`: the instruction (instruct2), e.g. `Speak slowly and calmly.`, sent as written;
 * - `promptLanguage`: language of `promptText` when it cannot be guessed (kana or kanji = Japanese);
 * - `promptId`, `speaker`: identity of the prompt in the speaker prompt pool (not sent; they make cache
 *   keys change when a pool entry is replaced by another recording at the same path).
 */
export const cosyVoiceVoiceSchema = z
  .object({
    mode: z.enum(['zero-shot', 'cross-lingual', 'instruct2']).default('zero-shot'),
    promptWav: z.string().min(1),
    promptText: z.string().min(1).optional(),
    instructText: z.string().min(1).optional(),
    promptLanguage: languageCodeSchema.optional(),
    promptId: z.string().optional(),
    speaker: z.string().optional(),
  })
  .strict()
  .superRefine((voice, context) => {
    if (voice.mode === 'zero-shot' && !voice.promptText)
      context.addIssue({
        code: 'custom',
        path: ['promptText'],
        message: 'zero-shot needs the transcript of the prompt',
      });
    if (voice.mode === 'instruct2' && !voice.instructText)
      context.addIssue({ code: 'custom', path: ['instructText'], message: 'instruct2 needs an instruction' });
  });
/** Parsed voice settings of the `cosyvoice2` engine. */
export type CosyVoiceVoice = z.output<typeof cosyVoiceVoiceSchema>;

/**
 * Settings of the `cosyvoice2` engine (YAML under `tts.<language>`), on top of the shared service
 * settings of remote-synthesizer.ts (urls, sampleRate 24000, concurrencyPerEndpoint 1,
 * requestsPerInterval, timeoutSeconds 60, retry, endpointCooldown, kanaReading on, checks):
 * - `model`: label of the served model, part of the engine version (cache keys);
 * - `zeroShotFallback`: 'none' (default) or 'cross-lingual': after `zeroShotFallbackAfter` HTTP 500
 *   answers to zero-shot for one utterance, its next attempts use cross-lingual with the same prompt;
 * - `probe`: read each server's `/openapi.json` when the engine is created.
 */
export const cosyVoice2FastApiSettingsSchema = z
  .object({
    ...remoteServiceSettingsShape({ kanaEnabled: true, sampleRate: COSYVOICE2_SAMPLE_RATE, timeoutSeconds: 60 }),
    model: z
      .string()
      .min(1)
      .default('CosyVoice2-0.5B')
      .describe('Label of the served model, part of the engine version (cache keys).'),
    zeroShotFallback: z
      .enum(['none', 'cross-lingual'])
      .default('none')
      .describe(
        'cross-lingual: after zeroShotFallbackAfter HTTP 500 answers to zero-shot, retry the utterance cross-lingual with the same prompt.',
      ),
    zeroShotFallbackAfter: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe('HTTP 500 answers to zero-shot for one utterance before zeroShotFallback applies.'),
    probe: z.boolean().default(true).describe("Read each server's /openapi.json when the engine is created."),
  })
  .strict();
/** Settings of the `cosyvoice2` engine after defaults. */
export type CosyVoice2FastApiSettings = z.output<typeof cosyVoice2FastApiSettingsSchema>;

/** The FastAPI protocol as a {@link RemoteSpeechBackend}. */
export class CosyVoice2FastApiBackend implements RemoteSpeechBackend<CosyVoiceVoice> {
  readonly engine = COSYVOICE2_ENGINE_ID;
  readonly voiceSchema = cosyVoiceVoiceSchema;
  readonly description: string;
  private readonly prompts: VoicePromptCache;
  private readonly tempos = new Map<string, Promise<number | null>>();

  /**
   * @param settings parsed settings (for the model label, fallback and sample rate).
   * @param promptCacheSize prepared prompts kept in memory.
   */
  constructor(
    readonly settings: Pick<
      CosyVoice2FastApiSettings,
      'model' | 'zeroShotFallback' | 'zeroShotFallbackAfter' | 'sampleRate'
    >,
    promptCacheSize = 64,
  ) {
    this.prompts = new VoicePromptCache(COSYVOICE2_ENGINE_ID, promptCacheSize);
    const fallback =
      settings.zeroShotFallback === 'none'
        ? 'no zero-shot fallback'
        : `zero-shot falls back to ${settings.zeroShotFallback} after ${settings.zeroShotFallbackAfter} HTTP 500`;
    this.description = `FastAPI ${settings.model}, ${fallback}`;
  }

  /** The languages the served model speaks, by the language packs (cosyvoice-languages.ts). */
  get languages(): readonly Language[] {
    return cosyVoiceLanguages(cosyVoiceGeneration(this.settings.model));
  }

  /**
   * Loads the prompt once (cached by path).
   *
   * @throws SpeechSynthesisError `invalid-voice` when the prompt cannot be read, is below 16 kHz, or is
   *   longer than 30 s in zero-shot mode (cut, it would no longer match its transcript).
   */
  async prepareVoice(voice: CosyVoiceVoice, text: string): Promise<void> {
    const prompt = await this.prompts.get(voice.promptWav);
    if (prompt.cut && voice.mode === 'zero-shot') {
      throw new SpeechSynthesisError(
        this.engine,
        text,
        'invalid-voice',
        `the zero-shot prompt ${voice.promptWav} lasts ${prompt.originalDurationSeconds.toFixed(1)} s; the server takes at most ${VOICE_PROMPT_MAXIMUM_SECONDS} s and a cut prompt no longer matches its transcript (use a shorter clip)`,
      );
    }
  }

  /** The prompt speaker's tempo (zero-shot and any voice with `promptText`); null otherwise. */
  referenceTempo(voice: CosyVoiceVoice): Promise<number | null> {
    if (!voice.promptText) return Promise.resolve(null);
    const key = `${voice.promptWav}\n${voice.promptText}`;
    let tempo = this.tempos.get(key);
    if (!tempo) {
      const transcript = voice.promptText;
      tempo = this.prompts
        .get(voice.promptWav)
        .then((prompt) =>
          voicePromptTempo(prompt, transcript, voice.promptLanguage ?? guessTranscriptLanguage(transcript)),
        );
      tempo.catch(() => this.tempos.delete(key));
      this.tempos.set(key, tempo);
    }
    return tempo;
  }

  /**
   * Builds the multipart request of one attempt (a FormData; service-http.ts encodes it). In
   * zero-shot mode with `zeroShotFallback: cross-lingual`, once `zeroShotFallbackAfter` earlier
   * attempts of this utterance got HTTP 500 from the zero-shot route, the request goes to
   * cross-lingual instead (noted in the counters).
   */
  async buildRequest(attempt: RemoteAttempt<CosyVoiceVoice>): Promise<RemoteRequest> {
    const { voice } = attempt;
    let mode: CosyVoiceMode = voice.mode;
    let note: string | undefined;
    if (mode === 'zero-shot' && this.settings.zeroShotFallback === 'cross-lingual') {
      const zeroShotServerErrors = attempt.previousErrors.filter(
        (error) =>
          error instanceof SpeechServiceError &&
          error.statusCode === 500 &&
          error.route === COSYVOICE2_ROUTES['zero-shot'],
      ).length;
      if (zeroShotServerErrors >= this.settings.zeroShotFallbackAfter) {
        mode = 'cross-lingual';
        note = 'zero-shot fell back to cross-lingual';
      }
    }
    const prompt = await this.prompts.get(voice.promptWav);
    const form = new FormData();
    form.append('tts_text', cosyVoiceText(attempt.spokenText, attempt.language));
    if (mode === 'zero-shot') form.append('prompt_text', await attempt.toSpoken(voice.promptText as string));
    if (mode === 'instruct2') form.append('instruct_text', voice.instructText as string);
    form.append('prompt_wav', promptBlob(prompt.wavBytes), 'prompt.wav');
    // the form itself is the body: the HTTP client (service-http.ts) encodes it once per attempt
    // (multipart/form-data, its boundary in the content-type it sets, with a Content-Length); the
    // prompt's Blob is made once per prompt. Encoding it to bytes here cost four copies of the prompt per request.
    const request: RemoteRequest = { route: COSYVOICE2_ROUTES[mode], headers: {}, body: form };
    return note ? { ...request, note } : request;
  }

  /**
   * Reads the streamed body (already read to its end, as its chunks) as int16 at the configured rate.
   *
   * @throws SpeechServiceError `truncated-audio` when the body has an odd number of bytes (cut inside
   *   a sample); `empty-audio` when it is empty (both retryable); `service-error` (not retryable) when
   *   the answer is text, HTML or JSON, naming its content type and start.
   */
  readAudio(response: ServiceResponse, request: RemoteRequest, context: { endpoint: string; text: string }): RawAudio {
    const fail = (
      failure: 'truncated-audio' | 'empty-audio' | 'service-error',
      detail: string,
      isRetryable = true,
    ): SpeechServiceError =>
      new SpeechServiceError(this.engine, context.text, failure, detail, {
        endpoint: context.endpoint,
        route: request.route,
        isRetryable,
        statusCode: response.status,
      });
    // the server streams raw PCM without a media type; a text, HTML or JSON answer is some other service
    const contentType = response.headers.get('content-type');
    if (contentType !== null && /^(text\/|application\/(json|xhtml|problem))/i.test(contentType)) {
      const reply = describeReply(contentType, new TextDecoder().decode(response.body.subarray(0, 1000)));
      throw fail('service-error', `the server answered 200 with no audio (${reply})`, false);
    }
    const bytes = response.chunks.reduce((total, chunk) => total + chunk.length, 0);
    if (bytes === 0) throw fail('empty-audio', 'the server answered 200 with no audio');
    if (bytes % 2 !== 0)
      throw fail('truncated-audio', `the stream ended inside a sample (${bytes} bytes, an odd count)`);
    // decoded chunk by chunk into one array: the stream's chunks are never joined into a copy
    return { channels: [decodePcm16LittleEndianChunks(response.chunks)], sampleRate: this.settings.sampleRate };
  }
}

const promptBlobs = new WeakMap<Uint8Array, Blob>();

/** The prompt WAV as a Blob (`audio/wav`), made once per prompt's bytes (a Blob copies what it is made of). */
function promptBlob(wavBytes: Uint8Array): Blob {
  let blob = promptBlobs.get(wavBytes);
  if (blob === undefined) {
    blob = new Blob([wavBytes], { type: 'audio/wav' });
    promptBlobs.set(wavBytes, blob);
  }
  return blob;
}

/**
 * Asks each server for its OpenAPI description (FastAPI serves `/openapi.json`) and checks it offers
 * the voice-prompt routes.
 *
 * @param urls base URLs.
 * @param timeoutMilliseconds per server.
 * @returns one probe per URL; `detail` starts with `not ` when a server answered as something else.
 */
export async function probeCosyVoice2Endpoints(
  urls: readonly string[],
  timeoutMilliseconds = 5_000,
): Promise<EndpointProbe[]> {
  return Promise.all(
    urls.map(async (url): Promise<EndpointProbe> => {
      try {
        const response = await fetch(`${url}/openapi.json`, { signal: AbortSignal.timeout(timeoutMilliseconds) });
        if (!response.ok)
          return {
            url,
            ready: false,
            detail: `not a CosyVoice FastAPI server: GET /openapi.json answered HTTP ${response.status}`,
          };
        const description = (await response.json()) as { paths?: Record<string, unknown> };
        const missing = Object.values(COSYVOICE2_ROUTES).filter((route) => !description.paths?.[route]);
        if (missing.length === Object.keys(COSYVOICE2_ROUTES).length)
          return { url, ready: false, detail: `not a CosyVoice FastAPI server: no ${missing.join(', ')} route` };
        return { url, ready: true, detail: missing.length > 0 ? `ready (without ${missing.join(', ')})` : 'ready' };
      } catch (error) {
        return { url, ready: false, detail: `unreachable: ${describeNetworkError(error)}` };
      }
    }),
  );
}

/**
 * Creates the `cosyvoice2` engine from its settings (see {@link cosyVoice2FastApiSettingsSchema}).
 *
 * @param settings unvalidated settings, e.g. `{urls: ['http://gpu1:50000', 'http://gpu2:50000']}`.
 * @param overrides runtime options for tests (sleep, random) and a speech detector (e.g. Silero VAD).
 * @returns the engine; its `statistics()` gives progress counters.
 * @throws RemoteServiceSettingsError when the settings are malformed; SpeechSynthesisError
 *   `service-unreachable` when probing finds no server, `service-error` when a URL answers as another service.
 */
export async function createCosyVoice2Synthesizer(
  settings: unknown,
  overrides: Partial<RemoteSynthesizerOptions> & { detector?: SpeechActivityDetector } = {},
): Promise<RemoteSpeechSynthesizer<CosyVoiceVoice>> {
  const parsed = parseRemoteServiceSettings(COSYVOICE2_ENGINE_ID, cosyVoice2FastApiSettingsSchema, settings);
  const { detector, ...rest } = overrides;
  const options = { ...remoteSynthesizerOptions(parsed, detector), ...rest };
  if (parsed.probe) assertProbes(COSYVOICE2_ENGINE_ID, await probeCosyVoice2Endpoints(options.urls));
  return new RemoteSpeechSynthesizer(new CosyVoice2FastApiBackend(parsed, options.promptCacheSize), options);
}
