/**
 * Builds a timing-statistics value from measured turn-taking values (measure-turn-taking.ts): sorted
 * lists in seconds, their summaries, bandwidths and rates, the counts, thresholds, smoothing
 * description and atom guard, validated as a file (timing-statistics-check.ts).
 */
import { DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import type { Centiseconds, Channel, Language } from '../model/types.ts';
import {
  CHANNEL_DIRECTIONS,
  TIMING_STATISTICS_VERSION,
  type ChannelDirection,
  type TimingProvenance,
  type TimingStatistics,
} from '../model/timing-statistics.ts';
import { ATOM_LIMIT_FRACTION, ATOM_TREATMENT, DEFAULT_TIMING_RESOLUTION_SECONDS, findAtoms } from './timing-atoms.ts';
import { parseTimingStatistics } from './timing-statistics-check.ts';
import {
  bandwidthFor,
  fromGrid,
  ratePerMinute,
  summarizeDurations,
  summarizeOffsets,
  summarizePositions,
} from './timing-summaries.ts';

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
