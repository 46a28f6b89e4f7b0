/**
 * Automatic speech recognition (ASR) as the speaker prompt pool uses it: one short WAV clip in, its
 * words out. The one real client is ./openai-transcription.ts (an OpenAI-compatible
 * `/v1/audio/transcriptions` service: OpenAI's own, a local Whisper server, vLLM).
 */

/** Why a transcription failed. */
export type TranscriptionFailure =
  /** No answer: connection refused, reset, DNS. */
  | 'service-unreachable'
  /** No complete answer within the client timeout. */
  | 'timeout'
  /** The service answered with an HTTP error status. */
  | 'service-error'
  /** A 2xx answer that is not the protocol's JSON (`{"text": ...}`). */
  | 'malformed-response';

/** One failed transcription request (after the client's retries, when it has any). */
export class TranscriptionError extends Error {
  readonly failure: TranscriptionFailure;
  /** Whether sending the same request again may succeed (408, 409, 429, >= 500, timeouts, network failures, malformed answers). */
  readonly isRetryable: boolean;
  /**
   * Whether the service cannot transcribe anything as configured, so trying the next clip is pointless:
   * 401/403 (key), 404 (route or model unknown), an unreachable service.
   */
  readonly isServiceUnusable: boolean;
  /** HTTP status when the service answered, else undefined. */
  readonly statusCode: number | undefined;
  /** Delay the service asked for (`Retry-After`), milliseconds. */
  readonly retryAfterMilliseconds: number | undefined;

  constructor(
    message: string,
    options: {
      failure: TranscriptionFailure;
      isRetryable: boolean;
      isServiceUnusable?: boolean;
      statusCode?: number;
      retryAfterMilliseconds?: number;
      cause?: unknown;
    },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TranscriptionError';
    this.failure = options.failure;
    this.isRetryable = options.isRetryable;
    this.isServiceUnusable = options.isServiceUnusable ?? false;
    this.statusCode = options.statusCode;
    this.retryAfterMilliseconds = options.retryAfterMilliseconds;
  }
}

/** What to transcribe. */
export interface TranscriptionRequest {
  /** A complete WAV file (RIFF PCM), as written into the pool. */
  wav: Uint8Array;
  /** File name sent with the upload, e.g. `<clip id>.wav` (servers pick the decoder by its extension). */
  fileName: string;
  /** ISO-639-1 language of the speech (`ja`, `en`), or undefined to let the service detect it. */
  language?: string;
}

/** A transcription service. */
export interface SpeechTranscriber {
  /** What it is, for summaries: e.g. `openai-transcriptions whisper-1`. */
  readonly description: string;
  /**
   * Transcribes one clip.
   * @returns the text as the service gave it, trimmed ('' when it heard no words).
   * @throws TranscriptionError when the service fails (after retries).
   */
  transcribe(request: TranscriptionRequest): Promise<string>;
}
