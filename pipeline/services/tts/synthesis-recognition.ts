/**
 * What was spoken against what was meant: a synthesized utterance is transcribed by a speech
 * recognizer (an OpenAI-compatible `/v1/audio/transcriptions` service,
 * pipeline/services/asr/openai-transcription.ts) and the transcript's word error rate against the text
 * the synthesizer was asked to say is compared with a threshold (character error rate for languages
 * written without spaces, pipeline/services/asr/recognition-error-rate.ts). A spoken language tag
 * (`<|en|>` read aloud before the text) or a leaked voice-prompt transcript shows as inserted words.
 *
 * The remote synthesizer (remote-synthesizer.ts) runs it on every accepted clip: over the threshold the
 * clip is resynthesized like a truncated one (`misspoken-audio`, retryable), and after the last
 * attempt the utterance is quarantined with what was heard in the reason.
 */
import type { Language } from '../../model/types.ts';
import { languagePackOf } from '../../model/language-pack.ts';
import { encodeWavPcm16 } from '../../audio/wav-encoding.ts';
import type { SpeechTranscriber } from '../asr/speech-transcriber.ts';
import { recognitionErrorRate, type RecognitionErrorRate } from '../asr/recognition-error-rate.ts';

/**
 * Word error rate above which an utterance is resynthesized: 0.25, one word in four. A CPU Whisper
 * mishears names and rare words in clean synthetic speech; a spoken tag or a leaked prompt transcript
 * inserts a word or more into a short turn, which this catches in turns of up to four words, and a
 * leaked prompt sentence in any turn shorter than it.
 */
export const DEFAULT_MAXIMUM_WORD_ERROR_RATE = 0.25;

/** Settings of {@link checkRecognizedSpeech}. */
export interface SpeechRecognitionCheckOptions {
  /** The recognizer. */
  transcriber: SpeechTranscriber;
  /** Highest accepted error rate (edits / reference tokens); default {@link DEFAULT_MAXIMUM_WORD_ERROR_RATE}. */
  maximumErrorRate?: number;
}

/** Result of {@link checkRecognizedSpeech}. */
export interface RecognizedSpeech {
  /** The transcript as the service gave it. */
  heard: string;
  errorRate: RecognitionErrorRate;
  /** Whether the rate is above the threshold. */
  misspoken: boolean;
  /** Why it is misspoken ('' when it is not): the rate, the threshold, what was heard. */
  reason: string;
}

/**
 * Transcribes one clip and compares the transcript with its text.
 *
 * @param samples mono samples, nominal range [-1, 1] (sent as a 16-bit WAV).
 * @param sampleRate Hz.
 * @param text the text the synthesizer was asked to say.
 * @param language its language (the pack's normalisation and error-rate unit; the code is sent to the service).
 * @throws TranscriptionError when the service fails after its retries.
 */
export async function checkRecognizedSpeech(
  samples: Float32Array,
  sampleRate: number,
  text: string,
  language: Language,
  options: SpeechRecognitionCheckOptions,
): Promise<RecognizedSpeech> {
  const pack = languagePackOf(language);
  const wav = encodeWavPcm16({ channels: [samples], sampleRate });
  const heard = await options.transcriber.transcribe({
    wav,
    fileName: 'utterance.wav',
    language: pack.code.split('-')[0]!,
  });
  const errorRate = recognitionErrorRate(text, heard, pack);
  const maximum = options.maximumErrorRate ?? DEFAULT_MAXIMUM_WORD_ERROR_RATE;
  const misspoken = errorRate.rate > maximum;
  const name = errorRate.unit === 'word' ? 'word' : 'character';
  return {
    heard,
    errorRate,
    misspoken,
    reason: misspoken
      ? `${name} error rate ${errorRate.rate.toFixed(2)} above ${maximum} (${errorRate.edits} edits in ${errorRate.referenceTokens} ${name}s): heard "${heard}"`
      : '',
  };
}
