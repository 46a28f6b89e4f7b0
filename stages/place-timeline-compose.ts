/**
 * Placement of one dialogue onto its two-channel timeline: the floor-transfer offsets and the
 * listener's backchannels drawn by pipeline/timeline/place-dialogue.ts, then every utterance and
 * backchannel clip mixed onto its channel's track (and the full-band tracks), with the speech segments
 * and word timings shifted to absolute centiseconds.
 */
import { placeOnTrackInPlace } from '../pipeline/audio/raw-audio.ts';
import { limitMixInPlace } from '../pipeline/audio/master-mix.ts';
import type { AlignedWord, Centiseconds, Channel, ChannelSegments, SpeakerRole } from '../pipeline/model/types.ts';
import { placeDialogue, type PlaceDialogueOptions, type PlacedDialogue } from '../pipeline/timeline/place-dialogue.ts';
import type { PlacedBackchannel } from '../pipeline/timeline/place-backchannels.ts';
import type { TimingStatistics } from '../pipeline/timeline/timing-statistics.ts';
import { fullBandSample } from '../pipeline/services/tts/synthesize-utterance.ts';
import type { SpokenUtterance } from './synthesize-speech.ts';

/** A dialogue on its timeline: audio per channel, segments and words in absolute centiseconds. */
export interface PlacedTimeline {
  placement: PlacedDialogue;
  /** Channel of each utterance, in utterance order. */
  channels: Channel[];
  /** Two mono tracks (index = benchmark channel) at `sampleRate`, each `totalDurationCs * rate / 100` samples. */
  tracks: [Float32Array, Float32Array];
  sampleRate: number;
  /** Speech segments per channel, sorted, from the utterances' own speech segments shifted by their start. */
  segments: ChannelSegments;
  /** All words of both channels, sorted by (start, channel). */
  words: AlignedWord[];
  totalDurationCs: Centiseconds;
  /** Listener backchannels placed (empty when none were requested), with the clip each one uses. */
  backchannels: (PlacedBackchannel & { text: string })[];
  /**
   * The same mix at the TTS engine's own rate (the full-band master), when every utterance and clip
   * has its full-band clip at one rate: two tracks of `fullBandSample(totalDurationCs, rate)` samples,
   * each clip at `fullBandSample(start, rate)`.
   */
  fullBand?: { tracks: [Float32Array, Float32Array]; sampleRate: number };
}

/** What {@link placeTimeline} reads: one dialogue's synthesized speech and how to place it. */
export interface PlaceTimelineRequest {
  dialogueId: string;
  seed: number;
  utterances: readonly SpokenUtterance[];
  channelOfRole: Record<SpeakerRole, Channel>;
  statistics: TimingStatistics;
  options?: Partial<PlaceDialogueOptions>;
  /** Synthesized backchannel clips of the user (each <= 0.80 s of speech); none = no backchannels. */
  backchannelClips?: readonly SpokenUtterance[];
}

/**
 * Place and compose one dialogue; its tracks (and full-band tracks) true-peak limited to -1 dBTP
 * (pipeline/audio/true-peak-limiter.ts, EBU R 128's maximum true peak level): only the gain around
 * inter-sample overs is lowered, so the loudness and the speech segments stay those of the clips
 * (TTS clips can reach +0.2 dBTP).
 * @param input synthesized utterances in speaking order (all at the same sample rate); `channelOfRole`
 *   the benchmark channel of each role (default docs/dataset-format.md, "audio/{id}.wav": user 1, system 0)
 * @param allocateTrack where the tracks go: new arrays (default), or {@link TrackAllocator} buffers the caller reuses
 * @throws TimelinePlacementError (pipeline/timeline) on invalid input; RangeError when sample rates differ
 *   or the rate is not a multiple of 100 Hz
 */
export function placeTimeline(input: PlaceTimelineRequest, allocateTrack: TrackAllocator = newTrack): PlacedTimeline {
  return limitedInPlace(composePlacedTimeline(input, allocateTrack));
}

/** The timeline with every track true-peak limited in place (limitMixInPlace, for callers that keep the tracks). */
export function limitedInPlace<T extends PlacedTimeline>(timeline: T): T {
  limitMixInPlace(timeline);
  return timeline;
}

/** {@link placeTimeline} without the limiting (the placement stages master the tracks afterwards: masterMix, maybe in a worker). */
export function composePlacedTimeline(input: PlaceTimelineRequest, allocateTrack: TrackAllocator): PlacedTimeline {
  const { utterances } = input;
  const clips = input.backchannelClips ?? [];
  const sampleRate = commonSampleRate(input.dialogueId, utterances, clips);
  const channels = utterances.map((utterance) => input.channelOfRole[utterance.role]);
  const placement = placeDialogue({
    dialogueId: input.dialogueId,
    seed: input.seed,
    utterances: utterances.map((utterance, index) => ({
      channel: channels[index]!,
      durationCs: utterance.durationCs,
      speechSegments: utterance.segments,
    })),
    statistics: input.statistics,
    ...(input.options ? { options: input.options } : {}),
    ...(clips.length > 0
      ? {
          backchannels: {
            listenerChannel: input.channelOfRole.user,
            clipDurationsCs: clips.map((clip) => clip.durationCs),
          },
        }
      : {}),
  });
  return composeTimeline({ utterances, channels, placement, clips, sampleRate, allocateTrack });
}

/**
 * Checks the sample rates of a dialogue's utterances and backchannel clips.
 * @returns the common sample rate (16000 when there are no utterances)
 * @throws RangeError when rates differ or are not a multiple of 100 Hz
 */
export function commonSampleRate(
  dialogueId: string,
  utterances: readonly SpokenUtterance[],
  clips: readonly SpokenUtterance[],
): number {
  const sampleRate = utterances[0]?.sampleRate ?? 16000;
  if (sampleRate % 100 !== 0)
    throw new RangeError(`${dialogueId}: sample rate ${sampleRate} Hz is not a multiple of 100 Hz`);
  if (utterances.some((utterance) => utterance.sampleRate !== sampleRate))
    throw new RangeError(`${dialogueId}: utterances have different sample rates`);
  if (clips.some((clip) => clip.sampleRate !== sampleRate))
    throw new RangeError(`${dialogueId}: backchannel clips have another sample rate`);
  return sampleRate;
}

/**
 * Where a composed timeline's tracks go: `slot` 0 and 1 are the two channels at the output rate, 2 and 3
 * the full-band ones. Returns `length` zero samples.
 */
export type TrackAllocator = (slot: number, length: number) => Float32Array;

/** New arrays: the tracks belong to the caller ({@link placeTimeline}'s default). */
export const newTrack: TrackAllocator = (_slot, length) => new Float32Array(length);

/** What {@link composeTimeline} mixes: placed utterances and backchannel clips, and where the tracks go. */
export interface TimelineMaterial {
  /** The utterances as placed (audio, segments and words relative to each one's speech start). */
  utterances: readonly SpokenUtterance[];
  /** Channel of each utterance. */
  channels: Channel[];
  /** Starts (centiseconds) and total duration; backchannels with their clip index. */
  placement: PlacedDialogue;
  /** The backchannel clips the placement's backchannels index. */
  clips: readonly SpokenUtterance[];
  /** Rate of the utterances and clips, Hz (a multiple of 100). */
  sampleRate: number;
  allocateTrack: TrackAllocator;
}

/**
 * Composes placed utterances (and backchannels) into two tracks, absolute speech segments and words
 * (not yet limited: {@link placeTimeline}, masterMix).
 * @returns tracks of `totalDurationCs × rate / 100` samples each; segments and words in absolute centiseconds
 */
export function composeTimeline(material: TimelineMaterial): PlacedTimeline {
  const { utterances, channels, placement, clips, sampleRate, allocateTrack } = material;
  const samplesPerCentisecond = sampleRate / 100;
  const trackLength = placement.totalDurationCs * samplesPerCentisecond;
  const tracks: [Float32Array, Float32Array] = [allocateTrack(0, trackLength), allocateTrack(1, trackLength)];
  const segments: ChannelSegments = { 0: [], 1: [] };
  const words: AlignedWord[] = [];
  utterances.forEach((utterance, index) => {
    const channel = channels[index]!;
    const start = placement.starts[index]!;
    placeOnTrackInPlace(tracks[channel], utterance.audio, start * samplesPerCentisecond);
    for (const segment of utterance.segments)
      segments[channel].push({ start: start + segment.start, end: start + segment.end });
    for (const word of utterance.words)
      words.push({ channel, start: start + word.start, end: start + word.end, word: word.word });
  });
  const backchannels = placement.backchannels.map((backchannel) => {
    const clip = clips[backchannel.clipIndex]!;
    placeOnTrackInPlace(tracks[backchannel.channel], clip.audio, backchannel.start * samplesPerCentisecond);
    for (const segment of clip.segments)
      segments[backchannel.channel].push({
        start: backchannel.start + segment.start,
        end: backchannel.start + segment.end,
      });
    for (const word of clip.words)
      words.push({
        channel: backchannel.channel,
        start: backchannel.start + word.start,
        end: backchannel.start + word.end,
        word: word.word,
      });
    return { ...backchannel, text: clip.spokenText };
  });
  segments[0].sort((a, b) => a.start - b.start);
  segments[1].sort((a, b) => a.start - b.start);
  words.sort((a, b) => a.start - b.start || a.channel - b.channel || a.end - b.end);
  const fullBand = composeFullBand(material);
  return {
    placement,
    channels,
    tracks,
    sampleRate,
    segments,
    words,
    totalDurationCs: placement.totalDurationCs,
    backchannels,
    ...(fullBand ? { fullBand } : {}),
  };
}

/**
 * The full-band mix (PlacedTimeline `fullBand`), or undefined when a clip has no full-band audio or
 * the rates differ. A clip that would reach past the track's last sample (rounding at rates that are
 * not multiples of 100 Hz) loses that sample.
 */
function composeFullBand({
  utterances,
  channels,
  placement,
  clips,
  allocateTrack,
}: Omit<TimelineMaterial, 'sampleRate'>): PlacedTimeline['fullBand'] {
  const sampleRate = utterances[0]?.fullBand?.sampleRate;
  if (sampleRate === undefined || [...utterances, ...clips].some((clip) => clip.fullBand?.sampleRate !== sampleRate))
    return undefined;
  const length = fullBandSample(placement.totalDurationCs, sampleRate);
  const tracks: [Float32Array, Float32Array] = [allocateTrack(2, length), allocateTrack(3, length)];
  const place = (track: Float32Array, clip: Float32Array, startCs: Centiseconds) => {
    const offset = fullBandSample(startCs, sampleRate);
    placeOnTrackInPlace(track, clip.subarray(0, Math.max(0, Math.min(clip.length, length - offset))), offset);
  };
  utterances.forEach((utterance, index) =>
    place(tracks[channels[index]!], utterance.fullBand!.audio, placement.starts[index]!),
  );
  for (const backchannel of placement.backchannels)
    place(tracks[backchannel.channel], clips[backchannel.clipIndex]!.fullBand!.audio, backchannel.start);
  return { tracks, sampleRate };
}
