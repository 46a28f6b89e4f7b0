/**
 * Where an interrupted answer can stop when its speaker yields to a barge-in: the yield points at its
 * word ends (each a real energy dip that the speech detector confirms on the faded audio), and the
 * utterance cut at one of them with a 20 ms fade-out.
 */
import {
  frameLevelsDbfs,
  resolveSpeechDetectorOptions,
  speechSegmentsOfLevels,
  type SpeechDetectorOptions,
} from '../pipeline/audio/speech-regions.ts';
import type { Centiseconds } from '../pipeline/model/types.ts';
import { clipSegments } from '../pipeline/timeline/place-barge-in-variant.ts';
import { fullBandSample } from '../pipeline/services/tts/synthesize-utterance.ts';
import type { SpokenUtterance } from './synthesize-speech.ts';

/** A place where an interrupted utterance can stop (`yieldPoints`). */
export interface YieldPoint {
  /** End of the speech kept, centiseconds from the utterance's speech start (what the detector finds). */
  endCs: Centiseconds;
  /** Samples of the utterance's audio kept (the last `FADE_OUT_CS` of them faded out). */
  sampleCount: number;
}

/** Length of the fade-out at a yield point: 20 ms, long enough that no click is heard. */
export const FADE_OUT_CS = 2;
/** How far from an estimated word end a yield point may move to the quietest 10 ms frame. */
const YIELD_SEARCH_CS = 6;
/** A yield point's frame must be this far below the utterance's mean frame energy (−10 dB). */
const DIP_ENERGY_RATIO = 0.1;

function frameEnergy(audio: Float32Array, frame: number, samplesPerCs: number): number {
  let sum = 0;
  for (let index = frame * samplesPerCs; index < (frame + 1) * samplesPerCs && index < audio.length; index += 1)
    sum += audio[index]! * audio[index]!;
  return sum;
}

function fadedPrefix(audio: Float32Array, sampleCount: number, fadeSamples: number): Float32Array {
  const kept = audio.slice(0, sampleCount);
  const fadeStart = Math.max(0, sampleCount - fadeSamples);
  for (let index = fadeStart; index < sampleCount; index += 1) {
    const position = (index - fadeStart + 1) / (sampleCount - fadeStart);
    kept[index] = kept[index]! * 0.5 * (1 + Math.cos(Math.PI * position)); // raised cosine from 1 to 0
  }
  return kept;
}

/**
 * Where an utterance can stop when its speaker yields: at each word end (word timings may be
 * estimates, so the cut moves to the quietest 10 ms frame within ±60 ms; it must be a real dip, at
 * least 10 dB below the utterance's mean frame energy, else that word end is not offered), with a
 * 20 ms raised-cosine fade-out. A point is offered only where the speech
 * detector, run on the faded audio, finds exactly the utterance's segments clipped at its end: the
 * written WAV then re-derives the same events as the alignment (verify). The utterance's own end is
 * always a point (nothing cut). The detector's frames are measured once per utterance and again only
 * where a cut's fade changes them (speechSegmentsOfLevels): the same segments as detectSpeechSegments
 * on each faded prefix, without a copy of the prefix per word (such copies would be 441 MB and 0.3 s
 * per 20-dialogue saturation build).
 * @returns points by ascending `endCs`, distinct
 */
export function yieldPoints(utterance: SpokenUtterance, detector: Partial<SpeechDetectorOptions>): YieldPoint[] {
  const samplesPerCs = utterance.sampleRate / 100;
  const points = new Map<number, YieldPoint>();
  let total = 0;
  for (let frame = 0; frame < utterance.durationCs; frame += 1)
    total += frameEnergy(utterance.audio, frame, samplesPerCs);
  const meanFrameEnergy = total / Math.max(1, utterance.durationCs);
  const options = resolveSpeechDetectorOptions(detector);
  const levels = frameLevelsDbfs(utterance.audio, utterance.sampleRate);
  for (const word of utterance.words) {
    if (word.end >= utterance.durationCs) continue;
    let cut = word.end;
    let quietest = Number.POSITIVE_INFINITY;
    for (
      let candidate = Math.max(FADE_OUT_CS + 1, word.end - YIELD_SEARCH_CS);
      candidate <= Math.min(utterance.durationCs - 1, word.end + YIELD_SEARCH_CS);
      candidate += 1
    ) {
      const energy = frameEnergy(utterance.audio, candidate, samplesPerCs);
      if (energy < quietest) {
        quietest = energy;
        cut = candidate;
      }
    }
    // only a real dip: the quietest frame 10 dB below the utterance's mean, else mid-syllable
    if (quietest > meanFrameEnergy * DIP_ENERGY_RATIO) continue;
    const sampleCount = cut * samplesPerCs;
    // the detector on the faded prefix: the frames before the fade are the utterance's own, so only
    // the FADE_OUT_CS faded frames are measured again (the same levels, so the same segments)
    const fadeSamples = FADE_OUT_CS * samplesPerCs;
    const prefixLevels = levels.slice(0, cut);
    prefixLevels.set(
      frameLevelsDbfs(
        fadedPrefix(utterance.audio.subarray(sampleCount - fadeSamples), fadeSamples, fadeSamples),
        utterance.sampleRate,
      ),
      cut - FADE_OUT_CS,
    );
    const detected = speechSegmentsOfLevels(prefixLevels, options);
    const endCs = detected.at(-1)?.end;
    if (endCs === undefined || endCs <= 0) continue;
    if (JSON.stringify(detected) !== JSON.stringify(clipSegments(utterance.segments, endCs))) continue;
    if (!points.has(endCs)) points.set(endCs, { endCs, sampleCount });
  }
  points.set(utterance.durationCs, { endCs: utterance.durationCs, sampleCount: utterance.audio.length });
  return [...points.values()].sort((a, b) => a.endCs - b.endCs);
}

/**
 * An utterance cut where its speaker yields (a point from `yieldPoints`): the audio kept, faded out
 * over its last 20 ms; speech segments and words up to the point's end (a word running across it is
 * shortened, those after it dropped).
 * @throws RangeError when the point lies outside the utterance
 */
export function truncateUtterance(utterance: SpokenUtterance, point: YieldPoint): SpokenUtterance {
  if (!Number.isSafeInteger(point.endCs) || point.endCs <= 0 || point.endCs > utterance.durationCs)
    throw new RangeError(`cut at ${point.endCs} cs lies outside (0, ${utterance.durationCs}] cs`);
  if (point.endCs === utterance.durationCs) return utterance;
  const samplesPerCs = utterance.sampleRate / 100;
  return {
    ...utterance,
    audio: fadedPrefix(utterance.audio, point.sampleCount, FADE_OUT_CS * samplesPerCs),
    // the full-band clip cut at the same time, with a fade of the same length
    ...(utterance.fullBand
      ? {
          fullBand: {
            ...utterance.fullBand,
            audio: fadedPrefix(
              utterance.fullBand.audio,
              Math.min(
                utterance.fullBand.audio.length,
                Math.round((point.sampleCount * utterance.fullBand.sampleRate) / utterance.sampleRate),
              ),
              fullBandSample(FADE_OUT_CS, utterance.fullBand.sampleRate),
            ),
          },
        }
      : {}),
    durationCs: point.endCs,
    segments: clipSegments(utterance.segments, point.endCs),
    words: utterance.words
      .filter((word) => word.start < point.endCs)
      .map((word) => ({ ...word, end: Math.min(word.end, point.endCs) })),
  };
}
