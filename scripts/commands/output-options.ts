/**
 * The output options every long-running command shares, with one meaning everywhere:
 * - `-q, --quiet`: only the final line(s) on standard output, and errors;
 * - `--plain`: progress as plain lines on standard error, one per event, without terminal control
 *   (no live bars);
 * - `--json`: machine-readable output: the result as JSON on standard output, progress as JSON lines
 *   (each with a `level`) on standard error.
 * Without them a command shows live bars on a terminal and plain lines otherwise
 * (pipeline/run/progress.ts).
 */
import { Command } from 'commander';
import { createProgressDisplay, progressModeFor, type ProgressDisplay } from '../../pipeline/run/progress.ts';

/** The three options' values (commander's attribute names). */
export interface OutputOptions {
  quiet?: boolean;
  plain?: boolean;
  json?: boolean;
}

/** What `--json` prints, by default. */
const JSON_DEFAULT =
  'the result as JSON on standard output; progress as JSON lines (each with a level) on standard error';

/**
 * Adds `-q, --quiet`, `--plain` and `--json` to a command.
 * @param json what `--json` prints, when it differs from the default
 * @returns the command, for chaining
 */
export function addOutputOptions(command: Command, json: string = JSON_DEFAULT): Command {
  return command
    .option('-q, --quiet', 'no progress lines: only the final line(s) and errors')
    .option('--plain', 'progress as plain lines even on a terminal (no live bars, no terminal control)')
    .option('--json', json);
}

/** A command's output: its progress display on standard error and its result on standard output. */
export interface CommandOutput {
  /** The progress display (log lines, events, the final summary in `--json`). */
  display: ProgressDisplay;
  /** A progress line (nothing with `--quiet`, a JSON `log` event with `--json`). */
  log: (line: string) => void;
  /** The result: `value` as indented JSON with `--json`, else the text lines (each ends with a newline). */
  result: (value: unknown, text: string) => void;
}

/** The output of a command given its output options (standard error for progress, standard output for the result). */
export function commandOutput(options: OutputOptions): CommandOutput {
  const display = createProgressDisplay(progressModeFor(options, process.stderr));
  return {
    display,
    log: (line) => display.log(line),
    result: (value, text) => void process.stdout.write(options.json ? `${JSON.stringify(value, null, 2)}\n` : text),
  };
}
