/**
 * ASR client for an OpenAI-compatible transcription service, over the `openai` package 6.x (the same
 * package as the OpenAI-compatible LLM backend): OpenAI's API, a local Whisper server
 * (faster-whisper-server / speaches, whisper.cpp's OpenAI route), vLLM serving a Whisper model.
 *
 * Wire contract (OpenAI API reference, "Create transcription"): `POST {baseURL}/audio/transcriptions`,
 * `multipart/form-data` with `file` (the audio, here a 16 kHz mono PCM16 WAV named `<clip>.wav`),
 * `model`, `response_format=json`, `temperature=0` and optionally `language` (ISO-639-1); the answer is
 * `{"text": "..."}`; errors are `{"error": {"message", "type", "code"}}` with the HTTP status, a 429 may
 * carry `retry-after`. `Authorization: Bearer <key>` only when a key is configured.
 *
 * The package's own retries are off (`maxRetries: 0`); retries are pipeline/services/retry.ts's
 * (408, 409, 429, >= 500, timeouts, connection failures, malformed answers; the server's
 * `retry-after` honoured). Failures end as {@link TranscriptionError}; 401, 403, 404 and an
 * unreachable service are marked `isServiceUnusable` (no clip can be transcribed as configured).
 * The key never appears in an error message: the package does not quote request headers, and the URL
 * is named without user info or query (pipeline/services/service-address.ts).
 */
import OpenAI, { toFile } from 'openai';
import { retryWithBackoff, type RetryPolicy } from '../retry.ts';
import { serviceAddress } from '../service-address.ts';
import { describeReply } from '../reply-excerpt.ts';
import { TranscriptionError, type SpeechTranscriber, type TranscriptionRequest } from './speech-transcriber.ts';

/** Client-side timeout of one request, milliseconds (a 30 s clip takes a CPU Whisper well under a minute). */
export const DEFAULT_TRANSCRIPTION_TIMEOUT_MILLISECONDS = 120_000;
/** Model name sent when none is configured: OpenAI's Whisper; local servers take their own names. */
export const DEFAULT_TRANSCRIPTION_MODEL = 'whisper-1';

/** Options of an {@link OpenAITranscriber}. */
export interface OpenAITranscriberOptions {
  /** Base URL including the API prefix, e.g. `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  /** Model name, default {@link DEFAULT_TRANSCRIPTION_MODEL}. */
  model?: string;
  /** API key, or undefined for a server without authentication (no `Authorization` header is sent). */
  apiKey?: string;
  /** Per request, milliseconds; default {@link DEFAULT_TRANSCRIPTION_TIMEOUT_MILLISECONDS}. */
  timeoutMilliseconds?: number;
  /** Retry policy (pipeline/services/retry.ts); default its DEFAULT_RETRY_POLICY. */
  retry?: Partial<RetryPolicy>;
  /** Waits between retries; injectable so tests do not sleep. */
  sleep?: (milliseconds: number, signal?: AbortSignal) => Promise<void>;
  /** Injectable fetch (default the global one). */
  fetch?: typeof fetch;
}

/** A {@link SpeechTranscriber} calling `POST {baseUrl}/audio/transcriptions`. */
export class OpenAITranscriber implements SpeechTranscriber {
  readonly description: string;
  readonly model: string;
  readonly timeoutMilliseconds: number;
  private readonly client: OpenAI;

  /** @param options base URL, model, key, timeout, retry policy. */
  constructor(private readonly options: OpenAITranscriberOptions) {
    this.model = options.model ?? DEFAULT_TRANSCRIPTION_MODEL;
    this.timeoutMilliseconds = options.timeoutMilliseconds ?? DEFAULT_TRANSCRIPTION_TIMEOUT_MILLISECONDS;
    this.description = `openai-transcriptions ${this.model}`;
    this.client = new OpenAI({
      baseURL: options.baseUrl,
      apiKey: options.apiKey ?? 'no-api-key',
      organization: null,
      project: null,
      adminAPIKey: null,
      maxRetries: 0,
      timeout: this.timeoutMilliseconds,
      ...(options.apiKey === undefined ? { defaultHeaders: { Authorization: null } } : {}),
      ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
    });
  }

  /**
   * Uploads one WAV clip and returns its text (trimmed), retrying what may succeed on a second try.
   * @throws TranscriptionError (see the module comment) once retries are used up or at the first
   *   error that is not retryable.
   */
  async transcribe(request: TranscriptionRequest): Promise<string> {
    return retryWithBackoff(() => this.transcribeOnce(request), {
      ...this.options.retry,
      ...(this.options.sleep === undefined ? {} : { sleep: this.options.sleep }),
    });
  }

  private async transcribeOnce(request: TranscriptionRequest): Promise<string> {
    let answer: unknown;
    let contentType: string | null = null;
    try {
      const file = await toFile(request.wav, request.fileName, { type: 'audio/wav' });
      const answered = await this.client.audio.transcriptions
        .create({
          file,
          model: this.model,
          response_format: 'json',
          temperature: 0,
          ...(request.language === undefined ? {} : { language: request.language }),
        })
        .withResponse();
      answer = answered.data;
      contentType = answered.response.headers.get('content-type');
    } catch (error) {
      throw transcriptionErrorOf(error, this.options.baseUrl, this.timeoutMilliseconds, request.fileName);
    }
    const text = typeof answer === 'object' && answer !== null ? (answer as { text?: unknown }).text : undefined;
    if (typeof text !== 'string') {
      throw new TranscriptionError(
        `transcription of ${request.fileName} at ${serviceAddress(this.options.baseUrl)}: the answer has no "text" string (${describeReply(contentType, answer)})`,
        {
          failure: 'malformed-response',
          isRetryable: true,
        },
      );
    }
    return text.trim();
  }
}

/** HTTP statuses that mean no request to this service can succeed as configured. */
const UNUSABLE_STATUSES: ReadonlySet<number> = new Set([401, 403, 404]);

/** Whether an HTTP status is worth retrying: 408, 409, 429 and every 5xx. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** A server-given delay: `retry-after-ms` (milliseconds), else `retry-after` (seconds or an HTTP date). */
function retryAfterOf(headers: Headers | undefined): number | undefined {
  const milliseconds = headers?.get('retry-after-ms');
  if (milliseconds != null && Number.isFinite(Number(milliseconds))) return Math.max(0, Number(milliseconds));
  const value = headers?.get('retry-after');
  if (value == null) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * Turns whatever the `openai` package threw into a {@link TranscriptionError}.
 * @param error the thrown value; `url` the base URL and `fileName` the clip, for the message.
 */
export function transcriptionErrorOf(
  error: unknown,
  url: string,
  timeoutMilliseconds: number,
  fileName: string,
): TranscriptionError {
  const where = `transcription of ${fileName} at ${serviceAddress(url)}`; // the address without user info or query: never a key
  if (error instanceof TranscriptionError) return error;
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new TranscriptionError(`${where}: no answer within the ${timeoutMilliseconds / 1000} s timeout`, {
      failure: 'timeout',
      isRetryable: true,
      cause: error,
    });
  }
  if (error instanceof OpenAI.APIConnectionError) {
    // fetch quotes the URL it refused ("... includes credentials: http://me:KEY@host/..."): every URL named by its address
    const cause =
      error.cause instanceof Error
        ? `: ${error.cause.message.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, (found) => serviceAddress(found))}`
        : '';
    return new TranscriptionError(`${where}: connection failed (${error.message}${cause})`, {
      failure: 'service-unreachable',
      isRetryable: true,
      isServiceUnusable: true,
      cause: error,
    });
  }
  if (error instanceof OpenAI.APIError && error.status !== undefined) {
    return new TranscriptionError(`${where}: HTTP ${error.message}`.slice(0, 400), {
      failure: 'service-error',
      statusCode: error.status,
      isRetryable: isRetryableStatus(error.status),
      isServiceUnusable: UNUSABLE_STATUSES.has(error.status),
      ...(retryAfterOf(error.headers) === undefined
        ? {}
        : { retryAfterMilliseconds: retryAfterOf(error.headers) as number }),
      cause: error,
    });
  }
  if (error instanceof SyntaxError) {
    return new TranscriptionError(`${where}: the answer is not valid JSON (${error.message})`, {
      failure: 'malformed-response',
      isRetryable: true,
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new TranscriptionError(`${where}: ${message}`, {
    failure: 'service-unreachable',
    isRetryable: false,
    cause: error,
  });
}
