/**
 * Progress of a build as typed events, and the four ways the command line shows them:
 * - `bars`: one live bar per language and stage (and dataset, for a stage run per dataset folder) on a terminal (`cli-progress`), counted in the
 *   stage's unit (utterances for speech synthesis, channel-seconds for quality scoring, dialogues
 *   otherwise) with dialogue counts, cache hits and ETA; each bar line is fitted to the terminal's
 *   width (a narrower bar, never a cut), and log lines are printed above the bars, whole (the
 *   terminal wraps them; the rows below are cleared first so no bar is left under a log line);
 * - `lines`: plain lines, one per log line and per stage start and end (standard error not a
 *   terminal: a file, a pipe, CI; or `--plain`);
 * - `json`: one JSON object per line per event (`--json`), each with a `level` (`info`, `warn`,
 *   `error`), the last one of type `summary` ({@link BuildOutcome});
 * - `quiet`: nothing.
 *
 * The build (pipeline/orchestration/build.ts) calls a {@link ProgressListener} at each stage start,
 * each unit of work done (`item-planned`, `item-advanced`) and each finished item; nothing here
 * changes what the build writes.
 */
import { createBars } from './progress-bars.ts';
import {
  noteCauseReportedAsJson,
  PROGRESS_UNITS,
  stageLabel,
  type LogLevel,
  type ProgressDisplay,
  type ProgressEvent,
  type StageKey,
  type TextOutput,
} from './progress-events.ts';
import { amount, StageTally } from './stage-tally.ts';

export {
  causeReportedAsJson,
  failureOutcome,
  PROGRESS_STAGES,
  PROGRESS_UNITS,
  progressStagesFailedAt,
  stageLabel,
  type BuildOutcome,
  type ItemStatus,
  type LogLevel,
  type ProgressDisplay,
  type ProgressEvent,
  type ProgressListener,
  type ProgressStage,
  type ProgressUnit,
  type TextOutput,
} from './progress-events.ts';
export { formatStageUnits, type StageProgress } from './stage-tally.ts';

/** How to show progress. */
export type ProgressMode = 'bars' | 'lines' | 'json' | 'quiet';

/**
 * The mode for a command: `json` when asked, `quiet` when asked, `lines` when asked (`--plain`), else
 * `bars` on a terminal and `lines` otherwise.
 */
export function progressModeFor(
  options: { json?: boolean; quiet?: boolean; plain?: boolean },
  output: TextOutput,
): ProgressMode {
  if (options.json) return 'json';
  if (options.quiet) return 'quiet';
  if (options.plain) return 'lines';
  return output.isTTY ? 'bars' : 'lines';
}

/** The level of an event in JSON mode: a failed item is a warning (the build goes on without it). */
function levelOf(event: ProgressEvent): LogLevel {
  if (event.type === 'log') return event.level ?? 'info';
  if (event.type === 'item' && event.status === 'failed') return 'warn';
  return 'info';
}

/**
 * A display writing to `output` (standard error in the CLI).
 * @param mode see the module comment
 */
export function createProgressDisplay(mode: ProgressMode, output: TextOutput = process.stderr): ProgressDisplay {
  const display = createDisplay(mode, output);
  // After stop, work still finishing in the background (text requested up front for every dialogue)
  // prints nothing: a stopped build's last line stays the one naming its cause.
  let stopped = false;
  let finished = false;
  return {
    log: (line, level) => {
      if (!stopped) display.log(line, level);
    },
    progress: (event) => {
      if (!stopped) display.progress(event);
    },
    finish: (outcome) => {
      if (!finished) display.finish(outcome);
      finished = true;
    },
    stop: () => {
      if (!stopped) display.stop();
      stopped = true;
    },
  };
}

function createDisplay(mode: ProgressMode, output: TextOutput): ProgressDisplay {
  // per stage label (language, stage, dataset): the key's fields and the tally
  const tallies = new Map<string, { key: StageKey; tally: StageTally }>();
  const record = (event: ProgressEvent): StageTally | null => {
    if (event.type === 'log') return null;
    const name = stageLabel(event);
    const key: StageKey = {
      language: event.language,
      stage: event.stage,
      ...(event.dataset === undefined ? {} : { dataset: event.dataset }),
    };
    if (event.type === 'stage-start') tallies.set(name, { key, tally: new StageTally(PROGRESS_UNITS[event.stage]) });
    const entry = tallies.get(name) ?? { key, tally: new StageTally(PROGRESS_UNITS[event.stage]) };
    tallies.set(name, entry);
    entry.tally.add(event);
    return entry.tally;
  };

  if (mode === 'quiet')
    return { log: () => {}, progress: (event) => void record(event), finish: () => {}, stop: () => {} };

  if (mode === 'json') {
    const emit = (event: object) => output.write(`${JSON.stringify(event)}\n`);
    return {
      log: (line, level) => emit({ type: 'log', level: level ?? 'info', line }),
      progress: (event) => {
        record(event);
        emit({ ...event, level: levelOf(event) });
      },
      finish: (outcome) => {
        const stages = [...tallies.values()].map(({ key, tally }) => ({ ...key, ...tally.snapshot() }));
        const { cause, ...fields } = outcome;
        emit({ type: 'summary', ...fields, stages });
        if (typeof cause === 'object' && cause !== null) noteCauseReportedAsJson(cause);
      },
      stop: () => {},
    };
  }

  if (mode === 'lines') {
    // the build's own log line per dialogue is the per-item line; here: stage starts and ends
    return {
      log: (line) => output.write(`${line}\n`),
      progress: (event) => {
        const tally = record(event);
        if (event.type === 'stage-start') output.write(`${stageLabel(event)}: ${event.total} dialogues\n`);
        if (event.type === 'item' && tally && tally.itemsCounted === tally.counts.total) {
          const progress = tally.snapshot();
          const units =
            progress.unit === 'dialogues' || progress.unitsTotal === null
              ? ''
              : `, ${amount(progress.unitsDone, progress.unit)} ${progress.unit}`;
          output.write(
            `${stageLabel(event)}: ${tally.itemsCounted}/${tally.counts.total}${units} (${tally.counts.cached} cached, ${tally.counts.failed} failed)\n`,
          );
        }
      },
      // a failure's cause is the command's last line, printed once by the CLI's error handler
      finish: () => {},
      stop: () => {},
    };
  }
  return createBars(output, record);
}
