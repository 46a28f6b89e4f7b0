/**
 * The text-to-speech seam: a tiny interface every engine implements (one engine per file beside this
 * one), the request/output shapes, and the one error type engines throw.
 */
import type { z } from 'zod';
import type { EngineTiming, Language } from '../../model/types.ts';
import type { RawAudio } from '../../audio/raw-audio.ts';
import { describeIssues } from '../../model/validation.ts';
import type { RecognizedClip } from './recognition-tally.ts';

/**
 * Engine-specific voice settings as a flat record (serializable, so it can be part of a cache key).
 * Each engine documents and validates its own keys, e.g. espeak-ng `{ voice: 'en-us+m3', pitch: 40,
 * speed: 165 }`, Open JTalk `{ halfToneShift: 0, allPass: 0.55, speed: 1.0 }`.
 */
export type VoiceSettings = Readonly<Record<string, string | number | boolean>>;

/** What to say, in which language, with which voice. */
export interface SynthesisRequest {
  /** The text to speak. Engines collapse whitespace (line breaks included) to single spaces. */
  text: string;
  language: Language;
  voice: VoiceSettings;
}

/** What an engine returns for one request. */
export interface SynthesisOutput {
  /** Mono audio at the engine's native sample rate, untrimmed (leading/trailing silence as the engine made it). */
  audio: RawAudio;
  /** Phoneme (or mora) trace with times, when the engine gives one; in order, non-overlapping. */
  engineTimings?: EngineTiming[];
  /** What the speech recognition check found in the clip, when the engine ran it (remote engines with `quality.speechRecognition`). */
  recognized?: RecognizedClip;
}

/** A text-to-speech engine. */
export interface SpeechSynthesizer {
  /** Engine identifier, e.g. `espeak-ng`, `open-jtalk`. */
  readonly id: string;
  /** Engine version string (binary, voice, dictionary), part of cache keys: a new version means new audio. */
  readonly version: string;
  /** Languages this engine can speak. */
  readonly languages: readonly Language[];
  /**
   * Synthesizes one utterance. Deterministic: the same request gives the same samples. The returned
   * sample arrays belong to the caller (new for each call, never changed by the engine afterwards):
   * synthesizeUtterance keeps views of them as clips instead of copies.
   *
   * @throws SpeechSynthesisError on any failure.
   */
  synthesize(request: SynthesisRequest): Promise<SynthesisOutput>;
}

/** Why a synthesis failed. */
export type SpeechSynthesisFailure =
  | 'missing-binary' // the engine program, its dictionary or its voice is not installed
  | 'non-zero-exit' // the engine ran and reported failure
  | 'empty-audio' // the engine produced no samples, or only silence
  | 'invalid-output' // the engine's audio or trace could not be read
  | 'invalid-voice' // the voice settings do not fit the engine
  | 'unsupported-language'
  | 'empty-text'
  | 'no-speech-detected' // after synthesis, the speech detector found nothing (synthesize-utterance)
  | 'word-timing' // words could not be laid over the detected speech (synthesize-utterance)
  // Remote speech services (CosyVoice2 FastAPI/Triton, OpenAI-style speech; see remote-synthesizer.ts):
  | 'service-unreachable' // no connection to the service (refused, reset before an answer, DNS)
  | 'service-error' // the service answered with an HTTP error status or a body that is not audio
  | 'timeout' // the service did not finish within the configured time
  | 'truncated-audio' // the audio ended early: stream cut, or far shorter than the text predicts
  | 'runaway-audio' // the audio is far longer than the text predicts (hallucinated or endless output)
  | 'misspoken-audio' // a speech recognizer heard other words than the text (synthesis-recognition.ts)
  | 'extra-speech' // speech well beyond what the text takes at the voice's tempo (synthesis-speech-length.ts)
  | 'implausible-speech-rate'; // speech rate over many utterances says the configured sample rate is wrong

/** Characters of the text quoted in error messages. */
const TEXT_EXCERPT_LENGTH = 60;

/** Shortens `text` to at most {@link TEXT_EXCERPT_LENGTH} characters, with an ellipsis when cut. */
export function textExcerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= TEXT_EXCERPT_LENGTH ? flat : `${flat.slice(0, TEXT_EXCERPT_LENGTH - 1)}…`;
}

/** The message line that tells the user how to install the system engines. */
export const SETUP_HINT =
  'Install the speech engines with `npm run setup` (runs scripts/setup-system.sh; needs root or sudo).';

/**
 * A synthesis failed. The message names the engine, an excerpt of the text and the reason; for
 * `missing-binary` it also tells the user to run `npm run setup`.
 */
export class SpeechSynthesisError extends Error {
  override readonly name = 'SpeechSynthesisError';
  /** Excerpt of the text being synthesized (at most 60 characters), empty when not about one text. */
  readonly textExcerpt: string;

  constructor(
    readonly engine: string,
    text: string,
    readonly failure: SpeechSynthesisFailure,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    const excerpt = textExcerpt(text);
    const about = excerpt ? ` for "${excerpt}"` : '';
    const hint = failure === 'missing-binary' ? ` ${SETUP_HINT}` : '';
    super(`${engine}: synthesis failed${about} (${failure}): ${detail}.${hint}`, options);
    this.textExcerpt = excerpt;
  }
}

/**
 * Collapses every whitespace run (line breaks included) to one ASCII space and trims the ends. Engines
 * need this: Open JTalk synthesizes only the first line of its input.
 */
export function normalizeWhitespace(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/**
 * Validates engine voice settings with `schema`.
 *
 * @throws SpeechSynthesisError `invalid-voice` listing the offending keys.
 */
export function parseVoice<Schema extends z.ZodType>(
  engine: string,
  text: string,
  schema: Schema,
  voice: VoiceSettings,
): z.infer<Schema> {
  const parsed = schema.safeParse(voice);
  if (!parsed.success) {
    throw new SpeechSynthesisError(
      engine,
      text,
      'invalid-voice',
      `voice settings ${JSON.stringify(voice)} are invalid (${describeIssues(parsed.error.issues, { root: 'voice' })})`,
    );
  }
  return parsed.data;
}
