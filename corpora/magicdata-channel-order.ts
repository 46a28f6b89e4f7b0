/**
 * The channel order check of a MagicData-style session (./magicdata.ts) against its stereo WAV: each
 * tentative speaker should be louder on their own channel while the other speaker is silent, by at
 * least `CHANNEL_ORDER_MARGIN_DB` dB over at least `CHANNEL_ORDER_MINIMUM_SOLO` of solo speech.
 */
import type { RawAudio } from '../pipeline/audio/raw-audio.ts';
import type { Centiseconds, Channel, SpeechSegment } from '../pipeline/model/types.ts';
import { REFERENCE_CHANNELS } from './reference-recording.ts';

/** Level difference (dB) a speaker must show between the two channels for the order to count as decided. */
export const CHANNEL_ORDER_MARGIN_DB = 3;

/** Solo speech (the other speaker silent) each speaker needs for the channel order check, in centiseconds. */
export const CHANNEL_ORDER_MINIMUM_SOLO: Centiseconds = 100;

/** Parts of `segments` not covered by `others` (both sorted, non-overlapping), in centiseconds. */
function subtractSegments(segments: readonly SpeechSegment[], others: readonly SpeechSegment[]): SpeechSegment[] {
  const result: SpeechSegment[] = [];
  for (const segment of segments) {
    let start = segment.start;
    for (const other of others) {
      if (other.end <= start || other.start >= segment.end) continue;
      if (other.start > start) result.push({ start, end: other.start });
      start = Math.max(start, other.end);
      if (start >= segment.end) break;
    }
    if (start < segment.end) result.push({ start, end: segment.end });
  }
  return result;
}

/** Energy (sum of squares) of each audio channel over spans given in centiseconds. */
function channelEnergies(audio: RawAudio, spans: readonly SpeechSegment[]): [number, number] {
  const energies: [number, number] = [0, 0];
  for (const channel of REFERENCE_CHANNELS) {
    const samples = audio.channels[channel] as Float32Array;
    for (const span of spans) {
      const from = Math.min(samples.length, Math.round((span.start * audio.sampleRate) / 100));
      const to = Math.min(samples.length, Math.round((span.end * audio.sampleRate) / 100));
      let sum = 0;
      for (let index = from; index < to; index += 1) sum += (samples[index] as number) ** 2;
      energies[channel] += sum;
    }
  }
  return energies;
}

/** The result of checking the channel order against stereo audio. */
export interface ChannelOrderCheck {
  /** `kept`: the audio agrees; `swapped`: it disagrees clearly; `undecided`: it does not tell. */
  decision: 'kept' | 'swapped' | 'undecided';
  /** Level of channel 0 minus channel 1 (dB) while each tentative speaker talks alone. */
  levelDifferenceDb: [number, number];
}

/**
 * Checks that tentative channel c's speaker is louder on audio channel c while the other is silent.
 *
 * @param audio stereo audio.
 * @param segments the two speakers' segments (tentative channels 0 and 1), centiseconds.
 * @returns the decision and the level differences (channel 0 minus channel 1, in dB) for each speaker.
 */
export function checkChannelOrder(audio: RawAudio, segments: Record<Channel, SpeechSegment[]>): ChannelOrderCheck {
  const solo = REFERENCE_CHANNELS.map((channel) =>
    subtractSegments(segments[channel], segments[channel === 0 ? 1 : 0]),
  );
  const soloLength = solo.map((spans) => spans.reduce((sum, span) => sum + span.end - span.start, 0));
  const difference = solo.map((spans) => {
    const [left, right] = channelEnergies(audio, spans);
    return 10 * Math.log10((left + 1e-12) / (right + 1e-12));
  }) as [number, number];
  if (soloLength.some((length) => (length as number) < CHANNEL_ORDER_MINIMUM_SOLO))
    return { decision: 'undecided', levelDifferenceDb: difference };
  const [first, second] = difference;
  if (first >= CHANNEL_ORDER_MARGIN_DB && second <= -CHANNEL_ORDER_MARGIN_DB)
    return { decision: 'kept', levelDifferenceDb: difference };
  if (first <= -CHANNEL_ORDER_MARGIN_DB && second >= CHANNEL_ORDER_MARGIN_DB)
    return { decision: 'swapped', levelDifferenceDb: difference };
  return { decision: 'undecided', levelDifferenceDb: difference };
}
