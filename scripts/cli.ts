/**
 * The `duplexsynth` command line (commander). Thin: parses options, calls pipeline functions,
 * prints one-line reasons and exits non-zero on bad input. Each command group's options are defined
 * in scripts/commands/*-command.ts (and the other register functions there); this module puts them in
 * one program and runs it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { EXIT_CODES, LockLostError, exitCodeOf } from '../pipeline/model/build-errors.ts';
import { PACKAGE_ROOT } from '../pipeline/storage/package-files.ts';
import { widenHeapGrowth } from '../pipeline/run/heap-growth.ts';
import { raiseOptimizationBudget } from '../pipeline/run/optimization-budget.ts';
import { registerBuildCommands } from './commands/build-command.ts';
import { registerDatasetCommands } from './commands/dataset-commands.ts';
import { registerQualityCommands } from './commands/quality.ts';
import { registerMeasureCommand } from './commands/measure-command.ts';
import { registerExportCommand } from './commands/export.ts';
import { registerReportCommand } from './commands/report.ts';
import { registerStatusCommand } from './commands/status.ts';
import { registerPromptsCommand } from './commands/prompts-command.ts';
import { registerChatCommand } from './commands/chat-command.ts';
import { registerSetupCommands } from './commands/setup-commands.ts';
import { reportCommandError } from './cli-errors.ts';
import { installStopFallback } from '../pipeline/run/stop-signals.ts';

// Only commander, the progress display and the commands' option definitions load at start: each
// command imports the pipeline when it runs (`--help` and `--version` in well under 0.5 s; `npm run
// bench`, section cli).

/** The `version` field of the project's package.json. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * Commander's usage error (`error: unknown option '--x'\n`, possibly with its "Did you mean" line) as
 * the one line every duplexsynth error is: `duplexsynth: unknown option '--x' (Did you mean --y?)
 * (run with --help for usage)\n`.
 */
export function usageErrorLine(text: string): string {
  const reason = text
    .replace(/^error: /, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .join(' ');
  return `duplexsynth: ${reason} (run with --help for usage)\n`;
}

/** Build the program (exported for tests and for docs/cli.md, scripts/docs/cli-reference.ts). */
export function createProgram(): Command {
  const program = new Command('duplexsynth')
    .description('Build full-duplex spoken dialogue benchmark data (M3-DuplexBench layout) from TopiOCQA.')
    .version(packageVersion(), '-V, --version', 'print the duplexsynth version')
    // a usage error is one line like every other error: `duplexsynth: <reason> (run with --help for usage)`
    .configureOutput({ outputError: (text, write) => write(usageErrorLine(text)) })
    // usage errors reach main's handler (exit code 2) instead of commander's process.exit(1)
    .exitOverride();
  registerBuildCommands(program);
  registerDatasetCommands(program);
  registerQualityCommands(program);
  registerMeasureCommand(program);
  registerExportCommand(program);
  registerReportCommand(program);
  registerStatusCommand(program);
  registerPromptsCommand(program);
  registerChatCommand(program);
  registerSetupCommands(program);
  return program;
}

/**
 * Run the CLI. Every failure, of any command, ends in this one handler: a one-line reason on stderr
 * (API keys redacted), no stack trace unless `DUPLEXSYNTH_DEBUG` is set, and the exit code the error
 * asks for (pipeline/model/build-errors.ts `EXIT_CODES`: 2 bad input, 4 build stopped before committing,
 * 5 an error that escaped, i.e. a bug). Errors escaping from timers or callbacks (uncaught exceptions,
 * unhandled rejections) are caught the same way and end the process at once.
 */
export async function main(argv: string[]): Promise<void> {
  const escaped = (error: unknown) => {
    reportCommandError(error, EXIT_CODES.internalError, 'internal error (please report it): ');
    process.exit(EXIT_CODES.internalError);
  };
  process.on('uncaughtException', escaped);
  process.on('unhandledRejection', escaped);
  // a signal before or after a command's stoppable work ends it with one line too (pipeline/run/stop-signals.ts)
  installStopFallback(argv.slice(2).find((argument) => !argument.startsWith('-')) ?? null);
  // fewer full garbage collections started by audio buffers (pipeline/run/heap-growth.ts)
  widenHeapGrowth();
  // fewer optimizing compilations of code a build runs anew for each dialogue (pipeline/run/optimization-budget.ts)
  raiseOptimizationBudget();
  try {
    await createProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander printed the usage problem already; --help and --version end here too
      process.exitCode = error.exitCode === 0 ? EXIT_CODES.done : EXIT_CODES.badInput;
      return;
    }
    reportCommandError(error, exitCodeOf(error));
    // a build whose lock was lost must not keep writing in the background
    if (error instanceof LockLostError) process.exit(exitCodeOf(error));
  }
}
