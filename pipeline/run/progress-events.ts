/**
 * The typed events of a build's progress (stages, units, items, log lines), how a command ended
 * (`BuildOutcome`), and what a display is: the vocabulary the build, the displays
 * (./progress.ts, ./progress-bars.ts) and the CLI share.
 */
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
export interface StageKey {
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

/** Note that a `json` display's summary event named `cause` (see {@link causeReportedAsJson}). */
export function noteCauseReportedAsJson(cause: object): void {
  causesReportedAsJson.add(cause);
}

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
