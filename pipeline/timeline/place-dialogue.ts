/**
 * Places the utterances of one dialogue on a two-channel timeline: the "sample" half of the timeline
 * (style.md, lhotse meeting_simulation), drawing every floor-transfer offset from the fitted timing
 * statistics (timing-statistics.ts `fitTimingModel`, empirical-distribution.ts). All times are
 * integer centiseconds.
 *
 * ## Placement
 * - Utterance 0 starts after `leadingSilenceCs`.
 * - Each later utterance `i` starts at `floor.end + offset`, where the floor is the utterance with the
 *   latest end so far (events.md rule 4: replaced only by one ending strictly later), and the offset is
 *   drawn from the statistics:
 *   - speaker change (utterance `i − 1` is on the other channel): a floor-transfer offset (negative =
 *     overlap) from the direction's fitted distribution (pooled over both directions unless the
 *     statistics say `per-direction`). System responses and user responses are both drawn.
 *   - same speaker (utterance `i − 1` is on the same channel): a TURN_HOLD gap.
 *   Draws come from the smoothed empirical distribution (empirical-distribution.ts; `smoothing: false`
 *   draws the measured values exactly), plus an optional uniform integer jitter in
 *   `[−jitterCs, +jitterCs]` (default 0).
 * - The dialogue ends `trailingSilenceCs` after the latest utterance end.
 *
 * ## Constraints (a draw that breaks one is not clipped: it is deferred and another is drawn)
 * 1. Own channel: `start ≥ end of the speaker's previous utterance + minimumSameSpeakerGapCs`
 *    (default 60 cs). It must exceed the IPU pause threshold (events.md rule 1: silences ≤ 0.50 s merge
 *    two segments into one IPU), so two utterances of one speaker stay two units; the 0.10 s margin
 *    absorbs rounding and voice-activity edges inside the synthesized audio.
 * 2. Nothing swallowed, previous side: for a speaker change, `start ≥ previous.start + minimumLeadCs`
 *    (default 100 cs): the previous speaker has spoken at least 1 s before being overlapped.
 * 3. Nothing swallowed, new side: `end ≥ floor.end + minimumOutlastCs` (default 50 cs): the new
 *    utterance outlasts the floor, so it becomes the floor: every speaker change is a floor transfer,
 *    which is exactly what the floor-transfer offsets of the statistics measure (within-turn overlaps
 *    are measured separately and not generated). With constraints 1 and 3 every utterance ends later
 *    than all before it, so the floor is always the previous utterance, each speaker change comes out
 *    as TURN_SHIFT or (overlap > 0.40 s) BARGE_IN with exactly the drawn offset, and each same-speaker
 *    continuation as TURN_HOLD (given utterances longer than 0.80 s, which are TURNs, events.md rule 2).
 * 4. Optional: `offset ≤ maximumGapCs` (default null: no limit).
 *
 * Barge-ins therefore arise only from drawn overlaps larger than 0.40 s.
 *
 * ## Correcting the constraints' rejection bias: stratify, assign jointly, replace by the closest
 * Plain rejection sampling (redraw until a value fits) under-represents large overlaps: a 1.5 s
 * question cannot be overlapped by more than 0.5 s (constraint 2), so every larger overlap drawn for
 * it would be thrown away and the generated distribution would lose part of its overlap tail (on the
 * real TopiOCQA utterance lengths, questions of 1.2–3.2 s, plain redrawing lost a quarter of the
 * barge-ins of one direction). Instead:
 * 1. **Stratified values.** For each kind of transition (each direction of speaker change, and
 *    same-speaker gaps) the dialogue draws as many values as it has transitions of that kind, one
 *    from each of that many equal-probability strata (empirical-distribution.ts `drawStratified`,
 *    Latin hypercube sampling). Each value still follows the fitted distribution; pooled over the
 *    dialogues of a build, the values match it far more closely than independent draws (the build's
 *    barge-in fraction is a rate over about a thousand transitions, where independent draws alone
 *    vary by ±6 %).
 * 2. **Joint assignment.** Constraints 2–4 depend only on the durations, and constraint 1 (own
 *    channel), because every utterance becomes the floor, is a condition on consecutive offsets:
 *    for utterance `i` whose speaker last spoke in utterance `k`,
 *    `Σ_{j=k+1..i} o_j + Σ_{j=k+1..i−1} d_j ≥ minimumSameSpeakerGapCs` (a short question cannot be
 *    overlapped deeply at both ends). Before placing anything, all values of all kinds are taken
 *    smallest first (largest overlap first) and each goes to a transition of its kind chosen uniformly
 *    among the unassigned ones whose duration bounds it satisfies and whose own-channel conditions
 *    still hold with the values assigned so far. Only the pairing of values with transitions depends
 *    on the durations, so large overlaps land on utterances long enough to hold them, as in real talk.
 * 3. **Replacement by the closest feasible value.** A value that no remaining transition of its kind
 *    can take is replaced by a draw from the lowest stratum of the distribution above the smallest
 *    value some remaining transition can still take (`drawLowestStratumAbove`): the overlap that is
 *    impossible here becomes the largest overlap that is possible, not a fresh draw that would most
 *    likely be a gap. Each replacement counts in `resampled`, `unassignableDraws` and
 *    `unplacedDraws` (e.g. with questions ≤ 4 s an overlap of more than 3.5 s fits nowhere: that
 *    part of the target is impossible under the constraints, and the count says how much).
 * 4. **Deferral (safety net).** Placing in order, a value can still be rejected where the assignment
 *    left a transition without one (replacements ran out). A rejected value is then **deferred**,
 *    not discarded: it goes to the kind's queue, and each later transition of the kind first takes
 *    the oldest queued value that fits it (its own assigned value joins the queue), then its assigned
 *    value, then fresh draws. Values still queued at the end of the dialogue, or pushed out of a full
 *    queue (`maximumDeferredDraws`, default 32), count in `unplacedDraws`.
 * Queues and assignments are per direction even when the statistics are pooled: a shared pool would
 * move the large overlaps that short questions cannot take onto the long answers' direction.
 * Everything uses the dialogue's own random stream, so determinism and per-dialogue independence hold.
 *
 * After `maximumDraws` fresh draws (default 100) for one transition all fail, the fallback is
 * deterministic: the smallest measured value that satisfies every constraint (no jitter), or, if none
 * does, the smallest start that satisfies constraints 1–3 (even past `maximumGapCs`). Each such
 * transition counts in `fallbacks`; each value that did not fit counts in `resampled`.
 *
 * ## Backchannels (optional, `placeDialogue` input `backchannels`)
 * After the utterances are placed, listener backchannels are added inside the other speaker's
 * utterances at the measured rate and relative positions (place-backchannels.ts). They never move an
 * utterance: the offsets are the same with or without them.
 *
 * ## Randomness
 * One pure-rand xoroshiro128+ stream per dialogue (and a second, `backchannels`, for backchannels),
 * seeded from SHA-256 of (seed, dialogueId) (random.ts), so the same input always gives the same
 * timeline and different dialogues get different offset sequences.
 */
import { DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import type { Centiseconds, Channel, ChannelSegments, SpeechSegment } from '../model/types.ts';
import { drawFromDistribution, drawLowestStratumAbove, drawStratified, lowerBoundIndex, withoutSmoothing, type EmpiricalDistribution } from './empirical-distribution.ts';
import {
  placeBackchannels,
  type BackchannelPlacementReport,
  type BackchannelRequest,
  type PlacedBackchannel,
} from './place-backchannels.ts';
import { dialogueRandomStream, type RandomStream } from '../model/random.ts';
import { channelDirection, fitTimingModel, type TimingStatistics } from './timing-statistics.ts';

/** One utterance to place: its channel and the length of its speech (first to last speech sample). */
export interface UtteranceToPlace {
  channel: Channel;
  /** Speech duration in integer centiseconds, > 0 (leading and trailing silence of the audio excluded). */
  durationCs: Centiseconds;
  /**
   * Optional: the utterance's own speech segments, centiseconds relative to its first speech sample
   * (sorted, inside `[0, durationCs]`). Used only to keep backchannels inside this utterance's speech
   * (its IPUs); without it the whole `[0, durationCs]` counts as speech.
   */
  speechSegments?: readonly SpeechSegment[];
}

/** Placement options, all integer centiseconds. See the module comment for each rule. */
export interface PlaceDialogueOptions {
  /** Silence before the first utterance (default 50 = 0.5 s). */
  leadingSilenceCs: Centiseconds;
  /** Silence after the latest utterance end (default 50 = 0.5 s). */
  trailingSilenceCs: Centiseconds;
  /** Smallest silence between two units of one speaker, utterances or backchannels (default 60; must exceed the 50 cs IPU pause threshold). */
  minimumSameSpeakerGapCs: Centiseconds;
  /** For a speaker change, the previous utterance's speech before the new one may start (default 100). */
  minimumLeadCs: Centiseconds;
  /** How much later than the floor the new utterance must end (default 50; at least 1). */
  minimumOutlastCs: Centiseconds;
  /** Largest allowed offset (gap) of any transition, or null for no limit (default null). */
  maximumGapCs: Centiseconds | null;
  /** Half-width of the uniform integer jitter added to each drawn value (default 0). */
  jitterCs: Centiseconds;
  /** Fresh draws per transition (and per backchannel position) before the fallback (default 100, at least 1). */
  maximumDraws: number;
  /**
   * Smooth the measured distributions (default true: empirical-distribution.ts, kernel widths from
   * Silverman's rule capped by the data's spacing); false draws the measured values exactly.
   */
  smoothing: boolean;
  /** Deferred draws kept per queue (direction or same-speaker); the oldest is dropped (and counted unplaced) beyond it (default 32). */
  maximumDeferredDraws: number;
  /**
   * A channel whose speaker never overlaps on taking the turn (default null: none). Speaker changes
   * *to* this channel draw from the positive part of the direction's offsets (gaps ≥ 0.01 s,
   * timing-statistics.ts `speakerChangeGaps`): the benchmark profile's system, whose TURN_SHIFTs the
   * evaluation only keeps when the system is silent at the user's TURN end (closed interval, so a gap
   * of 0 is dropped too; pipeline/events/evaluable-events.ts).
   */
  gapOnlyChannel: Channel | null;
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
  smoothing: true,
  maximumDeferredDraws: 32,
  gapOnlyChannel: null,
});

/** Input of `placeDialogue`. */
export interface PlaceDialogueInput {
  dialogueId: string;
  /** Build seed; with `dialogueId` it seeds the dialogue's random streams. */
  seed: number;
  /** Utterances in speaking order. */
  utterances: readonly UtteranceToPlace[];
  statistics: TimingStatistics;
  /** Overrides of `DEFAULT_PLACE_DIALOGUE_OPTIONS`. */
  options?: Partial<PlaceDialogueOptions>;
  /** When given, listener backchannels are placed too (place-backchannels.ts). */
  backchannels?: BackchannelRequest;
  /**
   * Offsets fixed by the caller, by utterance index (≥ 1), integer centiseconds from the floor end
   * (the barge-in variant pins its barge-ins). They are not drawn, count as assigned values in the
   * own-channel windows, and must satisfy the constraints (else TimelinePlacementError).
   */
  pinnedOffsets?: ReadonlyMap<number, Centiseconds>;
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
  /** `drawn` (its assigned value or a fresh draw), `deferred` (a value that did not fit an earlier transition), `fallback`, `pinned` (given by the caller). */
  source: 'drawn' | 'deferred' | 'fallback' | 'pinned';
  /** Values (assigned or freshly drawn) that did not fit this transition and were deferred. */
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
  /**
   * Values that did not fit, over the whole dialogue: `unassignableDraws` plus every transition's
   * `rejectedDraws`.
   */
  resampled: number;
  /** Values replaced during the assignment because no transition of their kind could take them. */
  unassignableDraws: number;
  /** Transitions that used a deferred draw. */
  deferredUsed: number;
  /** Values never used: replaced during assignment, still deferred at the end, or pushed out of a full queue. */
  unplacedDraws: number;
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
  /** Listener backchannels placed (empty unless requested), sorted by start. */
  backchannels: PlacedBackchannel[];
  /** What the backchannel placement did, or null when none were requested. */
  backchannelReport: BackchannelPlacementReport | null;
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
  for (const key of [
    'leadingSilenceCs',
    'trailingSilenceCs',
    'minimumSameSpeakerGapCs',
    'minimumLeadCs',
    'minimumOutlastCs',
    'jitterCs',
    'maximumDraws',
    'maximumDeferredDraws',
  ] as const) {
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
  if (typeof options.smoothing !== 'boolean') fail(`smoothing must be true or false, got ${String(options.smoothing)}`);
  if (options.gapOnlyChannel !== null && options.gapOnlyChannel !== 0 && options.gapOnlyChannel !== 1) fail(`gapOnlyChannel must be 0, 1 or null, got ${String(options.gapOnlyChannel)}`);
  return options;
}

function validateUtterances(dialogueId: string, utterances: readonly UtteranceToPlace[]): void {
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
    utterance.speechSegments?.forEach((segment, segmentIndex) => {
      const previous = utterance.speechSegments?.[segmentIndex - 1];
      const valid =
        Number.isSafeInteger(segment.start) &&
        Number.isSafeInteger(segment.end) &&
        segment.start >= 0 &&
        segment.end > segment.start &&
        segment.end <= utterance.durationCs &&
        (previous === undefined || segment.start >= previous.end);
      if (!valid) {
        throw new TimelinePlacementError(
          dialogueId,
          `utterance ${index}: speech segment ${segmentIndex} [${segment.start}, ${segment.end}] must be integer centiseconds, ` +
            `sorted, non-overlapping, inside [0, ${utterance.durationCs}]`,
        );
      }
    });
  });
}

/** One transition to place, with the bounds that depend only on durations (constraints 2–4). */
interface TransitionPlan {
  index: number;
  kind: 'speaker-change' | 'same-speaker';
  /** Queue and assignment key: the direction of a speaker change, or `same-speaker`. */
  key: string;
  distribution: EmpiricalDistribution;
  /** Smallest offset allowed by constraints 2 and 3 (speaker change) or 1 and 3 (same speaker). */
  lowestOffset: number;
  /** Largest offset allowed (constraint 4), or +∞. */
  highestOffset: number;
  /** The caller's fixed offset, or null. */
  pinned: number | null;
}

function drawWithJitter(distribution: EmpiricalDistribution, random: RandomStream, jitterCs: number): number {
  const value = drawFromDistribution(distribution, random);
  return jitterCs > 0 ? value + random.integer(-jitterCs, jitterCs) : value;
}

/**
 * Constraint 1 (own channel) as a condition on consecutive offsets. With every utterance becoming the
 * floor (constraint 3), utterance `i` starts at `end(i − 1) + o_i`, so for `k`, the speaker's previous
 * utterance, `start_i ≥ end_k + gap` reads `Σ_{j=k+1..i} o_j + Σ_{j=k+1..i−1} d_j ≥ gap`. Windows with
 * `k = i − 1` (same speaker) are the static bound `o_i ≥ gap`, already in `lowestOffset`.
 */
interface OwnChannelWindow {
  /** Plan indices of the offsets summed (utterances `k + 1 … i` are plans `k … i − 1`). */
  plans: number[];
  /** `gap − Σ d_j` over the utterances between: the sum of the offsets must reach it. */
  required: number;
}

function ownChannelWindows(utterances: readonly UtteranceToPlace[], gapCs: number): OwnChannelWindow[] {
  const windows: OwnChannelWindow[] = [];
  const lastOnChannel: Record<Channel, number | null> = { 0: null, 1: null };
  utterances.forEach((utterance, index) => {
    const previousOwn = lastOnChannel[utterance.channel];
    if (previousOwn !== null && previousOwn < index - 1) {
      const plans: number[] = [];
      let required = gapCs;
      for (let between = previousOwn + 1; between <= index; between += 1) {
        plans.push(between - 1);
        if (between < index) required -= (utterances[between] as UtteranceToPlace).durationCs;
      }
      windows.push({ plans, required });
    }
    lastOnChannel[utterance.channel] = index;
  });
  return windows;
}

/**
 * Draws one value per transition (per key: direction or same-speaker) and assigns the values to
 * transitions that can take them, all keys together: values are taken smallest first (largest
 * overlap first), and each goes to a transition of its key chosen uniformly among the unassigned ones
 * whose duration bounds it satisfies and whose own-channel windows (constraint 1, `ownChannelWindows`)
 * still hold with the values assigned so far. A value no unassigned transition can take is replaced by
 * a fresh draw of its key (counted in `unassignable`); after `maximumDraws` such replacements per
 * transition of a key, its remaining transitions get no value (null: phase 3 draws for them).
 * @returns one value or null per plan, in plan order, and the count of values replaced
 */
function assignDraws(
  plans: readonly TransitionPlan[],
  windows: readonly OwnChannelWindow[],
  random: RandomStream,
  options: PlaceDialogueOptions,
): { values: (number | null)[]; unassignable: number } {
  const values: (number | null)[] = plans.map((plan) => plan.pinned);
  const windowsOfPlan = plans.map(() => [] as OwnChannelWindow[]);
  for (const window of windows) for (const planIndex of window.plans) windowsOfPlan[planIndex]?.push(window);
  const drawnPlans = plans.filter((plan) => plan.pinned === null);
  const keys = [...new Set(drawnPlans.map((plan) => plan.key))];
  const distributionOf = new Map(drawnPlans.map((plan) => [plan.key, plan.distribution]));
  const open = new Map(keys.map((key) => [key, new Set(plans.flatMap((plan, planIndex) => (plan.key === key && plan.pinned === null ? [planIndex] : [])))]));
  const replacementsLeft = new Map(keys.map((key) => [key, options.maximumDraws * (open.get(key) as Set<number>).size]));
  // The pool of drawn values, each with its key; drawn per key in key order (one stream, deterministic).
  const pool: { value: number; key: string }[] = [];
  for (const key of keys) {
    const distribution = distributionOf.get(key) as EmpiricalDistribution;
    for (const drawn of drawStratified(distribution, random, (open.get(key) as Set<number>).size)) {
      pool.push({ value: options.jitterCs > 0 ? drawn + random.integer(-options.jitterCs, options.jitterCs) : drawn, key });
    }
  }
  /** The smallest value plan `planIndex` can take now: its duration bound, and each window whose other values are all assigned. */
  const lowestNow = (planIndex: number): number => {
    let lowest = (plans[planIndex] as TransitionPlan).lowestOffset;
    for (const window of windowsOfPlan[planIndex] as OwnChannelWindow[]) {
      let others = 0;
      let complete = true;
      for (const member of window.plans) {
        if (member === planIndex) continue;
        const assigned = values[member];
        if (assigned === null || assigned === undefined) complete = false;
        else others += assigned;
      }
      if (complete) lowest = Math.max(lowest, window.required - others);
    }
    return lowest;
  };
  let unassignable = 0;
  while (pool.length > 0) {
    let smallestAt = 0;
    pool.forEach((entry, at) => {
      if (entry.value < (pool[smallestAt] as { value: number }).value) smallestAt = at;
    });
    const { value, key } = pool.splice(smallestAt, 1)[0] as { value: number; key: string };
    const candidates = open.get(key) as Set<number>;
    const eligible = [...candidates].filter((planIndex) => value >= lowestNow(planIndex) && value <= (plans[planIndex] as TransitionPlan).highestOffset);
    if (eligible.length === 0) {
      unassignable += 1;
      const left = replacementsLeft.get(key) as number;
      if (left > 0) {
        replacementsLeft.set(key, left - 1);
        // The closest value above the bound some open transition can take (drawLowestStratumAbove),
        // so the replaced overlap stays an overlap as far as the durations allow.
        const bound = Math.min(...[...candidates].map(lowestNow));
        const distribution = distributionOf.get(key) as EmpiricalDistribution;
        const replacement = drawLowestStratumAbove(distribution, random, bound, Math.max(1, candidates.size));
        pool.push({ value: replacement ?? drawWithJitter(distribution, random, options.jitterCs), key });
      }
      continue;
    }
    const chosen = eligible[random.integer(0, eligible.length - 1)] as number;
    values[chosen] = value;
    candidates.delete(chosen);
  }
  return { values, unassignable };
}

/**
 * Places one dialogue's utterances (and, when requested, listener backchannels) on the timeline
 * (rules, constraints, deferred draws and fallback in the module comment).
 *
 * @param input `utterances` in speaking order with integer centisecond durations; `statistics` a
 *   validated timing-statistics file (seconds; converted to centiseconds here); `options` overrides in
 *   centiseconds; `backchannels` optional (place-backchannels.ts `BackchannelRequest`)
 * @returns starts, ends, offsets (centiseconds), per-transition details, counts (`resampled`,
 *   `deferredUsed`, `unplacedDraws`, `fallbacks`), leading silence, total duration, the utterances
 *   short enough to become BCs, and the placed backchannels with their report
 * @throws TimelinePlacementError when there are no utterances, a duration or speech segment is
 *   invalid, a channel is not 0 or 1, an option or the backchannel request is invalid, or the
 *   statistics lack values for a needed transition kind; RangeError when `seed` is not a safe integer
 *   or `dialogueId` is empty
 */
export function placeDialogue(input: PlaceDialogueInput): PlacedDialogue {
  const { dialogueId, utterances } = input;
  const options = resolveOptions(dialogueId, input.options);
  validateUtterances(dialogueId, utterances);
  const model = fitTimingModel(input.statistics);
  const random = dialogueRandomStream(input.seed, dialogueId);

  // Phase 1: the transitions, their distribution and their bounds from constraints 2–4, which depend
  // only on durations (the floor is always the previous utterance, see constraint 3).
  const plans: TransitionPlan[] = [];
  for (let index = 1; index < utterances.length; index += 1) {
    const utterance = utterances[index] as UtteranceToPlace;
    const previous = utterances[index - 1] as UtteranceToPlace;
    const kind = previous.channel === utterance.channel ? 'same-speaker' : 'speaker-change';
    const direction = kind === 'same-speaker' ? null : channelDirection(previous.channel, utterance.channel);
    const gapsOnly = direction !== null && utterance.channel === options.gapOnlyChannel;
    const fitted = direction === null ? model.sameSpeaker : gapsOnly ? model.speakerChangeGaps[direction] : model.speakerChange[direction];
    if (fitted === null || fitted.values.length === 0) {
      throw new TimelinePlacementError(dialogueId, `the timing statistics have no ${gapsOnly ? 'positive ' : ''}${kind} values (utterance ${index})`);
    }
    const distribution = options.smoothing ? fitted : withoutSmoothing(fitted);
    const pinned = input.pinnedOffsets?.get(index) ?? null;
    if (pinned !== null && !Number.isSafeInteger(pinned)) throw new TimelinePlacementError(dialogueId, `pinned offset of utterance ${index} must be integer centiseconds, got ${pinned}`);
    let lowestOffset = options.minimumOutlastCs - utterance.durationCs;
    if (kind === 'same-speaker') lowestOffset = Math.max(lowestOffset, options.minimumSameSpeakerGapCs);
    else lowestOffset = Math.max(lowestOffset, options.minimumLeadCs - previous.durationCs);
    const key = direction === null ? 'same-speaker' : gapsOnly ? `${direction} gaps` : direction;
    plans.push({ index, kind, key, distribution, lowestOffset, highestOffset: options.maximumGapCs ?? Number.POSITIVE_INFINITY, pinned });
  }

  // Phase 2: draw one value per transition and assign the values to transitions that can take them.
  const assignment = assignDraws(plans, ownChannelWindows(utterances, options.minimumSameSpeakerGapCs), random, options);
  let resampled = assignment.unassignable;
  let evicted = assignment.unassignable;

  // Phase 3: place in order; constraint 1 (own channel) depends on the placement so far.
  const first = utterances[0] as UtteranceToPlace;
  const starts: Centiseconds[] = [options.leadingSilenceCs];
  const ends: Centiseconds[] = [options.leadingSilenceCs + first.durationCs];
  const lastEndOnChannel: Record<Channel, Centiseconds | null> = { 0: null, 1: null };
  lastEndOnChannel[first.channel] = ends[0] as number;
  let floorIndex = 0;
  const offsets: Centiseconds[] = [];
  const transitions: PlacedTransition[] = [];
  const deferred = new Map<string, number[]>();
  let deferredUsed = 0;
  let fallbacks = 0;

  plans.forEach((plan, planIndex) => {
    const { index, kind, distribution } = plan;
    const utterance = utterances[index] as UtteranceToPlace;
    const floorEnd = ends[floorIndex] as number;

    // Every constraint is a lower bound on the start, except the optional largest gap.
    const ownLastEnd = lastEndOnChannel[utterance.channel];
    let lowestStart = floorEnd + options.minimumOutlastCs - utterance.durationCs;
    if (ownLastEnd !== null) lowestStart = Math.max(lowestStart, ownLastEnd + options.minimumSameSpeakerGapCs);
    if (kind === 'speaker-change') {
      lowestStart = Math.max(lowestStart, (starts[index - 1] as number) + options.minimumLeadCs);
    }
    lowestStart = Math.max(lowestStart, 0);
    const highestStart = options.maximumGapCs === null ? Number.POSITIVE_INFINITY : floorEnd + options.maximumGapCs;
    const fits = (offset: number) => floorEnd + offset >= lowestStart && floorEnd + offset <= highestStart;

    let queue = deferred.get(plan.key);
    if (queue === undefined) {
      queue = [];
      deferred.set(plan.key, queue);
    }
    const defer = (value: number) => {
      queue.push(value);
      if (queue.length > options.maximumDeferredDraws) {
        queue.shift();
        evicted += 1;
      }
    };
    const assigned = assignment.values[planIndex] ?? null;
    let offset: number | null = null;
    let source: PlacedTransition['source'] = 'drawn';
    let rejectedDraws = 0;
    const queuedIndex = plan.pinned === null ? queue.findIndex(fits) : -1;
    if (plan.pinned !== null) {
      if (!fits(plan.pinned)) {
        throw new TimelinePlacementError(
          dialogueId,
          `pinned offset ${plan.pinned} cs of utterance ${index} breaks a constraint (start must lie in [${lowestStart}, ${highestStart}] cs)`,
        );
      }
      offset = plan.pinned;
      source = 'pinned';
    } else if (queuedIndex >= 0) {
      offset = queue.splice(queuedIndex, 1)[0] as number;
      source = 'deferred';
      deferredUsed += 1;
      if (assigned !== null) defer(assigned);
    } else if (assigned !== null && fits(assigned)) {
      offset = assigned;
    } else {
      if (assigned !== null) {
        rejectedDraws += 1;
        defer(assigned);
      }
      for (let draw = 0; draw < options.maximumDraws; draw += 1) {
        const candidate = drawWithJitter(distribution, random, options.jitterCs);
        if (fits(candidate)) {
          offset = candidate;
          break;
        }
        rejectedDraws += 1;
        defer(candidate);
      }
    }
    if (offset === null) {
      source = 'fallback';
      const smallest = distribution.values[lowerBoundIndex(distribution.values, lowestStart - floorEnd)];
      offset = smallest !== undefined && fits(smallest) ? smallest : lowestStart - floorEnd;
      fallbacks += 1;
    }
    resampled += rejectedDraws;

    const start = floorEnd + offset;
    const end = start + utterance.durationCs;
    starts.push(start);
    ends.push(end);
    offsets.push(offset);
    transitions.push({ index, kind, floorIndex, offset, source, rejectedDraws, fallback: source === 'fallback' });
    lastEndOnChannel[utterance.channel] = end;
    if (end > floorEnd) floorIndex = index;
  });

  const unplacedDraws = evicted + [...deferred.values()].reduce((sum, queue) => sum + queue.length, 0);
  const backchannelResult =
    input.backchannels === undefined
      ? null
      : placeBackchannels({
          dialogueId,
          seed: input.seed,
          utterances,
          starts,
          ends,
          model,
          request: input.backchannels,
          minimumSameSpeakerGapCs: options.minimumSameSpeakerGapCs,
          maximumDraws: options.maximumDraws,
        });

  return {
    starts,
    ends,
    offsets,
    transitions,
    resampled,
    unassignableDraws: assignment.unassignable,
    deferredUsed,
    unplacedDraws,
    fallbacks,
    leadingSilenceCs: options.leadingSilenceCs,
    totalDurationCs: Math.max(...ends) + options.trailingSilenceCs,
    backchannelLengthIndices: utterances.flatMap((utterance, index) =>
      utterance.durationCs <= DEFAULT_EVENT_THRESHOLDS.maxBackchannel ? [index] : [],
    ),
    backchannels: backchannelResult?.backchannels ?? [],
    backchannelReport: backchannelResult?.report ?? null,
  };
}

/**
 * The speech segments of a placed dialogue when each utterance is one continuous stretch of speech:
 * `[start, end]` per utterance on its channel, sorted. (Synthesized audio may hold pauses inside an
 * utterance; then the audio stage shifts the utterance's own speech regions by its start instead.)
 * @param placed starts and ends (centiseconds); when it has `backchannels`, they are included as
 *   continuous speech `[start, end]` on their channel
 * @returns per-channel segments in integer centiseconds, the input of `computeEvents` (pipeline/events)
 */
export function placedUtteranceSegments(
  utterances: readonly UtteranceToPlace[],
  placed: Pick<PlacedDialogue, 'starts' | 'ends'> & Partial<Pick<PlacedDialogue, 'backchannels'>>,
): ChannelSegments {
  const segments: ChannelSegments = { 0: [], 1: [] };
  utterances.forEach((utterance, index) => {
    segments[utterance.channel].push({ start: placed.starts[index] as number, end: placed.ends[index] as number });
  });
  for (const backchannel of placed.backchannels ?? []) {
    segments[backchannel.channel].push({ start: backchannel.start, end: backchannel.end });
  }
  segments[0].sort((a, b) => a.start - b.start);
  segments[1].sort((a, b) => a.start - b.start);
  return segments;
}
