/**
 * Errors that end a build (or any command) with a one-line message and a documented exit code.
 * The CLI (scripts/cli.ts) prints `duplexsynth: <message>` and exits with the error's `exitCode`;
 * any other error exits with {@link EXIT_CODES.badInput}.
 *
 * Exit codes (docs/failures.md, "Exit codes"):
 * - 0: done;
 * - 1: `verify` (or another checking command) found problems in a dataset;
 * - 2: bad input: options, configuration, corpus, output or cache folder (nothing was written);
 * - 3: the build finished, but some dialogues failed (listed with their stage and reason in the summary);
 * - 4: the build stopped before committing: every dialogue failed, the dataset would shrink, the disk
 *   is full, the output folder is locked by another build or the lock was lost. Every dataset already
 *   in the output folder is left as it was; rerunning resumes from the cache;
 * - 5: an error escaped the handling above (an uncaught exception or unhandled rejection: a bug); the
 *   message says so, `DUPLEXSYNTH_DEBUG=1` prints the stack.
 */

/** The exit codes of the `duplexsynth` command. */
export const EXIT_CODES = {
  done: 0,
  problemsFound: 1,
  badInput: 2,
  someDialoguesFailed: 3,
  buildStopped: 4,
  internalError: 5,
} as const;

/** Bad input the user can fix (a folder, an option value): exit code 2. */
export class BuildInputError extends Error {
  override name = 'BuildInputError';
  readonly exitCode: number = EXIT_CODES.badInput;
}

/** The build stopped before committing anything: exit code 4. Datasets already written are untouched. */
export class BuildStoppedError extends Error {
  override name = 'BuildStoppedError';
  readonly exitCode: number = EXIT_CODES.buildStopped;
}

/**
 * A write failed because the file system is full (ENOSPC, EDQUOT) or wrote fewer bytes than asked.
 * The message names the file, the bytes it needed and what was free.
 */
export class DiskFullError extends BuildStoppedError {
  override name = 'DiskFullError';

  /**
   * @param message one line naming the file and the space needed
   * @param file the file being written
   * @param neededBytes bytes the write needed
   * @param availableBytes bytes free for an unprivileged writer on that file system (undefined when unknown)
   */
  constructor(
    message: string,
    readonly file: string,
    readonly neededBytes: number,
    readonly availableBytes: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Another live build holds the output folder's lock. */
export class OutputLockedError extends BuildStoppedError {
  override name = 'OutputLockedError';
}

/** The build's lock on its output folder was taken away while it ran (e.g. it was paused for too long). */
export class LockLostError extends BuildStoppedError {
  override name = 'LockLostError';
}

/** No dialogue of a dataset was built: nothing is committed, the previous dataset stays. */
export class NothingBuiltError extends BuildStoppedError {
  override name = 'NothingBuiltError';
}

/** The new dataset has fewer dialogues than the one it would replace, and `--allow-shrink` was not given. */
export class ShrinkRefusedError extends BuildStoppedError {
  override name = 'ShrinkRefusedError';
}

/** The exit code an error asks for: its `exitCode` when it has a valid one, else 2 (bad input). */
export function exitCodeOf(error: unknown): number {
  const code = (error as { exitCode?: unknown } | null)?.exitCode;
  return typeof code === 'number' && Number.isInteger(code) && code > 0 && code < 126 ? code : EXIT_CODES.badInput;
}

/** Whether an error must end the whole build rather than fail one dialogue (disk full, lock lost). */
export function endsTheBuild(error: unknown): boolean {
  return error instanceof DiskFullError || error instanceof LockLostError;
}
