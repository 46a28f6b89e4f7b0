/**
 * Timing statistics: the "fit" half of the timeline (style.md, lhotse meeting_simulation's
 * fit/simulate split). A versioned JSON file holding measured turn-taking timing of real
 * conversations, which `place-dialogue.ts` samples from.
 *
 * What the file holds (all values in **seconds**, 2 decimals, sorted ascending):
 * - `speakerChange.byDirection[direction].offsets`: floor-transfer offsets of every speaker change,
 *   `turn.start − floor.end` of each TURN_SHIFT (positive = gap, negative = overlap) and each
 *   BARGE_IN (always negative: −overlap, overlap > 0.40 s), per direction of the change.
 * - `turnHoldGaps.values`: `turn.start − floor.end` of each TURN_HOLD (same speaker keeps the floor;
 *   always > 0.50 s, since shorter silences merge into one IPU).
 * - `shortPauses.values`: length of each SHORTPAUSE (silence inside an IPU, 0.01–0.50 s).
 * - summaries of each (count, median, quartiles, minimum, maximum; for offsets also the fraction of
 *   overlaps, offset < 0, and of barge-ins, overlap > 0.40 s), checked against the values on load.
 * - provenance: corpus, licence, source files, recording count, total duration, thresholds, command.
 *
 * Directions are named by benchmark channel: `channel1->channel0` is a change from channel 1 to
 * channel 0. In MT-QA data channel 1 is the user and channel 0 the system (m3-format.md), so
 * `channel1->channel0` is "user->system" (the system responds) and `channel0->channel1` is
 * "system->user" (the user responds). For a source conversation, the file's provenance says which
 * speaker was put on which channel. `speakerChange.samplerUse` says how the sampler uses them:
 * `pooled` (both directions' offsets as one distribution for every speaker change; the default for
 * symmetric source conversations such as telephone calls, where the channel mapping carries no role)
 * or `per-direction` (each direction's own offsets; for sources whose channels have the roles).
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

/** Current (and only) version of the timing-statistics file format. */
export const TIMING_STATISTICS_VERSION = 1;

/** Direction of a speaker change, by benchmark channel. */
export type ChannelDirection = 'channel0->channel1' | 'channel1->channel0';

/** Both directions, in the order they are written. */
export const CHANNEL_DIRECTIONS: readonly ChannelDirection[] = ['channel0->channel1', 'channel1->channel0'] as const;

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

/** A time value in seconds with at most 2 decimals (a whole number of centiseconds). */
const secondsValue = z
  .number()
  .finite()
  .refine((value) => Math.abs(value * 100 - Math.round(value * 100)) < 1e-6, {
    message: 'must be a whole number of centiseconds (seconds with at most 2 decimals)',
  });

const sortedSeconds = z.array(secondsValue).refine(
  (values) => values.every((value, index) => index === 0 || (values[index - 1] as number) <= value),
  { message: 'values must be sorted ascending' },
);

const durationSummarySchema = z
  .object({
    count: z.number().int().nonnegative(),
    /**
     * Median, seconds (null when count is 0). Quantiles use simple-statistics `quantileSorted`
     * (linear interpolation, type 7 of R/numpy), rounded to 0.001 s.
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

const offsetListSchema = z.object({ summary: offsetSummarySchema, offsets: sortedSeconds }).strict();
const durationListSchema = z.object({ summary: durationSummarySchema, values: sortedSeconds }).strict();

const droppedSpeakerSchema = z
  .object({ recording: z.string(), speaker: z.string(), talkSeconds: z.number().nonnegative() })
  .strict();

const provenanceSchema = z
  .object({
    /** Corpus the timings were measured on. */
    corpus: z.string().min(1),
    licence: z.string().min(1),
    /** Where the source files come from (repository, commit). */
    origin: z.string().min(1),
    /** What the source paths are relative to. */
    pathsRelativeTo: z.string().min(1),
    /** Every source file read, sorted. */
    sourcePaths: z.array(z.string()).min(1),
    /** Source files read. */
    recordingCount: z.number().int().nonnegative(),
    /** Recordings measured (recordingCount minus duplicates skipped). */
    recordingsUsed: z.number().int().nonnegative(),
    /** Files whose timing content repeats an earlier file; skipped. */
    duplicateRecordings: z.array(z.object({ path: z.string(), sameAs: z.string() }).strict()),
    /** Sum over the recordings used of the end of their last speech, seconds. */
    totalDurationSeconds: z.number().nonnegative(),
    /** How speakers were mapped to channels 0 and 1. */
    channelMapping: z.string().min(1),
    /** Speakers beyond the two kept per recording, with their talk time. */
    droppedSpeakers: z.array(droppedSpeakerSchema),
    /** Measurements discarded because a dropped speaker spoke inside the measured interval. */
    discardedNearDroppedSpeakers: z
      .object({
        speakerChanges: z.number().int().nonnegative(),
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
    /** Command that wrote the file. No date: the file is deterministic. */
    command: z.string().min(1),
    notes: z.array(z.string()),
  })
  .strict();

/** zod schema of the timing-statistics file (version 1). Summaries must match their values. */
export const timingStatisticsSchema = z
  .object({
    version: z.literal(TIMING_STATISTICS_VERSION),
    language: z.enum(['en', 'ja']),
    units: z.literal('seconds'),
    provenance: provenanceSchema,
    speakerChange: z
      .object({
        samplerUse: z.enum(['pooled', 'per-direction']),
        /** Summary of both directions together (their offsets are not repeated in the file). */
        pooledSummary: offsetSummarySchema,
        byDirection: z
          .object({ 'channel0->channel1': offsetListSchema, 'channel1->channel0': offsetListSchema })
          .strict(),
      })
      .strict(),
    turnHoldGaps: durationListSchema,
    shortPauses: durationListSchema,
  })
  .strict()
  .superRefine((statistics, context) => {
    const check = (actual: unknown, expected: unknown, where: (string | number)[]) => {
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        context.addIssue({
          code: 'custom',
          path: where,
          message: `summary ${JSON.stringify(actual)} does not match its values (expected ${JSON.stringify(expected)})`,
        });
      }
    };
    const byDirection = statistics.speakerChange.byDirection;
    for (const direction of CHANNEL_DIRECTIONS) {
      const list = byDirection[direction];
      check(list.summary, summarizeOffsets(list.offsets.map(toCentiseconds)), ['speakerChange', 'byDirection', direction, 'summary']);
    }
    const pooled = CHANNEL_DIRECTIONS.flatMap((direction) => byDirection[direction].offsets.map(toCentiseconds));
    check(statistics.speakerChange.pooledSummary, summarizeOffsets(pooled), ['speakerChange', 'pooledSummary']);
    check(statistics.turnHoldGaps.summary, summarizeDurations(statistics.turnHoldGaps.values.map(toCentiseconds)), ['turnHoldGaps', 'summary']);
    check(statistics.shortPauses.summary, summarizeDurations(statistics.shortPauses.values.map(toCentiseconds)), ['shortPauses', 'summary']);
  });

/** A parsed, validated timing-statistics file. Times in seconds. */
export type TimingStatistics = z.infer<typeof timingStatisticsSchema>;
/** Summary of offsets (seconds; fractions in [0, 1]). */
export type OffsetSummary = z.infer<typeof offsetSummarySchema>;
/** Summary of gaps or pauses (seconds). */
export type DurationSummary = z.infer<typeof durationSummarySchema>;
/** Provenance block of a timing-statistics file. */
export type TimingProvenance = z.infer<typeof provenanceSchema>;

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
  return Math.round(seconds * 100);
}

/** Integer centiseconds -> seconds, exact to 2 decimals. */
function toSeconds(centiseconds: number): number {
  return Number((centiseconds / 100).toFixed(2));
}

/** Rounds a statistic in centiseconds (quantiles may fall between two values) to 0.001 s. */
function statisticToSeconds(centiseconds: number): number {
  return Number((centiseconds / 100).toFixed(3));
}

function fraction(part: number, whole: number): number {
  return whole === 0 ? 0 : Number((part / whole).toFixed(4));
}

/**
 * Summary of gap or pause lengths.
 * @param valuesCs lengths in integer centiseconds, any order
 * @returns count, median, quartiles (simple-statistics `quantileSorted`: linear interpolation,
 *   type 7 of R/numpy), minimum and maximum in
 *   seconds rounded to 0.001 s; null statistics when there are no values
 */
export function summarizeDurations(valuesCs: readonly Centiseconds[]): DurationSummary {
  const sorted = [...valuesCs].sort((a, b) => a - b);
  if (sorted.length === 0) {
    return { count: 0, median: null, firstQuartile: null, thirdQuartile: null, minimum: null, maximum: null };
  }
  return {
    count: sorted.length,
    median: statisticToSeconds(quantileSorted(sorted, 0.5)),
    firstQuartile: statisticToSeconds(quantileSorted(sorted, 0.25)),
    thirdQuartile: statisticToSeconds(quantileSorted(sorted, 0.75)),
    minimum: statisticToSeconds(sorted[0] as number),
    maximum: statisticToSeconds(sorted[sorted.length - 1] as number),
  };
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

/** Measured values, in integer centiseconds, from which a statistics file is built. */
export interface TimingMeasurements {
  /** Floor-transfer offsets of TURN_SHIFTs and BARGE_INs (negative = overlap), per direction. */
  speakerChangeOffsets: Record<ChannelDirection, Centiseconds[]>;
  /** TURN_HOLD gaps (`turn.start − floor.end`, same channel). */
  turnHoldGaps: Centiseconds[];
  /** SHORTPAUSE lengths. */
  shortPauses: Centiseconds[];
}

/**
 * Builds a statistics value from measurements: sorts every list, converts centiseconds to seconds
 * (2 decimals), computes the summaries, and validates the result against the schema.
 * @param input language, provenance, measurements (centiseconds), sampler policy (default `pooled`)
 * @throws TimingStatisticsError (source `buildTimingStatistics`) when the result is invalid, e.g.
 *   a non-integer centisecond value
 */
export function buildTimingStatistics(input: {
  language: Language;
  provenance: TimingProvenance;
  measurements: TimingMeasurements;
  samplerUse?: 'pooled' | 'per-direction';
}): TimingStatistics {
  const { measurements } = input;
  const sortedCs = (values: readonly Centiseconds[]) => [...values].sort((a, b) => a - b);
  const offsetList = (values: readonly Centiseconds[]) => ({
    summary: summarizeOffsets(values),
    offsets: sortedCs(values).map(toSeconds),
  });
  const durationList = (values: readonly Centiseconds[]) => ({
    summary: summarizeDurations(values),
    values: sortedCs(values).map(toSeconds),
  });
  const candidate = {
    version: TIMING_STATISTICS_VERSION,
    language: input.language,
    units: 'seconds',
    provenance: input.provenance,
    speakerChange: {
      samplerUse: input.samplerUse ?? 'pooled',
      pooledSummary: summarizeOffsets(CHANNEL_DIRECTIONS.flatMap((direction) => measurements.speakerChangeOffsets[direction])),
      byDirection: {
        'channel0->channel1': offsetList(measurements.speakerChangeOffsets['channel0->channel1']),
        'channel1->channel0': offsetList(measurements.speakerChangeOffsets['channel1->channel0']),
      },
    },
    turnHoldGaps: durationList(measurements.turnHoldGaps),
    shortPauses: durationList(measurements.shortPauses),
  };
  return parseTimingStatistics(candidate, 'buildTimingStatistics');
}

/**
 * Validates a parsed JSON value as a timing-statistics file.
 * @param value the JSON value
 * @param source file name or description for error messages
 * @throws TimingStatisticsError naming `source` and every invalid field path (including summaries
 *   that do not match their values, and an unsupported `version`)
 */
export function parseTimingStatistics(value: unknown, source: string): TimingStatistics {
  const result = timingStatisticsSchema.safeParse(value);
  if (!result.success) {
    const issues = result.error.issues
      .slice(0, 10)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    throw new TimingStatisticsError(source, `invalid timing statistics: ${issues}`);
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
 * Loads the shipped default statistics of a language (derived from real CallFriend calls by
 * `scripts/derive-default-timing.ts`).
 * @throws TimingStatisticsError as `loadTimingStatistics`
 */
export async function loadDefaultTimingStatistics(language: Language): Promise<TimingStatistics> {
  return loadTimingStatistics(defaultTimingStatisticsPath(language));
}

/** The distributions the sampler draws from, in integer centiseconds, sorted ascending. */
export interface SamplingDistributions {
  /** Floor-transfer offsets for a speaker change in each direction (the same list twice when pooled). */
  speakerChange: Record<ChannelDirection, readonly Centiseconds[]>;
  /** Gaps for consecutive utterances of the same speaker (TURN_HOLD gaps). */
  sameSpeaker: readonly Centiseconds[];
}

const distributionCache = new WeakMap<TimingStatistics, SamplingDistributions>();

/**
 * The distributions the timeline sampler uses, following `speakerChange.samplerUse`: `pooled` gives
 * both directions the union of both directions' offsets; `per-direction` gives each its own.
 * Computed once per statistics object (cached; statistics values are treated as immutable).
 * @returns sorted integer centiseconds, frozen
 */
export function samplingDistributions(statistics: TimingStatistics): SamplingDistributions {
  const cached = distributionCache.get(statistics);
  if (cached !== undefined) return cached;
  const byDirection = statistics.speakerChange.byDirection;
  const toSortedCs = (values: readonly number[]) => Object.freeze(values.map(toCentiseconds).sort((a, b) => a - b));
  const pooled =
    statistics.speakerChange.samplerUse === 'pooled'
      ? toSortedCs(CHANNEL_DIRECTIONS.flatMap((direction) => byDirection[direction].offsets))
      : null;
  const distributions: SamplingDistributions = Object.freeze({
    speakerChange: Object.freeze({
      'channel0->channel1': pooled ?? toSortedCs(byDirection['channel0->channel1'].offsets),
      'channel1->channel0': pooled ?? toSortedCs(byDirection['channel1->channel0'].offsets),
    }),
    sameSpeaker: toSortedCs(statistics.turnHoldGaps.values),
  });
  distributionCache.set(statistics, distributions);
  return distributions;
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

function formatJson(value: unknown, indent: string): string {
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
