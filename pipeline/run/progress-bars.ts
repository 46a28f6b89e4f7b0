/**
 * The `bars` display (./progress.ts): one live `cli-progress` bar per language and stage (and
 * dataset), each line fitted to the terminal's width, with log lines printed whole above the bars.
 */
import { clearScreenDown } from 'node:readline';
import cliProgress from 'cli-progress';
import { stageLabel, type ProgressDisplay, type ProgressEvent, type TextOutput } from './progress-events.ts';
import { formatStageUnits, type StageProgress, type StageTally } from './stage-tally.ts';

/** The `bars` display (module comment). */
export function createBars(output: TextOutput, record: (event: ProgressEvent) => StageTally | null): ProgressDisplay {
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
