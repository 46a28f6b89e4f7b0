/**
 * Drawing the offsets of a dialogue's transitions (phase 2 of `placeDialogue`, ./place-dialogue.ts):
 * the transitions with their duration bounds, the own-channel windows (constraint 1), and the
 * assignment of stratified draws to the transitions that can take them.
 */
import type { Channel } from '../model/types.ts';
import type { RandomStream } from '../model/random.ts';
import {
  drawFromDistribution,
  drawLowestStratumAbove,
  drawStratified,
  type EmpiricalDistribution,
} from './empirical-distribution.ts';
import type { PlaceDialogueOptions, UtteranceToPlace } from './place-dialogue-input.ts';

/** One transition to place, with the bounds that depend only on durations (constraints 2–4). */
export interface TransitionPlan {
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
  /** The caller's lower bound of the offset from the floor end (`minimumOffsets`), or null. */
  minimumOffset: number | null;
}

/** One draw from `distribution` plus a uniform integer jitter in [−jitterCs, +jitterCs] (centiseconds). */
export function drawWithJitter(distribution: EmpiricalDistribution, random: RandomStream, jitterCs: number): number {
  const value = drawFromDistribution(distribution, random);
  return jitterCs > 0 ? value + random.integer(-jitterCs, jitterCs) : value;
}

/**
 * Constraint 1 (own channel) as a condition on consecutive offsets. With every utterance becoming the
 * floor (constraint 3), utterance `i` starts at `end(i − 1) + o_i`, so for `k`, the speaker's previous
 * utterance, `start_i ≥ end_k + gap` reads `Σ_{j=k+1..i} o_j + Σ_{j=k+1..i−1} d_j ≥ gap`. Windows with
 * `k = i − 1` (same speaker) are the static bound `o_i ≥ gap`, already in `lowestOffset`.
 */
export interface OwnChannelWindow {
  /** Plan indices of the offsets summed (utterances `k + 1 … i` are plans `k … i − 1`). */
  plans: number[];
  /** `gap − Σ d_j` over the utterances between: the sum of the offsets must reach it. */
  required: number;
}

/** The own-channel windows of the utterances (see {@link OwnChannelWindow}); `gapCs` the minimum same-speaker gap. */
export function ownChannelWindows(utterances: readonly UtteranceToPlace[], gapCs: number): OwnChannelWindow[] {
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
export function assignDraws(
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
  const open = new Map(
    keys.map((key) => [
      key,
      new Set(plans.flatMap((plan, planIndex) => (plan.key === key && plan.pinned === null ? [planIndex] : []))),
    ]),
  );
  const replacementsLeft = new Map(
    keys.map((key) => [key, options.maximumDraws * (open.get(key) as Set<number>).size]),
  );
  // The pool of drawn values, each with its key; drawn per key in key order (one stream, deterministic).
  const pool: { value: number; key: string }[] = [];
  for (const key of keys) {
    const distribution = distributionOf.get(key) as EmpiricalDistribution;
    for (const drawn of drawStratified(distribution, random, (open.get(key) as Set<number>).size)) {
      pool.push({
        value: options.jitterCs > 0 ? drawn + random.integer(-options.jitterCs, options.jitterCs) : drawn,
        key,
      });
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
    const eligible = [...candidates].filter(
      (planIndex) => value >= lowestNow(planIndex) && value <= (plans[planIndex] as TransitionPlan).highestOffset,
    );
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
