/**
 * Places the utterances of one dialogue on a two-channel timeline: the "sample" half of the timeline
 * (style.md, lhotse meeting_simulation), drawing every floor-transfer offset from measured timing
 * statistics (timing-statistics.ts). All times are integer centiseconds.
 *
 * ## Placement
 * - Utterance 0 starts after `leadingSilenceCs`.
 * - Each later utterance `i` starts at `floor.end + offset`, where the floor is the utterance with the
 *   latest end so far (events.md rule 4: replaced only by one ending strictly later), and the offset is
 *   drawn from the statistics:
 *   - speaker change (utterance `i − 1` is on the other channel): a floor-transfer offset of a real
 *     TURN_SHIFT or BARGE_IN (negative = overlap), from the direction's distribution (pooled over both
 *     directions unless the statistics say `per-direction`). System responses and user responses are
 *     both drawn; nothing is constant.
 *   - same speaker (utterance `i − 1` is on the same channel): a real TURN_HOLD gap.
 *   Draws are uniform over the measured values (the empirical distribution), plus an optional uniform
 *   integer jitter in `[−jitterCs, +jitterCs]` (default 0: measured values exactly).
 * - The dialogue ends `trailingSilenceCs` after the latest utterance end.
 *
 * ## Constraints (a draw that breaks one is rejected and redrawn, never clipped)
 * 1. Own channel: `start ≥ end of the speaker's previous utterance + minimumSameSpeakerGapCs`
 *    (default 60 cs). It must exceed the IPU pause threshold (events.md rule 1: silences ≤ 0.50 s merge
 *    two segments into one IPU), so two utterances of one speaker stay two units; the 0.10 s margin
 *    absorbs rounding and voice-activity edges inside the synthesized audio.
 * 2. Nothing swallowed, previous side: for a speaker change, `start ≥ previous.start + minimumLeadCs`
 *    (default 100 cs): the previous speaker has spoken at least 1 s before being overlapped, i.e. the
 *    overlap is at most the previous utterance's duration minus 1 s.
 * 3. Nothing swallowed, new side: `end ≥ floor.end + minimumOutlastCs` (default 50 cs): the new
 *    utterance outlasts the floor, so it becomes the floor. Without this, an overlapping utterance
 *    nested inside the floor would leave the floor with the other speaker (events.md rule 5), and in
 *    question/answer order the next utterance is by that other speaker, so the intended response would
 *    be labelled TURN_HOLD instead of TURN_SHIFT. With constraints 1 and 3 every utterance ends later than
 *    all before it, so the floor is always the previous utterance, each speaker change comes out as
 *    TURN_SHIFT or (overlap > 0.40 s) BARGE_IN with exactly the drawn offset, and each same-speaker
 *    continuation as TURN_HOLD (given utterances longer than 0.80 s, which are TURNs, events.md rule 2).
 * 4. Optional: `offset ≤ maximumGapCs` (default null: no limit; the data has rare gaps over 10 s).
 *
 * Barge-ins therefore arise only from drawn overlaps larger than 0.40 s, at the rate the statistics
 * and constraints 2–3 give, in both directions.
 *
 * After `maximumDraws` rejected draws (default 100) for one transition, the fallback is deterministic:
 * the smallest measured value that satisfies every constraint (no jitter), or, if none does, the
 * smallest start that satisfies constraints 1–3 (the lower bound, even past `maximumGapCs`). Each
 * such transition counts in `fallbacks`; each rejected draw counts in `resampled`.
 *
 * ## Randomness
 * One pure-rand xoroshiro128+ stream per dialogue, seeded from SHA-256 of (seed, dialogueId)
 * (random.ts), so the same input always gives the same timeline and different dialogues get
 * different offset sequences.
 */
import { DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import type { Centiseconds, Channel, ChannelSegments } from '../model/types.ts';
import { dialogueRandomStream } from './random.ts';
import { channelDirection, samplingDistributions, type TimingStatistics } from './timing-statistics.ts';

/** One utterance to place: its channel and the length of its speech (first to last speech sample). */
export interface UtteranceToPlace {
  channel: Channel;
  /** Speech duration in integer centiseconds, > 0 (leading and trailing silence of the audio excluded). */
  durationCs: Centiseconds;
}

/** Placement options, all integer centiseconds. See the module comment for each rule. */
export interface PlaceDialogueOptions {
  /** Silence before the first utterance (default 50 = 0.5 s). */
  leadingSilenceCs: Centiseconds;
  /** Silence after the latest utterance end (default 50 = 0.5 s). */
  trailingSilenceCs: Centiseconds;
  /** Smallest silence between two utterances of one speaker (default 60; must exceed the 50 cs IPU pause threshold). */
  minimumSameSpeakerGapCs: Centiseconds;
  /** For a speaker change, the previous utterance's speech before the new one may start (default 100). */
  minimumLeadCs: Centiseconds;
  /** How much later than the floor the new utterance must end (default 50; at least 1). */
  minimumOutlastCs: Centiseconds;
  /** Largest allowed offset (gap) of any transition, or null for no limit (default null). */
  maximumGapCs: Centiseconds | null;
  /** Half-width of the uniform integer jitter added to each drawn value (default 0). */
  jitterCs: Centiseconds;
  /** Draws per transition before the deterministic fallback (default 100, at least 1). */
  maximumDraws: number;
}

/** The defaults of `PlaceDialogueOptions`. */
export const DEFAULT_PLACE_DIALOGUE_OPTIONS: Readonly<PlaceDialogueOptions> = Object.freeze({
  leadingSilenceCs: 50,
  trailingSilenceCs: 50,
  minimumSameSpeakerGapCs: 60,
  minimumLeadCs: 100,
  minimumOutlastCs: 50,
  maximumGapCs: null,
  jitterCs: 0,
  maximumDraws: 100,
});

/** Input of `placeDialogue`. */
export interface PlaceDialogueInput {
  dialogueId: string;
  /** Build seed; with `dialogueId` it seeds the dialogue's random stream. */
  seed: number;
  /** Utterances in speaking order. */
  utterances: readonly UtteranceToPlace[];
  statistics: TimingStatistics;
  /** Overrides of `DEFAULT_PLACE_DIALOGUE_OPTIONS`. */
  options?: Partial<PlaceDialogueOptions>;
}

/** How one utterance (index ≥ 1) was placed. */
export interface PlacedTransition {
  /** Index of the utterance placed. */
  index: number;
  /** `speaker-change` when utterance `index − 1` is on the other channel, else `same-speaker`. */
  kind: 'speaker-change' | 'same-speaker';
  /** Index of the floor utterance the offset is measured from (always `index − 1` under the constraints). */
  floorIndex: number;
  /** `start − floor end`, centiseconds (negative = overlap). */
  offset: Centiseconds;
  /** Draws rejected for this transition. */
  rejectedDraws: number;
  /** True when the deterministic fallback was used. */
  fallback: boolean;
}

/** A placed dialogue. All times integer centiseconds on the dialogue timeline (0 = start of audio). */
export interface PlacedDialogue {
  /** Speech start of each utterance, in input order. */
  starts: Centiseconds[];
  /** Speech end of each utterance (`start + durationCs`). */
  ends: Centiseconds[];
  /** Floor-transfer offset of each transition: `offsets[i − 1]` belongs to utterance `i`. */
  offsets: Centiseconds[];
  /** Details per transition, same order as `offsets`. */
  transitions: PlacedTransition[];
  /** Draws rejected (and redrawn) over the whole dialogue. */
  resampled: number;
  /** Transitions placed by the deterministic fallback. */
  fallbacks: number;
  leadingSilenceCs: Centiseconds;
  /** Latest utterance end plus the trailing silence. */
  totalDurationCs: Centiseconds;
  /**
   * Indices of utterances of at most 0.80 s (80 cs): as one IPU they become `BC`, not `TURN`
   * (events.md rule 2), and take no part in turn-taking, so the transitions around them will not be
   * labelled as placed. Upstream should lengthen them (m3-format.md, known defects); listed for the
   * quality report.
   */
  backchannelLengthIndices: number[];
}

/** Invalid input to `placeDialogue`; the message names the dialogue. */
export class TimelinePlacementError extends Error {
  override readonly name = 'TimelinePlacementError';
  constructor(
    readonly dialogueId: string,
    detail: string,
  ) {
    super(`dialogue ${dialogueId}: ${detail}`);
  }
}

function resolveOptions(dialogueId: string, overrides: Partial<PlaceDialogueOptions> | undefined): PlaceDialogueOptions {
  const options: PlaceDialogueOptions = { ...DEFAULT_PLACE_DIALOGUE_OPTIONS, ...overrides };
  const fail = (detail: string): never => {
    throw new TimelinePlacementError(dialogueId, `option ${detail}`);
  };
  for (const key of ['leadingSilenceCs', 'trailingSilenceCs', 'minimumSameSpeakerGapCs', 'minimumLeadCs', 'minimumOutlastCs', 'jitterCs', 'maximumDraws'] as const) {
    const value = options[key];
    if (!Number.isSafeInteger(value) || value < 0) fail(`${key} must be a non-negative integer, got ${value}`);
  }
  if (options.maximumGapCs !== null && (!Number.isSafeInteger(options.maximumGapCs) || options.maximumGapCs < 0)) {
    fail(`maximumGapCs must be null or a non-negative integer, got ${options.maximumGapCs}`);
  }
  if (options.minimumSameSpeakerGapCs <= DEFAULT_EVENT_THRESHOLDS.maxPauseInIpu) {
    fail(
      `minimumSameSpeakerGapCs must exceed the IPU pause threshold of ${DEFAULT_EVENT_THRESHOLDS.maxPauseInIpu} cs ` +
        `(events.md rule 1), got ${options.minimumSameSpeakerGapCs}`,
    );
  }
  if (options.minimumOutlastCs < 1) fail('minimumOutlastCs must be at least 1 (the new utterance must end after the floor)');
  if (options.maximumDraws < 1) fail('maximumDraws must be at least 1');
  return options;
}

/** Index of the first element of ascending `values` that is ≥ `target` (values.length if none). */
function lowerBoundIndex(values: readonly number[], target: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((values[middle] as number) < target) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Places one dialogue's utterances on the timeline (rules, constraints and fallback in the module comment).
 *
 * @param input `utterances` in speaking order with integer centisecond durations; `statistics` a
 *   validated timing-statistics file (seconds; converted to centiseconds here); `options` overrides in
 *   centiseconds
 * @returns starts, ends, offsets (centiseconds), per-transition details, `resampled` (rejected draws),
 *   `fallbacks`, leading silence, total duration, and the utterances short enough to become BCs
 * @throws TimelinePlacementError when there are no utterances, a duration is not a positive integer, a
 *   channel is not 0 or 1, an option is invalid, or the statistics lack values for a needed transition
 *   kind; RangeError when `seed` is not a safe integer or `dialogueId` is empty
 */
export function placeDialogue(input: PlaceDialogueInput): PlacedDialogue {
  const { dialogueId, utterances } = input;
  const options = resolveOptions(dialogueId, input.options);
  if (utterances.length === 0) throw new TimelinePlacementError(dialogueId, 'no utterances to place');
  utterances.forEach((utterance, index) => {
    if (utterance.channel !== 0 && utterance.channel !== 1) {
      throw new TimelinePlacementError(dialogueId, `utterance ${index}: channel must be 0 or 1, got ${String(utterance.channel)}`);
    }
    if (!Number.isSafeInteger(utterance.durationCs) || utterance.durationCs <= 0) {
      throw new TimelinePlacementError(
        dialogueId,
        `utterance ${index}: durationCs must be a positive integer (centiseconds), got ${utterance.durationCs}`,
      );
    }
  });
  const distributions = samplingDistributions(input.statistics);
  const random = dialogueRandomStream(input.seed, dialogueId);

  const first = utterances[0] as UtteranceToPlace;
  const starts: Centiseconds[] = [options.leadingSilenceCs];
  const ends: Centiseconds[] = [options.leadingSilenceCs + first.durationCs];
  const lastEndOnChannel: Record<Channel, Centiseconds | null> = { 0: null, 1: null };
  lastEndOnChannel[first.channel] = ends[0] as number;
  let floorIndex = 0;
  const offsets: Centiseconds[] = [];
  const transitions: PlacedTransition[] = [];
  let resampled = 0;
  let fallbacks = 0;

  for (let index = 1; index < utterances.length; index += 1) {
    const utterance = utterances[index] as UtteranceToPlace;
    const previousIndex = index - 1;
    const previousChannel = (utterances[previousIndex] as UtteranceToPlace).channel;
    const kind = previousChannel === utterance.channel ? 'same-speaker' : 'speaker-change';
    const values =
      kind === 'same-speaker'
        ? distributions.sameSpeaker
        : distributions.speakerChange[channelDirection(previousChannel, utterance.channel)];
    if (values.length === 0) {
      throw new TimelinePlacementError(dialogueId, `the timing statistics have no ${kind} values (utterance ${index})`);
    }
    const floorEnd = ends[floorIndex] as number;

    // Every constraint is a lower bound on the start, except the optional largest gap.
    const ownLastEnd = lastEndOnChannel[utterance.channel];
    let lowestStart = floorEnd + options.minimumOutlastCs - utterance.durationCs;
    if (ownLastEnd !== null) lowestStart = Math.max(lowestStart, ownLastEnd + options.minimumSameSpeakerGapCs);
    if (kind === 'speaker-change') {
      lowestStart = Math.max(lowestStart, (starts[previousIndex] as number) + options.minimumLeadCs);
    }
    lowestStart = Math.max(lowestStart, 0);
    const highestStart = options.maximumGapCs === null ? Number.POSITIVE_INFINITY : floorEnd + options.maximumGapCs;
    const acceptable = (start: number) => start >= lowestStart && start <= highestStart;

    let start: number | null = null;
    let rejectedDraws = 0;
    for (let draw = 0; draw < options.maximumDraws; draw += 1) {
      let offset = values[random.integer(0, values.length - 1)] as number;
      if (options.jitterCs > 0) offset += random.integer(-options.jitterCs, options.jitterCs);
      if (acceptable(floorEnd + offset)) {
        start = floorEnd + offset;
        break;
      }
      rejectedDraws += 1;
    }
    let fallback = false;
    if (start === null) {
      fallback = true;
      const smallest = values[lowerBoundIndex(values, lowestStart - floorEnd)];
      start = smallest !== undefined && acceptable(floorEnd + smallest) ? floorEnd + smallest : lowestStart;
    }
    resampled += rejectedDraws;
    if (fallback) fallbacks += 1;

    const end = start + utterance.durationCs;
    starts.push(start);
    ends.push(end);
    offsets.push(start - floorEnd);
    transitions.push({ index, kind, floorIndex, offset: start - floorEnd, rejectedDraws, fallback });
    lastEndOnChannel[utterance.channel] = end;
    if (end > floorEnd) floorIndex = index;
  }

  return {
    starts,
    ends,
    offsets,
    transitions,
    resampled,
    fallbacks,
    leadingSilenceCs: options.leadingSilenceCs,
    totalDurationCs: Math.max(...ends) + options.trailingSilenceCs,
    backchannelLengthIndices: utterances.flatMap((utterance, index) =>
      utterance.durationCs <= DEFAULT_EVENT_THRESHOLDS.maxBackchannel ? [index] : [],
    ),
  };
}

/**
 * The speech segments of a placed dialogue when each utterance is one continuous stretch of speech:
 * `[start, end]` per utterance on its channel, sorted. (Synthesized audio may hold pauses inside an
 * utterance; then the audio stage shifts the utterance's own speech regions by its start instead.)
 * @returns per-channel segments in integer centiseconds, the input of `computeEvents` (pipeline/events)
 */
export function placedUtteranceSegments(
  utterances: readonly UtteranceToPlace[],
  placed: Pick<PlacedDialogue, 'starts' | 'ends'>,
): ChannelSegments {
  const segments: ChannelSegments = { 0: [], 1: [] };
  utterances.forEach((utterance, index) => {
    segments[utterance.channel].push({ start: placed.starts[index] as number, end: placed.ends[index] as number });
  });
  segments[0].sort((a, b) => a.start - b.start);
  segments[1].sort((a, b) => a.start - b.start);
  return segments;
}
