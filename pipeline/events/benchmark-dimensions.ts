/**
 * The benchmark's dimensions a dataset gives no samples for. M3-DuplexBench scores turn-taking on
 * TURN_SHIFT samples, pause handling on TURN_HOLD (and SHORTPAUSE, which `scripts/pipe.sh` ignores)
 * samples and backchannels on BC samples of a base dataset, and barge-in on the BARGE_IN samples of
 * its `_bargein` variant (whose loader ignores the other three). A sample is an event the loader keeps
 * under one of the two settings pipe.sh uses (./evaluable-events.ts `classifyEvents`), so an event
 * in the file that the loader drops does not count.
 */
import type { EvaluableEventsReport, EvaluationEventType } from './evaluable-events.ts';

/** One dimension of the benchmark: the event types it is scored on, and the dataset kind that feeds it. */
export interface BenchmarkDimension {
  /** The dimension's name in the warning, e.g. `pause-handling`. */
  name: string;
  /** The event type the warning names. */
  label: EvaluationEventType;
  /** The event types whose samples count for it. */
  types: readonly EvaluationEventType[];
  /** Which dataset feeds it: the base dataset or its barge-in variant. */
  from: 'base' | 'barge-in';
}

/** The four dimensions, in the order their warnings are listed. */
export const BENCHMARK_DIMENSIONS: readonly BenchmarkDimension[] = Object.freeze([
  { name: 'turn-taking', label: 'TURN_SHIFT', types: ['TURN_SHIFT'], from: 'base' },
  { name: 'pause-handling', label: 'TURN_HOLD', types: ['TURN_HOLD', 'SHORTPAUSE'], from: 'base' },
  { name: 'backchannel', label: 'BC', types: ['BC'], from: 'base' },
  { name: 'barge-in', label: 'BARGE_IN', types: ['BARGE_IN'], from: 'barge-in' },
]);

/**
 * One warning per dimension the dataset should feed and gives no sample for, e.g.
 * `tq: no TURN_HOLD sample: the benchmark's pause-handling dimension gets nothing from this dataset`.
 * @param dataset the dataset's name (the warning starts with it)
 * @param variant `barge-in` for a `_bargein` dataset (checked for barge-in only), else `default`
 *   (checked for turn-taking, pause handling and backchannels)
 * @param reports the dataset's evaluable-events reports, one per loader setting (a type's samples are
 *   the largest count over the settings: BC and BARGE_IN are kept only with context)
 * @returns no warning when `reports` is empty (nothing to judge)
 */
export function missingDimensionWarnings(
  dataset: string,
  variant: 'default' | 'barge-in',
  reports: readonly Pick<EvaluableEventsReport, 'byType'>[],
): string[] {
  if (reports.length === 0) return [];
  const from = variant === 'barge-in' ? 'barge-in' : 'base';
  return BENCHMARK_DIMENSIONS.filter((dimension) => dimension.from === from)
    .filter(
      (dimension) =>
        Math.max(
          ...reports.map((report) =>
            dimension.types.reduce((sum, type) => sum + (report.byType[type]?.samples ?? 0), 0),
          ),
        ) === 0,
    )
    .map(
      (dimension) =>
        `${dataset}: no ${dimension.label} sample: the benchmark's ${dimension.name} dimension gets nothing from this dataset`,
    );
}
