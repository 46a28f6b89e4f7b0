/**
 * The timing-statistics file (`{language}.timing.json`, `duplexsynth measure`): the "fit" half of the
 * timeline (style.md, lhotse meeting_simulation's fit/simulate split). A versioned JSON file holding
 * the measured turn-taking timing of real conversations (pipeline/timeline/measure-turn-taking.ts),
 * which pipeline/timeline/place-dialogue.ts samples from. This module holds its zod schema and types;
 * pipeline/timeline/timing-statistics.ts builds, checks against the values, writes and reads it.
 *
 * ## Version 2 (only version 2 is read and written)
 * Version 1 files (one offset list per direction mixing floor transfers with overlaps inside the
 * other's turn, no backchannels) are refused with a message saying how to regenerate them: the
 * missing measurements cannot be recovered from a version 1 file.
 *
 * What the file holds (times in **seconds**, 2 decimals; relative positions as fractions of the host
 * TURN, 3 decimals; every list sorted ascending):
 * - `speakerChange.byDirection[direction].offsets`: **floor-transfer offsets** (Heldner & Edlund 2010,
 *   "Pauses, gaps and overlaps in conversations", J. Phonetics 38): `turn.start − floor.end` of each
 *   TURN_SHIFT or BARGE_IN (docs/events.md rule 4) whose TURN ends after the floor TURN, so the floor moves
 *   to the new speaker (positive = gap, negative = overlap).
 * - `speakerChange.withinTurnOverlaps`: the other speaker's TURNs that start and end inside the floor
 *   TURN (Heldner & Edlund's "within-speaker overlaps"): labelled BARGE_IN by the benchmark rules (their
 *   overlap always exceeds 0.40 s, since a TURN lasts > 0.80 s) but not floor transfers. Measured and
 *   reported; the question/answer timeline does not generate them.
 * - `speakerChange.benchmarkRelationsSummary`: all TURN_SHIFT and BARGE_IN offsets together (both
 *   kinds above), i.e. the barge-in rate the benchmark annotation of the real data shows.
 * - `turnHoldGaps.values`: `turn.start − floor.end` of each TURN_HOLD (always > 0.50 s).
 * - `shortPauses.values`: length of each SHORTPAUSE (silence inside an IPU, 0.01–0.50 s).
 * - `backchannels`: BCs (IPUs ≤ 0.80 s, docs/events.md rule 2) whose start lies inside a TURN of the
 *   other channel (the benchmark keeps only those, docs/dataset-format.md): count and rate **per minute of the
 *   other speaker's TURN speech** (sum of the other channel's TURN lengths, pauses included) per
 *   listener channel and pooled; their durations; their relative position inside the host TURN,
 *   `(bc.start − turn.start) / (turn.end − turn.start)` in [0, 1); and the count of BCs outside any
 *   TURN of the other channel (not used).
 * - a summary per list (count, median, quartiles, minimum, maximum; for offsets also the fraction of
 *   overlaps, offset < 0, and of barge-ins, overlap > 0.40 s) and the list's kernel bandwidth
 *   (pipeline/timeline/empirical-distribution.ts), all checked against the values on load
 *   (pipeline/timeline/timing-statistics.ts `timingStatisticsFileSchema`; this schema checks the shape,
 *   the grids and the order of the lists).
 * - provenance: corpus, format, licence, origin, sources, recording count, durations, counts,
 *   thresholds, voice activity detection, smoothing, the command that wrote the file, notes.
 *
 * Directions are named by benchmark channel: `channel1->channel0` is a change from channel 1 to
 * channel 0. In MT-QA data channel 1 is the user and channel 0 the system (docs/dataset-format.md), so
 * `channel1->channel0` is "user->system" (the system responds) and `channel0->channel1` is
 * "system->user". `speakerChange.samplerUse` says how the sampler uses the measurements: `pooled`
 * (both directions as one distribution, and the pooled backchannel rate, for symmetric conversations
 * such as telephone calls where the channel carries no role) or `per-direction`.
 *
 * Thresholds come from docs/events.md (IPU pause ≤ 0.50 s, BC ≤ 0.80 s, barge-in overlap
 * > 0.40 s), as implemented in pipeline/events (`DEFAULT_EVENT_THRESHOLDS`).
 */
import { z } from 'zod';
import { languageCodeSchema } from './language-code.ts';

/** Current (and only readable) version of the timing-statistics file format. */
export const TIMING_STATISTICS_VERSION = 2;

/** Direction of a speaker change, by benchmark channel. */
export type ChannelDirection = 'channel0->channel1' | 'channel1->channel0';

/** Both directions, in the order they are written. */
export const CHANNEL_DIRECTIONS: readonly ChannelDirection[] = ['channel0->channel1', 'channel1->channel0'] as const;

/** Key of a listener channel in the backchannel rates. */
export type ListenerKey = 'channel0' | 'channel1';

function onGrid(stepsPerUnit: number) {
  return z
    .number()
    .finite()
    .refine((value) => Math.abs(value * stepsPerUnit - Math.round(value * stepsPerUnit)) < 1e-6, {
      message:
        stepsPerUnit === 100
          ? 'must be a whole number of centiseconds (seconds with at most 2 decimals)'
          : 'must have at most 3 decimals',
    });
}

function sortedList(stepsPerUnit: number) {
  return z
    .array(onGrid(stepsPerUnit))
    .refine((values) => values.every((value, index) => index === 0 || (values[index - 1] as number) <= value), {
      message: 'values must be sorted ascending',
    });
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
    /** Fraction of offsets < −0.40 s (overlap > 0.40 s: BARGE_IN, docs/events.md rule 4). */
    bargeInFraction: z.number().min(0).max(1),
  })
  .strict();

/** Kernel bandwidth of a list (pipeline/timeline/empirical-distribution.ts), in the list's unit, rounded to 4 decimals. */
const bandwidthSchema = z.number().nonnegative();

const offsetListSchema = z
  .object({ summary: offsetSummarySchema, kernelBandwidth: bandwidthSchema, offsets: sortedList(100) })
  .strict();
const durationListSchema = z
  .object({ summary: durationSummarySchema, kernelBandwidth: bandwidthSchema, values: sortedList(100) })
  .strict();
const positionListSchema = z
  .object({ summary: durationSummarySchema, kernelBandwidth: bandwidthSchema, values: sortedList(1000) })
  .strict();

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

/**
 * zod schema of the timing-statistics file (version 2): its shape, grids and sorted lists. That the
 * summaries, bandwidths, rates and atoms match their values is checked on top of it by
 * pipeline/timeline/timing-statistics.ts `timingStatisticsFileSchema` (what is read and written).
 */
export const timingStatisticsSchema = z
  .object({
    version: z.literal(TIMING_STATISTICS_VERSION),
    language: languageCodeSchema,
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
  .strict();

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
/** One atom of a list (the `atomGuard.atoms` entries of a statistics file). */
export type TimingAtom = z.infer<typeof atomSchema>;
