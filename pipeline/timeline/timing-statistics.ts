/**
 * Timing statistics: the "fit" half of the timeline (style.md, lhotse meeting_simulation's
 * fit/simulate split). A versioned JSON file holding the measured turn-taking timing of real
 * conversations (pipeline/timeline/measure-turn-taking.ts), which `place-dialogue.ts` samples from.
 * Its format (version 2; version 1 files are refused with a message saying how to regenerate them),
 * schema and types: pipeline/model/timing-statistics.ts. This module builds a statistics value from
 * measurements, checks it against its values (`timingStatisticsFileSchema`), writes it
 * (`formatTimingStatistics`) and reads it (`loadTimingStatistics`); the parts it re-exports:
 * - timing-summaries.ts: grid conversions, summaries and bandwidths of the lists;
 * - timing-atoms.ts: the atom guard (`findAtoms`, `censorAtoms`, `atomGuardOf`);
 * - timing-model.ts: what the sampler draws from (`samplingDistributions`, `fitTimingModel`);
 * - pipeline/storage/readable-json.ts: `formatJson`, the file's JSON text.
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
import { z } from 'zod';
import { DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import type { Centiseconds, Channel, Language } from '../model/types.ts';
import {
  CHANNEL_DIRECTIONS,
  TIMING_STATISTICS_VERSION,
  timingStatisticsSchema,
  type ChannelDirection,
  type TimingProvenance,
  type TimingStatistics,
} from '../model/timing-statistics.ts';
import { describeIssues } from '../model/validation.ts';
import { formatJson } from '../storage/readable-json.ts';
import { readRecord } from '../storage/json-records.ts';
import { packageFile } from '../storage/package-files.ts';
import { languagePackOf } from '../model/language-pack.ts';
import {
  ATOM_LIMIT_FRACTION,
  ATOM_TREATMENT,
  DEFAULT_TIMING_RESOLUTION_SECONDS,
  atomCheckedLists,
  findAtoms,
} from './timing-atoms.ts';
import {
  bandwidthFor,
  fromGrid,
  ratePerMinute,
  summarizeDurations,
  summarizeOffsets,
  summarizePositions,
  toCentiseconds,
  toThousandths,
} from './timing-summaries.ts';

export {
  CHANNEL_DIRECTIONS,
  TIMING_STATISTICS_VERSION,
  timingStatisticsSchema,
  type BackchannelRate,
  type ChannelDirection,
  type DurationSummary,
  type ListenerKey,
  type OffsetSummary,
  type TimingAtom,
  type TimingProvenance,
  type TimingStatistics,
} from '../model/timing-statistics.ts';
export { formatJson } from '../storage/readable-json.ts';
export {
  ATOM_LIMIT_FRACTION,
  ATOM_TREATMENT,
  DEFAULT_TIMING_RESOLUTION_SECONDS,
  MINIMUM_ATOM_COUNT,
  atomGuardOf,
  censorAtoms,
  findAtoms,
} from './timing-atoms.ts';
export { fitTimingModel, samplingDistributions, type SamplingDistributions, type TimingModel } from './timing-model.ts';
export { summarizeDurations, summarizeOffsets, summarizePositions } from './timing-summaries.ts';

/**
 * The direction of a speaker change from channel `from` to channel `to`.
 * @throws RangeError when `from === to` (not a speaker change)
 */
export function channelDirection(from: Channel, to: Channel): ChannelDirection {
  if (from === to) throw new RangeError(`channel ${from} -> ${to} is not a speaker change`);
  return from === 0 ? 'channel0->channel1' : 'channel1->channel0';
}

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

/** What a version 1 file gets instead of a reading (its missing measurements cannot be recovered). */
const VERSION_1_REFUSAL =
  'timing statistics version 1 cannot be read (it lacks floor-transfer/within-turn separation and backchannels); ' +
  'regenerate it from the source recordings with `duplexsynth measure` (version 2)';

/**
 * The timing-statistics file as read and written: a version 1 file is refused (`VERSION_1_REFUSAL`),
 * then the shape (pipeline/model/timing-statistics.ts `timingStatisticsSchema`) is checked, then that
 * every summary, bandwidth, rate and atom matches its values.
 */
export const timingStatisticsFileSchema = z
  .unknown()
  .superRefine((value, context) => {
    if (value !== null && typeof value === 'object' && (value as { version?: unknown }).version === 1) {
      context.addIssue({ code: 'custom', path: ['version'], message: VERSION_1_REFUSAL });
    }
  })
  .pipe(
    timingStatisticsSchema.superRefine((statistics, context) => {
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
        checkList(
          speakerChange.byDirection[direction],
          speakerChange.byDirection[direction].offsets.map(toCentiseconds),
          summarizeOffsets,
          ['speakerChange', 'byDirection', direction],
        );
        checkList(
          speakerChange.withinTurnOverlaps[direction],
          speakerChange.withinTurnOverlaps[direction].offsets.map(toCentiseconds),
          summarizeOffsets,
          ['speakerChange', 'withinTurnOverlaps', direction],
        );
      }
      const transfers = CHANNEL_DIRECTIONS.flatMap((direction) =>
        speakerChange.byDirection[direction].offsets.map(toCentiseconds),
      );
      const within = CHANNEL_DIRECTIONS.flatMap((direction) =>
        speakerChange.withinTurnOverlaps[direction].offsets.map(toCentiseconds),
      );
      check(speakerChange.pooledSummary, summarizeOffsets(transfers), ['speakerChange', 'pooledSummary']);
      check(speakerChange.benchmarkRelationsSummary, summarizeOffsets([...transfers, ...within]), [
        'speakerChange',
        'benchmarkRelationsSummary',
      ]);
      checkList(statistics.turnHoldGaps, statistics.turnHoldGaps.values.map(toCentiseconds), summarizeDurations, [
        'turnHoldGaps',
      ]);
      checkList(statistics.shortPauses, statistics.shortPauses.values.map(toCentiseconds), summarizeDurations, [
        'shortPauses',
      ]);
      checkList(backchannels.durations, backchannels.durations.values.map(toCentiseconds), summarizeDurations, [
        'backchannels',
        'durations',
      ]);
      const positions = backchannels.relativePositions.values.map(toThousandths);
      check(backchannels.relativePositions.summary, summarizePositions(positions), [
        'backchannels',
        'relativePositions',
        'summary',
      ]);
      check(backchannels.relativePositions.kernelBandwidth, bandwidthFor(positions, 1000), [
        'backchannels',
        'relativePositions',
        'kernelBandwidth',
      ]);
      for (const key of ['channel0', 'channel1', 'pooled'] as const) {
        const rate = backchannels.rates[key];
        check(rate.perMinute, ratePerMinute(rate.count, toCentiseconds(rate.hostTurnSeconds)), [
          'backchannels',
          'rates',
          key,
          'perMinute',
        ]);
      }
      check(
        [backchannels.rates.pooled.count, toCentiseconds(backchannels.rates.pooled.hostTurnSeconds)],
        [
          backchannels.rates.channel0.count + backchannels.rates.channel1.count,
          toCentiseconds(backchannels.rates.channel0.hostTurnSeconds) +
            toCentiseconds(backchannels.rates.channel1.hostTurnSeconds),
        ],
        ['backchannels', 'rates', 'pooled'],
      );
      if (speakerChange.bargeInLeads) {
        for (const direction of CHANNEL_DIRECTIONS) {
          const leads = speakerChange.bargeInLeads[direction];
          checkList(leads, leads.values.map(toCentiseconds), summarizeDurations, [
            'speakerChange',
            'bargeInLeads',
            direction,
          ]);
        }
      }
      if (statistics.atomGuard) {
        const guard = statistics.atomGuard;
        const expected = findAtoms(atomCheckedLists(statistics), guard.limitFraction);
        check(guard.atoms, expected, ['atomGuard', 'atoms']);
      }
      check(backchannels.durations.values.length, backchannels.rates.pooled.count, [
        'backchannels',
        'durations',
        'values',
      ]);
      check(backchannels.relativePositions.values.length, backchannels.rates.pooled.count, [
        'backchannels',
        'relativePositions',
        'values',
      ]);
    }),
  );

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
        ...CHANNEL_DIRECTIONS.map((direction) => ({
          list: `speakerChange.byDirection.${direction}`,
          valuesCs: measurements.floorTransferOffsets[direction],
        })),
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
    throw new TimingStatisticsError(source, VERSION_1_REFUSAL);
  }
  const result = timingStatisticsFileSchema.safeParse(value);
  if (!result.success) {
    throw new TimingStatisticsError(source, `invalid timing statistics: ${describeIssues(result.error.issues)}`);
  }
  return result.data;
}

/**
 * Reads and validates a timing-statistics JSON file (pipeline/storage/json-records.ts `readRecord`
 * with `timingStatisticsFileSchema`).
 * @throws TimingStatisticsError naming the file when it cannot be read, is not JSON, or is invalid
 */
export async function loadTimingStatistics(filePath: string): Promise<TimingStatistics> {
  return readRecord(filePath, timingStatisticsFileSchema, {
    makeError: (message, file) =>
      new TimingStatisticsError(file, message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message),
  });
}

/** Path of the shipped default statistics for a language (`pipeline/timeline/defaults/{language}.timing.json`). */
export function defaultTimingStatisticsPath(language: Language): string {
  return packageFile('pipeline', 'timeline', 'defaults', `${language}.timing.json`);
}

/** Name of the cross-language prior among the shipped statistics (`prior.timing.json`, scripts/derive-default-timing.ts). */
export const TIMING_PRIOR_NAME = 'prior';

/**
 * The shipped statistics a language builds with when the config names none: its language pack's
 * measured file (`timing.statistics`), or the cross-language prior when the pack has none (Stivers et
 * al. 2009, PNAS 106:10587: turn-transition offsets share one distribution across 10 languages, so the
 * pooled telephone calls of en, ja, zh and de stand in; the build warns and says so in the summary).
 * @returns the file, and whether it is the prior
 * @throws LanguagePackError for a language without a pack
 */
export function shippedTimingStatisticsOf(language: Language): { file: string; prior: boolean } {
  const name = languagePackOf(language).timing.statistics;
  return name === null
    ? { file: defaultTimingStatisticsPath(TIMING_PRIOR_NAME), prior: true }
    : { file: defaultTimingStatisticsPath(name), prior: false };
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
 * Serializes statistics deterministically: validated first (so keys come out in schema order),
 * 2-space indentation, number lists wrapped at about 100 characters, trailing newline.
 * @throws TimingStatisticsError when the value is invalid
 */
export function formatTimingStatistics(statistics: TimingStatistics): string {
  const canonical = parseTimingStatistics(statistics, 'formatTimingStatistics');
  return `${formatJson(canonical, '')}\n`;
}
