/**
 * The contract between the shared remote TTS client (./remote-synthesizer.ts) and a backend
 * (cosyvoice2-fastapi.ts, cosyvoice2-triton.ts, openai-speech.ts): one attempt, one request, the
 * backend interface; and what the client reports: attempt records, the quarantine error, its
 * counters, and the endpoint probes made when an engine is created.
 */
import type { z } from 'zod';
import type { Language } from '../../model/types.ts';
import type { RawAudio } from '../../audio/raw-audio.ts';
import type { RetryGiveUpReason } from '../retry.ts';
import type { EndpointPoolStatistics } from '../endpoint-pool.ts';
import type { ServiceResponse } from './service-http.ts';
import { SpeechSynthesisError, type SpeechSynthesisFailure } from './speech-synthesizer.ts';
import type { SpeechRateAssessment, TailKind } from './synthesis-checks.ts';
import type { RecognitionCounts } from './recognition-tally.ts';

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
  /** The whole request body (POST); a form is sent as multipart/form-data (service-http.ts encodes it and sets the content-type with its boundary). */
  body: Uint8Array | string | FormData;
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
    const tried =
      attempts.length > 0
        ? `quarantined after ${attempts.length} attempt${attempts.length === 1 ? '' : 's'} (${reason})`
        : `quarantined (${reason})`;
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
  /**
   * Speech recognition of the accepted clips, when configured: clips transcribed, edits and reference
   * tokens summed (edits / referenceTokens is the error rate over all of them).
   */
  speechRecognition?: RecognitionCounts;
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
  if (wrong.length > 0)
    throw new SpeechSynthesisError(
      engine,
      '',
      'service-error',
      wrong.map((probe) => `${probe.url}: ${probe.detail}`).join('; '),
    );
  if (!probes.some((probe) => probe.ready))
    throw new SpeechSynthesisError(
      engine,
      '',
      'service-unreachable',
      `no endpoint is ready: ${probes.map((probe) => `${probe.url}: ${probe.detail}`).join('; ')}`,
    );
}
