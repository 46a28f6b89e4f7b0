/**
 * The arithmetic of a timing-statistics file (pipeline/model/timing-statistics.ts): grid conversions
 * (seconds <-> integer centiseconds, fractions <-> thousandths), rounded fractions and rates, the
 * kernel bandwidth of a list, and the summaries (count, median, quartiles, minimum, maximum; for
 * offsets the overlap and barge-in fractions) written beside every list and checked against it on load.
 */
import { quantileSorted } from 'simple-statistics';
import { DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import type { Centiseconds } from '../model/types.ts';
import type { DurationSummary, OffsetSummary } from '../model/timing-statistics.ts';
import { normalReferenceBandwidth } from './empirical-distribution.ts';

/** Overlap in centiseconds that a speaker change must exceed to be a BARGE_IN (docs/events.md step 3: 40 cs). */
export const BARGE_IN_OVERLAP_CS = DEFAULT_EVENT_THRESHOLDS.bargeInOverlap;

/** Grid steps per unit of each kind of value: centiseconds per second, thousandths per fraction. */
export const CENTISECONDS_PER_SECOND = 100;
export const THOUSANDTHS_PER_FRACTION = 1000;

/** Seconds (2 decimals) -> integer centiseconds. */
export function toCentiseconds(seconds: number): Centiseconds {
  return Math.round(seconds * CENTISECONDS_PER_SECOND);
}

/** Fraction (3 decimals) -> integer thousandths. */
export function toThousandths(fraction: number): number {
  return Math.round(fraction * THOUSANDTHS_PER_FRACTION);
}

/** Integer grid steps -> unit value, exact to the grid's decimals. */
export function fromGrid(steps: number, stepsPerUnit: number): number {
  return Number((steps / stepsPerUnit).toFixed(stepsPerUnit === 100 ? 2 : 3));
}

/** `part / whole`, 4 decimals; 0 when `whole` is 0. */
export function fraction(part: number, whole: number): number {
  return whole === 0 ? 0 : Number((part / whole).toFixed(4));
}

/** Backchannels per minute of host speech, 4 decimals; 0 without host speech. */
export function ratePerMinute(count: number, hostTurnCs: Centiseconds): number {
  return hostTurnCs === 0 ? 0 : Number(((count * 6000) / hostTurnCs).toFixed(4));
}

/** Normal-reference kernel bandwidth of grid values, in the unit (seconds or fraction), 4 decimals. */
export function bandwidthFor(valuesOnGrid: readonly number[], stepsPerUnit: number): number {
  return Number((normalReferenceBandwidth(valuesOnGrid) / stepsPerUnit).toFixed(4));
}

function summarizeOnGrid(valuesOnGrid: readonly number[], stepsPerUnit: number, decimals: number): DurationSummary {
  const sorted = [...valuesOnGrid].sort((a, b) => a - b);
  if (sorted.length === 0) {
    return { count: 0, median: null, firstQuartile: null, thirdQuartile: null, minimum: null, maximum: null };
  }
  const statistic = (value: number) => Number((value / stepsPerUnit).toFixed(decimals));
  return {
    count: sorted.length,
    median: statistic(quantileSorted(sorted, 0.5)),
    firstQuartile: statistic(quantileSorted(sorted, 0.25)),
    thirdQuartile: statistic(quantileSorted(sorted, 0.75)),
    minimum: statistic(sorted[0] as number),
    maximum: statistic(sorted[sorted.length - 1] as number),
  };
}

/**
 * Summary of gap, pause or duration lengths.
 * @param valuesCs lengths in integer centiseconds, any order
 * @returns count, median, quartiles (simple-statistics `quantileSorted`: linear interpolation,
 *   type 7 of R/numpy), minimum and maximum in seconds rounded to 0.001 s; null statistics when
 *   there are no values
 */
export function summarizeDurations(valuesCs: readonly Centiseconds[]): DurationSummary {
  return summarizeOnGrid(valuesCs, CENTISECONDS_PER_SECOND, 3);
}

/**
 * Summary of relative positions.
 * @param valuesThousandths positions in integer thousandths of the host TURN (0–999), any order
 * @returns as `summarizeDurations`, as fractions rounded to 0.0001
 */
export function summarizePositions(valuesThousandths: readonly number[]): DurationSummary {
  return summarizeOnGrid(valuesThousandths, THOUSANDTHS_PER_FRACTION, 4);
}

/**
 * Summary of floor-transfer offsets.
 * @param offsetsCs offsets `turn.start − floor.end` in integer centiseconds, any order
 * @returns `summarizeDurations` plus `overlapFraction` (offset < 0) and `bargeInFraction`
 *   (offset < −40 cs, i.e. overlap > 0.40 s, docs/events.md step 3), rounded to 4 decimals
 */
export function summarizeOffsets(offsetsCs: readonly Centiseconds[]): OffsetSummary {
  const overlaps = offsetsCs.filter((offset) => offset < 0).length;
  const bargeIns = offsetsCs.filter((offset) => -offset > BARGE_IN_OVERLAP_CS).length;
  return {
    ...summarizeDurations(offsetsCs),
    overlapFraction: fraction(overlaps, offsetsCs.length),
    bargeInFraction: fraction(bargeIns, offsetsCs.length),
  };
}
