/**
 * Long pauses inside a synthesized utterance shortened to a maximum, so that an engine's fixed pauses
 * at commas and sentence ends do not split an answer into several IPUs.
 */
import type { Centiseconds } from '../pipeline/model/types.ts';
import {
  fullBandSample,
  type FullBandClip,
  type SynthesizedUtterance,
} from '../pipeline/services/tts/synthesize-utterance.ts';

/**
 * Shorten every silence between two speech segments of an utterance to at most `maximumPauseCs`,
 * cutting samples out of the middle of the silence and shifting later segments and words. TTS engines
 * pause at commas and sentence ends by a fixed amount (Open JTalk 0.3–0.5 s at 、。, more at slower
 * rates); a pause beyond the 0.5 s IPU rule (docs/events.md, Step 1) would split an answer into several
 * units, and a short leading phrase such as 「はい、」 would become a BC. Pure: returns a new value.
 * @param maximumPauseCs integer centiseconds, >= 1
 * @throws RangeError when the sample rate is not a multiple of 100 Hz
 */
export function capInternalPauses(utterance: SynthesizedUtterance, maximumPauseCs: Centiseconds): SynthesizedUtterance {
  if (utterance.sampleRate % 100 !== 0)
    throw new RangeError(`sample rate ${utterance.sampleRate} Hz is not a multiple of 100 Hz`);
  const samplesPerCs = utterance.sampleRate / 100;
  const cuts: { at: Centiseconds; length: Centiseconds }[] = [];
  for (let index = 1; index < utterance.segments.length; index += 1) {
    const gap = utterance.segments[index]!.start - utterance.segments[index - 1]!.end;
    if (gap > maximumPauseCs)
      cuts.push({
        at: utterance.segments[index - 1]!.end + Math.floor(maximumPauseCs / 2),
        length: gap - maximumPauseCs,
      });
  }
  if (cuts.length === 0) return utterance;
  const shift = (time: Centiseconds) =>
    time - cuts.filter((cut) => cut.at < time).reduce((sum, cut) => sum + cut.length, 0);
  const removed = cuts.reduce((sum, cut) => sum + cut.length, 0);
  const audio = new Float32Array(utterance.audio.length - removed * samplesPerCs);
  let readFrom = 0;
  let writeAt = 0;
  for (const cut of cuts) {
    const cutStart = cut.at * samplesPerCs;
    audio.set(utterance.audio.subarray(readFrom, cutStart), writeAt);
    writeAt += cutStart - readFrom;
    readFrom = cutStart + cut.length * samplesPerCs;
  }
  audio.set(utterance.audio.subarray(readFrom), writeAt);
  return {
    ...utterance,
    audio,
    ...(utterance.fullBand ? { fullBand: { ...utterance.fullBand, audio: cutSpans(utterance.fullBand, cuts) } } : {}),
    durationCs: utterance.durationCs - removed,
    segments: utterance.segments.map((segment) => ({ start: shift(segment.start), end: shift(segment.end) })),
    words: utterance.words.map((word) => ({ ...word, start: shift(word.start), end: shift(word.end) })),
  };
}

/** The full-band clip with the spans `cuts` (centiseconds from its start) taken out, at its own rate (fullBandSample). */
function cutSpans(clip: FullBandClip, cuts: readonly { at: Centiseconds; length: Centiseconds }[]): Float32Array {
  const kept: Float32Array[] = [];
  let readFrom = 0;
  for (const cut of cuts) {
    kept.push(clip.audio.subarray(readFrom, fullBandSample(cut.at, clip.sampleRate)));
    readFrom = fullBandSample(cut.at + cut.length, clip.sampleRate);
  }
  kept.push(clip.audio.subarray(Math.min(readFrom, clip.audio.length)));
  const audio = new Float32Array(kept.reduce((sum, part) => sum + part.length, 0));
  let writeAt = 0;
  for (const part of kept) {
    audio.set(part, writeAt);
    writeAt += part.length;
  }
  return audio;
}
