/**
 * Speech activity -> benchmark events, implementing docs/events.md (steps 1-4).
 *
 * Everything here works in integer centiseconds (docs/events.md "Input: speech segments per channel":
 * integer centiseconds throughout); floating-point seconds never enter a threshold comparison.
 */
import type {
  BenchmarkEvent,
  Centiseconds,
  Channel,
  ChannelEvents,
  ChannelSegments,
  SpeechSegment,
} from '../model/types.ts';

/** Both channels, in the order they are processed and written (docs/events.md "Writing the line"). */
export const CHANNELS: readonly Channel[] = [0, 1] as const;

/** The thresholds of docs/events.md ("The thresholds"), in centiseconds. */
export interface EventThresholds {
  /**
   * Longest silence between two speech segments of one channel that still merges them into one IPU
   * (docs/events.md step 1: "at most 0.50 s"). A silence of exactly this length merges (0.50 s -> one IPU);
   * one centisecond more splits (0.51 s -> two IPUs; the reference leaves 0.51 s unpinned, decided here).
   */
  maxPauseInIpu: Centiseconds;
  /**
   * Longest IPU, start to end with its pauses included, that is a backchannel `BC`
   * (docs/events.md step 2: "at most 0.80 s"). Exactly 0.80 s -> BC; 0.81 s -> TURN.
   */
  maxBackchannel: Centiseconds;
  /**
   * Overlap with the floor that a TURN on the other channel must exceed to be a `BARGE_IN`
   * (docs/events.md step 3: "more than 0.40 s"). An overlap of exactly 0.40 s is a TURN_SHIFT
   * (the reference leaves it unpinned; docs/events.md "Decided edge cases"); 0.41 s is a BARGE_IN.
   */
  bargeInOverlap: Centiseconds;
}

/** The benchmark's thresholds: 50 cs pause (step 1), 80 cs backchannel (step 2), 40 cs overlap (step 3). */
export const DEFAULT_EVENT_THRESHOLDS: Readonly<EventThresholds> = Object.freeze({
  maxPauseInIpu: 50,
  maxBackchannel: 80,
  bargeInOverlap: 40,
});

/** A `[start, end]` stretch of time in centiseconds (used for silences, which are not speech). */
export interface TimeSpan {
  start: Centiseconds;
  end: Centiseconds;
}

/** Inter-pausal unit: speech segments of one channel merged across short silences (docs/events.md step 1). */
export interface Ipu {
  /** Start of the first segment, centiseconds. */
  start: Centiseconds;
  /** End of the last segment, centiseconds. */
  end: Centiseconds;
  /** The merged speech segments, in order. */
  segments: SpeechSegment[];
  /** The silences between the segments (each becomes a SHORTPAUSE), in order. Touching segments leave none. */
  pauses: TimeSpan[];
  /** `BC` when `end - start <= maxBackchannel`, else `TURN` (docs/events.md step 2). */
  kind: 'TURN' | 'BC';
}

/** Thrown for speech segments (or event lists) that break the input contract; names channel and index. */
export class SegmentValidationError extends Error {
  override readonly name = 'SegmentValidationError';
  constructor(
    /** Channel of the offending item, when known. */
    readonly channel: Channel | undefined,
    /** 0-based index of the offending segment (or event) in its channel's list. */
    readonly index: number,
    detail: string,
    /** What `index` counts, for the message: `segment` (speech segments) or `event` (an event list). */
    item: 'segment' | 'event' = 'segment',
  ) {
    super(`${channel === undefined ? item : `channel ${channel}, ${item}`} ${index}: ${detail}`);
  }
}

/**
 * Checks one channel's speech segments: each has integer centisecond `start` ≥ 0 and `end` > `start`,
 * and each starts at or after the previous one's end (sorted, non-overlapping; touching is allowed
 * and means no silence in between).
 * @param segments one channel's segments, centiseconds.
 * @param channel used only in the error message.
 * @throws SegmentValidationError naming the channel and the segment index.
 */
export function validateSegments(segments: readonly SpeechSegment[], channel?: Channel): void {
  segments.forEach((segment, index) => {
    const fail = (detail: string): never => {
      throw new SegmentValidationError(channel, index, detail);
    };
    const { start, end } = segment;
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) {
      fail(`start and end must be integer centiseconds, got [${start}, ${end}]`);
    }
    if (start < 0) fail(`start ${start} is negative`);
    if (end <= start) fail(`end ${end} is not after start ${start}`);
    const previous = segments[index - 1];
    if (previous !== undefined && start < previous.end) {
      fail(
        `starts at ${start}, before the previous segment ends (${previous.end}); ` +
          'segments must be sorted by start and must not overlap',
      );
    }
  });
}

/** Throws a RangeError unless every threshold is a non-negative integer number of centiseconds. */
function validateThresholds(thresholds: EventThresholds): void {
  for (const key of ['maxPauseInIpu', 'maxBackchannel', 'bargeInOverlap'] as const) {
    const value = thresholds[key];
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`event threshold ${key} must be a non-negative integer (centiseconds), got ${value}`);
    }
  }
}

/**
 * Merges one channel's speech segments into IPUs (docs/events.md step 1) and labels each TURN or BC (step 2).
 * Two consecutive segments merge when the silence between them (next.start - previous.end) is
 * ≤ `thresholds.maxPauseInIpu` (50 cs); each silence > 0 inside an IPU is listed in `pauses`.
 * @param segments one channel's segments, integer centiseconds, sorted and non-overlapping.
 * @param thresholds uses `maxPauseInIpu` (step 1) and `maxBackchannel` (step 2).
 * @param channel used only in error messages.
 * @returns the IPUs in time order.
 * @throws SegmentValidationError for invalid segments; RangeError for invalid thresholds.
 */
export function buildIpus(
  segments: readonly SpeechSegment[],
  thresholds: EventThresholds = DEFAULT_EVENT_THRESHOLDS,
  channel?: Channel,
): Ipu[] {
  validateThresholds(thresholds);
  validateSegments(segments, channel);
  const ipus: Ipu[] = [];
  let current: Ipu | undefined;
  for (const { start, end } of segments) {
    if (current !== undefined && start - current.end <= thresholds.maxPauseInIpu) {
      if (start > current.end) current.pauses.push({ start: current.end, end: start });
      current.segments.push({ start, end });
      current.end = end;
    } else {
      current = { start, end, segments: [{ start, end }], pauses: [], kind: 'TURN' };
      ipus.push(current);
    }
  }
  for (const ipu of ipus) {
    ipu.kind = ipu.end - ipu.start <= thresholds.maxBackchannel ? 'BC' : 'TURN';
  }
  return ipus;
}

/** The relation events of docs/events.md step 3. */
export type TurnRelationType = 'TURN_HOLD' | 'TURN_SHIFT' | 'BARGE_IN';

/** How one TURN takes (or keeps) the floor: one relation event plus its timing, all in centiseconds. */
export interface TurnRelation {
  /** TURN_HOLD, TURN_SHIFT or BARGE_IN. */
  event: TurnRelationType;
  /** Channel of the new TURN; the event is listed on this channel (step 3). */
  channel: Channel;
  /** Index of the new TURN in its channel's IPU list (as returned by `buildIpus`). */
  ipuIndex: number;
  /** The new TURN's span. */
  turn: TimeSpan;
  /** Channel of the floor TURN it is compared with (equals `channel` for TURN_HOLD). */
  floorChannel: Channel;
  /** The floor TURN's span (the TURN with the latest end so far). */
  floor: TimeSpan;
  /**
   * Floor-transfer offset `turn.start - floor.end`: positive = gap (TURN_HOLD gap, TURN_SHIFT gap),
   * negative = overlap (a BARGE_IN's overlap is `-offset`, always > `bargeInOverlap`).
   */
  offset: Centiseconds;
  /** Event span as written: `[floor.end, turn.start]` for TURN_HOLD/TURN_SHIFT (start > end when
   * they overlap), `[turn.start, floor.end]` for BARGE_IN. */
  start: Centiseconds;
  end: Centiseconds;
}

/**
 * Sequences the TURNs of both channels and returns one relation per TURN except the dialogue's first
 * (docs/events.md step 3). TURNs are sorted by (start, end, channel): the channel tie-break (0 before 1)
 * is this module's rule for the unpinned case of TURNs with identical start and end on both channels;
 * with equal starts but different ends, the shorter TURN comes first (step 3 sorts by start, then end).
 * The floor is the TURN with the latest end so far, replaced only by a TURN ending strictly later; so
 * after a BARGE_IN that ends first the floor stays with the interrupted TURN (step 3), and BCs, which
 * are never TURNs, neither hold nor take the floor (step 3).
 * - floor on the same channel -> TURN_HOLD [floor.end, turn.start];
 * - other channel, floor.end - turn.start > `bargeInOverlap` (40 cs) -> BARGE_IN [turn.start, floor.end];
 * - other channel otherwise -> TURN_SHIFT [floor.end, turn.start].
 * @param ipus both channels' IPUs from `buildIpus`; only `kind === 'TURN'` takes part.
 * @param thresholds uses `bargeInOverlap` (step 3).
 * @returns relations in sequencing order (the order above).
 * @throws RangeError for invalid thresholds.
 */
export function turnRelations(
  ipus: Readonly<Record<Channel, readonly Ipu[]>>,
  thresholds: EventThresholds = DEFAULT_EVENT_THRESHOLDS,
): TurnRelation[] {
  validateThresholds(thresholds);
  const turns = CHANNELS.flatMap((channel) =>
    ipus[channel].flatMap((ipu, ipuIndex) => (ipu.kind === 'TURN' ? [{ channel, ipuIndex, ipu }] : [])),
  ).sort((a, b) => a.ipu.start - b.ipu.start || a.ipu.end - b.ipu.end || a.channel - b.channel);

  const relations: TurnRelation[] = [];
  let floor: (typeof turns)[number] | undefined;
  for (const current of turns) {
    if (floor !== undefined) {
      const turn = { start: current.ipu.start, end: current.ipu.end };
      const floorSpan = { start: floor.ipu.start, end: floor.ipu.end };
      const offset = turn.start - floorSpan.end;
      const common = {
        channel: current.channel,
        ipuIndex: current.ipuIndex,
        turn,
        floorChannel: floor.channel,
        floor: floorSpan,
        offset,
      };
      if (floor.channel === current.channel) {
        relations.push({ event: 'TURN_HOLD', ...common, start: floorSpan.end, end: turn.start });
      } else if (-offset > thresholds.bargeInOverlap) {
        relations.push({ event: 'BARGE_IN', ...common, start: turn.start, end: floorSpan.end });
      } else {
        relations.push({ event: 'TURN_SHIFT', ...common, start: floorSpan.end, end: turn.start });
      }
    }
    if (floor === undefined || current.ipu.end > floor.ipu.end) floor = current;
  }
  return relations;
}

/**
 * Computes the benchmark events of one dialogue from its per-channel speech segments (docs/events.md).
 * Per channel, for each IPU in time order: its unit (TURN/BC), its SHORTPAUSEs, then its relation
 * event; then the list is stable-sorted by start (step 4), so a TURN precedes its BARGE_IN on equal
 * start and a TURN_SHIFT with overlap follows its TURN.
 * @param segments per channel, integer centiseconds, sorted, `start < end`, non-overlapping.
 * @param thresholds defaults to `DEFAULT_EVENT_THRESHOLDS` (docs/events.md "The thresholds").
 * @returns events per channel, centiseconds.
 * @throws SegmentValidationError naming the channel and segment index; RangeError for invalid thresholds.
 */
export function computeEvents(
  segments: ChannelSegments,
  thresholds: EventThresholds = DEFAULT_EVENT_THRESHOLDS,
): ChannelEvents {
  const ipus: Record<Channel, Ipu[]> = {
    0: buildIpus(segments[0], thresholds, 0),
    1: buildIpus(segments[1], thresholds, 1),
  };
  const relationByIpu = new Map<string, TurnRelation>();
  for (const relation of turnRelations(ipus, thresholds)) {
    relationByIpu.set(`${relation.channel}:${relation.ipuIndex}`, relation);
  }
  const eventsOf = (channel: Channel): BenchmarkEvent[] => {
    const events: BenchmarkEvent[] = [];
    ipus[channel].forEach((ipu, ipuIndex) => {
      events.push({ event: ipu.kind, start: ipu.start, end: ipu.end });
      for (const pause of ipu.pauses) events.push({ event: 'SHORTPAUSE', start: pause.start, end: pause.end });
      const relation = relationByIpu.get(`${channel}:${ipuIndex}`);
      if (relation !== undefined) events.push({ event: relation.event, start: relation.start, end: relation.end });
    });
    return events.sort((a, b) => a.start - b.start); // Array.prototype.sort is stable (ES2019)
  };
  return { 0: eventsOf(0), 1: eventsOf(1) };
}
