/**
 * One utterance from text to placed-ready audio: synthesize -> resample to the output rate -> quantize
 * to 16-bit -> detect speech -> trim to speech -> time the words. What comes out is exactly what will be
 * written (16-bit grid) and is analysed as such.
 */
import type { Centiseconds, Language, SpeechSegment } from '../../model/types.ts';
import { languagePackOf } from '../../model/language-pack.ts';
import { downmixToMono, isOnPcm16Grid, quantizeToPcm16, type RawAudio } from '../../audio/raw-audio.ts';
import { resample, type ResampleQuality } from '../../audio/resample.ts';
import {
  detectSpeechSegments,
  samplesPerCentisecond,
  trimToSpeech,
  type SpeechDetectorOptions,
} from '../../audio/speech-regions.ts';
import { moraeFromOpenJtalkPhonemes } from '../../alignment/japanese-morae.ts';
import { SpeechSynthesisError, type SpeechSynthesizer, type SynthesisRequest } from './speech-synthesizer.ts';
import type { RecognizedClip } from './recognition-tally.ts';
import { defaultWordTokenizer, type WordTokenizer } from '../../alignment/spoken-words.ts';
import {
  assertWordTiling,
  placeWordsAtEngineTimes,
  spreadWordsOverSegments,
  WordTimingError,
  wordsAtMoraTimes,
  type TimedWord,
  type WordTiling,
} from '../../alignment/word-timing.ts';

/** How the word times were obtained. */
export type WordTimingSource = 'engine' | 'spread';

/** A synthesized utterance, trimmed to its speech, with speech segments and word times. */
export interface SynthesizedUtterance {
  /** Mono samples at `sampleRate`, on the 16-bit PCM grid, from the first speech start to the last speech end. */
  audio: Float32Array;
  /** Output sample rate in Hz (a multiple of 100). */
  sampleRate: number;
  /** Speech segments in centiseconds relative to the clip: sorted, first.start === 0, last.end === durationCs. */
  segments: SpeechSegment[];
  /** Words (Japanese: morphemes) in centiseconds relative to the clip, tiling `segments` (see word-timing.ts). */
  words: TimedWord[];
  /** 'engine' when the words were placed at engine times (Open JTalk mora trace), 'spread' when spread by weight. */
  wordTimingSource: WordTimingSource;
  /** Clip length in centiseconds; audio.length === durationCs * sampleRate / 100. */
  durationCs: Centiseconds;
  /**
   * The same clip at the engine's own rate (`options.fullBand`, when that rate is above `sampleRate`):
   * mono, on the 16-bit grid, cut from the engine's audio at the same times as `audio` (sample
   * `fullBandSample(cs, rate)` for a time of cs centiseconds).
   */
  fullBand?: FullBandClip;
  /** What the engine's speech recognition check found in the clip, when it ran one (SynthesisOutput `recognized`). */
  recognized?: RecognizedClip;
}

/** A clip at the TTS engine's own sample rate, beside the output-rate clip it matches. */
export interface FullBandClip {
  /** Mono samples on the 16-bit grid. */
  audio: Float32Array;
  /** Hz (e.g. 24000 for CosyVoice2, 22050 for espeak-ng). */
  sampleRate: number;
}

/**
 * The sample index of a time in centiseconds at `sampleRate` Hz: `round(cs × rate / 100)`. At rates
 * that are not multiples of 100 Hz (22050 Hz: 220.5 samples per centisecond) times fall between
 * samples; rounding keeps every edit within half a sample (23 µs) of the output-rate clip's.
 */
export function fullBandSample(centiseconds: number, sampleRate: number): number {
  return Math.round((centiseconds * sampleRate) / 100);
}

/** Settings of {@link synthesizeUtterance}. */
export interface SynthesizeUtteranceOptions {
  /** Output sample rate in Hz; must be a multiple of 100 (10 ms frames). */
  sampleRate: number;
  /** Speech detector settings; unset ones from DEFAULT_SPEECH_DETECTOR_OPTIONS (speech-regions.ts). */
  detector?: Partial<SpeechDetectorOptions>;
  /** Splits text into words; default {@link defaultWordTokenizer} (whitespace tokens / kuromoji morphemes). */
  tokenizer?: WordTokenizer;
  /** Resampler quality; default 'best' (libsamplerate SRC_SINC_BEST_QUALITY). */
  resampleQuality?: ResampleQuality;
  /** Runs the resampling, e.g. in worker threads (audio/resample-pool.ts); default raw-audio.ts `resample` on this thread. Must give the same samples. */
  resampler?: (audio: RawAudio, targetRate: number, quality: ResampleQuality) => Promise<RawAudio>;
  /**
   * The text whose words are timed and written to the alignment, when it differs from the text the
   * engine is given (`request.text`), e.g. the engine reads a kana reading (japanese-kana.ts) while the
   * alignment keeps the original kanji morphemes. Default: `request.text`. The two must say the same
   * words; only their spelling may differ.
   */
  alignmentText?: string;
  /** Also keep the clip at the engine's own rate when it is above `sampleRate` (SynthesizedUtterance `fullBand`). Default false. */
  fullBand?: boolean;
}

/**
 * Synthesizes one utterance and prepares it for placement on a timeline.
 *
 * Steps: `synthesizer.synthesize(request)` -> downmix to mono -> resample to `options.sampleRate`
 * -> {@link quantizeToPcm16} -> {@link detectSpeechSegments} -> {@link trimToSpeech} -> words:
 * - Japanese with an Open JTalk trace whose mora count equals the sum of kuromoji's mora counts: each
 *   morpheme gets its morae's span from the trace, then snapped to the segments ('engine');
 * - otherwise words are spread over the segments by weight (characters / morae) ('spread').
 * When there are fewer words than segments, the segments with the shortest silences between them are
 * merged (see word-timing.ts); the returned segments are the merged ones, so merging the returned words
 * (touching or overlapping) gives exactly the returned segments.
 *
 * @throws AudioArgumentError when `options.sampleRate` is not a positive multiple of 100 Hz.
 * @throws SpeechSynthesisError from the engine; `no-speech-detected` when the detector finds no speech;
 *   `word-timing` when the text has no words or the words cannot tile the speech.
 */
export async function synthesizeUtterance(
  synthesizer: SpeechSynthesizer,
  request: SynthesisRequest,
  options: SynthesizeUtteranceOptions,
): Promise<SynthesizedUtterance> {
  const sampleRate = options.sampleRate;
  const frameLength = samplesPerCentisecond(sampleRate);
  const tokenizer = options.tokenizer ?? defaultWordTokenizer;
  const wordsPromise = tokenizer.tokenize(options.alignmentText ?? request.text, request.language);

  const output = await synthesizer.synthesize(request);
  // mono output is resampled as it came (resample does not change its input: no copy); the resampled
  // buffer is new and ours, so it is rounded to the 16-bit grid in place
  const mono = {
    channels: [
      output.audio.channels.length === 1 ? (output.audio.channels[0] as Float32Array) : downmixToMono(output.audio),
    ],
    sampleRate: output.audio.sampleRate,
  };
  const resampled = await (options.resampler ?? resample)(mono, sampleRate, options.resampleQuality ?? 'best');
  const samples = quantizeToPcm16(resampled.channels[0] as Float32Array, resampled.channels[0] as Float32Array);

  const detected = detectSpeechSegments(samples, sampleRate, options.detector);
  if (detected.length === 0) {
    throw new SpeechSynthesisError(
      synthesizer.id,
      request.text,
      'no-speech-detected',
      `no frame of the ${(samples.length / sampleRate).toFixed(2)} s of audio reached the speech threshold`,
    );
  }
  const trimmed = trimToSpeech(samples, sampleRate, detected);
  const words = await wordsPromise;
  if (words.length === 0)
    throw new SpeechSynthesisError(synthesizer.id, request.text, 'word-timing', 'the text holds no words');

  let tiling: WordTiling;
  let wordTimingSource: WordTimingSource = 'spread';
  try {
    const expected = engineWordTimes(request.language, output.engineTimings, words, trimmed.startCentiseconds);
    if (expected) {
      tiling = placeWordsAtEngineTimes(expected, trimmed.segments);
      wordTimingSource = 'engine';
    } else {
      tiling = spreadWordsOverSegments(words, trimmed.segments);
    }
    assertWordTiling(tiling.words, tiling.segments);
  } catch (error) {
    if (error instanceof WordTimingError)
      throw new SpeechSynthesisError(synthesizer.id, request.text, 'word-timing', error.message, { cause: error });
    throw error;
  }

  const durationCs = trimmed.samples.length / frameLength;
  const engineRate = mono.sampleRate;
  let fullBand: FullBandClip | undefined;
  if (options.fullBand && engineRate > sampleRate) {
    // the engine's samples over the same span as the trimmed output-rate clip
    const start = fullBandSample(trimmed.startCentiseconds, engineRate);
    const length = fullBandSample(trimmed.startCentiseconds + durationCs, engineRate) - start;
    const engineSamples = mono.channels[0]!.subarray(start, start + length);
    let audio: Float32Array;
    if (engineSamples.length === length && isOnPcm16Grid(engineSamples)) {
      // 16-bit engine output (every CosyVoice2 and espeak-ng answer) is what rounding would give: the
      // engine's own samples, no copy (a copy per utterance was 139 MB of a 20-dialogue saturation build)
      audio = engineSamples;
    } else {
      // rounded straight into the clip (zeros past the engine's last sample), not copied and then rounded into a second array
      audio = new Float32Array(length);
      quantizeToPcm16(engineSamples, audio.subarray(0, engineSamples.length));
    }
    fullBand = { audio, sampleRate: engineRate };
  }
  return {
    audio: trimmed.samples,
    sampleRate,
    segments: tiling.segments,
    words: tiling.words,
    wordTimingSource,
    durationCs,
    ...(fullBand ? { fullBand } : {}),
    ...(output.recognized ? { recognized: output.recognized } : {}),
  };
}

/** Expected word spans from an Open JTalk phoneme trace, or null when there is none or the mora counts differ. */
function engineWordTimes(
  language: Language,
  engineTimings: Parameters<typeof moraeFromOpenJtalkPhonemes>[0] | undefined,
  words: Parameters<typeof wordsAtMoraTimes>[0],
  trimStartCentiseconds: number,
): ReturnType<typeof wordsAtMoraTimes> {
  // an Open JTalk phoneme trace times morae: it applies to words weighed in morae (japanese-morphemes)
  if (
    !engineTimings ||
    engineTimings.length === 0 ||
    languagePackOf(language).script.segmentation !== 'japanese-morphemes'
  )
    return null;
  return wordsAtMoraTimes(words, moraeFromOpenJtalkPhonemes(engineTimings), trimStartCentiseconds);
}
