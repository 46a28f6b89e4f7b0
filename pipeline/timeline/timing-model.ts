/**
 * What the timeline sampler draws from, made from a timing-statistics file: the target lists with
 * their atoms censored (`samplingDistributions`) and the fitted smoothed distributions
 * (`fitTimingModel`, empirical-distribution.ts), each computed once per statistics object.
 */
import { DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import type { Centiseconds, Channel } from '../model/types.ts';
import { CHANNEL_DIRECTIONS, type ChannelDirection, type TimingStatistics } from '../model/timing-statistics.ts';
import { fitEmpiricalDistribution, type EmpiricalDistribution } from './empirical-distribution.ts';
import { atomGuardOf, censorAtoms } from './timing-atoms.ts';
import { THOUSANDTHS_PER_FRACTION, toCentiseconds, toThousandths } from './timing-summaries.ts';

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
    Object.freeze(
      censorAtoms(values.map(toCentiseconds), {
        limitFraction: guard.limitFraction,
        resolutionCs: guard.resolutionCs,
        lower,
      }),
    );
  const pooled = statistics.speakerChange.samplerUse === 'pooled';
  const pooledOffsets = pooled
    ? censored(CHANNEL_DIRECTIONS.flatMap((direction) => byDirection[direction].offsets))
    : null;
  const leads = statistics.speakerChange.bargeInLeads;
  const pooledLeads =
    leads && pooled ? toSortedCs(CHANNEL_DIRECTIONS.flatMap((direction) => leads[direction].values)) : null;
  const leadsOf = (direction: ChannelDirection) =>
    leads ? (pooledLeads ?? toSortedCs(leads[direction].values)) : Object.freeze([] as number[]);
  const rates = statistics.backchannels.rates;
  const distributions: SamplingDistributions = Object.freeze({
    speakerChange: Object.freeze({
      'channel0->channel1': pooledOffsets ?? censored(byDirection['channel0->channel1'].offsets),
      'channel1->channel0': pooledOffsets ?? censored(byDirection['channel1->channel0'].offsets),
    }),
    sameSpeaker: censored(statistics.turnHoldGaps.values, DEFAULT_EVENT_THRESHOLDS.maxPauseInIpu + 1),
    bargeInLeads: Object.freeze({
      'channel0->channel1': leadsOf('channel0->channel1'),
      'channel1->channel0': leadsOf('channel1->channel0'),
    }),
    backchannelDurations: toSortedCs(statistics.backchannels.durations.values),
    backchannelPositions: Object.freeze(
      statistics.backchannels.relativePositions.values.map(toThousandths).sort((a, b) => a - b),
    ),
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
  /**
   * TURN_HOLD gaps, centiseconds, support ≥ 51 (a TURN_HOLD gap exceeds the 50 cs IPU pause,
   * docs/events.md step 1).
   */
  sameSpeaker: EmpiricalDistribution;
  /** Backchannel durations, centiseconds, support [1, 80] (a BC lasts at most 0.80 s, docs/events.md step 2). */
  backchannelDurations: EmpiricalDistribution;
  /** Backchannel relative positions, thousandths, support [0, 999]. */
  backchannelPositions: EmpiricalDistribution;
  /** Backchannels per minute of host TURN speech, per listener channel. */
  backchannelRatePerMinute: Record<Channel, number>;
}

const modelCache = new WeakMap<TimingStatistics, TimingModel>();

/**
 * Fits the smoothed empirical distributions (empirical-distribution.ts) of a statistics file, once
 * per statistics object (cached). Support bounds come from docs/events.md: TURN_HOLD gaps > 0.50 s
 * (step 1), BC durations ≤ 0.80 s (step 2), barge-in overlaps > 0.40 s (step 3); relative positions
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
    return Object.freeze({
      'channel0->channel1': first,
      'channel1->channel0': pooled ? first : fit('channel1->channel0'),
    });
  };
  const guard = atomGuardOf(statistics);
  // A part of a list (the gaps, the barge-ins) is itself a list the sampler targets: its atoms are
  // censored within its own support, so no value holds more than the limit of what is drawn from it.
  const part = (values: readonly number[], support: { lower?: number; upper?: number }) =>
    values.length === 0
      ? null
      : fitEmpiricalDistribution(
          censorAtoms(values, {
            limitFraction: guard.limitFraction,
            resolutionCs: guard.resolutionCs,
            lower: support.lower ?? null,
            upper: support.upper ?? null,
          }),
          support,
        );
  const orNull = (values: readonly number[], support: { lower?: number; upper?: number }) =>
    values.length === 0 ? null : fitEmpiricalDistribution(values, support);
  const model: TimingModel = Object.freeze({
    speakerChange: perDirection((direction) => fitEmpiricalDistribution(lists.speakerChange[direction])),
    speakerChangeGaps: perDirection((direction) =>
      part(
        lists.speakerChange[direction].filter((offset) => offset >= 1),
        { lower: 1 },
      ),
    ),
    speakerChangeBargeIns: perDirection((direction) =>
      part(
        lists.speakerChange[direction].filter((offset) => -offset > thresholds.bargeInOverlap),
        { upper: -(thresholds.bargeInOverlap + 1) },
      ),
    ),
    bargeInLeads: perDirection((direction) => orNull(lists.bargeInLeads[direction], { lower: 0 })),
    sameSpeaker: fitEmpiricalDistribution(lists.sameSpeaker, { lower: thresholds.maxPauseInIpu + 1 }),
    backchannelDurations: fitEmpiricalDistribution(lists.backchannelDurations, {
      lower: 1,
      upper: thresholds.maxBackchannel,
    }),
    backchannelPositions: fitEmpiricalDistribution(lists.backchannelPositions, {
      lower: 0,
      upper: THOUSANDTHS_PER_FRACTION - 1,
    }),
    backchannelRatePerMinute: lists.backchannelRatePerMinute,
  });
  modelCache.set(statistics, model);
  return model;
}
