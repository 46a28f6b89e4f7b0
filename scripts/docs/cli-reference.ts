/**
 * docs/cli.md, the reference of the `duplexsynth` command line, rendered from the command definitions
 * themselves (scripts/cli.ts `createProgram`): every command with its description, usage, arguments
 * and options (flags, meaning, default, choices: the text `--help` prints, through commander's own
 * help formatter), then the exit codes (pipeline/model/build-errors.ts `EXIT_CODES`). `npm run docs`
 * writes it; scripts/docs/cli-reference.test.ts checks that the committed page is this rendering.
 */
import type { Command, Help } from 'commander';
import { EXIT_CODES } from '../../pipeline/model/build-errors.ts';
import { STOP_EXIT_CODES, type StopSignal } from '../../pipeline/run/stop-signals.ts';
import { PACKAGE_ROOT } from '../../pipeline/storage/package-files.ts';
import { createProgram } from '../cli.ts';

/** What each exit code means (the names of pipeline/model/build-errors.ts `EXIT_CODES`). */
export const EXIT_CODE_MEANINGS: Readonly<Record<keyof typeof EXIT_CODES, string>> = {
  done: 'done.',
  problemsFound:
    '`verify` found problems in a dataset, `doctor` found something missing, `measure --check` found a statistics file out of date, `split` left a dev set empty because of speaker overlap, or `prompts` kept no clip.',
  badInput:
    'bad input: options, configuration, corpus, output or cache folder (nothing was written). Usage errors end here too.',
  someDialoguesFailed:
    'the build finished, but some dialogues failed (listed with their stage and reason in the summary); `chat`: a recording failed.',
  buildStopped:
    'the build stopped before committing: every dialogue failed, the dataset would shrink (`--allow-shrink`), the disk is full, the output folder is locked by another build or the lock was lost, or Redis was away too long (`--queue`). Every dataset already in the output folder is left as it was; rerunning resumes from the cache.',
  internalError:
    'an error escaped the handling above (a bug); the message says so, and `DUPLEXSYNTH_DEBUG=1` prints the stack.',
};

/** The meaning of the exit code of a stop by `signal` (pipeline/run/stop-signals.ts). */
function stopMeaning(signal: StopSignal): string {
  const sender = { SIGHUP: 'the terminal closed', SIGINT: 'Ctrl-C', SIGTERM: 'kill, systemd, docker stop, Slurm' }[
    signal
  ];
  return `stopped by ${signal} (${sender}), any long command: one line says what stopped and what is kept; its \`.partial\` files and the folders it created are removed, a dataset being scored is as it was before scoring, a queued build's jobs stay queued.`;
}

/**
 * Help text as the page shows it: the project folder written as `<project>` (a default such as
 * `schema --out` is an absolute path inside it), so the page is the same in every checkout.
 */
export function withoutProjectFolder(text: string): string {
  return text.split(PACKAGE_ROOT).join('<project>');
}

/** Text for a Markdown table cell: `|` escaped, and `<`, so `<id>.wav` is not read as HTML. */
export function tableCell(text: string): string {
  return withoutProjectFolder(text).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '\\<');
}

/** A code span in a table cell (`|` escaped, as GitHub tables need even inside code). */
export function tableCode(text: string): string {
  return `\`${withoutProjectFolder(text).replace(/\|/g, '\\|')}\``;
}

/** The table row of one option or argument: term, then its meaning. */
export function tableRow(term: string, description: string): string {
  return `| ${tableCode(term)} | ${tableCell(description)} |`;
}

/** The section of one command. */
function commandSection(command: Command, help: Help): string[] {
  const lines = [
    `## \`duplexsynth ${command.name()}\``,
    '',
    `${tableCell(command.description())}`,
    '',
    '```',
    withoutProjectFolder(`duplexsynth ${help.commandUsage(command).replace(/^duplexsynth /, '')}`),
    '```',
    '',
  ];
  const argumentsOfCommand = help.visibleArguments(command);
  if (argumentsOfCommand.length > 0) {
    lines.push('| Argument | Meaning |', '| --- | --- |');
    for (const argument of argumentsOfCommand)
      lines.push(tableRow(help.argumentTerm(argument), help.argumentDescription(argument)));
    lines.push('');
  }
  const options = help.visibleOptions(command);
  if (options.length > 0) {
    lines.push('| Option | Meaning |', '| --- | --- |');
    for (const option of options) lines.push(tableRow(help.optionTerm(option), help.optionDescription(option)));
    lines.push('');
  }
  return lines;
}

/** docs/cli.md as Markdown (module comment). */
export function renderCliReference(): string {
  const program = createProgram();
  const help = program.createHelp();
  const commands = program.commands.filter((command) => command.name() !== 'help');
  const lines = [
    '<!-- Generated from the command definitions by scripts/docs/cli-reference.ts (npm run docs); do not edit. -->',
    '',
    '# Command line reference',
    '',
    `${program.description()} Every command prints \`--help\` with the same text as this page.`,
    '',
    '```',
    'npx duplexsynth <command> [options]',
    '```',
    '',
    '| Command | What it does |',
    '| --- | --- |',
    ...commands.map(
      (command) => `| [\`${command.name()}\`](#duplexsynth-${command.name()}) | ${tableCell(command.description())} |`,
    ),
    '',
    '| Option of `duplexsynth` | Meaning |',
    '| --- | --- |',
    ...help.visibleOptions(program).map((option) => tableRow(help.optionTerm(option), help.optionDescription(option))),
    '',
    '## Options every long-running command shares',
    '',
    '- `-q, --quiet`: no progress lines; only the final line(s) on standard output, and errors.',
    '- `--plain`: progress as plain lines on standard error, one per event, without terminal control (no live bars).',
    '- `--json`: machine-readable output: the result as JSON on standard output and progress as JSON lines (each with a `level`) on standard error; `build` and `demo` write their progress events as JSON lines on standard error, the last a `summary`.',
    '- `--language` (alias `--lang`): the language(s) of a command that takes one.',
    '',
    'Without `--quiet`, `--plain` or `--json`, a command shows live bars on a terminal and plain lines otherwise.',
    '',
    ...commands.flatMap((command) => commandSection(command, command.createHelp())),
    '## Exit codes',
    '',
    'Every command ends with one of these exit codes; an error is one line on standard error, `duplexsynth: <reason>` (API keys redacted).',
    '',
    '| Code | Meaning |',
    '| --- | --- |',
    ...(Object.entries(EXIT_CODES) as [keyof typeof EXIT_CODES, number][]).map(
      ([name, code]) => `| ${code} | ${tableCell(EXIT_CODE_MEANINGS[name])} |`,
    ),
    ...(Object.entries(STOP_EXIT_CODES) as [StopSignal, number][])
      .sort(([, a], [, b]) => a - b)
      .map(([signal, code]) => `| ${code} | ${tableCell(stopMeaning(signal))} |`),
    '',
  ];
  return lines.join('\n');
}
