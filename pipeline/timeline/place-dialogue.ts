/**
 * Places the utterances of one dialogue on a two-channel timeline: the "sample" half of the timeline
 * (as in lhotse's meeting_simulation), drawing every floor-transfer offset from the fitted timing
 * statistics (timing-statistics.ts `fitTimingModel`, empirical-distribution.ts). All times are
 * integer centiseconds.
 *
 * ## Placement
 * - Utterance 0 starts after `leadingSilenceCs`.
 * - Each later utterance `i` starts at `floor.end + offset`, where the floor is the utterance with the
 *   latest end so far (docs/events.md "Step 3: relations between turns": replaced only by one ending strictly
 *   later), and the offset is
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
 *    (default 60 cs). It must exceed the IPU pause threshold (docs/events.md "Step 1: inter-pausal units and SHORTPAUSE": silences ≤ 0.50 s merge
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
 *    continuation as TURN_HOLD (given utterances longer than 0.80 s, which are TURNs, docs/events.md "Step 2: TURN or BC").
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
 *
 * ## Files
 * The input, options, output and their checks: place-dialogue-input.ts (re-exported here); the draws
 * and their assignment to transitions: place-dialogue-draws.ts; placing in order with deferral and
 * fallback: place-in-order.ts.
 */
import { DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import type { ChannelSegments } from '../model/types.ts';
import { withoutSmoothing } from './empirical-distribution.ts';
import { placeBackchannels } from './place-backchannels.ts';
import { assignDraws, ownChannelWindows, type TransitionPlan } from './place-dialogue-draws.ts';
import { placeInOrder } from './place-in-order.ts';
import {
  resolveOptions,
  TimelinePlacementError,
  validateUtterances,
  type PlaceDialogueInput,
  type PlaceDialogueOptions,
  type PlacedDialogue,
  type UtteranceToPlace,
} from './place-dialogue-input.ts';
import { dialogueRandomStream } from '../model/random.ts';
import { channelDirection, fitTimingModel } from './timing-statistics.ts';

export {
  DEFAULT_PLACE_DIALOGUE_OPTIONS,
  TimelinePlacementError,
  type PlaceDialogueInput,
  type PlaceDialogueOptions,
  type PlacedDialogue,
  type PlacedTransition,
  type UtteranceToPlace,
} from './place-dialogue-input.ts';

/**
 * Places one dialogue's utterances (and, when requested, listener backchannels) on the timeline
 * (rules, constraints, deferred draws and fallback in the module comment). The steps: plan the
 * transitions (`planTransitions`), assign stratified draws to them (place-dialogue-draws.ts
 * `assignDraws`), place in order (place-in-order.ts `placeInOrder`), then add backchannels.
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

  // Phase 1: the transitions, their distribution and their bounds from constraints 2–4.
  const plans = planTransitions(input, model, options);
  // Phase 2: draw one value per transition and assign the values to transitions that can take them.
  const assignment = assignDraws(
    plans,
    ownChannelWindows(utterances, options.minimumSameSpeakerGapCs),
    random,
    options,
  );
  // Phase 3: place in order; constraint 1 (own channel) depends on the placement so far.
  const placed = placeInOrder(dialogueId, utterances, plans, assignment.values, random, options);

  const backchannelResult =
    input.backchannels === undefined
      ? null
      : placeBackchannels({
          dialogueId,
          seed: input.seed,
          utterances,
          starts: placed.starts,
          ends: placed.ends,
          model,
          request: input.backchannels,
          minimumSameSpeakerGapCs: options.minimumSameSpeakerGapCs,
          maximumDraws: options.maximumDraws,
        });

  return {
    starts: placed.starts,
    ends: placed.ends,
    offsets: placed.offsets,
    transitions: placed.transitions,
    resampled: assignment.unassignable + placed.rejectedDraws,
    unassignableDraws: assignment.unassignable,
    deferredUsed: placed.deferredUsed,
    unplacedDraws: assignment.unassignable + placed.deferred.unplaced(),
    fallbacks: placed.fallbacks,
    leadingSilenceCs: options.leadingSilenceCs,
    totalDurationCs: Math.max(...placed.ends) + options.trailingSilenceCs,
    backchannelLengthIndices: utterances.flatMap((utterance, index) =>
      utterance.durationCs <= DEFAULT_EVENT_THRESHOLDS.maxBackchannel ? [index] : [],
    ),
    backchannels: backchannelResult?.backchannels ?? [],
    backchannelReport: backchannelResult?.report ?? null,
  };
}

/**
 * Phase 1: one plan per transition (utterance `index ≥ 1`): its kind, queue key, distribution and the
 * offset bounds of constraints 2–4, which depend only on durations (the floor is always the previous
 * utterance, see constraint 3). Offsets in centiseconds.
 * @throws TimelinePlacementError when the statistics have no values for a needed kind, or a pinned
 *   offset is not an integer
 */
function planTransitions(
  input: PlaceDialogueInput,
  model: ReturnType<typeof fitTimingModel>,
  options: PlaceDialogueOptions,
): TransitionPlan[] {
  const { dialogueId, utterances } = input;
  const plans: TransitionPlan[] = [];
  for (let index = 1; index < utterances.length; index += 1) {
    const utterance = utterances[index] as UtteranceToPlace;
    const previous = utterances[index - 1] as UtteranceToPlace;
    const kind = previous.channel === utterance.channel ? 'same-speaker' : 'speaker-change';
    const direction = kind === 'same-speaker' ? null : channelDirection(previous.channel, utterance.channel);
    const gapsOnly = direction !== null && utterance.channel === options.gapOnlyChannel;
    const fitted =
      direction === null
        ? model.sameSpeaker
        : gapsOnly
          ? model.speakerChangeGaps[direction]
          : model.speakerChange[direction];
    if (fitted === null || fitted.values.length === 0) {
      throw new TimelinePlacementError(
        dialogueId,
        `the timing statistics have no ${gapsOnly ? 'positive ' : ''}${kind} values (utterance ${index})`,
      );
    }
    const distribution = options.smoothing ? fitted : withoutSmoothing(fitted);
    const pinned = input.pinnedOffsets?.get(index) ?? null;
    if (pinned !== null && !Number.isSafeInteger(pinned))
      throw new TimelinePlacementError(
        dialogueId,
        `pinned offset of utterance ${index} must be integer centiseconds, got ${pinned}`,
      );
    let lowestOffset = options.minimumOutlastCs - utterance.durationCs;
    if (kind === 'same-speaker') lowestOffset = Math.max(lowestOffset, options.minimumSameSpeakerGapCs);
    else lowestOffset = Math.max(lowestOffset, options.minimumLeadCs - previous.durationCs);
    const minimumOffset = input.minimumOffsets?.get(index) ?? null;
    if (minimumOffset !== null) lowestOffset = Math.max(lowestOffset, minimumOffset);
    const key = direction === null ? 'same-speaker' : gapsOnly ? `${direction} gaps` : direction;
    plans.push({
      index,
      kind,
      key,
      distribution,
      lowestOffset,
      highestOffset: options.maximumGapCs ?? Number.POSITIVE_INFINITY,
      pinned,
      minimumOffset,
    });
  }
  return plans;
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
