/**
 * The atom guard of the timing statistics: values that hold more than a share of their list (an
 * artefact of how the times were written, not of conversation), found when a statistics file is
 * built (`findAtoms`) and spread by the sampler (`censorAtoms`, `atomGuardOf`).
 */
import { CHANNEL_DIRECTIONS, type TimingAtom, type TimingStatistics } from '../model/timing-statistics.ts';
import { fraction, fromGrid, toCentiseconds } from './timing-summaries.ts';

export type { TimingAtom } from '../model/timing-statistics.ts';

/**
 * Largest share of a list one value (to the grid step) may hold before it counts as an **atom**: an
 * artefact of how the times were written (abutting transcript bullets give many offsets of exactly
 * 0.00 s; a coarse time grid piles values on its steps), not a property of conversation. 2 %: far
 * above what one centisecond holds in a smooth distribution of this spread (Japanese CallFriend's
 * densest centisecond holds 1.5 %), far below the 18 % atom at 0.00 s of English CallFriend.
 */
export const ATOM_LIMIT_FRACTION = 0.02;

/**
 * Fewest occurrences of one value that make an atom: in a short list any repeat exceeds 2 % (two of
 * 60 values), and chance alone repeats values a few times; five equal values in a list of under 250
 * are still counted.
 */
export const MINIMUM_ATOM_COUNT = 5;

/**
 * Default timing resolution of measured times, seconds: an atom is treated as interval-censored
 * within ± this much. 0.10 s is the assumption made for utterance-level transcript bullets such as
 * CallFriend's (placed by hand; abutting bullets mean "no audible gap or overlap", not "exactly
 * 0 ms"); `duplexsynth measure --timing-resolution` sets it per corpus.
 */
export const DEFAULT_TIMING_RESOLUTION_SECONDS = 0.1;

/** What the sampler does with atoms; written into every statistics file. */
export const ATOM_TREATMENT =
  'an atom (one value holding more than limitFraction of its list, at least 5 times) is treated as interval-censored: the sampler ' +
  'replaces its occurrences by values spread evenly over [value - timingResolutionSeconds, value + timingResolutionSeconds] ' +
  '(kept inside the list\u2019s support), repeated until no value holds more than limitFraction (at most 50 rounds); ' +
  'the measured values in this file are unchanged (pipeline/timeline/timing-statistics.ts censorAtoms)';

/**
 * The lists the atom guard looks at: each direction's floor-transfer offsets, both together
 * (`speakerChange.pooled`), and the TURN_HOLD gaps; integer centiseconds.
 */
export function atomCheckedLists(
  statistics: Pick<TimingStatistics, 'speakerChange' | 'turnHoldGaps'>,
): { list: string; valuesCs: number[] }[] {
  const byDirection = statistics.speakerChange.byDirection;
  return [
    ...CHANNEL_DIRECTIONS.map((direction) => ({
      list: `speakerChange.byDirection.${direction}`,
      valuesCs: byDirection[direction].offsets.map(toCentiseconds),
    })),
    {
      list: 'speakerChange.pooled',
      valuesCs: CHANNEL_DIRECTIONS.flatMap((direction) => byDirection[direction].offsets.map(toCentiseconds)),
    },
    { list: 'turnHoldGaps', valuesCs: statistics.turnHoldGaps.values.map(toCentiseconds) },
  ];
}

/**
 * Values that hold more than `limitFraction` of their list (and occur at least `MINIMUM_ATOM_COUNT` times).
 * @param lists named lists of integer centiseconds
 * @returns atoms in list order, then by value ascending; fractions rounded to 4 decimals
 */
export function findAtoms(
  lists: readonly { list: string; valuesCs: readonly number[] }[],
  limitFraction: number = ATOM_LIMIT_FRACTION,
): TimingAtom[] {
  const atoms: TimingAtom[] = [];
  for (const { list, valuesCs } of lists) {
    const counts = new Map<number, number>();
    for (const value of valuesCs) counts.set(value, (counts.get(value) ?? 0) + 1);
    for (const [value, count] of [...counts].sort((a, b) => a[0] - b[0])) {
      if (count > limitFraction * valuesCs.length && count >= MINIMUM_ATOM_COUNT)
        atoms.push({ list, valueSeconds: fromGrid(value, 100), count, fraction: fraction(count, valuesCs.length) });
    }
  }
  return atoms;
}

/**
 * Treats atoms as interval-censored (`ATOM_TREATMENT`): while some value holds more than
 * `limitFraction` of the list, each such value's `c` occurrences are replaced by
 * `round(v − r + 2r · (k + 0.5) / c)`, k = 0 … c − 1 (evenly over `[v − r, v + r]`; the interval is
 * shifted to stay inside `[lower, upper]`), at most 50 rounds. Deterministic; the list length is kept.
 * @param valuesCs integer centiseconds, any order
 * @param resolutionCs `r`, integer centiseconds ≥ 1
 * @returns a new sorted list (the input sorted when it has no atom)
 */
export function censorAtoms(
  valuesCs: readonly number[],
  options: { limitFraction?: number; resolutionCs: number; lower?: number | null; upper?: number | null },
): number[] {
  const limit = options.limitFraction ?? ATOM_LIMIT_FRACTION;
  const r = options.resolutionCs;
  let values = [...valuesCs].sort((a, b) => a - b);
  if (r < 1 || values.length === 0) return values;
  for (let round = 0; round < 50; round += 1) {
    const counts = new Map<number, number>();
    for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
    const atoms = [...counts].filter(([, count]) => count > limit * values.length && count >= MINIMUM_ATOM_COUNT);
    if (atoms.length === 0) break;
    const atomValues = new Set(atoms.map(([value]) => value));
    const next = values.filter((value) => !atomValues.has(value));
    for (const [value, count] of atoms) {
      let low = value - r;
      let high = value + r;
      if (options.lower !== undefined && options.lower !== null && low < options.lower) {
        high += options.lower - low;
        low = options.lower;
      }
      if (options.upper !== undefined && options.upper !== null && high > options.upper) {
        low = Math.max(options.lower ?? Number.NEGATIVE_INFINITY, low - (high - options.upper));
        high = options.upper;
      }
      for (let k = 0; k < count; k += 1) next.push(Math.round(low + ((high - low) * (k + 0.5)) / count));
    }
    values = next.sort((a, b) => a - b);
  }
  return values;
}

/** The atom guard settings of a statistics file, or the defaults for a file written without them. */
export function atomGuardOf(statistics: TimingStatistics): {
  limitFraction: number;
  resolutionCs: number;
  atoms: TimingAtom[];
} {
  const guard = statistics.atomGuard;
  const limitFraction = guard?.limitFraction ?? ATOM_LIMIT_FRACTION;
  return {
    limitFraction,
    resolutionCs: toCentiseconds(guard?.timingResolutionSeconds ?? DEFAULT_TIMING_RESOLUTION_SECONDS),
    atoms: guard?.atoms ?? findAtoms(atomCheckedLists(statistics), limitFraction),
  };
}
