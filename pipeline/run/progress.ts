/**
 * Progress of a build as typed events, and the three ways the command line shows them:
 * - `bars`: one live bar per language and stage with counts and ETA (`cli-progress`), on a terminal;
 *   log lines are printed above the bars;
 * - `lines`: plain lines, one per finished item and per log line (when standard error is not a
 *   terminal: a file, a pipe, CI);
 * - `json`: one JSON object per line per event (`--json`), for programs.
 *
 * The build (pipeline/orchestration/build.ts) calls a {@link ProgressListener} at each stage start and each
 * finished item; nothing here changes what the build writes.
 */
import cliProgress from 'cli-progress';
import type { Language } from '../model/types.ts';

/** The stages that report items: text (rewrite + translation), speech synthesis, timeline + events + files. */
export const PROGRESS_STAGES = ['prepare-text', 'synthesize-speech', 'render-dataset'] as const;
export type ProgressStage = (typeof PROGRESS_STAGES)[number];

/** How one item (one dialogue at one stage) ended. */
export type ItemStatus = 'done' | 'cached' | 'failed';

/** A progress event. */
export type ProgressEvent =
  | { type: 'stage-start'; language: Language; stage: ProgressStage; total: number }
  | { type: 'item'; language: Language; stage: ProgressStage; id: string; status: ItemStatus; reason?: string }
  | { type: 'log'; line: string };

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

/** Receives progress events. */
export type ProgressListener = (event: ProgressEvent) => void;

/** How to show progress. */
export type ProgressMode = 'bars' | 'lines' | 'json' | 'quiet';

/** A display: where the build sends its log lines and events; `stop` ends the bars. */
export interface ProgressDisplay {
  log: (line: string) => void;
  progress: ProgressListener;
  stop: () => void;
}

/** A writable text stream (standard error, or a test's collector). */
export interface TextOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

/**
 * The mode for a command: `json` when asked, `quiet` when asked, else `bars` on a terminal and
 * `lines` otherwise.
 */
export function progressModeFor(options: { json?: boolean; quiet?: boolean }, output: TextOutput): ProgressMode {
  if (options.json) return 'json';
  if (options.quiet) return 'quiet';
  return output.isTTY ? 'bars' : 'lines';
}

interface StageCounts {
  total: number;
  done: number;
  cached: number;
  failed: number;
}

const counted = (counts: StageCounts) => counts.done + counts.cached + counts.failed;

/**
 * A display writing to `output` (standard error in the CLI).
 * @param mode see the module comment
 */
export function createProgressDisplay(mode: ProgressMode, output: TextOutput = process.stderr): ProgressDisplay {
  const display = createDisplay(mode, output);
  // After stop, work still finishing in the background (text requested up front for every dialogue)
  // prints nothing: a stopped build's last line stays the one naming its cause.
  let stopped = false;
  return {
    log: (line) => {
      if (!stopped) display.log(line);
    },
    progress: (event) => {
      if (!stopped) display.progress(event);
    },
    stop: () => {
      if (!stopped) display.stop();
      stopped = true;
    },
  };
}

function createDisplay(mode: ProgressMode, output: TextOutput): ProgressDisplay {
  const counts = new Map<string, StageCounts>();
  const key = (language: string, stage: string) => `${language} ${stage}`;
  const record = (event: ProgressEvent): StageCounts | null => {
    if (event.type === 'stage-start') {
      const entry = { total: event.total, done: 0, cached: 0, failed: 0 };
      counts.set(key(event.language, event.stage), entry);
      return entry;
    }
    if (event.type === 'item') {
      const entry = counts.get(key(event.language, event.stage)) ?? { total: 0, done: 0, cached: 0, failed: 0 };
      entry[event.status] += 1;
      counts.set(key(event.language, event.stage), entry);
      return entry;
    }
    return null;
  };

  if (mode === 'quiet') return { log: () => {}, progress: (event) => void record(event), stop: () => {} };

  if (mode === 'json') {
    const emit = (event: ProgressEvent) => output.write(`${JSON.stringify(event)}\n`);
    return { log: (line) => emit({ type: 'log', line }), progress: (event) => (record(event), emit(event)), stop: () => {} };
  }

  if (mode === 'lines') {
    // the build's own log line per dialogue is the per-item line; here: stage starts and ends
    return {
      log: (line) => output.write(`${line}\n`),
      progress: (event) => {
        const entry = record(event);
        if (event.type === 'stage-start') output.write(`[${event.language}] ${event.stage}: ${event.total} dialogues\n`);
        if (event.type === 'item' && entry && counted(entry) === entry.total) {
          output.write(`[${event.language}] ${event.stage}: ${counted(entry)}/${entry.total} (${entry.cached} cached, ${entry.failed} failed)\n`);
        }
      },
      stop: () => {},
    };
  }

  const multibar = new cliProgress.MultiBar(
    {
      format: '{name} |{bar}| {value}/{total} ({cached} cached, {failed} failed) ETA {eta_formatted}',
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
  return {
    log: (line) => multibar.log(`${line}\n`),
    progress: (event) => {
      const entry = record(event);
      if (event.type === 'stage-start' && entry) {
        const name = `[${event.language}] ${event.stage.padEnd(17)}`;
        bars.set(key(event.language, event.stage), multibar.create(Math.max(entry.total, 1), 0, { name, cached: 0, failed: 0 }));
      }
      if (event.type === 'item' && entry) {
        bars.get(key(event.language, event.stage))?.update(counted(entry), { cached: entry.cached, failed: entry.failed });
        if (event.status === 'failed') multibar.log(`[${event.language}] ${event.stage} ${event.id}: FAILED${event.reason ? `: ${event.reason}` : ''}\n`);
      }
    },
    stop: () => multibar.stop(),
  };
}
