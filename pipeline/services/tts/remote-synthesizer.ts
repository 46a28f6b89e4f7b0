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
 *
 * The shared settings and the options made from them: remote-service-settings.ts; the backend contract,
 * the quarantine error, the counters and the endpoint probes: remote-speech-backend.ts (both re-exported).
 */
import type { Language } from '../../model/types.ts';
import { downmixToMono, type RawAudio } from '../../audio/raw-audio.ts';
import { retryWithBackoff } from '../retry.ts';
import { containsKanji, describeKanaReadingOptions, toKanaReading } from '../../text/japanese-kana.ts';
import { EndpointPool } from '../endpoint-pool.ts';
import { SYSTEM_CLOCK, type Clock } from '../clock.ts';
import { requestService, SpeechServiceError } from './service-http.ts';
import {
  normalizeWhitespace,
  parseVoice,
  SpeechSynthesisError,
  type SpeechSynthesisFailure,
  type SpeechSynthesizer,
  type SynthesisOutput,
  type SynthesisRequest,
} from './speech-synthesizer.ts';
import { checkSynthesizedSpeech, SpeechRateMonitor, type TailKind } from './synthesis-checks.ts';
import { likelySampleRate } from './synthesis-speech-rate.ts';
import { checkRecognizedSpeech } from './synthesis-recognition.ts';
import type { RecognizedClip } from './recognition-tally.ts';
import { judgeSpeechLength, type SpeechLengthState } from './synthesis-speech-length.ts';
import { TranscriptionError } from '../asr/speech-transcriber.ts';
import type { RemoteSynthesizerOptions } from './remote-service-settings.ts';
import {
  SpeechSynthesisQuarantineError,
  type QuarantineReason,
  type RemoteSpeechBackend,
  type RemoteSynthesisStatistics,
  type SynthesisAttemptRecord,
} from './remote-speech-backend.ts';

export {
  parseRemoteServiceSettings,
  RemoteServiceSettingsError,
  remoteServiceSettingsShape,
  remoteSynthesizerOptions,
  type RemoteServiceSettings,
  type RemoteSynthesizerOptions,
} from './remote-service-settings.ts';
export {
  assertProbes,
  SpeechSynthesisQuarantineError,
  type EndpointProbe,
  type QuarantineReason,
  type RemoteAttempt,
  type RemoteRequest,
  type RemoteSpeechBackend,
  type RemoteSynthesisStatistics,
  type SynthesisAttemptRecord,
} from './remote-speech-backend.ts';

/** An accepted clip: tail trimmed, its tempo and speech, what was trimmed, and the recognizer's error count when one ran. */
interface CheckedAudio {
  samples: Float32Array;
  tempo: number;
  typicalSeconds: number;
  /** First speech start to last speech end, seconds, and the text's pausing punctuation marks (0 with checks off). */
  speech: { seconds: number; pauses: number };
  removed: TailKind[];
  recognized?: RecognizedClip;
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
  /** The pool's, the timeouts' and the retries' time (options.clock, default the system clock). */
  private readonly clock: Clock;
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
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.pool = new EndpointPool(options.urls, {
      concurrencyPerEndpoint: options.concurrencyPerEndpoint,
      requestRate: options.requestRate,
      cooldownInitialMilliseconds: options.cooldownInitialMilliseconds,
      cooldownMaximumMilliseconds: options.cooldownMaximumMilliseconds,
      clock: this.clock,
    });
    this.monitor = options.checks && options.monitor ? new SpeechRateMonitor(options.monitor) : null;
    if (options.speechRecognition) this.counters.speechRecognition = { utterances: 0, edits: 0, referenceTokens: 0 };
  }

  /** A snapshot of the progress counters (utterances, attempts, failures, endpoints). */
  statistics(): RemoteSynthesisStatistics {
    return structuredClone({
      ...this.counters,
      speechRate: this.monitor?.assess() ?? null,
      pool: this.pool.statistics(),
    });
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
   *   WAV answer declares; no engine timings; the recognition check's counts (`recognized`) when it ran.
   * @throws SpeechSynthesisError `unsupported-language`, `empty-text`, `invalid-voice` before any
   *   request; {@link SpeechSynthesisQuarantineError} when the service failed (its `failure` is the last
   *   attempt's: `service-unreachable`, `service-error`, `timeout`, `truncated-audio`,
   *   `runaway-audio`, `empty-audio`, `misspoken-audio`, `extra-speech`), or at once with `implausible-speech-rate` once the median
   *   tempo of recent utterances says the configured sample rate is wrong.
   */
  async synthesize(request: SynthesisRequest): Promise<SynthesisOutput> {
    this.counters.requested += 1;
    const text = normalizeWhitespace(request.text);
    if (!this.languages.includes(request.language)) {
      throw new SpeechSynthesisError(
        this.id,
        request.text,
        'unsupported-language',
        `language "${request.language}" is not supported (only ${this.languages.join(', ')})`,
      );
    }
    if (!text) throw new SpeechSynthesisError(this.id, request.text, 'empty-text', 'the text is empty');
    const voice = parseVoice(this.id, request.text, this.backend.voiceSchema, request.voice);
    this.assertPlausibleSpeechRate(text);
    await this.backend.prepareVoice?.(voice, text);
    const spokenText = await this.spokenText(text);
    // the speech-length check at the voice's own tempo (a prompt with its transcript), else at the
    // language's typical rate (synthesis-speech-length.ts); its first overlong clip is resynthesized once
    const options = this.options.speechLength;
    const voiceTempo = options ? ((await this.backend.referenceTempo?.(voice)) ?? null) : null;
    const length = options ? { options, voiceTempo, overlong: 0 } : undefined;

    const attempts: SynthesisAttemptRecord[] = [];
    let lastEndpoint: string | undefined;
    let giveUp: QuarantineReason = 'retries-exhausted';
    try {
      const accepted = await retryWithBackoff(
        async ({ attemptIndex, previousErrors }) => {
          let endpointUsed = '';
          let started = this.clock.now();
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
            attempts.push({
              attemptIndex,
              endpoint: endpointUsed,
              route: built.route,
              failure,
              detail,
              elapsedMilliseconds: Math.round(this.clock.now() - started),
            });
            if (failure) this.counters.failures[failure] = (this.counters.failures[failure] ?? 0) + 1;
          };
          try {
            // Only the exchange holds the endpoint's slot; reading and checking the audio run after it is free.
            const response = await this.pool.run(
              (endpoint, signal) => {
                endpointUsed = endpoint;
                lastEndpoint = endpoint;
                started = this.clock.now();
                this.counters.attempts += 1;
                return requestService(
                  { engine: this.id, text, endpoint, route: built.route },
                  { method: 'POST', headers: built.headers, body: built.body },
                  {
                    timeoutMilliseconds: this.options.timeoutMilliseconds,
                    clock: this.clock,
                    ...(signal ? { signal } : {}),
                  },
                );
              },
              lastEndpoint ? { avoid: lastEndpoint } : {},
            );
            const audio = this.backend.readAudio(response, built, { endpoint: endpointUsed, text });
            const checked = await this.check(audio, built.route, text, request.language, endpointUsed, length);
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
          sleep: this.options.sleep ?? ((milliseconds, signal) => this.clock.sleep(milliseconds, signal)),
          ...(this.options.random ? { random: this.options.random } : {}),
        },
      );
      const { built, checked, sampleRate } = accepted;
      if (this.counters.speechRecognition && checked.recognized) {
        this.counters.speechRecognition.utterances += 1;
        this.counters.speechRecognition.edits += checked.recognized.edits;
        this.counters.speechRecognition.referenceTokens += checked.recognized.referenceTokens;
      }
      if (built.note) this.counters.notes[built.note] = (this.counters.notes[built.note] ?? 0) + 1;
      for (const kind of checked.removed) this.counters.trimmedTails[kind] += 1;
      if (this.monitor && checked.tempo > 0) {
        // against the voice's own prompt when it has one: then also watched per voice
        const prompted = (await this.backend.referenceTempo?.(voice)) ?? null;
        this.monitor.record(
          checked.tempo / (prompted ?? 1),
          checked.typicalSeconds,
          prompted === null ? undefined : JSON.stringify(voice),
        );
      }
      this.counters.succeeded += 1;
      this.counters.audioSeconds += checked.samples.length / sampleRate;
      this.reportProgress();
      // the clip's counts go with it into its synthesis cache entry (stages/synthesize-speech-cache.ts)
      const recognized = checked.recognized ? { recognized: checked.recognized } : {};
      return { audio: { channels: [checked.samples], sampleRate }, ...recognized };
    } catch (error) {
      if (!(error instanceof SpeechServiceError)) throw error;
      this.counters.quarantined += 1;
      this.reportProgress();
      const history = attempts
        .map(
          (attempt) => `#${attempt.attemptIndex + 1} ${attempt.endpoint}${attempt.route}: ${attempt.failure ?? 'ok'}`,
        )
        .join(', ');
      throw new SpeechSynthesisQuarantineError(
        this.id,
        request.text,
        error.failure,
        giveUp,
        attempts,
        `${error.detail}; attempts: ${history}`,
        { cause: error },
      );
    }
  }

  /**
   * Trims the tail, judges the duration, then (when configured) the speech's length at the voice's
   * tempo (`length`: its overlong clips so far) and what a recognizer hears against the text; throws a
   * retryable SpeechServiceError for bad audio (a second overlong clip is not retryable), and a
   * non-retryable one when the transcription service fails after its own retries.
   */
  private async check(
    audio: RawAudio,
    route: string,
    text: string,
    language: Language,
    endpoint: string,
    length?: SpeechLengthState,
  ): Promise<CheckedAudio> {
    const checked = await this.checkDuration(audio, route, text, language, endpoint);
    const judged = length && checked.speech.seconds > 0 ? judgeSpeechLength({ ...checked, text }, length) : undefined;
    if (judged?.overlong)
      throw new SpeechServiceError(this.id, text, 'extra-speech', judged.reason, {
        endpoint,
        route,
        isRetryable: length!.overlong++ === 0,
      });
    const recognition = this.options.speechRecognition;
    if (!recognition) return checked;
    let recognized;
    try {
      recognized = await checkRecognizedSpeech(checked.samples, audio.sampleRate, text, language, recognition);
    } catch (error) {
      // the transcriber has retried per its policy (retry.ts): the utterance fails, not the build
      if (!(error instanceof TranscriptionError)) throw error;
      throw new SpeechServiceError(
        this.id,
        text,
        error.failure === 'malformed-response' ? 'service-error' : error.failure,
        `speech recognition failed: ${error.message}`,
        { endpoint, route, isRetryable: false, cause: error },
      );
    }
    if (recognized.misspoken)
      throw new SpeechServiceError(this.id, text, 'misspoken-audio', recognized.reason, {
        endpoint,
        route,
        isRetryable: true,
      });
    const { edits, referenceTokens } = recognized.errorRate;
    return { ...checked, recognized: { edits, referenceTokens } };
  }

  /** Trims the tail and judges the duration; throws a retryable SpeechServiceError for bad audio. */
  private async checkDuration(
    audio: RawAudio,
    route: string,
    text: string,
    language: Language,
    endpoint: string,
  ): Promise<CheckedAudio> {
    const samples = audio.channels.length === 1 ? (audio.channels[0] as Float32Array) : downmixToMono(audio);
    const fail = (failure: SpeechSynthesisFailure, detail: string): SpeechServiceError =>
      new SpeechServiceError(this.id, text, failure, detail, { endpoint, route, isRetryable: true });
    if (samples.length === 0) throw fail('empty-audio', 'the service returned no samples');
    if (!this.options.checks) {
      if (!samples.some((sample) => sample !== 0))
        throw fail('empty-audio', `the service returned ${samples.length} samples of silence`);
      return { samples, tempo: 0, typicalSeconds: 0, speech: { seconds: 0, pauses: 0 }, removed: [] };
    }
    const check = await checkSynthesizedSpeech(samples, audio.sampleRate, text, language, this.options.checks);
    if (check.verdict === 'no-speech') throw fail('empty-audio', check.reason);
    if (check.verdict === 'truncated') throw fail('truncated-audio', check.reason);
    if (check.verdict === 'runaway') throw fail('runaway-audio', check.reason);
    return {
      samples: check.samples,
      tempo: check.tempo,
      typicalSeconds: check.range.typicalSeconds,
      speech: { seconds: check.speechSeconds, pauses: check.length.pauses },
      removed: check.tail.removed,
    };
  }

  private reportProgress(): void {
    if (this.options.onProgress) this.options.onProgress(this.statistics());
  }

  /** Throws `implausible-speech-rate` (quarantine, not retryable) once the tempo watch has concluded so. */
  private assertPlausibleSpeechRate(text: string): void {
    const assessment = this.monitor?.assess();
    if (!assessment || assessment.plausible) return;
    const { estimate, likely } = likelySampleRate(this.options.sampleRate, assessment.medianTempoRatio);
    const options = this.monitor!.options;
    const ratio = assessment.medianTempoRatio.toFixed(2);
    const found =
      assessment.voices === undefined
        ? `the median tempo of the last ${assessment.count} utterances is ${ratio} times the voice's own ` +
          `(plausible ${options.minimumTempoRatio}-${options.maximumTempoRatio})`
        : `each of the ${assessment.voices} voices watched speaks ${ratio} times the tempo of its own prompt ` +
          `(median over its last ${options.voiceWindowSize} utterances; plausible ${options.minimumVoiceTempoRatio}-${options.maximumVoiceTempoRatio})`;
    throw new SpeechSynthesisQuarantineError(
      this.id,
      text,
      'implausible-speech-rate',
      'implausible-speech-rate',
      [],
      `${found}; the configured sampleRate ${this.options.sampleRate} Hz is probably not the model's ` +
        `(the tempo suggests about ${estimate} Hz, likely ${likely} Hz: set sampleRate: ${likely}; CosyVoice2 outputs 24000 Hz, CosyVoice 1 22050 Hz)`,
    );
  }
}
