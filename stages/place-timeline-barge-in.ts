/**
 * Placement of the barge-in variant of one dialogue: the same synthesized utterances, the user
 * starting each next question while the system is still answering
 * (pipeline/timeline/place-barge-in-variant.ts), and each interrupted answer cut at the yield point
 * where the system stops.
 */
import type { SpeechDetectorOptions } from '../pipeline/audio/speech-regions.ts';
import {
  placeBargeInVariant,
  type PlannedBargeIn,
  type SystemYields,
} from '../pipeline/timeline/place-barge-in-variant.ts';
import type { SpokenUtterance } from './synthesize-speech.ts';
import {
  commonSampleRate,
  composeTimeline,
  limitedInPlace,
  newTrack,
  type PlacedTimeline,
  type PlaceTimelineRequest,
  type TrackAllocator,
} from './place-timeline-compose.ts';
import { truncateUtterance, yieldPoints } from './place-timeline-yield-points.ts';

/** The barge-in variant of a dialogue on its timeline, with the barge-ins placed. */
export interface BargeInTimeline extends PlacedTimeline {
  bargeIns: PlannedBargeIn[];
  answersTooShort: number[];
  /** The utterances as spoken in the variant (answers cut where the system yields). */
  utterances: SpokenUtterance[];
}

/**
 * Places and composes the barge-in variant of one dialogue (pipeline/timeline/place-barge-in-variant.ts):
 * the same synthesized utterances, the user starting each next question while the system is still
 * answering, the system yielding as `systemYields` says.
 * Its tracks are limited as placeTimeline's (stages/place-timeline-compose.ts).
 * @param allocateTrack as placeTimeline's
 * @throws as `placeTimeline`; TimelinePlacementError when the statistics have no barge-ins
 */
export function placeBargeInTimeline(
  input: PlaceBargeInTimelineRequest,
  allocateTrack: TrackAllocator = newTrack,
): BargeInTimeline {
  return limitedInPlace(composeBargeInTimeline(input, allocateTrack));
}

/** What {@link placeBargeInTimeline} reads: {@link PlaceTimelineRequest}, how the system yields, the speech detector. */
export type PlaceBargeInTimelineRequest = PlaceTimelineRequest & {
  systemYields: SystemYields;
  detector: Partial<SpeechDetectorOptions>;
  minimumUnspoken?: { seconds: number; words: number };
};

/** {@link placeBargeInTimeline} without the limiting. */
export function composeBargeInTimeline(
  input: PlaceBargeInTimelineRequest,
  allocateTrack: TrackAllocator,
): BargeInTimeline {
  const { utterances } = input;
  const clips = input.backchannelClips ?? [];
  const sampleRate = commonSampleRate(input.dialogueId, utterances, clips);
  const channels = utterances.map((utterance) => input.channelOfRole[utterance.role]);
  // the places where each interrupted answer can stop (yieldPoints); other utterances are never cut
  const pointsOf = utterances.map((utterance, index) =>
    channels[index] === input.channelOfRole.system && channels[index + 1] === input.channelOfRole.user
      ? yieldPoints(utterance, input.detector)
      : null,
  );
  const variant = placeBargeInVariant(
    {
      dialogueId: input.dialogueId,
      seed: input.seed,
      utterances: utterances.map((utterance, index) => ({
        channel: channels[index]!,
        durationCs: utterance.durationCs,
        speechSegments: utterance.segments,
        wordEndsCs: pointsOf[index]?.map((point) => point.endCs) ?? [utterance.durationCs],
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
    },
    {
      systemChannel: input.channelOfRole.system,
      systemYields: input.systemYields,
      maximumDraws: 100,
      ...(input.minimumUnspoken
        ? {
            minimumUnspokenCs: Math.round(input.minimumUnspoken.seconds * 100),
            minimumUnspokenWords: input.minimumUnspoken.words,
          }
        : {}),
    },
  );
  const cutOf = new Map(variant.bargeIns.map((bargeIn) => [bargeIn.answerIndex, bargeIn.cutCs]));
  const spoken = utterances.map((utterance, index) => {
    const cut = cutOf.get(index);
    const point = cut === undefined ? undefined : pointsOf[index]?.find((candidate) => candidate.endCs === cut);
    return point === undefined ? utterance : truncateUtterance(utterance, point);
  });
  return {
    ...composeTimeline({
      utterances: spoken,
      channels,
      placement: variant.placement,
      clips,
      sampleRate,
      allocateTrack,
    }),
    bargeIns: variant.bargeIns,
    answersTooShort: variant.answersTooShort,
    utterances: spoken,
  };
}
