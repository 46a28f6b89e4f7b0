/**
 * Speech beyond the text, without a recognizer: the speech of a synthesized clip (first speech start
 * to last speech end, after tail trimming: synthesis-checks.ts) is compared with how long its text
 * takes to say at the voice's own tempo (the speech-rate model of synthesis-speech-rate.ts, scaled by
 * the tempo of the voice prompt, voice-prompt.ts). Speech well beyond that is speech before the first
 * or after the last word of the text: a voice prompt's transcript leaking into the reply, a known
 * CosyVoice failure that speaks without a pause before the text.
 *
 * The remote synthesizer (remote-synthesizer.ts) runs it on every accepted clip when no speech
 * recognizer checks the clips (synthesis-recognition.ts hears the words themselves). The expected
 * length is at the tempo of the voice's prompt when the voice has a prompt with its transcript. A
 * voice without one (a cross-lingual prompt, a built-in or named voice) is taken to speak at the
 * language's typical rate (synthesis-speech-rate.ts `speechRateBoundsOf`: 13.5 letters/s for
 * English, 7.5 morae/s for Japanese, the language pack's `speechRate.typical` otherwise), with the
 * same margins: speech leaked before or after its text is caught there too, and a voice much slower
 * than typical may read as extra speech. Over the limit the clip is resynthesized once
 * (`extra-speech`), and a second such clip quarantines the utterance with the measured and the
 * expected seconds in the reason.
 */

/** Settings of {@link judgeSpeechLength}: how much longer than expected speech may run. */
export interface SpeechLengthCheckOptions {
  /** Share of the expected seconds the speech may run over (0.3 = 30 % longer). */
  relativeMargin: number;
  /** Seconds each pausing punctuation mark inside the text may add (a comma, a sentence end). */
  pauseSeconds: number;
  /**
   * Seconds each digit of the text may add: the spoken length counts a digit as 4 letters
   * (pipeline/alignment/spoken-words.ts), a year read out ("eighteen ninety-one") takes twice that.
   */
  digitSeconds: number;
  /** Fixed seconds the speech may run over (short utterances vary most). */
  marginSeconds: number;
}

/**
 * Defaults: speech may last 1.3 times what the text predicts at the voice's tempo, plus 0.35 s per
 * pausing punctuation mark inside the text, 0.1 s per digit and 0.75 s. Measured with the CosyVoice2
 * loopback server's espeak-ng speech (pipeline/services/tts/testing/loopback-audio.ts) against an
 * espeak-ng voice prompt, over 599 TopiOCQA dev questions and answers: correct speech ran 0.81-2.01
 * times the prediction, the most in short texts ("yes" 0.19 s predicted, 0.39 s spoken) and in
 * numbers read out ("1891" 1.00 s, 2.02 s; "during 1589 to 1871" 3.89 s, 5.95 s), and none crossed
 * the limit (the closest, 0.12 s under it, spells out a Greek word). The 65-letter voice prompt
 * transcript of the tests spoken before each text added 3.1-3.8 s and crossed the limit for 565 of
 * the 599, every text predicted under 7 s. A spoken language tag ("en", about 0.2 s) crosses it for
 * none: only a recognizer (`quality.speechRecognition`) hears that.
 */
export const DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS: Readonly<SpeechLengthCheckOptions> = Object.freeze({
  relativeMargin: 0.3,
  pauseSeconds: 0.35,
  digitSeconds: 0.1,
  marginSeconds: 0.75,
});

/** What {@link judgeSpeechLength} measured of one clip. */
export interface SpeechLength {
  /** First speech start to last speech end, seconds. */
  measuredSeconds: number;
  /** The text's spoken length at the voice's tempo, seconds. */
  expectedSeconds: number;
  /** The longest speech accepted, seconds. */
  allowedSeconds: number;
  /** Whether the speech is longer than allowed. */
  overlong: boolean;
  /** Why it is overlong ('' when it is not): measured, expected and accepted seconds. */
  reason: string;
}

/** One utterance's speech-length check across its attempts. */
export interface SpeechLengthState {
  options: SpeechLengthCheckOptions;
  /**
   * The voice prompt's tempo over the language's typical rate (> 0), or null when the voice has no
   * prompt with a transcript (then the typical rate is taken for the voice's).
   */
  voiceTempo: number | null;
  /** Overlong clips of the utterance so far. */
  overlong: number;
}

/**
 * Judges the speech of one clip against its text.
 *
 * @param clip `text`: the text asked for (its digits are counted); `speech.seconds`: first speech start to last speech end of the clip, seconds (0 without
 *   speech); `speech.pauses`: pausing punctuation marks inside the text (SpokenLength.pauses);
 *   `typicalSeconds`: the text's spoken length at the language's typical rate, seconds
 *   (DurationRange.typicalSeconds of synthesis-speech-rate.ts).
 * @param check the margins and the voice's tempo.
 * @returns the measured, expected and accepted seconds and the verdict.
 */
export function judgeSpeechLength(
  clip: { text: string; speech: { seconds: number; pauses: number }; typicalSeconds: number },
  check: Pick<SpeechLengthState, 'options' | 'voiceTempo'>,
): SpeechLength {
  const { options, voiceTempo } = check;
  const measuredSeconds = clip.speech.seconds;
  const tempo = voiceTempo !== null && voiceTempo > 0 && Number.isFinite(voiceTempo) ? voiceTempo : 1;
  const expectedSeconds = clip.typicalSeconds / tempo;
  const digits = clip.text.match(/\p{Nd}/gu)?.length ?? 0;
  const allowedSeconds =
    expectedSeconds * (1 + options.relativeMargin) +
    clip.speech.pauses * options.pauseSeconds +
    digits * options.digitSeconds +
    options.marginSeconds;
  const overlong = measuredSeconds > allowedSeconds;
  const at = tempo === voiceTempo ? `the voice's tempo (${tempo.toFixed(2)})` : "the language's typical rate";
  return {
    measuredSeconds,
    expectedSeconds,
    allowedSeconds,
    overlong,
    reason: overlong
      ? `${measuredSeconds.toFixed(2)} s of speech where the text takes ${expectedSeconds.toFixed(2)} s at ${at} ` +
        `(accepted up to ${allowedSeconds.toFixed(2)} s): ${(measuredSeconds - expectedSeconds).toFixed(2)} s ` +
        'of speech before its first or after its last word (a leaked voice prompt or a spoken tag)'
      : '',
  };
}
