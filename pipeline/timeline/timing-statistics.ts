/**
 * Timing statistics: the "fit" half of the timeline (style.md, lhotse meeting_simulation's
 * fit/simulate split). A versioned JSON file holding the measured turn-taking timing of real
 * conversations (pipeline/timeline/measure-turn-taking.ts), which `place-dialogue.ts` samples from.
 *
 * ## Version 2 (this module reads and writes only version 2)
 * Version 1 files (one offset list per direction mixing floor transfers with overlaps inside the
 * other's turn, no backchannels) are refused with a message saying how to regenerate them: the
 * missing measurements cannot be recovered from a version 1 file.
 *
 * What the file holds (times in **seconds**, 2 decimals; relative positions as fractions of the host
 * TURN, 3 decimals; every list sorted ascending):
 * - `speakerChange.byDirection[direction].offsets`: **floor-transfer offsets** (Heldner & Edlund 2010,
 *   "Pauses, gaps and overlaps in conversations", J. Phonetics 38): `turn.start − floor.end` of each
 *   TURN_SHIFT or BARGE_IN (events.md rule 4) whose TURN ends after the floor TURN, so the floor moves
 *   to the new speaker (positive = gap, negative = overlap).
 * - `speakerChange.withinTurnOverlaps`: the other speaker's TURNs that start and end inside the floor
 *   TURN (Heldner & Edlund's "within-speaker overlaps"): labelled BARGE_IN by the benchmark rules (their
 *   overlap always exceeds 0.40 s, since a TURN lasts > 0.80 s) but not floor transfers. Measured and
 *   reported; the question/answer timeline does not generate them.
 * - `speakerChange.benchmarkRelationsSummary`: all TURN_SHIFT and BARGE_IN offsets together (both
 *   kinds above), i.e. the barge-in rate the benchmark annotation of the real data shows.
 * - `turnHoldGaps.values`: `turn.start − floor.end` of each TURN_HOLD (always > 0.50 s).
 * - `shortPauses.values`: length of each SHORTPAUSE (silence inside an IPU, 0.01–0.50 s).
 * - `backchannels`: BCs (IPUs ≤ 0.80 s, events.md rule 2) whose start lies inside a TURN of the
 *   other channel (the benchmark keeps only those, m3-format.md): count and rate **per minute of the
 *   other speaker's TURN speech** (sum of the other channel's TURN lengths, pauses included) per
 *   listener channel and pooled; their durations; their relative position inside the host TURN,
 *   `(bc.start − turn.start) / (turn.end − turn.start)` in [0, 1); and the count of BCs outside any
 *   TURN of the other channel (not used).
 * - a summary per list (count, median, quartiles, minimum, maximum; for offsets also the fraction of
 *   overlaps, offset < 0, and of barge-ins, overlap > 0.40 s) and the list's kernel bandwidth
 *   (empirical-distribution.ts), all checked against the values on load.
 * - provenance: corpus, format, licence, origin, sources, recording count, durations, counts,
 *   thresholds, voice activity detection, smoothing, the command that wrote the file, notes.
 *
 * Directions are named by benchmark channel: `channel1->channel0` is a change from channel 1 to
 * channel 0. In MT-QA data channel 1 is the user and channel 0 the system (m3-format.md), so
 * `channel1->channel0` is "user->system" (the system responds) and `channel0->channel1` is
 * "system->user". `speakerChange.samplerUse` says how the sampler uses the measurements: `pooled`
 * (both directions as one distribution, and the pooled backchannel rate, for symmetric conversations
 * such as telephone calls where the channel carries no role) or `per-direction`.
 *
 * Thresholds come from ../shared/docs/events.md (IPU pause ≤ 0.50 s, BC ≤ 0.80 s, barge-in overlap
 * > 0.40 s), as implemented in pipeline/events (`DEFAULT_EVENT_THRESHOLDS`).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { quantileSorted } from 'simple-statistics';
import { z } from 'zod';
import { DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import type { Centiseconds, Channel, Language } from '../model/types.ts';
import { fitEmpiricalDistribution, normalReferenceBandwidth, type EmpiricalDistribution } from './empirical-distribution.ts';
import { describeIssues } from '../model/validation.ts';

/** Current (and only readable) version of the timing-statistics file format. */
export const TIMING_STATISTICS_VERSION = 2;

/** Direction of a speaker change, by benchmark channel. */
export type ChannelDirection = 'channel0->channel1' | 'channel1->channel0';

/** Both directions, in the order they are written. */
export const CHANNEL_DIRECTIONS: readonly ChannelDirection[] = ['channel0->channel1', 'channel1->channel0'] as const;

/** Key of a listener channel in the backchannel rates. */
export type ListenerKey = 'channel0' | 'channel1';

/**
 * The direction of a speaker change from channel `from` to channel `to`.
 * @throws RangeError when `from === to` (not a speaker change)
 */
export function channelDirection(from: Channel, to: Channel): ChannelDirection {
  if (from === to) throw new RangeError(`channel ${from} -> ${to} is not a speaker change`);
  return from === 0 ? 'channel0->channel1' : 'channel1->channel0';
}

/** Overlap in centiseconds that a speaker change must exceed to be a BARGE_IN (events.md rule 4: 40 cs). */
const BARGE_IN_OVERLAP_CS = DEFAULT_EVENT_THRESHOLDS.bargeInOverlap;

/** Grid steps per unit of each kind of value: centiseconds per second, thousandths per fraction. */
const CENTISECONDS_PER_SECOND = 100;
const THOUSANDTHS_PER_FRACTION = 1000;

function onGrid(stepsPerUnit: number) {
  return z
    .number()
    .finite()
    .refine((value) => Math.abs(value * stepsPerUnit - Math.round(value * stepsPerUnit)) < 1e-6, {
      message: stepsPerUnit === 100 ? 'must be a whole number of centiseconds (seconds with at most 2 decimals)' : 'must have at most 3 decimals',
    });
}

function sortedList(stepsPerUnit: number) {
  return z.array(onGrid(stepsPerUnit)).refine(
    (values) => values.every((value, index) => index === 0 || (values[index - 1] as number) <= value),
    { message: 'values must be sorted ascending' },
  );
}

const durationSummarySchema = z
  .object({
    count: z.number().int().nonnegative(),
    /**
     * Median (null when count is 0). Quantiles use simple-statistics `quantileSorted` (linear
     * interpolation, type 7 of R/numpy), rounded to 0.001 s (positions: 0.0001).
     */
    median: z.number().nullable(),
    firstQuartile: z.number().nullable(),
    thirdQuartile: z.number().nullable(),
    minimum: z.number().nullable(),
    maximum: z.number().nullable(),
  })
  .strict();

const offsetSummarySchema = durationSummarySchema
  .extend({
    /** Fraction of offsets < 0 (the next speaker starts before the floor ends). */
    overlapFraction: z.number().min(0).max(1),
    /** Fraction of offsets < −0.40 s (overlap > 0.40 s: BARGE_IN, events.md rule 4). */
    bargeInFraction: z.number().min(0).max(1),
  })
  .strict();

/** Kernel bandwidth of a list (empirical-distribution.ts), in the list's unit, rounded to 4 decimals. */
const bandwidthSchema = z.number().nonnegative();

const offsetListSchema = z.object({ summary: offsetSummarySchema, kernelBandwidth: bandwidthSchema, offsets: sortedList(100) }).strict();
const durationListSchema = z.object({ summary: durationSummarySchema, kernelBandwidth: bandwidthSchema, values: sortedList(100) }).strict();
const positionListSchema = z.object({ summary: durationSummarySchema, kernelBandwidth: bandwidthSchema, values: sortedList(1000) }).strict();

const rateSchema = z
  .object({
    /** Backchannels spoken on the listener channel whose start lies inside a TURN of the other channel. */
    count: z.number().int().nonnegative(),
    /** Total length of the other channel's TURNs (start to end, pauses included), seconds. */
    hostTurnSeconds: onGrid(100).pipe(z.number().nonnegative()),
    /** `count / (hostTurnSeconds / 60)`, rounded to 4 decimals (0 when there is no host speech). */
    perMinute: z.number().nonnegative(),
  })
  .strict();

const provenanceSchema = z
  .object({
    /** What the recordings are (corpus name and kind of conversation). */
    corpus: z.string().min(1),
    /** Reference corpus format read: `stereo-wav`, `candor`, `magicdata`, `rttm`, `m3-events`. */
    format: z.string().min(1),
    licence: z.string().min(1),
    /** Where the source files come from (repository, commit, download). */
    origin: z.string().min(1),
    /** What the source paths are relative to. */
    pathsRelativeTo: z.string().min(1),
    /** Every source file read, sorted, `/`-separated, relative to `pathsRelativeTo`. */
    sourcePaths: z.array(z.string()).min(1),
    /** Recordings the loader produced. */
    recordingCount: z.number().int().nonnegative(),
    /** Recordings measured (recordingCount minus duplicates skipped). */
    recordingsUsed: z.number().int().nonnegative(),
    /** Recordings whose speech segments repeat an earlier recording's exactly; skipped. */
    duplicateRecordings: z.array(z.object({ recording: z.string(), sameAs: z.string() }).strict()),
    /** Sum of the used recordings' durations, seconds. */
    totalDurationSeconds: z.number().nonnegative(),
    /** How speakers were mapped to channels 0 and 1. */
    channelMapping: z.string().min(1),
    /** Voice activity detector that produced the segments (`silero`, `webrtc`), or null for annotations. */
    voiceActivityDetection: z.string().nullable(),
    /** What the loaders reported (dropped speakers, skipped lines), `recording: note`, in recording order. */
    loaderNotes: z.array(z.string()),
    /** Measurements discarded because speech of someone not on the two channels fell inside them. */
    discardedNearExcludedSpeech: z
      .object({
        speakerChanges: z.number().int().nonnegative(),
        turnHolds: z.number().int().nonnegative(),
        shortPauses: z.number().int().nonnegative(),
      })
      .strict(),
    /** Units measured, over all used recordings. */
    counts: z
      .object({
        turns: z.number().int().nonnegative(),
        backchannels: z.number().int().nonnegative(),
        floorTransfers: z.number().int().nonnegative(),
        withinTurnOverlaps: z.number().int().nonnegative(),
        turnHolds: z.number().int().nonnegative(),
        shortPauses: z.number().int().nonnegative(),
      })
      .strict(),
    /** Event-rule thresholds used, seconds, and where they come from. */
    thresholds: z
      .object({
        ipuMaximumPauseSeconds: z.number().nonnegative(),
        backchannelMaximumSeconds: z.number().nonnegative(),
        bargeInMinimumOverlapSeconds: z.number().nonnegative(),
        source: z.string().min(1),
      })
      .strict(),
    /** How the sampler smooths the lists (empirical-distribution.ts). */
    smoothing: z.string().min(1),
    /** Command that wrote the file (source paths relative to `pathsRelativeTo`). No date: the file is deterministic. */
    command: z.string().min(1),
    notes: z.array(z.string()),
  })
  .strict();

const directionRecord = <T extends z.ZodType>(schema: T) =>
  z.object({ 'channel0->channel1': schema, 'channel1->channel0': schema }).strict();

/** One atom: a single value (to the grid step) holding more than `limitFraction` of its list. */
const atomSchema = z
  .object({
    /** The list, e.g. `speakerChange.byDirection.channel0->channel1`, `speakerChange.pooled`, `turnHoldGaps`. */
    list: z.string().min(1),
    valueSeconds: onGrid(100),
    count: z.number().int().positive(),
    /** `count / list length`, 4 decimals. */
    fraction: z.number().min(0).max(1),
  })
  .strict();

/**
 * The atom guard (see `findAtoms`, `censorAtoms`): which values hold more than `limitFraction` of a
 * list, and how the sampler treats them (interval-censored: spread over ± `timingResolutionSeconds`).
 */
const atomGuardSchema = z
  .object({
    limitFraction: z.number().gt(0).lt(1),
    timingResolutionSeconds: onGrid(100).pipe(z.number().positive()),
    treatment: z.string().min(1),
    atoms: z.array(atomSchema),
  })
  .strict();

/** zod schema of the timing-statistics file (version 2). Summaries, bandwidths and rates must match their values. */
export const timingStatisticsSchema = z
  .object({
    version: z.literal(TIMING_STATISTICS_VERSION),
    language: z.enum(['en', 'ja']),
    units: z.literal('seconds'),
    provenance: provenanceSchema,
    speakerChange: z
      .object({
        samplerUse: z.enum(['pooled', 'per-direction']),
        /** Summary of both directions' floor-transfer offsets together (not repeated in the file). */
        pooledSummary: offsetSummarySchema,
        /** Summary of every TURN_SHIFT and BARGE_IN offset, floor transfers and within-turn overlaps together. */
        benchmarkRelationsSummary: offsetSummarySchema,
        byDirection: directionRecord(offsetListSchema),
        withinTurnOverlaps: directionRecord(offsetListSchema),
        /**
         * Optional (files written before it lack it): for each floor transfer that is a barge-in
         * (overlap > 0.40 s), the time from the start of the interrupted floor TURN to the
         * interrupter's start, seconds (≥ 0), per direction. Where into a turn barge-ins come.
         */
        bargeInLeads: directionRecord(durationListSchema).optional(),
      })
      .strict(),
    /** Optional (files written before it lack it; then the sampler finds atoms itself with the defaults). */
    atomGuard: atomGuardSchema.optional(),
    turnHoldGaps: durationListSchema,
    shortPauses: durationListSchema,
    backchannels: z
      .object({
        rates: z.object({ channel0: rateSchema, channel1: rateSchema, pooled: rateSchema }).strict(),
        /** BCs whose start lies outside every TURN of the other channel (not in the rates). */
        outsideOtherTurns: z.number().int().nonnegative(),
        /** Durations of the BCs in the rates, seconds. */
        durations: durationListSchema,
        /** Start of each BC in the rates relative to its host TURN, fraction in [0, 1). */
        relativePositions: positionListSchema,
      })
      .strict(),
  })
  .strict()
  .superRefine((statistics, context) => {
    const check = (actual: unknown, expected: unknown, where: (string | number)[]) => {
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        context.addIssue({
          code: 'custom',
          path: where,
          message: `${JSON.stringify(actual)} does not match the values (expected ${JSON.stringify(expected)})`,
        });
      }
    };
    const checkList = (
      list: { summary: unknown; kernelBandwidth: number },
      valuesCs: number[],
      summarize: (values: number[]) => unknown,
      where: string[],
    ) => {
      check(list.summary, summarize(valuesCs), [...where, 'summary']);
      check(list.kernelBandwidth, bandwidthFor(valuesCs, 100), [...where, 'kernelBandwidth']);
    };
    const { speakerChange, backchannels } = statistics;
    for (const direction of CHANNEL_DIRECTIONS) {
      checkList(speakerChange.byDirection[direction], speakerChange.byDirection[direction].offsets.map(toCentiseconds), summarizeOffsets, ['speakerChange', 'byDirection', direction]);
      checkList(speakerChange.withinTurnOverlaps[direction], speakerChange.withinTurnOverlaps[direction].offsets.map(toCentiseconds), summarizeOffsets, ['speakerChange', 'withinTurnOverlaps', direction]);
    }
    const transfers = CHANNEL_DIRECTIONS.flatMap((direction) => speakerChange.byDirection[direction].offsets.map(toCentiseconds));
    const within = CHANNEL_DIRECTIONS.flatMap((direction) => speakerChange.withinTurnOverlaps[direction].offsets.map(toCentiseconds));
    check(speakerChange.pooledSummary, summarizeOffsets(transfers), ['speakerChange', 'pooledSummary']);
    check(speakerChange.benchmarkRelationsSummary, summarizeOffsets([...transfers, ...within]), ['speakerChange', 'benchmarkRelationsSummary']);
    checkList(statistics.turnHoldGaps, statistics.turnHoldGaps.values.map(toCentiseconds), summarizeDurations, ['turnHoldGaps']);
    checkList(statistics.shortPauses, statistics.shortPauses.values.map(toCentiseconds), summarizeDurations, ['shortPauses']);
    checkList(backchannels.durations, backchannels.durations.values.map(toCentiseconds), summarizeDurations, ['backchannels', 'durations']);
    const positions = backchannels.relativePositions.values.map(toThousandths);
    check(backchannels.relativePositions.summary, summarizePositions(positions), ['backchannels', 'relativePositions', 'summary']);
    check(backchannels.relativePositions.kernelBandwidth, bandwidthFor(positions, 1000), ['backchannels', 'relativePositions', 'kernelBandwidth']);
    for (const key of ['channel0', 'channel1', 'pooled'] as const) {
      const rate = backchannels.rates[key];
      check(rate.perMinute, ratePerMinute(rate.count, toCentiseconds(rate.hostTurnSeconds)), ['backchannels', 'rates', key, 'perMinute']);
    }
    check(
      [backchannels.rates.pooled.count, toCentiseconds(backchannels.rates.pooled.hostTurnSeconds)],
      [
        backchannels.rates.channel0.count + backchannels.rates.channel1.count,
        toCentiseconds(backchannels.rates.channel0.hostTurnSeconds) + toCentiseconds(backchannels.rates.channel1.hostTurnSeconds),
      ],
      ['backchannels', 'rates', 'pooled'],
    );
    if (speakerChange.bargeInLeads) {
      for (const direction of CHANNEL_DIRECTIONS) {
        const leads = speakerChange.bargeInLeads[direction];
        checkList(leads, leads.values.map(toCentiseconds), summarizeDurations, ['speakerChange', 'bargeInLeads', direction]);
      }
    }
    if (statistics.atomGuard) {
      const guard = statistics.atomGuard;
      const expected = findAtoms(atomCheckedLists(statistics), guard.limitFraction);
      check(guard.atoms, expected, ['atomGuard', 'atoms']);
    }
    check(backchannels.durations.values.length, backchannels.rates.pooled.count, ['backchannels', 'durations', 'values']);
    check(backchannels.relativePositions.values.length, backchannels.rates.pooled.count, ['backchannels', 'relativePositions', 'values']);
  });

/** A parsed, validated timing-statistics file. Times in seconds, positions as fractions. */
export type TimingStatistics = z.infer<typeof timingStatisticsSchema>;
/** Summary of offsets (seconds; fractions in [0, 1]). */
export type OffsetSummary = z.infer<typeof offsetSummarySchema>;
/** Summary of gaps, pauses or durations (seconds), or of relative positions (fractions). */
export type DurationSummary = z.infer<typeof durationSummarySchema>;
/** Provenance block of a timing-statistics file. */
export type TimingProvenance = z.infer<typeof provenanceSchema>;
/** One backchannel rate entry (count, host TURN seconds, per minute). */
export type BackchannelRate = z.infer<typeof rateSchema>;

/** Error for a missing, unreadable or invalid timing-statistics file; the message names the file. */
export class TimingStatisticsError extends Error {
  override readonly name = 'TimingStatisticsError';
  constructor(
    readonly source: string,
    detail: string,
  ) {
    super(`${source}: ${detail}`);
  }
}

/** Seconds (2 decimals) -> integer centiseconds. */
function toCentiseconds(seconds: number): Centiseconds {
  return Math.round(seconds * CENTISECONDS_PER_SECOND);
}

/** Fraction (3 decimals) -> integer thousandths. */
function toThousandths(fraction: number): number {
  return Math.round(fraction * THOUSANDTHS_PER_FRACTION);
}

/** Integer grid steps -> unit value, exact to the grid's decimals. */
function fromGrid(steps: number, stepsPerUnit: number): number {
  return Number((steps / stepsPerUnit).toFixed(stepsPerUnit === 100 ? 2 : 3));
}

function fraction(part: number, whole: number): number {
  return whole === 0 ? 0 : Number((part / whole).toFixed(4));
}

/** Backchannels per minute of host speech, 4 decimals; 0 without host speech. */
function ratePerMinute(count: number, hostTurnCs: Centiseconds): number {
  return hostTurnCs === 0 ? 0 : Number(((count * 6000) / hostTurnCs).toFixed(4));
}

/** Normal-reference kernel bandwidth of grid values, in the unit (seconds or fraction), 4 decimals. */
function bandwidthFor(valuesOnGrid: readonly number[], stepsPerUnit: number): number {
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
 *   (offset < −40 cs, i.e. overlap > 0.40 s, events.md rule 4), rounded to 4 decimals
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

/** Measured values, in integer centiseconds (positions in thousandths), from which a statistics file is built. */
export interface TimingMeasurements {
  /** Floor-transfer offsets (the new TURN outlasts the floor TURN), per direction; negative = overlap. */
  floorTransferOffsets: Record<ChannelDirection, Centiseconds[]>;
  /** Offsets of TURNs that start and end inside the floor TURN (always < −40 cs), per direction. */
  withinTurnOverlapOffsets: Record<ChannelDirection, Centiseconds[]>;
  /** TURN_HOLD gaps (`turn.start − floor.end`, same channel). */
  turnHoldGaps: Centiseconds[];
  /** SHORTPAUSE lengths. */
  shortPauses: Centiseconds[];
  /**
   * Optional: for each floor transfer with overlap > 0.40 s (a barge-in), `turn.start − floor.start`,
   * the time into the interrupted TURN at which the interrupter starts (≥ 0), per direction.
   */
  bargeInLeads?: Record<ChannelDirection, Centiseconds[]>;
  backchannels: {
    /** Per listener channel: BCs inside a TURN of the other channel, and that channel's TURN length. */
    byListener: Record<Channel, { count: number; hostTurnCs: Centiseconds }>;
    /** BCs whose start lies outside every TURN of the other channel. */
    outsideOtherTurns: number;
    /** Durations of the counted BCs. */
    durationsCs: Centiseconds[];
    /** Start of each counted BC relative to its host TURN, integer thousandths in [0, 999]. */
    relativePositionsThousandths: number[];
  };
}

/** Provenance fields the caller gives; `counts` and the thresholds are filled in by `buildTimingStatistics`. */
export type TimingProvenanceInput = Omit<TimingProvenance, 'counts' | 'thresholds' | 'smoothing'> & {
  /** Number of TURNs and BCs measured (IPU counts), which the measurements do not carry. */
  unitCounts: { turns: number; backchannels: number };
};

/** The smoothing description written into every file (empirical-distribution.ts). */
export const SMOOTHING_DESCRIPTION =
  'smoothed bootstrap (Silverman 1986, section 6.4): a uniformly drawn measured value plus Gaussian noise of ' +
  'standard deviation min(h, spacing / 4), rounded to 0.01 s (positions: 0.001); h = kernelBandwidth, the ' +
  "normal-reference rule of simple-statistics kernelDensityEstimation 'nrd' (1.06 * min(sd, IQR / 1.34) * n^-1/5, " +
  "a common version of Silverman's rule of thumb); spacing = distance to the nearest different measured value " +
  '(pipeline/timeline/empirical-distribution.ts)';

/**
 * Builds a statistics value from measurements: sorts every list, converts to seconds (2 decimals) or
 * fractions (3 decimals), computes summaries, bandwidths and rates, fills in the counts, thresholds
 * and smoothing description, and validates the result against the schema.
 * @param input language, provenance, measurements (centiseconds / thousandths), sampler policy
 *   (default `pooled`)
 * @throws TimingStatisticsError (source `buildTimingStatistics`) when the result is invalid, e.g. a
 *   non-integer centisecond value
 */
export function buildTimingStatistics(input: {
  language: Language;
  provenance: TimingProvenanceInput;
  measurements: TimingMeasurements;
  samplerUse?: 'pooled' | 'per-direction';
  /** Atom guard settings (defaults `ATOM_LIMIT_FRACTION`, `DEFAULT_TIMING_RESOLUTION_SECONDS`). */
  atomGuard?: { limitFraction?: number; timingResolutionSeconds?: number };
}): TimingStatistics {
  const { measurements } = input;
  const { unitCounts, ...provenance } = input.provenance;
  const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);
  const offsetList = (values: readonly Centiseconds[]) => ({
    summary: summarizeOffsets(values),
    kernelBandwidth: bandwidthFor(values, 100),
    offsets: sorted(values).map((value) => fromGrid(value, 100)),
  });
  const durationList = (values: readonly Centiseconds[]) => ({
    summary: summarizeDurations(values),
    kernelBandwidth: bandwidthFor(values, 100),
    values: sorted(values).map((value) => fromGrid(value, 100)),
  });
  const rate = (count: number, hostTurnCs: Centiseconds) => ({
    count,
    hostTurnSeconds: fromGrid(hostTurnCs, 100),
    perMinute: ratePerMinute(count, hostTurnCs),
  });
  const listeners = measurements.backchannels.byListener;
  const transfers = CHANNEL_DIRECTIONS.flatMap((direction) => measurements.floorTransferOffsets[direction]);
  const within = CHANNEL_DIRECTIONS.flatMap((direction) => measurements.withinTurnOverlapOffsets[direction]);
  const thresholds = DEFAULT_EVENT_THRESHOLDS;
  const candidate = {
    version: TIMING_STATISTICS_VERSION,
    language: input.language,
    units: 'seconds',
    provenance: {
      ...provenance,
      counts: {
        turns: unitCounts.turns,
        backchannels: unitCounts.backchannels,
        floorTransfers: transfers.length,
        withinTurnOverlaps: within.length,
        turnHolds: measurements.turnHoldGaps.length,
        shortPauses: measurements.shortPauses.length,
      },
      thresholds: {
        ipuMaximumPauseSeconds: thresholds.maxPauseInIpu / 100,
        backchannelMaximumSeconds: thresholds.maxBackchannel / 100,
        bargeInMinimumOverlapSeconds: thresholds.bargeInOverlap / 100,
        source: 'docs/events.md rules 1, 2 and 4 (pipeline/events DEFAULT_EVENT_THRESHOLDS)',
      },
      smoothing: SMOOTHING_DESCRIPTION,
    },
    speakerChange: {
      samplerUse: input.samplerUse ?? 'pooled',
      pooledSummary: summarizeOffsets(transfers),
      benchmarkRelationsSummary: summarizeOffsets([...transfers, ...within]),
      byDirection: {
        'channel0->channel1': offsetList(measurements.floorTransferOffsets['channel0->channel1']),
        'channel1->channel0': offsetList(measurements.floorTransferOffsets['channel1->channel0']),
      },
      withinTurnOverlaps: {
        'channel0->channel1': offsetList(measurements.withinTurnOverlapOffsets['channel0->channel1']),
        'channel1->channel0': offsetList(measurements.withinTurnOverlapOffsets['channel1->channel0']),
      },
      ...(measurements.bargeInLeads
        ? {
            bargeInLeads: {
              'channel0->channel1': durationList(measurements.bargeInLeads['channel0->channel1']),
              'channel1->channel0': durationList(measurements.bargeInLeads['channel1->channel0']),
            },
          }
        : {}),
    },
    atomGuard: (() => {
      const limitFraction = input.atomGuard?.limitFraction ?? ATOM_LIMIT_FRACTION;
      const lists = [
        ...CHANNEL_DIRECTIONS.map((direction) => ({ list: `speakerChange.byDirection.${direction}`, valuesCs: measurements.floorTransferOffsets[direction] })),
        { list: 'speakerChange.pooled', valuesCs: transfers },
        { list: 'turnHoldGaps', valuesCs: measurements.turnHoldGaps },
      ];
      return {
        limitFraction,
        timingResolutionSeconds: input.atomGuard?.timingResolutionSeconds ?? DEFAULT_TIMING_RESOLUTION_SECONDS,
        treatment: ATOM_TREATMENT,
        atoms: findAtoms(lists, limitFraction),
      };
    })(),
    turnHoldGaps: durationList(measurements.turnHoldGaps),
    shortPauses: durationList(measurements.shortPauses),
    backchannels: {
      rates: {
        channel0: rate(listeners[0].count, listeners[0].hostTurnCs),
        channel1: rate(listeners[1].count, listeners[1].hostTurnCs),
        pooled: rate(listeners[0].count + listeners[1].count, listeners[0].hostTurnCs + listeners[1].hostTurnCs),
      },
      outsideOtherTurns: measurements.backchannels.outsideOtherTurns,
      durations: durationList(measurements.backchannels.durationsCs),
      relativePositions: {
        summary: summarizePositions(measurements.backchannels.relativePositionsThousandths),
        kernelBandwidth: bandwidthFor(measurements.backchannels.relativePositionsThousandths, 1000),
        values: sorted(measurements.backchannels.relativePositionsThousandths).map((value) => fromGrid(value, 1000)),
      },
    },
  };
  return parseTimingStatistics(candidate, 'buildTimingStatistics');
}

/**
 * Validates a parsed JSON value as a timing-statistics file (version 2).
 * @param value the JSON value
 * @param source file name or description for error messages
 * @throws TimingStatisticsError naming `source` and every invalid field path (including summaries,
 *   bandwidths and rates that do not match their values); for a version 1 file, a message saying to
 *   regenerate it with `duplexsynth measure`
 */
export function parseTimingStatistics(value: unknown, source: string): TimingStatistics {
  if (value !== null && typeof value === 'object' && (value as { version?: unknown }).version === 1) {
    throw new TimingStatisticsError(
      source,
      'timing statistics version 1 cannot be read (it lacks floor-transfer/within-turn separation and backchannels); ' +
        'regenerate it from the source recordings with `duplexsynth measure` (version 2)',
    );
  }
  const result = timingStatisticsSchema.safeParse(value);
  if (!result.success) {
    throw new TimingStatisticsError(source, `invalid timing statistics: ${describeIssues(result.error.issues)}`);
  }
  return result.data;
}

/**
 * Reads and validates a timing-statistics JSON file.
 * @throws TimingStatisticsError naming the file when it cannot be read, is not JSON, or is invalid
 */
export async function loadTimingStatistics(filePath: string): Promise<TimingStatistics> {
  let text: string;
  try {
    text = await readFile(filePath, 'utf8');
  } catch (error) {
    throw new TimingStatisticsError(filePath, `cannot read: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TimingStatisticsError(filePath, `not JSON: ${(error as Error).message}`);
  }
  return parseTimingStatistics(json, filePath);
}

/** Path of the shipped default statistics for a language (`pipeline/timeline/defaults/{language}.timing.json`). */
export function defaultTimingStatisticsPath(language: Language): string {
  return path.join(path.dirname(fileURLToPath(import.meta.url)), 'defaults', `${language}.timing.json`);
}

/**
 * Loads the shipped default statistics of a language (measured on real CallFriend calls by
 * `scripts/derive-default-timing.ts`, which runs `duplexsynth measure`).
 * @throws TimingStatisticsError as `loadTimingStatistics`
 */
export async function loadDefaultTimingStatistics(language: Language): Promise<TimingStatistics> {
  return loadTimingStatistics(defaultTimingStatisticsPath(language));
}

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

/** One atom of a list (the `atomGuard.atoms` entries of a statistics file). */
export type TimingAtom = z.infer<typeof atomSchema>;

/**
 * The lists the atom guard looks at: each direction's floor-transfer offsets, both together
 * (`speakerChange.pooled`), and the TURN_HOLD gaps; integer centiseconds.
 */
function atomCheckedLists(statistics: Pick<TimingStatistics, 'speakerChange' | 'turnHoldGaps'>): { list: string; valuesCs: number[] }[] {
  const byDirection = statistics.speakerChange.byDirection;
  return [
    ...CHANNEL_DIRECTIONS.map((direction) => ({ list: `speakerChange.byDirection.${direction}`, valuesCs: byDirection[direction].offsets.map(toCentiseconds) })),
    { list: 'speakerChange.pooled', valuesCs: CHANNEL_DIRECTIONS.flatMap((direction) => byDirection[direction].offsets.map(toCentiseconds)) },
    { list: 'turnHoldGaps', valuesCs: statistics.turnHoldGaps.values.map(toCentiseconds) },
  ];
}

/**
 * Values that hold more than `limitFraction` of their list (and occur at least `MINIMUM_ATOM_COUNT` times).
 * @param lists named lists of integer centiseconds
 * @returns atoms in list order, then by value ascending; fractions rounded to 4 decimals
 */
export function findAtoms(lists: readonly { list: string; valuesCs: readonly number[] }[], limitFraction: number = ATOM_LIMIT_FRACTION): TimingAtom[] {
  const atoms: TimingAtom[] = [];
  for (const { list, valuesCs } of lists) {
    const counts = new Map<number, number>();
    for (const value of valuesCs) counts.set(value, (counts.get(value) ?? 0) + 1);
    for (const [value, count] of [...counts].sort((a, b) => a[0] - b[0])) {
      if (count > limitFraction * valuesCs.length && count >= MINIMUM_ATOM_COUNT) atoms.push({ list, valueSeconds: fromGrid(value, 100), count, fraction: fraction(count, valuesCs.length) });
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
export function atomGuardOf(statistics: TimingStatistics): { limitFraction: number; resolutionCs: number; atoms: TimingAtom[] } {
  const guard = statistics.atomGuard;
  const limitFraction = guard?.limitFraction ?? ATOM_LIMIT_FRACTION;
  return {
    limitFraction,
    resolutionCs: toCentiseconds(guard?.timingResolutionSeconds ?? DEFAULT_TIMING_RESOLUTION_SECONDS),
    atoms: guard?.atoms ?? findAtoms(atomCheckedLists(statistics), limitFraction),
  };
}

/**
 * The lists the sampler targets, integer centiseconds (positions in thousandths), sorted ascending:
 * the measured values with atoms censored (`censorAtoms`, settings from the file's `atomGuard`).
 */
export interface SamplingDistributions {
  /** Floor-transfer offsets for a speaker change in each direction (the pooled list twice when pooled). */
  speakerChange: Record<ChannelDirection, readonly Centiseconds[]>;
  /** Gaps for consecutive utterances of the same speaker (TURN_HOLD gaps). */
  sameSpeaker: readonly Centiseconds[];
  /**
   * Where into the interrupted TURN barge-ins start, per direction (the pooled list twice when
   * pooled); empty when the file has no `bargeInLeads`.
   */
  bargeInLeads: Record<ChannelDirection, readonly Centiseconds[]>;
  /** Durations of backchannels inside the other's TURN. */
  backchannelDurations: readonly Centiseconds[];
  /** Relative positions of those backchannels in their host TURN, thousandths. */
  backchannelPositions: readonly number[];
  /** Backchannel rate per minute of host TURN speech, per listener channel (the pooled rate twice when pooled). */
  backchannelRatePerMinute: Record<Channel, number>;
}

const distributionCache = new WeakMap<TimingStatistics, SamplingDistributions>();

/**
 * The lists the timeline sampler targets, following `speakerChange.samplerUse`: `pooled` gives both
 * directions the union of both directions' floor-transfer offsets and both listeners the pooled
 * backchannel rate; `per-direction` gives each its own. Speaker-change offsets and TURN_HOLD gaps
 * have their atoms censored (`censorAtoms`, `atomGuardOf`). Computed once per statistics object
 * (cached; statistics values are treated as immutable).
 * @returns sorted integer centiseconds (positions in thousandths), frozen
 */
export function samplingDistributions(statistics: TimingStatistics): SamplingDistributions {
  const cached = distributionCache.get(statistics);
  if (cached !== undefined) return cached;
  const byDirection = statistics.speakerChange.byDirection;
  const guard = atomGuardOf(statistics);
  const toSortedCs = (values: readonly number[]) => Object.freeze(values.map(toCentiseconds).sort((a, b) => a - b));
  const censored = (values: readonly number[], lower: number | null = null) =>
    Object.freeze(censorAtoms(values.map(toCentiseconds), { limitFraction: guard.limitFraction, resolutionCs: guard.resolutionCs, lower }));
  const pooled = statistics.speakerChange.samplerUse === 'pooled';
  const pooledOffsets = pooled ? censored(CHANNEL_DIRECTIONS.flatMap((direction) => byDirection[direction].offsets)) : null;
  const leads = statistics.speakerChange.bargeInLeads;
  const pooledLeads = leads && pooled ? toSortedCs(CHANNEL_DIRECTIONS.flatMap((direction) => leads[direction].values)) : null;
  const leadsOf = (direction: ChannelDirection) => (leads ? (pooledLeads ?? toSortedCs(leads[direction].values)) : Object.freeze([] as number[]));
  const rates = statistics.backchannels.rates;
  const distributions: SamplingDistributions = Object.freeze({
    speakerChange: Object.freeze({
      'channel0->channel1': pooledOffsets ?? censored(byDirection['channel0->channel1'].offsets),
      'channel1->channel0': pooledOffsets ?? censored(byDirection['channel1->channel0'].offsets),
    }),
    sameSpeaker: censored(statistics.turnHoldGaps.values, DEFAULT_EVENT_THRESHOLDS.maxPauseInIpu + 1),
    bargeInLeads: Object.freeze({ 'channel0->channel1': leadsOf('channel0->channel1'), 'channel1->channel0': leadsOf('channel1->channel0') }),
    backchannelDurations: toSortedCs(statistics.backchannels.durations.values),
    backchannelPositions: Object.freeze(statistics.backchannels.relativePositions.values.map(toThousandths).sort((a, b) => a - b)),
    backchannelRatePerMinute: Object.freeze({
      0: pooled ? rates.pooled.perMinute : rates.channel0.perMinute,
      1: pooled ? rates.pooled.perMinute : rates.channel1.perMinute,
    }),
  });
  distributionCache.set(statistics, distributions);
  return distributions;
}

/** The fitted (smoothed) distributions the sampler draws from; grid units as `SamplingDistributions`. */
export interface TimingModel {
  /** Floor-transfer offsets per direction, centiseconds, unbounded. */
  speakerChange: Record<ChannelDirection, EmpiricalDistribution>;
  /**
   * The positive part of each direction's offsets (gaps ≥ 1 cs, atoms censored within it), support
   * ≥ 1 cs: what a speaker who never overlaps (the benchmark profile's system) draws. Null when the
   * direction has no gap.
   */
  speakerChangeGaps: Record<ChannelDirection, EmpiricalDistribution | null>;
  /**
   * The barge-in part of each direction's offsets (overlap > 0.40 s: offsets ≤ −41 cs), support
   * ≤ −41 cs; null when the direction has no barge-in.
   */
  speakerChangeBargeIns: Record<ChannelDirection, EmpiricalDistribution | null>;
  /** Where into the interrupted TURN barge-ins start (≥ 0 cs); null when the file has none. */
  bargeInLeads: Record<ChannelDirection, EmpiricalDistribution | null>;
  /** TURN_HOLD gaps, centiseconds, support ≥ 51 (a TURN_HOLD gap exceeds the 50 cs IPU pause, events.md rule 1). */
  sameSpeaker: EmpiricalDistribution;
  /** Backchannel durations, centiseconds, support [1, 80] (a BC lasts at most 0.80 s, events.md rule 2). */
  backchannelDurations: EmpiricalDistribution;
  /** Backchannel relative positions, thousandths, support [0, 999]. */
  backchannelPositions: EmpiricalDistribution;
  /** Backchannels per minute of host TURN speech, per listener channel. */
  backchannelRatePerMinute: Record<Channel, number>;
}

const modelCache = new WeakMap<TimingStatistics, TimingModel>();

/**
 * Fits the smoothed empirical distributions (empirical-distribution.ts) of a statistics file, once
 * per statistics object (cached). Support bounds come from events.md: TURN_HOLD gaps > 0.50 s
 * (rule 1), BC durations ≤ 0.80 s (rule 2), barge-in overlaps > 0.40 s (rule 4); relative positions
 * lie in [0, 1); gaps are ≥ 0.01 s.
 * @returns frozen fitted distributions
 * @throws DistributionFitError (empirical-distribution.ts) when a measured value lies outside its
 *   support (not possible for files written by `buildTimingStatistics` with the default thresholds)
 */
export function fitTimingModel(statistics: TimingStatistics): TimingModel {
  const cached = modelCache.get(statistics);
  if (cached !== undefined) return cached;
  const lists = samplingDistributions(statistics);
  const thresholds = DEFAULT_EVENT_THRESHOLDS;
  const pooled = statistics.speakerChange.samplerUse === 'pooled';
  const perDirection = <T>(fit: (direction: ChannelDirection) => T): Record<ChannelDirection, T> => {
    const first = fit('channel0->channel1');
    return Object.freeze({ 'channel0->channel1': first, 'channel1->channel0': pooled ? first : fit('channel1->channel0') });
  };
  const guard = atomGuardOf(statistics);
  // A part of a list (the gaps, the barge-ins) is itself a list the sampler targets: its atoms are
  // censored within its own support, so no value holds more than the limit of what is drawn from it.
  const part = (values: readonly number[], support: { lower?: number; upper?: number }) =>
    values.length === 0
      ? null
      : fitEmpiricalDistribution(censorAtoms(values, { limitFraction: guard.limitFraction, resolutionCs: guard.resolutionCs, lower: support.lower ?? null, upper: support.upper ?? null }), support);
  const orNull = (values: readonly number[], support: { lower?: number; upper?: number }) => (values.length === 0 ? null : fitEmpiricalDistribution(values, support));
  const model: TimingModel = Object.freeze({
    speakerChange: perDirection((direction) => fitEmpiricalDistribution(lists.speakerChange[direction])),
    speakerChangeGaps: perDirection((direction) => part(lists.speakerChange[direction].filter((offset) => offset >= 1), { lower: 1 })),
    speakerChangeBargeIns: perDirection((direction) =>
      part(lists.speakerChange[direction].filter((offset) => -offset > thresholds.bargeInOverlap), { upper: -(thresholds.bargeInOverlap + 1) }),
    ),
    bargeInLeads: perDirection((direction) => orNull(lists.bargeInLeads[direction], { lower: 0 })),
    sameSpeaker: fitEmpiricalDistribution(lists.sameSpeaker, { lower: thresholds.maxPauseInIpu + 1 }),
    backchannelDurations: fitEmpiricalDistribution(lists.backchannelDurations, { lower: 1, upper: thresholds.maxBackchannel }),
    backchannelPositions: fitEmpiricalDistribution(lists.backchannelPositions, { lower: 0, upper: THOUSANDTHS_PER_FRACTION - 1 }),
    backchannelRatePerMinute: lists.backchannelRatePerMinute,
  });
  modelCache.set(statistics, model);
  return model;
}

/**
 * Serializes statistics deterministically: validated first (so keys come out in schema order),
 * 2-space indentation, number lists wrapped at about 100 characters, trailing newline.
 * @throws TimingStatisticsError when the value is invalid
 */
export function formatTimingStatistics(statistics: TimingStatistics): string {
  const canonical = parseTimingStatistics(statistics, 'formatTimingStatistics');
  return `${formatJson(canonical, '')}\n`;
}

/**
 * Deterministic JSON text: 2-space indentation, arrays of numbers wrapped at about 100 characters,
 * keys in insertion order, `undefined` properties left out. Shared by the statistics file and the
 * fidelity report.
 */
export function formatJson(value: unknown, indent = ''): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((item) => typeof item === 'number')) {
      const lines: string[] = [];
      let line = '';
      for (const item of value as number[]) {
        const text = JSON.stringify(item);
        if (line !== '' && inner.length + line.length + text.length + 2 > 100) {
          lines.push(line);
          line = '';
        }
        line = line === '' ? text : `${line}, ${text}`;
      }
      lines.push(line);
      return `[\n${lines.map((text) => `${inner}${text}`).join(',\n')}\n${indent}]`;
    }
    return `[\n${value.map((item) => `${inner}${formatJson(item, inner)}`).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${formatJson(item, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value);
}
