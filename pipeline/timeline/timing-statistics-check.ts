/**
 * Reading a timing-statistics value as a file: refuses a version 1 file (with a message saying how to
 * regenerate it), checks the shape (pipeline/model/timing-statistics.ts `timingStatisticsSchema`), then
 * checks that every summary, bandwidth, rate and atom matches the values it was computed from.
 */
import { z } from 'zod';
import { CHANNEL_DIRECTIONS, timingStatisticsSchema, type TimingStatistics } from '../model/timing-statistics.ts';
import { describeIssues } from '../model/validation.ts';
import { atomCheckedLists, findAtoms } from './timing-atoms.ts';
import {
  bandwidthFor,
  ratePerMinute,
  summarizeDurations,
  summarizeOffsets,
  summarizePositions,
  toCentiseconds,
  toThousandths,
} from './timing-summaries.ts';

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
export const VERSION_1_REFUSAL =
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
