/**
 * The settings every remote TTS service shares (zod, seconds in YAML) and the runtime options of
 * ./remote-synthesizer.ts made from them (milliseconds), with the error for settings that do not fit.
 */
import { z } from 'zod';
import { languageCodeSchema } from '../../model/language-code.ts';
import { resolveRetryPolicy, type RetryPolicy } from '../retry.ts';
import type { Clock } from '../clock.ts';
import type { KanaReadingOptions } from '../../text/japanese-kana.ts';
import { normalizeBaseUrl } from './service-http.ts';
import {
  resolveSynthesisCheckOptions,
  type SpeechActivityDetector,
  type SpeechRateMonitorOptions,
  type SynthesisCheckOptions,
} from './synthesis-checks.ts';
import type { RemoteSynthesisStatistics } from './remote-speech-backend.ts';
import { describeIssues } from '../../model/validation.ts';

const languageSchema = languageCodeSchema;

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
export function remoteServiceSettingsShape(defaults: {
  kanaEnabled: boolean;
  sampleRate: number;
  timeoutSeconds: number;
}) {
  return {
    /** Base URLs of the servers, used in parallel (e.g. one per GPU). */
    urls: z.array(z.url({ protocol: /^https?$/ })).nonempty(),
    /** Sample rate of the audio the service returns, Hz (raw PCM carries none). */
    sampleRate: z.number().int().min(8000).max(96000).default(defaults.sampleRate),
    /** Requests one server handles at once. */
    concurrencyPerEndpoint: z.number().int().positive().default(1),
    /** Pool-wide cap on requests started per interval; null = none. */
    requestsPerInterval: z
      .object({ count: z.number().int().positive(), intervalSeconds: z.number().positive() })
      .strict()
      .nullable()
      .default(null),
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
      .object({
        initialSeconds: z.number().nonnegative().default(1),
        maximumSeconds: z.number().nonnegative().default(30),
      })
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
        bounds: z.record(languageSchema, speechRateBoundsSchema).default({}),
        /** Overrides of DEFAULT_TAIL_TRIM_OPTIONS. */
        tail: tailTrimSchema.default({}),
        /** Median tempo watch over recent utterances; null = off. */
        speechRateMonitor: z
          .object({
            windowSize: z.number().int().positive().default(8),
            minimumTempoRatio: z.number().positive().default(0.75),
            maximumTempoRatio: z.number().positive().default(1.4),
            /** Shorter utterances (predicted seconds) are not looked at. */
            minimumTypicalSeconds: z.number().nonnegative().default(1.5),
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
  /** Waits between retries; injectable for tests. Default the clock's sleep. */
  sleep?: (milliseconds: number, signal?: AbortSignal) => Promise<void>;
  /** Request timeouts, endpoint cool-downs and rate waits, retry waits (unless `sleep` is given) and attempt times; injectable for tests. Default the system clock. */
  clock?: Clock;
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
export function remoteSynthesizerOptions(
  settings: RemoteServiceSettings,
  detector?: SpeechActivityDetector,
): RemoteSynthesizerOptions {
  const { retry, checks, kanaReading } = settings;
  return {
    urls: settings.urls.map(normalizeBaseUrl),
    sampleRate: settings.sampleRate,
    concurrencyPerEndpoint: settings.concurrencyPerEndpoint,
    requestRate: settings.requestsPerInterval
      ? {
          count: settings.requestsPerInterval.count,
          intervalMilliseconds: settings.requestsPerInterval.intervalSeconds * 1000,
        }
      : null,
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
    kana: kanaReading.enabled
      ? { script: kanaReading.script, source: kanaReading.source, scope: kanaReading.scope }
      : null,
    checks: checks.enabled
      ? resolveSynthesisCheckOptions({ bounds: checks.bounds, tail: checks.tail, ...(detector ? { detector } : {}) })
      : null,
    monitor: checks.enabled ? checks.speechRateMonitor : null,
    promptCacheSize: settings.promptCacheSize,
  };
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
export function parseRemoteServiceSettings<Schema extends z.ZodType>(
  engine: string,
  schema: Schema,
  settings: unknown,
): z.output<Schema> {
  if (settings === undefined)
    throw new RemoteServiceSettingsError(`${engine}: service settings are required (at least \`urls\`)`);
  const parsed = schema.safeParse(settings);
  if (!parsed.success) {
    throw new RemoteServiceSettingsError(
      `${engine}: invalid service settings: ${describeIssues(parsed.error.issues, { root: '(settings)' })}`,
    );
  }
  return parsed.data;
}
