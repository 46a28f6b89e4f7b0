/**
 * What every remote TTS client shares, as one {@link SpeechSynthesizer}: the service's settings
 * (zod, seconds in YAML), Japanese kana readings for the engine with the original text kept for
 * alignment, an {@link EndpointPool} over several servers, retries with backoff and jitter
 * (pipeline/services/retry.ts) on server errors, timeouts, cut streams and implausible durations, tail
 * trimming and duration checks (synthesis-checks.ts), a speech-rate watch that catches a wrong
 * sample rate, and finally quarantine: a {@link SpeechSynthesisQuarantineError} with every attempt.
 *
 * A backend (cosyvoice2-fastapi.ts, cosyvoice2-triton.ts, openai-speech.ts) only builds one request
 * ({@link RemoteSpeechBackend.buildRequest}) and reads its answer ({@link RemoteSpeechBackend.readAudio}).
 */
import { z } from 'zod';
import type { Language } from '../../model/types.ts';
import { downmixToMono, type RawAudio } from '../../audio/raw-audio.ts';
import { resolveRetryPolicy, retryWithBackoff, type RetryGiveUpReason, type RetryPolicy } from '../retry.ts';
import { containsKanji, describeKanaReadingOptions, toKanaReading, type KanaReadingOptions } from '../../text/japanese-kana.ts';
import { EndpointPool, type EndpointPoolStatistics } from '../endpoint-pool.ts';
import { normalizeBaseUrl, requestService, SpeechServiceError, type ServiceResponse } from './service-http.ts';
import {
  normalizeWhitespace,
  parseVoice,
  SpeechSynthesisError,
  type SpeechSynthesisFailure,
  type SpeechSynthesizer,
  type SynthesisOutput,
  type SynthesisRequest,
} from './speech-synthesizer.ts';
import {
  checkSynthesizedSpeech,
  resolveSynthesisCheckOptions,
  SpeechRateMonitor,
  type SpeechActivityDetector,
  type SpeechRateAssessment,
  type SpeechRateMonitorOptions,
  type SynthesisCheckOptions,
  type TailKind,
} from './synthesis-checks.ts';
import { describeIssues } from '../../model/validation.ts';

const languageSchema = z.enum(['en', 'ja']);

const speechRateBoundsSchema = z
  .object({
    typicalUnitsPerSecond: z.number().positive(),
    minimumUnitsPerSecond: z.number().positive(),
    maximumUnitsPerSecond: z.number().positive(),
    pauseAllowanceSeconds: z.number().nonnegative(),
    allowanceSeconds: z.number().nonnegative(),
  })
  .partial()
  .strict();

const tailTrimSchema = z
  .object({
    silenceThresholdDbfs: z.number().max(0),
    minimumSilenceSeconds: z.number().nonnegative(),
    minimumSpeechSeconds: z.number().nonnegative(),
    noiseBelowPeakDb: z.number().positive(),
    noiseSpreadDb: z.number().positive(),
    minimumNoiseSeconds: z.number().positive(),
    marginSeconds: z.number().nonnegative(),
    hallucinationGapSeconds: z.number().positive(),
    hallucinationMaximumSeconds: z.number().positive(),
    hallucinationCoverage: z.number().min(0).max(1),
    abruptEndDbfs: z.number().max(0),
  })
  .partial()
  .strict();

/**
 * The settings every remote backend shares (YAML, seconds). `kanaEnabled` is the backend's default for
 * `kanaReading.enabled`, `sampleRate` its default output rate.
 */
export function remoteServiceSettingsShape(defaults: { kanaEnabled: boolean; sampleRate: number; timeoutSeconds: number }) {
  return {
    /** Base URLs of the servers, used in parallel (e.g. one per GPU). */
    urls: z.array(z.url({ protocol: /^https?$/ })).nonempty(),
    /** Sample rate of the audio the service returns, Hz (raw PCM carries none). */
    sampleRate: z.number().int().min(8000).max(96000).default(defaults.sampleRate),
    /** Requests one server handles at once. */
    concurrencyPerEndpoint: z.number().int().positive().default(1),
    /** Pool-wide cap on requests started per interval; null = none. */
    requestsPerInterval: z.object({ count: z.number().int().positive(), intervalSeconds: z.number().positive() }).strict().nullable().default(null),
    /** One attempt, response body included, seconds. */
    timeoutSeconds: z.number().positive().default(defaults.timeoutSeconds),
    /** Retries after the first attempt, with exponential backoff and jitter (pipeline/services/retry.ts). */
    retry: z
      .object({
        maxRetries: z.number().int().nonnegative().default(4),
        initialDelaySeconds: z.number().nonnegative().default(1),
        maxDelaySeconds: z.number().nonnegative().default(30),
        backoffFactor: z.number().min(1).default(2),
        jitter: z.number().min(0).max(1).default(0.3),
      })
      .strict()
      .prefault({}),
    /** Cool-down of a server that stopped answering (doubles per consecutive failure). */
    endpointCooldown: z
      .object({ initialSeconds: z.number().nonnegative().default(1), maximumSeconds: z.number().nonnegative().default(30) })
      .strict()
      .prefault({}),
    /** Japanese: give the engine kana readings instead of kanji (japanese-kana.ts); the original text stays the alignment text. */
    kanaReading: z
      .object({
        enabled: z.boolean().default(defaults.kanaEnabled),
        script: z.enum(['hiragana', 'katakana']).default('hiragana'),
        source: z.enum(['reading', 'pronunciation']).default('reading'),
        scope: z.enum(['kanji-morphemes', 'all-morphemes']).default('kanji-morphemes'),
      })
      .strict()
      .prefault({}),
    /** Checks on returned audio (synthesis-checks.ts). */
    checks: z
      .object({
        /** Tail trimming, duration checks and the speech-rate watch; false accepts audio as received. */
        enabled: z.boolean().default(true),
        /** Per-language overrides of DEFAULT_SPEECH_RATE_BOUNDS. */
        bounds: z.partialRecord(languageSchema, speechRateBoundsSchema).default({}),
        /** Overrides of DEFAULT_TAIL_TRIM_OPTIONS. */
        tail: tailTrimSchema.default({}),
        /** Median tempo watch over recent utterances; null = off. */
        speechRateMonitor: z
          .object({
            windowSize: z.number().int().positive().default(8),
            minimumTempoRatio: z.number().positive().default(0.75),
            maximumTempoRatio: z.number().positive().default(1.4),
          })
          .strict()
          .nullable()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /** Prepared voice prompts kept in memory. */
    promptCacheSize: z.number().int().positive().default(64),
  };
}

/** The shared settings after defaults (see {@link remoteServiceSettingsShape}). */
export type RemoteServiceSettings = z.output<z.ZodObject<ReturnType<typeof remoteServiceSettingsShape>>>;

/** Runtime options of a {@link RemoteSpeechSynthesizer}, resolved from {@link RemoteServiceSettings}. */
export interface RemoteSynthesizerOptions {
  urls: string[];
  /** Hz. */
  sampleRate: number;
  concurrencyPerEndpoint: number;
  requestRate: { count: number; intervalMilliseconds: number } | null;
  timeoutMilliseconds: number;
  retry: RetryPolicy;
  cooldownInitialMilliseconds: number;
  cooldownMaximumMilliseconds: number;
  kana: KanaReadingOptions | null;
  /** null = accept audio as received. */
  checks: SynthesisCheckOptions | null;
  monitor: SpeechRateMonitorOptions | null;
  promptCacheSize: number;
  /** Waits between retries; injectable for tests. */
  sleep?: (milliseconds: number, signal?: AbortSignal) => Promise<void>;
  /** Jitter source; injectable for tests. */
  random?: () => number;
  /** Called with the counters each time an utterance succeeds or is quarantined (e.g. to drive a progress bar). */
  onProgress?: (statistics: RemoteSynthesisStatistics) => void;
}

/**
 * Converts parsed settings (seconds) to runtime options (milliseconds).
 *
 * @param detector speech finder for the checks (e.g. a Silero VAD); default the energy detector.
 * @throws TypeError when a URL is not http(s).
 */
export function remoteSynthesizerOptions(settings: RemoteServiceSettings, detector?: SpeechActivityDetector): RemoteSynthesizerOptions {
  const { retry, checks, kanaReading } = settings;
  return {
    urls: settings.urls.map(normalizeBaseUrl),
    sampleRate: settings.sampleRate,
    concurrencyPerEndpoint: settings.concurrencyPerEndpoint,
    requestRate: settings.requestsPerInterval ? { count: settings.requestsPerInterval.count, intervalMilliseconds: settings.requestsPerInterval.intervalSeconds * 1000 } : null,
    timeoutMilliseconds: settings.timeoutSeconds * 1000,
    retry: resolveRetryPolicy({
      maxRetries: retry.maxRetries,
      initialDelayMilliseconds: retry.initialDelaySeconds * 1000,
      maxDelayMilliseconds: retry.maxDelaySeconds * 1000,
      backoffFactor: retry.backoffFactor,
      jitter: retry.jitter,
    }),
    cooldownInitialMilliseconds: settings.endpointCooldown.initialSeconds * 1000,
    cooldownMaximumMilliseconds: settings.endpointCooldown.maximumSeconds * 1000,
    kana: kanaReading.enabled ? { script: kanaReading.script, source: kanaReading.source, scope: kanaReading.scope } : null,
    checks: checks.enabled ? resolveSynthesisCheckOptions({ bounds: checks.bounds, tail: checks.tail, ...(detector ? { detector } : {}) }) : null,
    monitor: checks.enabled ? checks.speechRateMonitor : null,
    promptCacheSize: settings.promptCacheSize,
  };
}

/** One attempt, as a backend sees it when it builds the request. */
export interface RemoteAttempt<Voice> {
  /** The text as written (alignment text). */
  text: string;
  /** The text to send (kana reading for Japanese when enabled, else `text`). */
  spokenText: string;
  language: Language;
  voice: Voice;
  /** 0 for the first attempt. */
  attemptIndex: number;
  /** Errors of the earlier attempts of this utterance (a backend may change route after some). */
  previousErrors: readonly unknown[];
  /** The engine's spelling of any other text (e.g. a prompt transcript): kana when enabled and it holds kanji. */
  toSpoken: (text: string) => Promise<string>;
}

/**
 * One request, built completely before an endpoint is chosen, so that an endpoint's slot is held only
 * for the exchange itself (the body is already serialized).
 */
export interface RemoteRequest {
  /** Path appended to the endpoint, e.g. `/inference_cross_lingual`. */
  route: string;
  headers: Record<string, string>;
  /** The whole request body (POST). */
  body: Uint8Array | string;
  /** A counted remark, e.g. `zero-shot fell back to cross-lingual`. */
  note?: string;
}

/** One protocol: how to build a request and read its answer. */
export interface RemoteSpeechBackend<Voice> {
  /** Engine id, e.g. `cosyvoice2`. */
  readonly engine: string;
  readonly languages: readonly Language[];
  /** Validates `request.voice`. */
  readonly voiceSchema: z.ZodType<Voice>;
  /** Protocol and model for the version string, e.g. `FastAPI CosyVoice2-0.5B, no zero-shot fallback`. */
  readonly description: string;
  /**
   * Checks and loads what the voice needs before any request (e.g. the prompt file).
   *
   * @throws SpeechSynthesisError `invalid-voice`.
   */
  prepareVoice?(voice: Voice, text: string): Promise<void>;
  /** The voice's own tempo (see voice-prompt.ts `voicePromptTempo`); null when unknown. */
  referenceTempo?(voice: Voice): Promise<number | null>;
  /**
   * Builds the request of one attempt.
   *
   * @throws SpeechSynthesisError `invalid-voice` when the voice cannot be used.
   */
  buildRequest(attempt: RemoteAttempt<Voice>): Promise<RemoteRequest>;
  /**
   * Reads the audio of a successful (2xx) answer.
   *
   * @param context the endpoint answered and the utterance text (for errors).
   * @returns the audio as received, at the rate it is to be read at.
   * @throws SpeechServiceError when the answer is not usable audio (typed, with `isRetryable`).
   */
  readAudio(response: ServiceResponse, request: RemoteRequest, context: { endpoint: string; text: string }): RawAudio;
}

/** One attempt of one utterance, as recorded in {@link SpeechSynthesisQuarantineError.attempts}. */
export interface SynthesisAttemptRecord {
  attemptIndex: number;
  endpoint: string;
  route: string;
  /** null for the successful attempt. */
  failure: SpeechSynthesisFailure | null;
  detail: string;
  elapsedMilliseconds: number;
}

/** Why an utterance was given up. */
export type QuarantineReason = RetryGiveUpReason | 'implausible-speech-rate';

/**
 * An utterance given up after its attempts: `failure` is the last attempt's failure, `reason` says
 * why no more attempts were made, `attempts` lists them all. Never retryable as is.
 */
export class SpeechSynthesisQuarantineError extends SpeechSynthesisError {
  readonly isRetryable = false;

  constructor(
    engine: string,
    text: string,
    failure: SpeechSynthesisFailure,
    readonly reason: QuarantineReason,
    readonly attempts: readonly SynthesisAttemptRecord[],
    detail: string,
    options?: { cause?: unknown },
  ) {
    const tried = attempts.length > 0 ? `quarantined after ${attempts.length} attempt${attempts.length === 1 ? '' : 's'} (${reason})` : `quarantined (${reason})`;
    super(engine, text, failure, `${tried}: ${detail}`, options);
  }
}

/** Counters of a {@link RemoteSpeechSynthesizer}. */
export interface RemoteSynthesisStatistics {
  /** Utterances asked for. */
  requested: number;
  succeeded: number;
  quarantined: number;
  /** HTTP attempts made (first tries and retries). */
  attempts: number;
  retries: number;
  /** Failed attempts by failure kind. */
  failures: Partial<Record<SpeechSynthesisFailure, number>>;
  /** Accepted utterances whose tail was trimmed, by what was removed. */
  trimmedTails: Record<TailKind, number>;
  /** Backend remarks (e.g. zero-shot fallbacks), counted. */
  notes: Record<string, number>;
  /** Seconds of accepted audio. */
  audioSeconds: number;
  speechRate: SpeechRateAssessment | null;
  pool: EndpointPoolStatistics;
}

/**
 * A remote TTS service behind the {@link SpeechSynthesizer} seam (see the file comment).
 * Not deterministic: voice-cloning models sample; the synthesis cache makes builds repeatable.
 */
export class RemoteSpeechSynthesizer<Voice> implements SpeechSynthesizer {
  readonly id: string;
  readonly version: string;
  readonly languages: readonly Language[];
  readonly pool: EndpointPool;
  private readonly monitor: SpeechRateMonitor | null;
  private readonly counters: Omit<RemoteSynthesisStatistics, 'speechRate' | 'pool'> = {
    requested: 0,
    succeeded: 0,
    quarantined: 0,
    attempts: 0,
    retries: 0,
    failures: {},
    trimmedTails: { silence: 0, noise: 0, hallucination: 0 },
    notes: {},
    audioSeconds: 0,
  };

  /**
   * @param backend the protocol.
   * @param options resolved settings (see {@link remoteSynthesizerOptions}).
   * @throws RangeError when the pool settings are invalid.
   */
  constructor(
    readonly backend: RemoteSpeechBackend<Voice>,
    readonly options: RemoteSynthesizerOptions,
  ) {
    this.id = backend.engine;
    this.languages = backend.languages;
    this.version = [
      `${backend.engine} ${backend.description}`,
      `${options.sampleRate} Hz`,
      options.kana ? describeKanaReadingOptions(options.kana) : 'kana off',
      options.checks ? 'checks 1' : 'checks off',
    ].join('; ');
    this.pool = new EndpointPool(options.urls, {
      concurrencyPerEndpoint: options.concurrencyPerEndpoint,
      requestRate: options.requestRate,
      cooldownInitialMilliseconds: options.cooldownInitialMilliseconds,
      cooldownMaximumMilliseconds: options.cooldownMaximumMilliseconds,
    });
    this.monitor = options.checks && options.monitor ? new SpeechRateMonitor(options.monitor) : null;
  }

  /** A snapshot of the progress counters (utterances, attempts, failures, endpoints). */
  statistics(): RemoteSynthesisStatistics {
    return structuredClone({ ...this.counters, speechRate: this.monitor?.assess() ?? null, pool: this.pool.statistics() });
  }

  /**
   * The text the engine is given for `text`: its kana reading when kana readings are on and it holds
   * kanji, else `text` unchanged.
   *
   * @throws WordTokenizerError when the Japanese dictionary cannot be loaded.
   */
  async spokenText(text: string): Promise<string> {
    if (!this.options.kana || !containsKanji(text)) return text;
    return (await toKanaReading(text, this.options.kana)).text;
  }

  /**
   * Synthesizes one utterance on the least-busy server, retrying retryable failures.
   *
   * @returns mono audio, tail trimmed, at the configured sample rate (raw PCM answers) or the rate a
   *   WAV answer declares; no engine timings.
   * @throws SpeechSynthesisError `unsupported-language`, `empty-text`, `invalid-voice` before any
   *   request; {@link SpeechSynthesisQuarantineError} when the service failed (its `failure` is the last
   *   attempt's: `service-unreachable`, `service-error`, `timeout`, `truncated-audio`,
   *   `runaway-audio`, `empty-audio`), or at once with `implausible-speech-rate` once the median
   *   tempo of recent utterances says the configured sample rate is wrong.
   */
  async synthesize(request: SynthesisRequest): Promise<SynthesisOutput> {
    this.counters.requested += 1;
    const text = normalizeWhitespace(request.text);
    if (!this.languages.includes(request.language)) {
      throw new SpeechSynthesisError(this.id, request.text, 'unsupported-language', `language "${request.language}" is not supported (only ${this.languages.join(', ')})`);
    }
    if (!text) throw new SpeechSynthesisError(this.id, request.text, 'empty-text', 'the text is empty');
    const voice = parseVoice(this.id, request.text, this.backend.voiceSchema, request.voice);
    this.assertPlausibleSpeechRate(text);
    await this.backend.prepareVoice?.(voice, text);
    const spokenText = await this.spokenText(text);

    const attempts: SynthesisAttemptRecord[] = [];
    let lastEndpoint: string | undefined;
    let giveUp: QuarantineReason = 'retries-exhausted';
    try {
      const accepted = await retryWithBackoff(
        async ({ attemptIndex, previousErrors }) => {
          let endpointUsed = '';
          let started = performance.now();
          const built = await this.backend.buildRequest({
            text,
            spokenText,
            language: request.language,
            voice,
            attemptIndex,
            previousErrors,
            toSpoken: (other) => this.spokenText(other),
          });
          const record = (failure: SpeechSynthesisFailure | null, detail: string): void => {
            attempts.push({ attemptIndex, endpoint: endpointUsed, route: built.route, failure, detail, elapsedMilliseconds: Math.round(performance.now() - started) });
            if (failure) this.counters.failures[failure] = (this.counters.failures[failure] ?? 0) + 1;
          };
          try {
            // Only the exchange holds the endpoint's slot; reading and checking the audio run after it is free.
            const response = await this.pool.run(
              (endpoint, signal) => {
                endpointUsed = endpoint;
                lastEndpoint = endpoint;
                started = performance.now();
                this.counters.attempts += 1;
                return requestService(
                  { engine: this.id, text, endpoint, route: built.route },
                  { method: 'POST', headers: built.headers, body: built.body },
                  { timeoutMilliseconds: this.options.timeoutMilliseconds, ...(signal ? { signal } : {}) },
                );
              },
              lastEndpoint ? { avoid: lastEndpoint } : {},
            );
            const audio = this.backend.readAudio(response, built, { endpoint: endpointUsed, text });
            const checked = await this.check(audio, built.route, text, request.language, endpointUsed);
            record(null, built.note ?? '');
            return { built, checked, sampleRate: audio.sampleRate };
          } catch (error) {
            if (error instanceof SpeechSynthesisError) record(error.failure, error.detail);
            throw error;
          }
        },
        {
          ...this.options.retry,
          isRetryable: (error) => error instanceof SpeechServiceError && error.isRetryable,
          onRetry: () => void (this.counters.retries += 1),
          onGiveUp: (event) => void (giveUp = event.reason),
          ...(this.options.sleep ? { sleep: this.options.sleep } : {}),
          ...(this.options.random ? { random: this.options.random } : {}),
        },
      );
      const { built, checked, sampleRate } = accepted;
      if (built.note) this.counters.notes[built.note] = (this.counters.notes[built.note] ?? 0) + 1;
      for (const kind of checked.removed) this.counters.trimmedTails[kind] += 1;
      if (this.monitor && checked.tempo > 0) {
        const reference = (await this.backend.referenceTempo?.(voice)) ?? 1;
        this.monitor.record(checked.tempo / reference);
      }
      this.counters.succeeded += 1;
      this.counters.audioSeconds += checked.samples.length / sampleRate;
      this.reportProgress();
      return { audio: { channels: [checked.samples], sampleRate } };
    } catch (error) {
      if (!(error instanceof SpeechServiceError)) throw error;
      this.counters.quarantined += 1;
      this.reportProgress();
      const history = attempts.map((attempt) => `#${attempt.attemptIndex + 1} ${attempt.endpoint}${attempt.route}: ${attempt.failure ?? 'ok'}`).join(', ');
      throw new SpeechSynthesisQuarantineError(this.id, request.text, error.failure, giveUp, attempts, `${error.detail}; attempts: ${history}`, { cause: error });
    }
  }

  /** Trims the tail and judges the duration; throws a retryable SpeechServiceError for bad audio. */
  private async check(audio: RawAudio, route: string, text: string, language: Language, endpoint: string): Promise<{ samples: Float32Array; tempo: number; removed: TailKind[] }> {
    const samples = audio.channels.length === 1 ? (audio.channels[0] as Float32Array) : downmixToMono(audio);
    const fail = (failure: SpeechSynthesisFailure, detail: string): SpeechServiceError =>
      new SpeechServiceError(this.id, text, failure, detail, { endpoint, route, isRetryable: true });
    if (samples.length === 0) throw fail('empty-audio', 'the service returned no samples');
    if (!this.options.checks) {
      if (!samples.some((sample) => sample !== 0)) throw fail('empty-audio', `the service returned ${samples.length} samples of silence`);
      return { samples, tempo: 0, removed: [] };
    }
    const check = await checkSynthesizedSpeech(samples, audio.sampleRate, text, language, this.options.checks);
    if (check.verdict === 'no-speech') throw fail('empty-audio', check.reason);
    if (check.verdict === 'truncated') throw fail('truncated-audio', check.reason);
    if (check.verdict === 'runaway') throw fail('runaway-audio', check.reason);
    return { samples: check.samples, tempo: check.tempo, removed: check.tail.removed };
  }

  private reportProgress(): void {
    if (this.options.onProgress) this.options.onProgress(this.statistics());
  }

  /** Throws `implausible-speech-rate` (quarantine, not retryable) once the tempo watch has concluded so. */
  private assertPlausibleSpeechRate(text: string): void {
    const assessment = this.monitor?.assess();
    if (!assessment || assessment.plausible) return;
    const likelyRate = Math.round(this.options.sampleRate / assessment.medianTempoRatio);
    throw new SpeechSynthesisQuarantineError(
      this.id,
      text,
      'implausible-speech-rate',
      'implausible-speech-rate',
      [],
      `the median tempo of the last ${assessment.count} utterances is ${assessment.medianTempoRatio.toFixed(2)} times the voice's own ` +
        `(plausible ${this.monitor?.options.minimumTempoRatio}-${this.monitor?.options.maximumTempoRatio}); the configured sampleRate ` +
        `${this.options.sampleRate} Hz is probably not the model's (the tempo suggests about ${likelyRate} Hz; CosyVoice2 outputs 24000 Hz)`,
    );
  }
}

/** Settings of a remote engine are missing or malformed; the message lists each problem with its path. */
export class RemoteServiceSettingsError extends Error {
  override readonly name = 'RemoteServiceSettingsError';
}

/**
 * Validates engine settings with `schema`.
 *
 * @param engine engine id for the message.
 * @throws RemoteServiceSettingsError listing each problem as `path: message`.
 */
export function parseRemoteServiceSettings<Schema extends z.ZodType>(engine: string, schema: Schema, settings: unknown): z.output<Schema> {
  if (settings === undefined) throw new RemoteServiceSettingsError(`${engine}: service settings are required (at least \`urls\`)`);
  const parsed = schema.safeParse(settings);
  if (!parsed.success) {
    throw new RemoteServiceSettingsError(`${engine}: invalid service settings: ${describeIssues(parsed.error.issues, { root: '(settings)' })}`);
  }
  return parsed.data;
}

/** Result of probing one endpoint when an engine is created. */
export interface EndpointProbe {
  url: string;
  /** True when the endpoint answered as the expected service. */
  ready: boolean;
  /** What was found (or why not ready). */
  detail: string;
}

/**
 * Checks a set of probes: fine when at least one endpoint is ready and none answered as another service.
 *
 * @throws SpeechSynthesisError `service-unreachable` when no endpoint is ready; `service-error` when an
 *   endpoint answered but is not the expected service (a wrong URL in the settings).
 */
export function assertProbes(engine: string, probes: readonly EndpointProbe[]): void {
  const wrong = probes.filter((probe) => !probe.ready && probe.detail.startsWith('not '));
  if (wrong.length > 0) throw new SpeechSynthesisError(engine, '', 'service-error', wrong.map((probe) => `${probe.url}: ${probe.detail}`).join('; '));
  if (!probes.some((probe) => probe.ready)) throw new SpeechSynthesisError(engine, '', 'service-unreachable', `no endpoint is ready: ${probes.map((probe) => `${probe.url}: ${probe.detail}`).join('; ')}`);
}
