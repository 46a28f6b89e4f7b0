/**
 * Stage `place-timeline`: puts a dialogue's synthesized utterances on a two-channel timeline by
 * sampling floor-transfer offsets from timing statistics, adds the user's backchannels inside the
 * system's answers, and renders the two channels to the WAV files the dataset links to, cached by a
 * content hash of everything that determines them.
 *
 * The work is split by concern: placement and mixing of one dialogue (stages/place-timeline-compose.ts),
 * the barge-in variant (stages/place-timeline-barge-in.ts) and its yield points
 * (stages/place-timeline-yield-points.ts), the reused audio buffers (stages/place-timeline-buffers.ts),
 * rendering and storing (stages/place-timeline-rendering.ts) and the cache key with
 * `placementCodeDigest` (stages/place-timeline-cache-key.ts). This module holds the two stages and
 * exports the names of all of them.
 *
 * Every utterance starts on a centisecond boundary, and the sample rate is a multiple of 100 Hz, so a
 * speech segment at `c` cs inside an utterance placed at `s` cs lies at exactly `(s + c) * rate / 100`
 * samples in the track: the frame-local speech detector finds the same segments in the written WAV.
 *
 * The stages return the timeline rendered ({@link RenderedTimeline}: the tracks as the WAV files the
 * dataset links to) and cache it by a content hash of everything that determines it: the utterances'
 * samples and timings, the placement parameters and seed, and the code that places and renders
 * (`placementCodeDigest`). A queue worker (pipeline/orchestration/queue-worker.ts) places and renders
 * a dialogue; the coordinator's local pass, like any later build with the same inputs, reads it back
 * (placement with its true-peak limiting is about two thirds of that pass's CPU) and writes the same bytes.
 */
import type { SpeechDetectorOptions } from '../pipeline/audio/speech-regions.ts';
import type { SystemYields } from '../pipeline/timeline/place-barge-in-variant.ts';
import type { Stage } from '../pipeline/run/stage.ts';
import { composeBargeInTimeline } from './place-timeline-barge-in.ts';
import { withPlacementBuffers } from './place-timeline-buffers.ts';
import {
  PLACE_TIMELINE_STAGE,
  placementCacheKey,
  type PlaceTimelineInput,
  type PlaceTimelineParameters,
} from './place-timeline-cache-key.ts';
import { composePlacedTimeline } from './place-timeline-compose.ts';
import {
  cachedRendering,
  masterTimeline,
  type RenderedBargeInTimeline,
  type RenderedTimeline,
} from './place-timeline-rendering.ts';

export {
  placeTimeline,
  type PlacedTimeline,
  type PlaceTimelineRequest,
  type TrackAllocator,
} from './place-timeline-compose.ts';
export { FADE_OUT_CS, truncateUtterance, yieldPoints, type YieldPoint } from './place-timeline-yield-points.ts';
export {
  placeBargeInTimeline,
  type BargeInTimeline,
  type PlaceBargeInTimelineRequest,
} from './place-timeline-barge-in.ts';
export {
  readStoredWav,
  renderTimeline,
  type EncodedTimeline,
  type PlacedUtterance,
  type RenderedBargeInTimeline,
  type RenderedTimeline,
  type StoredWav,
} from './place-timeline-rendering.ts';
export {
  PLACE_TIMELINE_STAGE,
  PLACE_TIMELINE_STAGE_VERSION,
  placementCacheKey,
  placementCodeDigest,
  speechDigest,
  type PlaceTimelineInput,
  type PlaceTimelineParameters,
} from './place-timeline-cache-key.ts';

/**
 * Stage `place-timeline`: {@link placeTimeline}, rendered ({@link renderTimeline}) and cached under
 * `place-timeline` ({@link placementCacheKey}).
 * @throws as {@link placeTimeline}; as writeAtomic when the entry cannot be stored
 */
export const placeTimelineStage: Stage<PlaceTimelineInput, PlaceTimelineParameters, RenderedTimeline> = {
  name: 'place-timeline',
  inputs: ['dialogueId', 'utterances', 'backchannelClips'],
  parameters: ['seed', 'channelOfRole', 'statistics', 'options', 'renderPool'],
  cacheStages: [PLACE_TIMELINE_STAGE],
  cacheKeys: async (input, parameters) => [placementCacheKey(input, parameters, null)],
  run: async (input, parameters, context) =>
    withPlacementBuffers(parameters.renderPool, (buffers) =>
      cachedRendering<RenderedTimeline>(context.cache, placementCacheKey(input, parameters, null), () =>
        masterTimeline(
          composePlacedTimeline({ ...input, ...parameters }, buffers.allocateTrack),
          parameters.renderPool,
          buffers.allocateWav,
        ),
      ),
    ),
};

/** Parameters of {@link placeBargeInTimelineStage}: those of {@link placeTimelineStage}, how the system yields, and the speech detector. */
export interface PlaceBargeInTimelineParameters extends PlaceTimelineParameters {
  systemYields: SystemYields;
  detector: Partial<SpeechDetectorOptions>;
  /** The least of an answer a barge-in leaves unspoken (`timeline.bargeIn.minimumUnspoken`). */
  minimumUnspoken?: { seconds: number; words: number };
}

/**
 * Stage `place-timeline` of the barge-in variant: {@link placeBargeInTimeline}, rendered and cached
 * under `place-timeline` (its key also holds how the system yields and the detector).
 * @throws as {@link placeBargeInTimeline}; as writeAtomic when the entry cannot be stored
 */
export const placeBargeInTimelineStage: Stage<
  PlaceTimelineInput,
  PlaceBargeInTimelineParameters,
  RenderedBargeInTimeline
> = {
  name: 'place-timeline',
  inputs: ['dialogueId', 'utterances', 'backchannelClips'],
  parameters: [
    'seed',
    'channelOfRole',
    'statistics',
    'options',
    'systemYields',
    'detector',
    'minimumUnspoken',
    'renderPool',
  ],
  cacheStages: [PLACE_TIMELINE_STAGE],
  cacheKeys: async (input, parameters) => [placementCacheKey(input, parameters, bargeInKeyOf(parameters))],
  run: async (input, parameters, context) =>
    withPlacementBuffers(parameters.renderPool, (buffers) =>
      cachedRendering<RenderedBargeInTimeline>(
        context.cache,
        placementCacheKey(input, parameters, bargeInKeyOf(parameters)),
        async () => {
          const timeline = composeBargeInTimeline({ ...input, ...parameters }, buffers.allocateTrack);
          const { metadata, parts } = await masterTimeline(timeline, parameters.renderPool, buffers.allocateWav);
          return {
            metadata: {
              ...metadata,
              bargeIns: timeline.bargeIns,
              answersTooShort: timeline.answersTooShort,
              utterances: timeline.utterances.map(({ audio: _audio, fullBand: _fullBand, ...rest }) => rest),
            },
            parts,
          };
        },
      ),
    ),
};

/** The variant's own parameters in its cache key. */
function bargeInKeyOf(parameters: PlaceBargeInTimelineParameters): unknown {
  return {
    variant: 'barge-in',
    systemYields: parameters.systemYields,
    detector: parameters.detector,
    minimumUnspoken: parameters.minimumUnspoken ?? null,
  };
}
