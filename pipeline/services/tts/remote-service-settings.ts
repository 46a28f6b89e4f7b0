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
import type { SpeechRecognitionCheckOptions } from './synthesis-recognition.ts';
import type { SpeechLengthCheckOptions } from './synthesis-speech-length.ts';
import type { RemoteSynthesisStatistics } from './remote-speech-backend.ts';
import { describeIssues } from '../../model/validation.ts';

const languageSchema = languageCodeSchema;

const speechRateBoundsSchema = z
  .object({
    typicalUnitsPerSecond: z
      .number()
      .positive()
      .describe(
        'Rate of ordinary conversational speech, spoken units per second; gives the predicted duration and the tempo ratio.',
      ),
    minimumUnitsPerSecond: z
      .number()
      .positive()
      .describe('Slower than this, spoken units per second (with the allowances), is runaway output.'),
    maximumUnitsPerSecond: z
      .number()
      .positive()
      .describe('Faster than this, spoken units per second, is truncated output (or a sample rate set too high).'),
    pauseAllowanceSeconds: z
      .number()
      .nonnegative()
      .describe('Longest pause one pausing punctuation mark may add to the maximum duration, seconds.'),
    allowanceSeconds: z
      .number()
      .nonnegative()
      .describe('Fixed slack added to the maximum duration, seconds (short utterances vary most).'),
  })
  .partial()
  .strict();

const tailTrimSchema = z
  .object({
    silenceThresholdDbfs: z
      .number()
      .max(0)
      .describe('A 10 ms frame at or above this RMS level, dBFS, is sound; default -50.'),
    minimumSilenceSeconds: z
      .number()
      .nonnegative()
      .describe('Silences shorter than this, seconds, are bridged inside speech; default 0.15.'),
    minimumSpeechSeconds: z
      .number()
      .nonnegative()
      .describe('Sound runs shorter than this, seconds, are ignored; default 0.03.'),
    noiseBelowPeakDb: z
      .number()
      .positive()
      .describe(
        'A trailing stretch at least this many dB below the loudest frames, steady within noiseSpreadDb, is noise; default 20.',
      ),
    noiseSpreadDb: z
      .number()
      .positive()
      .describe("Largest distance of a noise frame's level from the noise's median level, dB; default 6."),
    minimumNoiseSeconds: z
      .number()
      .positive()
      .describe('A steady trailing stretch must last this long, seconds, to be called noise; default 0.3.'),
    marginSeconds: z.number().nonnegative().describe('Kept after the last speech, seconds; default 0.05.'),
    hallucinationGapSeconds: z
      .number()
      .positive()
      .describe(
        'A silence gap at least this long, seconds, before a final short burst marks a hallucinated tail; default 0.8.',
      ),
    hallucinationMaximumSeconds: z
      .number()
      .positive()
      .describe('The burst after the gap is cut only when it lasts at most this long, seconds; default 2.0.'),
    hallucinationCoverage: z
      .number()
      .min(0)
      .max(1)
      .describe(
        'The burst is cut only when the speech before the gap lasts this share of the typical duration; default 0.8.',
      ),
    abruptEndDbfs: z
      .number()
      .max(0)
      .describe('The last 20 ms at or above this RMS level, dBFS, means the audio was cut mid-speech; default -30.'),
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
    urls: z
      .array(z.url({ protocol: /^https?$/ }))
      .nonempty()
      .describe('Base URLs of the servers, used in parallel (e.g. one per GPU).')
      .meta({ examples: [['http://127.0.0.1:50000']] }),
    sampleRate: z
      .number()
      .int()
      .min(8000)
      .max(96000)
      .default(defaults.sampleRate)
      .describe('Sample rate of the audio the service returns, Hz (raw PCM carries none).'),
    concurrencyPerEndpoint: z.number().int().positive().default(1).describe('Requests one server handles at once.'),
    requestsPerInterval: z
      .object({
        count: z.number().int().positive().describe('Requests started per interval.'),
        intervalSeconds: z.number().positive().describe('Length of the interval, seconds.'),
      })
      .strict()
      .nullable()
      .default(null)
      .describe('Pool-wide cap on requests started per interval; null = none.'),
    timeoutSeconds: z
      .number()
      .positive()
      .default(defaults.timeoutSeconds)
      .describe('One attempt, response body included, seconds.'),
    retry: z
      .object({
        maxRetries: z.number().int().nonnegative().default(4).describe('Retries after the first attempt.'),
        initialDelaySeconds: z.number().nonnegative().default(1).describe('Backoff before the first retry, seconds.'),
        maxDelaySeconds: z.number().nonnegative().default(30).describe('Longest wait before one retry, seconds.'),
        backoffFactor: z.number().min(1).default(2).describe('Factor by which the delay grows per retry.'),
        jitter: z.number().min(0).max(1).default(0.3).describe('Relative jitter of the delays, 0..1.'),
      })
      .strict()
      .prefault({})
      .describe('Retries after the first attempt, with exponential backoff and jitter (pipeline/services/retry.ts).'),
    endpointCooldown: z
      .object({
        initialSeconds: z
          .number()
          .nonnegative()
          .default(1)
          .describe('Cool-down after the first failure, seconds (doubles per consecutive failure).'),
        maximumSeconds: z.number().nonnegative().default(30).describe('Longest cool-down, seconds.'),
      })
      .strict()
      .prefault({})
      .describe('Cool-down of a server that stopped answering (doubles per consecutive failure).'),
    kanaReading: z
      .object({
        enabled: z
          .boolean()
          .default(defaults.kanaEnabled)
          .describe('Send Japanese text as kana readings (the alignment keeps the original text).'),
        script: z.enum(['hiragana', 'katakana']).default('hiragana').describe('Kana script of the readings.'),
        source: z
          .enum(['reading', 'pronunciation'])
          .default('reading')
          .describe('kuromoji field the kana come from: the reading or the pronunciation.'),
        scope: z
          .enum(['kanji-morphemes', 'all-morphemes'])
          .default('kanji-morphemes')
          .describe('Morphemes given as kana: those with kanji, or all.'),
      })
      .strict()
      .prefault({})
      .describe('Japanese: give the engine kana readings instead of kanji (japanese-kana.ts).'),
    checks: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe('Tail trimming, duration checks and the speech-rate watch; false accepts audio as received.'),
        bounds: z
          .record(languageSchema, speechRateBoundsSchema.describe('Speech-rate bounds of this language code.'))
          .default({})
          .describe('Per-language overrides of the speech-rate bounds (DEFAULT_SPEECH_RATE_BOUNDS).'),
        tail: tailTrimSchema
          .default({})
          .describe('Overrides of the tail trimming settings (DEFAULT_TAIL_TRIM_OPTIONS).'),
        speechRateMonitor: z
          .object({
            windowSize: z
              .number()
              .int()
              .positive()
              .default(8)
              .describe('Accepted utterances looked at (the most recent ones); no verdict before this many.'),
            minimumTempoRatio: z
              .number()
              .positive()
              .default(0.75)
              .describe('A median tempo ratio below this is implausible.'),
            maximumTempoRatio: z
              .number()
              .positive()
              .default(1.4)
              .describe('A median tempo ratio above this is implausible.'),
            minimumTypicalSeconds: z
              .number()
              .nonnegative()
              .default(1.5)
              .describe('Utterances predicted shorter than this, seconds, are not looked at.'),
            voiceWindowSize: z
              .number()
              .int()
              .positive()
              .default(8)
              .describe("Utterances of one voice, each against the voice's own prompt, before its median counts."),
            minimumVoiceTempoRatio: z
              .number()
              .positive()
              .default(0.95)
              .describe("Every voice's median tempo ratio below this is implausible (a sample rate set too low)."),
            maximumVoiceTempoRatio: z
              .number()
              .positive()
              .default(1.045)
              .describe("Every voice's median tempo ratio above this is implausible (a sample rate set too high)."),
          })
          .strict()
          .nullable()
          .prefault({})
          .describe('Median tempo watch over recent utterances; null = off.'),
      })
      .strict()
      .prefault({})
      .describe('Checks on returned audio (synthesis-checks.ts).'),
    promptCacheSize: z.number().int().positive().default(64).describe('Prepared voice prompts kept in memory.'),
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
  /** Transcribe every accepted clip and resynthesize the misspoken ones (synthesis-recognition.ts); unset = no recognition. */
  speechRecognition?: SpeechRecognitionCheckOptions;
  /** Resynthesize, once, clips whose speech runs well beyond their text (synthesis-speech-length.ts; needs `checks` and a voice prompt with its transcript); unset = no check. */
  speechLength?: SpeechLengthCheckOptions;
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
