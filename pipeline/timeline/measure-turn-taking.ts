/**
 * Measures turn-taking timing of real two-channel conversations with the benchmark's own event rules
 * (pipeline/events, implementing docs/events.md), for `timing-statistics.ts`.
 * Corpus-agnostic: input is per-channel speech segments in integer centiseconds (the `segments` of a
 * `ReferenceRecording`, pipeline/model/types.ts).
 */
import { buildIpus, DEFAULT_EVENT_THRESHOLDS, turnRelations, type EventThresholds, type Ipu } from '../events/index.ts';
import type { Centiseconds, Channel, ChannelSegments, SpeechSegment } from '../model/types.ts';
import {
  CHANNEL_DIRECTIONS,
  channelDirection,
  type ChannelDirection,
  type TimingMeasurements,
} from './timing-statistics.ts';

/** A conversation to measure: the fields of a `ReferenceRecording` this module reads. */
export interface MeasurableRecording {
  /** Recording id, for messages. */
  id: string;
  /** The two channels' speech, integer centiseconds, sorted and non-overlapping per channel. */
  segments: ChannelSegments;
  /**
   * Speech of anyone not on the two channels (a third person on the line), integer centiseconds.
   * A speaker change, TURN_HOLD or SHORTPAUSE whose interval contains some of this speech is not a
   * clean two-party measurement (the silence was not silence, or the change went through the third
   * person) and is discarded. `ReferenceRecording` has no such field yet; a loader may add it.
   */
  excludedSpeech?: readonly SpeechSegment[];
}

/** Counts of measurements discarded because excluded speech fell inside them. */
export interface DiscardedMeasurements {
  speakerChanges: number;
  turnHolds: number;
  shortPauses: number;
}

/** Measurements of one or more recordings (integer centiseconds, positions in thousandths), plus counts. */
export interface MeasuredTiming extends TimingMeasurements {
  bargeInLeads: Record<ChannelDirection, Centiseconds[]>;
  /** TURN and BC IPUs measured (both channels). */
  unitCounts: { turns: number; backchannels: number };
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

function emptyMeasurements(): MeasuredTiming {
  return {
    floorTransferOffsets: { 'channel0->channel1': [], 'channel1->channel0': [] },
    withinTurnOverlapOffsets: { 'channel0->channel1': [], 'channel1->channel0': [] },
    turnHoldGaps: [],
    shortPauses: [],
    bargeInLeads: { 'channel0->channel1': [], 'channel1->channel0': [] },
    backchannels: {
      byListener: { 0: { count: 0, hostTurnCs: 0 }, 1: { count: 0, hostTurnCs: 0 } },
      outsideOtherTurns: 0,
      durationsCs: [],
      relativePositionsThousandths: [],
    },
    unitCounts: { turns: 0, backchannels: 0 },
    discarded: { speakerChanges: 0, turnHolds: 0, shortPauses: 0 },
  };
}

/**
 * The TURN of `turns` (sorted by start, non-overlapping: one channel's IPUs) whose span contains
 * `time`, as `turn.start ≤ time < turn.end`, or undefined.
 */
function containingTurn(turns: readonly Ipu[], time: Centiseconds): Ipu | undefined {
  let low = 0;
  let high = turns.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((turns[middle] as Ipu).start <= time) low = middle + 1;
    else high = middle;
  }
  const candidate = turns[low - 1];
  return candidate !== undefined && time < candidate.end ? candidate : undefined;
}

/**
 * Measures one recording with the event rules (buildIpus, turnRelations of pipeline/events):
 * - every TURN_SHIFT and BARGE_IN gives an offset `turn.start − floor.end` (centiseconds, negative =
 *   overlap) under the direction floor channel -> new turn's channel; it is a **floor-transfer offset**
 *   when the new TURN ends strictly after the floor TURN (the floor moves, docs/events.md step 3), else a
 *   **within-turn overlap** (the TURN lies inside the floor TURN; Heldner & Edlund 2010);
 * - every floor transfer that is a BARGE_IN (overlap > 0.40 s) also gives its **lead**
 *   `turn.start − floor.start`, how far into the interrupted TURN the interrupter starts (kept when ≥ 0);
 * - every TURN_HOLD gives a gap `turn.start − floor.end` (> the IPU pause threshold);
 * - every SHORTPAUSE (silence inside an IPU, TURN or BC) gives its length;
 * - every BC whose start lies inside a TURN of the other channel (`turn.start ≤ bc.start < turn.end`,
 *   the benchmark's rule for keeping BC events, docs/events.md "How the benchmark's loader uses
 *   the events") gives its duration (`end − start`) and
 *   its relative position `floor(1000 · (bc.start − turn.start) / (turn.end − turn.start))` thousandths (0–999),
 *   and counts for its channel as listener; other BCs count in `outsideOtherTurns`;
 * - the host speech of a listener channel is the summed length of the other channel's TURNs.
 * Speaker changes, TURN_HOLDs and SHORTPAUSEs whose interval contains `excludedSpeech` are discarded
 * and counted.
 *
 * @param thresholds event thresholds in centiseconds; default those of docs/events.md (50, 80, 40 cs)
 * @throws SegmentValidationError (pipeline/events) when a channel is unsorted or overlapping;
 *   RangeError for invalid thresholds
 */
export function measureTurnTaking(
  recording: MeasurableRecording,
  thresholds: EventThresholds = DEFAULT_EVENT_THRESHOLDS,
): MeasuredTiming {
  const excluded = recording.excludedSpeech ?? [];
  const ipus: Record<Channel, Ipu[]> = {
    0: buildIpus(recording.segments[0], thresholds, 0),
    1: buildIpus(recording.segments[1], thresholds, 1),
  };
  const measured = emptyMeasurements();
  for (const relation of turnRelations(ipus, thresholds)) {
    const touched = touchesExcludedSpeech(relation.floor.end, relation.turn.start, excluded);
    if (relation.event === 'TURN_HOLD') {
      if (touched) measured.discarded.turnHolds += 1;
      else measured.turnHoldGaps.push(relation.offset);
    } else if (touched) {
      measured.discarded.speakerChanges += 1;
    } else {
      const direction = channelDirection(relation.floorChannel, relation.channel);
      const floorTransfer = relation.turn.end > relation.floor.end;
      const list = floorTransfer ? measured.floorTransferOffsets : measured.withinTurnOverlapOffsets;
      list[direction].push(relation.offset);
      const lead = relation.turn.start - relation.floor.start;
      if (floorTransfer && -relation.offset > thresholds.bargeInOverlap && lead >= 0)
        measured.bargeInLeads[direction].push(lead);
    }
  }
  for (const channel of [0, 1] as const) {
    const otherTurns = ipus[channel === 0 ? 1 : 0].filter((ipu) => ipu.kind === 'TURN');
    const listener = measured.backchannels.byListener[channel];
    listener.hostTurnCs = otherTurns.reduce((sum, turn) => sum + (turn.end - turn.start), 0);
    for (const ipu of ipus[channel]) {
      if (ipu.kind === 'TURN') measured.unitCounts.turns += 1;
      else {
        measured.unitCounts.backchannels += 1;
        const host = containingTurn(otherTurns, ipu.start);
        if (host === undefined) measured.backchannels.outsideOtherTurns += 1;
        else {
          listener.count += 1;
          measured.backchannels.durationsCs.push(ipu.end - ipu.start);
          measured.backchannels.relativePositionsThousandths.push(
            Math.floor((1000 * (ipu.start - host.start)) / (host.end - host.start)),
          );
        }
      }
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
  const combined = emptyMeasurements();
  for (const part of parts) {
    for (const direction of CHANNEL_DIRECTIONS) {
      combined.floorTransferOffsets[direction].push(...part.floorTransferOffsets[direction]);
      combined.withinTurnOverlapOffsets[direction].push(...part.withinTurnOverlapOffsets[direction]);
      combined.bargeInLeads[direction].push(...part.bargeInLeads[direction]);
    }
    combined.turnHoldGaps.push(...part.turnHoldGaps);
    combined.shortPauses.push(...part.shortPauses);
    for (const channel of [0, 1] as const) {
      combined.backchannels.byListener[channel].count += part.backchannels.byListener[channel].count;
      combined.backchannels.byListener[channel].hostTurnCs += part.backchannels.byListener[channel].hostTurnCs;
    }
    combined.backchannels.outsideOtherTurns += part.backchannels.outsideOtherTurns;
    combined.backchannels.durationsCs.push(...part.backchannels.durationsCs);
    combined.backchannels.relativePositionsThousandths.push(...part.backchannels.relativePositionsThousandths);
    combined.unitCounts.turns += part.unitCounts.turns;
    combined.unitCounts.backchannels += part.unitCounts.backchannels;
    combined.discarded.speakerChanges += part.discarded.speakerChanges;
    combined.discarded.turnHolds += part.discarded.turnHolds;
    combined.discarded.shortPauses += part.discarded.shortPauses;
  }
  return combined;
}
