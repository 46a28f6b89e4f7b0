/**
 * Phase 3 of `placeDialogue` (place-dialogue.ts): places the utterances in order, each at the floor's
 * end plus an offset chosen from the pinned offset, the deferred values, the value the assignment gave
 * it, fresh draws, or the deterministic fallback (rules in the module comment of place-dialogue.ts,
 * "Correcting the constraints' rejection bias", steps 3–4). All times are integer centiseconds.
 */
import type { Centiseconds, Channel } from '../model/types.ts';
import type { RandomStream } from '../model/random.ts';
import { lowerBoundIndex } from './empirical-distribution.ts';
import { drawWithJitter, type TransitionPlan } from './place-dialogue-draws.ts';
import {
  TimelinePlacementError,
  type PlaceDialogueOptions,
  type PlacedTransition,
  type UtteranceToPlace,
} from './place-dialogue-input.ts';

/**
 * The deferred values (module comment, step 4): one queue per transition key, oldest first, at most
 * `maximumDeferredDraws` long; a value pushed out of a full queue counts as evicted.
 */
export class DeferredDraws {
  private readonly queues = new Map<string, number[]>();
  private evicted = 0;

  constructor(private readonly maximumLength: number) {}

  /** Queue `value` (centiseconds) under `key`, pushing out the oldest when the queue is full. */
  defer(key: string, value: number): void {
    let queue = this.queues.get(key);
    if (queue === undefined) {
      queue = [];
      this.queues.set(key, queue);
    }
    queue.push(value);
    if (queue.length > this.maximumLength) {
      queue.shift();
      this.evicted += 1;
    }
  }

  /** Remove and return the oldest value under `key` that `fits`, or null. */
  takeFitting(key: string, fits: (offset: number) => boolean): number | null {
    const queue = this.queues.get(key);
    const found = queue === undefined ? -1 : queue.findIndex(fits);
    return found < 0 ? null : ((queue as number[]).splice(found, 1)[0] as number);
  }

  /** Values never used: pushed out of a full queue or still queued. */
  unplaced(): number {
    return this.evicted + [...this.queues.values()].reduce((sum, queue) => sum + queue.length, 0);
  }
}

/** The result of phase 3 (`placeInOrder`); times and offsets in centiseconds. */
export interface PlacementInOrder {
  starts: Centiseconds[];
  ends: Centiseconds[];
  offsets: Centiseconds[];
  transitions: PlacedTransition[];
  /** Sum of the transitions' `rejectedDraws`. */
  rejectedDraws: number;
  deferredUsed: number;
  fallbacks: number;
  deferred: DeferredDraws;
}

/**
 * Phase 3: places the utterances in order, each at `floor end + offset`, the offset being (first that
 * fits) the pinned one, the oldest deferred value of its key, its assigned value, a fresh draw (up to
 * `maximumDraws`), or the deterministic fallback. Constraint 1 depends on the placement so far.
 * @param assigned the assignment's value per plan (null: none)
 * @throws TimelinePlacementError when a pinned offset breaks a constraint
 */
export function placeInOrder(
  dialogueId: string,
  utterances: readonly UtteranceToPlace[],
  plans: readonly TransitionPlan[],
  assigned: readonly (number | null)[],
  random: RandomStream,
  options: PlaceDialogueOptions,
): PlacementInOrder {
  const first = utterances[0] as UtteranceToPlace;
  const starts: Centiseconds[] = [options.leadingSilenceCs];
  const ends: Centiseconds[] = [options.leadingSilenceCs + first.durationCs];
  const lastEndOnChannel: Record<Channel, Centiseconds | null> = { 0: null, 1: null };
  lastEndOnChannel[first.channel] = ends[0] as number;
  let floorIndex = 0;
  const result: PlacementInOrder = {
    starts,
    ends,
    offsets: [],
    transitions: [],
    rejectedDraws: 0,
    deferredUsed: 0,
    fallbacks: 0,
    deferred: new DeferredDraws(options.maximumDeferredDraws),
  };

  plans.forEach((plan, planIndex) => {
    const { index, kind } = plan;
    const utterance = utterances[index] as UtteranceToPlace;
    const floorEnd = ends[floorIndex] as number;
    const bounds = startBounds(
      plan,
      utterance,
      floorEnd,
      starts[index - 1] as number,
      lastEndOnChannel[utterance.channel],
      options,
    );
    const chosen = chooseOffset(
      dialogueId,
      plan,
      assigned[planIndex] ?? null,
      floorEnd,
      bounds,
      result.deferred,
      random,
      options,
    );
    if (chosen.source === 'deferred') result.deferredUsed += 1;
    if (chosen.source === 'fallback') result.fallbacks += 1;
    result.rejectedDraws += chosen.rejectedDraws;

    const start = floorEnd + chosen.offset;
    const end = start + utterance.durationCs;
    starts.push(start);
    ends.push(end);
    result.offsets.push(chosen.offset);
    result.transitions.push({
      index,
      kind,
      floorIndex,
      offset: chosen.offset,
      source: chosen.source,
      rejectedDraws: chosen.rejectedDraws,
      fallback: chosen.source === 'fallback',
    });
    lastEndOnChannel[utterance.channel] = end;
    if (end > floorEnd) floorIndex = index;
  });
  return result;
}

/**
 * The allowed starts of one utterance (centiseconds): every constraint is a lower bound on the start,
 * except the optional largest gap (constraint 4).
 * @param previousStart start of utterance `index − 1`; `ownLastEnd` end of the speaker's previous utterance (null: none)
 */
function startBounds(
  plan: TransitionPlan,
  utterance: UtteranceToPlace,
  floorEnd: number,
  previousStart: number,
  ownLastEnd: number | null,
  options: PlaceDialogueOptions,
): { lowestStart: number; highestStart: number } {
  let lowestStart = floorEnd + options.minimumOutlastCs - utterance.durationCs;
  if (ownLastEnd !== null) lowestStart = Math.max(lowestStart, ownLastEnd + options.minimumSameSpeakerGapCs);
  if (plan.kind === 'speaker-change') lowestStart = Math.max(lowestStart, previousStart + options.minimumLeadCs);
  if (plan.minimumOffset !== null) lowestStart = Math.max(lowestStart, floorEnd + plan.minimumOffset);
  lowestStart = Math.max(lowestStart, 0);
  const highestStart = options.maximumGapCs === null ? Number.POSITIVE_INFINITY : floorEnd + options.maximumGapCs;
  return { lowestStart, highestStart };
}

/**
 * The offset of one transition (module comment, steps 3–4 and the fallback): the pinned offset, else
 * the oldest deferred value that fits (its assigned value is then deferred), else its assigned value
 * if it fits, else fresh draws (each misfit deferred), else the smallest measured value that fits or
 * the lowest allowed start. Centiseconds.
 * @throws TimelinePlacementError when a pinned offset breaks a constraint
 */
function chooseOffset(
  dialogueId: string,
  plan: TransitionPlan,
  assigned: number | null,
  floorEnd: number,
  { lowestStart, highestStart }: { lowestStart: number; highestStart: number },
  deferred: DeferredDraws,
  random: RandomStream,
  options: PlaceDialogueOptions,
): { offset: number; source: PlacedTransition['source']; rejectedDraws: number } {
  const fits = (offset: number) => floorEnd + offset >= lowestStart && floorEnd + offset <= highestStart;
  if (plan.pinned !== null) {
    if (!fits(plan.pinned)) {
      throw new TimelinePlacementError(
        dialogueId,
        `pinned offset ${plan.pinned} cs of utterance ${plan.index} breaks a constraint (start must lie in [${lowestStart}, ${highestStart}] cs)`,
      );
    }
    return { offset: plan.pinned, source: 'pinned', rejectedDraws: 0 };
  }
  const queued = deferred.takeFitting(plan.key, fits);
  if (queued !== null) {
    if (assigned !== null) deferred.defer(plan.key, assigned);
    return { offset: queued, source: 'deferred', rejectedDraws: 0 };
  }
  if (assigned !== null && fits(assigned)) return { offset: assigned, source: 'drawn', rejectedDraws: 0 };
  let rejectedDraws = 0;
  if (assigned !== null) {
    rejectedDraws += 1;
    deferred.defer(plan.key, assigned);
  }
  for (let draw = 0; draw < options.maximumDraws; draw += 1) {
    const candidate = drawWithJitter(plan.distribution, random, options.jitterCs);
    if (fits(candidate)) return { offset: candidate, source: 'drawn', rejectedDraws };
    rejectedDraws += 1;
    deferred.defer(plan.key, candidate);
  }
  const smallest = plan.distribution.values[lowerBoundIndex(plan.distribution.values, lowestStart - floorEnd)];
  return {
    offset: smallest !== undefined && fits(smallest) ? smallest : lowestStart - floorEnd,
    source: 'fallback',
    rejectedDraws,
  };
}
