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
import { clearScreenDown } from 'node:readline';
import cliProgress from 'cli-progress';
import type { Language } from '../model/types.ts';
import { redactSecrets } from '../storage/redact.ts';

/**
 * The stages that report items: text (rewrite + translation), speech synthesis, timeline + events +
 * files, quality scoring (DNSMOS and the signal checks).
 */
export const PROGRESS_STAGES = ['prepare-text', 'synthesize-speech', 'render-dataset', 'score-quality'] as const;
export type ProgressStage = (typeof PROGRESS_STAGES)[number];

/** What a stage's bar counts. */
export type ProgressUnit = 'dialogues' | 'utterances' | 'channel-seconds';

/**
 * The unit each stage's bar counts in: synthesis in utterances (a dialogue is tens of seconds of
 * work), scoring in channel-seconds of audio (DNSMOS's cost is proportional to it), the others in
 * dialogues.
 */
export const PROGRESS_UNITS: Record<ProgressStage, ProgressUnit> = {
  'prepare-text': 'dialogues',
  'synthesize-speech': 'utterances',
  'render-dataset': 'dialogues',
  'score-quality': 'channel-seconds',
};

/** How serious a log line or event is. */
export type LogLevel = 'info' | 'warn' | 'error';

/** How one item (one dialogue at one stage) ended. */
export type ItemStatus = 'done' | 'cached' | 'failed';

/**
 * Where a stage's events belong: a language, and for a stage run once per dataset folder (quality
 * scoring: the base dataset and its `_bargein` variant each have their own) the dataset's name. A
 * display keeps one bar and one tally per language, stage and dataset.
 */
interface StageKey {
  language: Language;
  stage: ProgressStage;
  dataset?: string;
}

/** A progress event. */
export type ProgressEvent =
  | ({ type: 'stage-start'; total: number } & StageKey)
  /** The work an item will take in the stage's unit (e.g. the utterances of a dialogue's script); sent again, it replaces the amount. */
  | ({ type: 'item-planned'; id: string; amount: number } & StageKey)
  /** Work of an item done since its last `item-advanced`, in the stage's unit. */
  | ({ type: 'item-advanced'; id: string; amount: number } & StageKey)
  | ({ type: 'item'; id: string; status: ItemStatus; reason?: string } & StageKey)
  | { type: 'log'; line: string; level?: LogLevel };

/** A stage's name as the bars and lines show it: `[en] score-quality topiocqa_demo_bargein`, `[en] synthesize-speech`. */
export function stageLabel(key: StageKey): string {
  return `[${key.language}] ${key.stage}${key.dataset === undefined ? '' : ` ${key.dataset}`}`;
}

/** How a command ended: the last JSON event (`type: 'summary'`). */
export interface BuildOutcome {
  /** The error that ended the command, when one did (not written: `error` names it). */
  cause?: unknown;
  /** `error` when the command failed (`error` says why), `warn` when some dialogues failed, else `info`. */
  level: LogLevel;
  /** The process's exit code (pipeline/model/build-errors.ts EXIT_CODES). */
  exitCode: number;
  /** The first line of the error that ended the command. */
  error?: string;
  /**
   * What the command wrote and kept, in the order written (a build: each committed dataset folder,
   * `summary.md`, `summary.json`, the report's `index.html`; `score`: each `quality.json`). A failed
   * command lists what it had finished before the failure (empty when nothing).
   */
  outputs: string[];
  failedDialogues?: number;
}

/**
 * The progress stages a dialogue that failed at build stage `stage` never reaches (they are reported
 * as failed, so every bar reaches its total). A failure in `prepare-text` is reported by the text
 * stage itself, so it is not in the list.
 */
export function progressStagesFailedAt(stage: string): ProgressStage[] {
  if (stage === 'prepare-text') return ['synthesize-speech', 'render-dataset'];
  if (stage === 'synthesize-speech') return ['synthesize-speech', 'render-dataset'];
  return ['render-dataset'];
}

/** Errors whose cause a JSON `summary` event has named (the CLI's handler then prints no plain line after it). */
const causesReportedAsJson = new WeakSet<object>();

/** True when a `json` display's summary event named this error (module comment). */
export function causeReportedAsJson(error: unknown): boolean {
  return typeof error === 'object' && error !== null && causesReportedAsJson.has(error);
}

/**
 * The outcome of a command that `error` ended: level `error`, its first line (API keys redacted), and
 * the outputs it had finished and kept before (`outputs`, copied).
 */
export function failureOutcome(error: unknown, exitCode: number, outputs: readonly string[]): BuildOutcome {
  return {
    level: 'error',
    exitCode,
    error: redactSecrets(error instanceof Error ? error.message.split('\n')[0]! : String(error)),
    outputs: [...outputs],
    cause: error,
  };
}

/** Receives progress events. */
export type ProgressListener = (event: ProgressEvent) => void;

/** How to show progress. */
export type ProgressMode = 'bars' | 'lines' | 'json' | 'quiet';

/** A display: where a command sends its log lines and events; `finish` reports how it ended, `stop` ends the bars. */
export interface ProgressDisplay {
  log: (line: string, level?: LogLevel) => void;
  progress: ProgressListener;
  /** The command's outcome: the final `summary` event in `json` mode, a line in `lines` mode when it failed. */
  finish: (outcome: BuildOutcome) => void;
  stop: () => void;
}

/** A writable text stream (standard error, or a test's collector); `columns` is the terminal's width. */
export interface TextOutput {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

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

/** What one stage of one language has done so far. */
export interface StageProgress {
  unit: ProgressUnit;
  /** Items (dialogues). */
  total: number;
  done: number;
  cached: number;
  failed: number;
  /** Units done: each finished item counts its planned amount whole; unfinished ones what they advanced (at most their plan). */
  unitsDone: number;
  /**
   * Units of the whole stage: the planned amounts, plus for items not planned yet the mean planned
   * amount (then `unitsEstimated`); null while no item is planned.
   */
  unitsTotal: number | null;
  unitsEstimated: boolean;
}

/** Counts per stage, fed with events (what every display keeps). */
class StageTally {
  private readonly items = new Set<string>();
  private readonly finished = new Set<string>();
  private readonly planned = new Map<string, number>();
  private readonly advanced = new Map<string, number>();
  counts = { total: 0, done: 0, cached: 0, failed: 0 };

  constructor(readonly unit: ProgressUnit) {}

  add(event: ProgressEvent): void {
    if (event.type === 'stage-start') this.counts.total = event.total;
    if (event.type === 'item-planned') this.planned.set(event.id, Math.max(0, event.amount));
    if (event.type === 'item-advanced')
      this.advanced.set(event.id, (this.advanced.get(event.id) ?? 0) + Math.max(0, event.amount));
    if (event.type === 'item') {
      this.counts[event.status] += 1;
      this.items.add(event.id);
      this.finished.add(event.id);
    }
  }

  get itemsCounted(): number {
    return this.counts.done + this.counts.cached + this.counts.failed;
  }

  snapshot(): StageProgress {
    const base = { unit: this.unit, ...this.counts };
    if (this.unit === 'dialogues')
      return { ...base, unitsDone: this.itemsCounted, unitsTotal: this.counts.total, unitsEstimated: false };
    let unitsDone = 0;
    let plannedSum = 0;
    for (const [id, amount] of this.planned) {
      plannedSum += amount;
      unitsDone += this.finished.has(id) ? amount : Math.min(amount, this.advanced.get(id) ?? 0);
    }
    if (this.planned.size === 0) return { ...base, unitsDone: 0, unitsTotal: null, unitsEstimated: false };
    const unplanned = Math.max(0, this.counts.total - this.planned.size);
    const unitsTotal = plannedSum + (unplanned * plannedSum) / this.planned.size;
    return { ...base, unitsDone, unitsTotal, unitsEstimated: unplanned > 0 };
  }
}

/** A unit amount as shown: whole utterances and dialogues, channel-seconds to the second. */
function amount(value: number, unit: ProgressUnit): string {
  return unit === 'channel-seconds' ? value.toFixed(0) : String(Math.round(value));
}

/** `12/57 utterances` (`~57` while the total is estimated), `3/10 dialogues`. */
export function formatStageUnits(progress: StageProgress): string {
  if (progress.unit === 'dialogues' || progress.unitsTotal === null)
    return `${progress.done + progress.cached + progress.failed}/${progress.total} dialogues`;
  return `${amount(progress.unitsDone, progress.unit)}/${progress.unitsEstimated ? '~' : ''}${amount(progress.unitsTotal, progress.unit)} ${progress.unit}`;
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
        if (typeof cause === 'object' && cause !== null) causesReportedAsJson.add(cause);
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

/** The `bars` display (module comment). */
function createBars(output: TextOutput, record: (event: ProgressEvent) => StageTally | null): ProgressDisplay {
  const width = () => output.columns || 80;
  const multibar = new cliProgress.MultiBar(
    {
      // fitted to the terminal's width by `barLine`; line wrapping stays on, so log lines wrap whole
      format: (options, params, payload) => barLine(options, params, payload as BarPayload, width()),
      linewrap: true,
      hideCursor: true,
      // a log line moves the bars down one line: every bar is drawn again, changed or not
      forceRedraw: true,
      clearOnComplete: false,
      stopOnComplete: false,
      etaBuffer: 20,
      fps: 10,
      stream: output as NodeJS.WritableStream,
      // cli-progress draws only on a TTY; the display is chosen for one
      noTTYOutput: false,
    },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<string, cliProgress.SingleBar>();
  // cli-progress writes buffered log lines from the first bar's row on, clearing only that row: the
  // rows below are cleared first, so a short log line never leaves the rest of a bar behind it
  let logsPending = false;
  multibar.on('redraw-pre', () => {
    if (logsPending) clearScreenDown(output as NodeJS.WritableStream);
    logsPending = false;
  });
  const log = (line: string) => {
    // before the first bar (nothing drawn yet) and after the last, a line is written as is
    if (bars.size === 0) {
      output.write(`${line}\n`);
      return;
    }
    logsPending = true;
    multibar.log(`${line}\n`);
  };
  return {
    log,
    progress: (event) => {
      const tally = record(event);
      if (event.type === 'log' || tally === null) return;
      const name = stageLabel(event);
      if (event.type === 'stage-start') {
        bars.get(name)?.stop();
        const label = name;
        bars.set(
          name,
          multibar.create(Math.max(event.total, 1), 0, { label, progress: tally.snapshot() } satisfies BarPayload),
        );
      }
      const bar = bars.get(name);
      if (bar) {
        const progress = tally.snapshot();
        const [value, total] =
          progress.unitsTotal === null
            ? [progress.done + progress.cached + progress.failed, progress.total]
            : [progress.unitsDone, progress.unitsTotal];
        bar.setTotal(Math.max(total, 1));
        bar.update(value, { progress });
      }
      if (event.type === 'item' && event.status === 'failed')
        log(`${stageLabel(event)} ${event.id}: FAILED${event.reason ? `: ${event.reason}` : ''}`);
    },
    finish: () => {},
    stop: () => {
      // log lines given since the last frame are written before the final frame
      if (logsPending) multibar.update();
      multibar.stop();
      bars.clear();
    },
  };
}

interface BarPayload {
  label: string;
  progress: StageProgress;
}

/**
 * One bar's line, at most `columns` wide: `[en] synthesize-speech |███░░| 12/57 utterances · 1/2
 * dialogues (0 cached, 0 failed) ETA 30s`; the bar gets what the text leaves (at most 40 cells), and on
 * a very narrow terminal the dialogue counts and then the bar are left out.
 */
function barLine(
  options: cliProgress.Options,
  params: cliProgress.Params,
  payload: BarPayload,
  columns: number,
): string {
  const { progress, label } = payload;
  const units = formatStageUnits(progress);
  const dialogues =
    progress.unit === 'dialogues' || progress.unitsTotal === null
      ? ''
      : ` · ${progress.done + progress.cached + progress.failed}/${progress.total} dialogues`;
  const counts = ` (${progress.cached} cached, ${progress.failed} failed)`;
  // no estimate before the first unit is done (cli-progress's own ETA is then 'NULL' or 'INF')
  const known = params.value > 0 && typeof params.eta === 'number' && Number.isFinite(params.eta);
  const eta = ` ETA ${known ? cliProgress.Format.TimeFormat(params.eta, options, 5) : '?'}`;
  const available = columns - 1; // the last column stays empty: a full row would wrap on some terminals
  const candidates = [`${units}${dialogues}${counts}${eta}`, `${units}${counts}${eta}`, `${units}${eta}`, units];
  for (const tail of candidates) {
    const barCells = Math.min(40, available - label.length - tail.length - 4);
    if (barCells >= 5)
      return `${label} |${cliProgress.Format.BarFormat(params.progress, { ...options, barsize: barCells })}| ${tail}`;
    if (tail === units && label.length + 1 + tail.length <= available) return `${label} ${tail}`;
  }
  return `${label} ${units}`.slice(0, Math.max(1, available));
}
