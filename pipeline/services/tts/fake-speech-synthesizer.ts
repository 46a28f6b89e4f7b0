/**
 * A fake engine for tests of code that uses a {@link SpeechSynthesizer}: no program runs; each
 * whitespace-separated word becomes a tone burst whose length follows the word's letters, and
 * pausing punctuation becomes a long silence. It records every request it receives.
 */
import { knownLanguageCodes } from '../../model/language-pack.ts';
import type { Language } from '../../model/types.ts';
import {
  SpeechSynthesisError,
  type SpeechSynthesizer,
  type SynthesisOutput,
  type SynthesisRequest,
} from './speech-synthesizer.ts';

/** Shape of the fake speech; all durations in seconds. */
export interface FakeSpeechOptions {
  /** Native sample rate of the fake engine, Hz. */
  sampleRate: number;
  /** Tone length per letter or digit of a word, seconds. */
  secondsPerCharacter: number;
  /** Silence between words without punctuation, seconds (below the detector's 0.15 s, so bridged). */
  wordGapSeconds: number;
  /** Silence after a word followed by , . ? ! 、 。, seconds (above 0.15 s, so a pause). */
  pauseSeconds: number;
  /** Silence before the first and after the last word, seconds. */
  edgeSilenceSeconds: number;
  /** Tone frequency in Hz and amplitude (full scale 1.0). */
  frequency: number;
  amplitude: number;
}

export const DEFAULT_FAKE_SPEECH_OPTIONS: Readonly<FakeSpeechOptions> = Object.freeze({
  sampleRate: 16000,
  secondsPerCharacter: 0.06,
  wordGapSeconds: 0.05,
  pauseSeconds: 0.3,
  edgeSilenceSeconds: 0.1,
  frequency: 220,
  amplitude: 0.3,
});

/** A deterministic stand-in engine that records its calls in {@link FakeSpeechSynthesizer.calls}. */
export class FakeSpeechSynthesizer implements SpeechSynthesizer {
  readonly id = 'fake';
  readonly version = 'fake 1';
  /** Every language with a pack (the fake speaks tones, not words). */
  get languages(): readonly Language[] {
    return knownLanguageCodes();
  }
  /** Every request received, in order. */
  readonly calls: SynthesisRequest[] = [];
  private readonly options: FakeSpeechOptions;

  constructor(options: Partial<FakeSpeechOptions> = {}) {
    this.options = { ...DEFAULT_FAKE_SPEECH_OPTIONS, ...options };
  }

  /**
   * Renders the text as tone bursts (one per whitespace-separated word).
   *
   * @returns mono audio at `sampleRate`; no engine timings.
   * @throws SpeechSynthesisError `empty-text` when the text has no word.
   */
  async synthesize(request: SynthesisRequest): Promise<SynthesisOutput> {
    this.calls.push(request);
    const { sampleRate, secondsPerCharacter, wordGapSeconds, pauseSeconds, edgeSilenceSeconds, frequency, amplitude } =
      this.options;
    const tokens = request.text.split(/\s+/u).filter((token) => /[\p{L}\p{N}]/u.test(token));
    if (tokens.length === 0)
      throw new SpeechSynthesisError(this.id, request.text, 'empty-text', 'the text has no word');
    const pieces: { seconds: number; tone: boolean }[] = [{ seconds: edgeSilenceSeconds, tone: false }];
    tokens.forEach((token, index) => {
      pieces.push({
        seconds: [...token].filter((character) => /[\p{L}\p{N}]/u.test(character)).length * secondsPerCharacter,
        tone: true,
      });
      if (index < tokens.length - 1)
        pieces.push({ seconds: /[,.?!、。]$/u.test(token) ? pauseSeconds : wordGapSeconds, tone: false });
    });
    pieces.push({ seconds: edgeSilenceSeconds, tone: false });
    const total = pieces.reduce((sum, piece) => sum + Math.round(piece.seconds * sampleRate), 0);
    const samples = new Float32Array(total);
    let position = 0;
    for (const piece of pieces) {
      const length = Math.round(piece.seconds * sampleRate);
      if (piece.tone)
        for (let index = 0; index < length; index++)
          samples[position + index] = amplitude * Math.sin((2 * Math.PI * frequency * index) / sampleRate);
      position += length;
    }
    return { audio: { channels: [samples], sampleRate } };
  }
}
