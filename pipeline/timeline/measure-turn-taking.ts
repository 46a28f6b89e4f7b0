/**
 * Measures turn-taking timing of real two-channel conversations with the benchmark's own event rules
 * (pipeline/events, implementing ../shared/docs/events.md), for `timing-statistics.ts`.
 * Corpus-agnostic: input is per-channel speech segments in integer centiseconds.
 */
import {
  buildIpus,
  DEFAULT_EVENT_THRESHOLDS,
  turnRelations,
  type EventThresholds,
} from '../events/index.ts';
import type { Centiseconds, ChannelSegments, SpeechSegment } from '../model/types.ts';
import { CHANNEL_DIRECTIONS, channelDirection, type TimingMeasurements } from './timing-statistics.ts';

/** A conversation to measure. */
export interface MeasurableRecording {
  /** Recording id, for messages. */
  id: string;
  /** The two channels' speech, integer centiseconds, sorted and non-overlapping per channel. */
  segments: ChannelSegments;
  /**
   * Speech of anyone not on the two channels (a third person on the line), integer centiseconds.
   * A measurement whose interval contains some of this speech is not a clean two-party transition
   * (the silence was not silence, or the change went through the third person) and is discarded.
   */
  excludedSpeech?: readonly SpeechSegment[];
}

/** Counts of measurements discarded because excluded speech fell inside them. */
export interface DiscardedMeasurements {
  speakerChanges: number;
  turnHolds: number;
  shortPauses: number;
}

/** Measurements of one or more recordings, integer centiseconds, plus what was discarded. */
export interface MeasuredTiming extends TimingMeasurements {
  discarded: DiscardedMeasurements;
}

/**
 * True when the interval between `a` and `b` (either order) contains some excluded speech. A zero-length
 * interval (offset 0) is hit only by speech running across that instant.
 */
function touchesExcludedSpeech(a: Centiseconds, b: Centiseconds, excluded: readonly SpeechSegment[]): boolean {
  const low = Math.min(a, b);
  const high = Math.max(a, b);
  return excluded.some((segment) =>
    low === high ? segment.start < low && segment.end > low : segment.start < high && segment.end > low,
  );
}

/**
 * Measures one recording with the event rules (buildIpus, turnRelations of pipeline/events):
 * - every TURN_SHIFT and BARGE_IN gives a floor-transfer offset `turn.start − floor.end` (centiseconds,
 *   negative = overlap) under the direction floor channel -> new turn's channel;
 * - every TURN_HOLD gives a gap `turn.start − floor.end` (> the IPU pause threshold);
 * - every SHORTPAUSE (silence inside an IPU, TURN or BC) gives its length.
 * Measurements whose interval contains `excludedSpeech` are discarded and counted.
 *
 * @param thresholds event thresholds in centiseconds; default events.md's (50, 80, 40 cs)
 * @throws SegmentValidationError (pipeline/events) when a channel is unsorted or overlapping
 */
export function measureTurnTaking(
  recording: MeasurableRecording,
  thresholds: EventThresholds = DEFAULT_EVENT_THRESHOLDS,
): MeasuredTiming {
  const excluded = recording.excludedSpeech ?? [];
  const ipus = {
    0: buildIpus(recording.segments[0], thresholds, 0),
    1: buildIpus(recording.segments[1], thresholds, 1),
  };
  const measured: MeasuredTiming = {
    speakerChangeOffsets: { 'channel0->channel1': [], 'channel1->channel0': [] },
    turnHoldGaps: [],
    shortPauses: [],
    discarded: { speakerChanges: 0, turnHolds: 0, shortPauses: 0 },
  };
  for (const relation of turnRelations(ipus, thresholds)) {
    const touched = touchesExcludedSpeech(relation.floor.end, relation.turn.start, excluded);
    if (relation.event === 'TURN_HOLD') {
      if (touched) measured.discarded.turnHolds += 1;
      else measured.turnHoldGaps.push(relation.offset);
    } else if (touched) {
      measured.discarded.speakerChanges += 1;
    } else {
      measured.speakerChangeOffsets[channelDirection(relation.floorChannel, relation.channel)].push(relation.offset);
    }
  }
  for (const channel of [0, 1] as const) {
    for (const ipu of ipus[channel]) {
      for (const pause of ipu.pauses) {
        if (touchesExcludedSpeech(pause.start, pause.end, excluded)) measured.discarded.shortPauses += 1;
        else measured.shortPauses.push(pause.end - pause.start);
      }
    }
  }
  return measured;
}

/** Concatenates the measurements of several recordings (order kept; sorting happens when building the file). */
export function combineMeasurements(parts: readonly MeasuredTiming[]): MeasuredTiming {
  const combined: MeasuredTiming = {
    speakerChangeOffsets: { 'channel0->channel1': [], 'channel1->channel0': [] },
    turnHoldGaps: [],
    shortPauses: [],
    discarded: { speakerChanges: 0, turnHolds: 0, shortPauses: 0 },
  };
  for (const part of parts) {
    for (const direction of CHANNEL_DIRECTIONS) {
      combined.speakerChangeOffsets[direction].push(...part.speakerChangeOffsets[direction]);
    }
    combined.turnHoldGaps.push(...part.turnHoldGaps);
    combined.shortPauses.push(...part.shortPauses);
    combined.discarded.speakerChanges += part.discarded.speakerChanges;
    combined.discarded.turnHolds += part.discarded.turnHolds;
    combined.discarded.shortPauses += part.discarded.shortPauses;
  }
  return combined;
}
