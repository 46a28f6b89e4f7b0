/**
 * Stage `place-timeline`: puts a dialogue's synthesized utterances on a two-channel timeline by
 * sampling floor-transfer offsets from timing statistics (pipeline/timeline/place-dialogue.ts), adds the
 * user's backchannels inside the system's answers at the measured rate and positions, then composes the per-channel audio tracks, the absolute speech segments and the absolute word timings.
 *
 * Every utterance starts on a centisecond boundary, and the sample rate is a multiple of 100 Hz, so a
 * speech segment at `c` cs inside an utterance placed at `s` cs lies at exactly `(s + c) * rate / 100`
 * samples in the track: the frame-local speech detector finds the same segments in the written WAV.
 */
import { placeOnTrackInPlace } from '../pipeline/audio/raw-audio.ts';
import type { AlignedWord, Centiseconds, Channel, ChannelSegments, SpeakerRole } from '../pipeline/model/types.ts';
import { placeDialogue, type PlaceDialogueOptions, type PlacedDialogue } from '../pipeline/timeline/place-dialogue.ts';
import type { PlacedBackchannel } from '../pipeline/timeline/place-backchannels.ts';
import type { TimingStatistics } from '../pipeline/timeline/timing-statistics.ts';
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
}

/**
 * Place and compose one dialogue.
 * @param utterances synthesized utterances in speaking order (all at the same sample rate)
 * @param channelOfRole benchmark channel of each role (default m3-format.md: user 1, system 0)
 * @throws TimelinePlacementError (pipeline/timeline) on invalid input; RangeError when sample rates differ
 *   or the rate is not a multiple of 100 Hz
 */
export function placeTimeline(input: {
  dialogueId: string;
  seed: number;
  utterances: readonly SpokenUtterance[];
  channelOfRole: Record<SpeakerRole, Channel>;
  statistics: TimingStatistics;
  options?: Partial<PlaceDialogueOptions>;
  /** Synthesized backchannel clips of the user (each <= 0.80 s of speech); none = no backchannels. */
  backchannelClips?: readonly SpokenUtterance[];
}): PlacedTimeline {
  const { utterances } = input;
  const sampleRate = utterances[0]?.sampleRate ?? 16000;
  if (sampleRate % 100 !== 0) throw new RangeError(`${input.dialogueId}: sample rate ${sampleRate} Hz is not a multiple of 100 Hz`);
  if (utterances.some((utterance) => utterance.sampleRate !== sampleRate)) {
    throw new RangeError(`${input.dialogueId}: utterances have different sample rates`);
  }
  const channels = utterances.map((utterance) => input.channelOfRole[utterance.role]);
  const clips = input.backchannelClips ?? [];
  if (clips.some((clip) => clip.sampleRate !== sampleRate)) throw new RangeError(`${input.dialogueId}: backchannel clips have another sample rate`);
  const placement = placeDialogue({
    dialogueId: input.dialogueId,
    seed: input.seed,
    utterances: utterances.map((utterance, index) => ({ channel: channels[index]!, durationCs: utterance.durationCs, speechSegments: utterance.segments })),
    statistics: input.statistics,
    ...(input.options ? { options: input.options } : {}),
    ...(clips.length > 0 ? { backchannels: { listenerChannel: input.channelOfRole.user, clipDurationsCs: clips.map((clip) => clip.durationCs) } } : {}),
  });
  const samplesPerCentisecond = sampleRate / 100;
  const trackLength = placement.totalDurationCs * samplesPerCentisecond;
  const tracks: [Float32Array, Float32Array] = [new Float32Array(trackLength), new Float32Array(trackLength)];
  const segments: ChannelSegments = { 0: [], 1: [] };
  const words: AlignedWord[] = [];
  utterances.forEach((utterance, index) => {
    const channel = channels[index]!;
    const start = placement.starts[index]!;
    placeOnTrackInPlace(tracks[channel], utterance.audio, start * samplesPerCentisecond);
    for (const segment of utterance.segments) segments[channel].push({ start: start + segment.start, end: start + segment.end });
    for (const word of utterance.words) words.push({ channel, start: start + word.start, end: start + word.end, word: word.word });
  });
  const backchannels = placement.backchannels.map((backchannel) => {
    const clip = clips[backchannel.clipIndex]!;
    placeOnTrackInPlace(tracks[backchannel.channel], clip.audio, backchannel.start * samplesPerCentisecond);
    for (const segment of clip.segments) segments[backchannel.channel].push({ start: backchannel.start + segment.start, end: backchannel.start + segment.end });
    for (const word of clip.words) words.push({ channel: backchannel.channel, start: backchannel.start + word.start, end: backchannel.start + word.end, word: word.word });
    return { ...backchannel, text: clip.spokenText };
  });
  segments[0].sort((a, b) => a.start - b.start);
  segments[1].sort((a, b) => a.start - b.start);
  words.sort((a, b) => a.start - b.start || a.channel - b.channel || a.end - b.end);
  return { placement, channels, tracks, sampleRate, segments, words, totalDurationCs: placement.totalDurationCs, backchannels };
}
