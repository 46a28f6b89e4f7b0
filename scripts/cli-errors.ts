/**
 * How the `duplexsynth` command line reports an error that ended a command: one line on standard
 * error, `duplexsynth: <first line of the message>` (API keys redacted), a raw file-system error in
 * words, the stack only with `DUPLEXSYNTH_DEBUG`, and the exit code the error asks for.
 */
import { describeFileSystemError, isRawFileSystemMessage } from '../pipeline/storage/file-system-errors.ts';
import { redactSecrets } from '../pipeline/storage/redact.ts';
import { causeReportedAsJson } from '../pipeline/run/progress.ts';

/**
 * Node's raw file-system error (`EISDIR: illegal operation on a directory, open '…'`) that reached
 * the handler, in words naming its path and what to do (pipeline/storage/file-system-errors.ts), or
 * undefined for any other error.
 */
function fileSystemErrorInWords(error: unknown): string | undefined {
  const file = (error as { path?: unknown } | null)?.path;
  if (!(error instanceof Error) || typeof file !== 'string' || !isRawFileSystemMessage(error.message)) return undefined;
  return describeFileSystemError(error, file);
}

/**
 * Print `duplexsynth: <first line>` (redacted), the stack with DUPLEXSYNTH_DEBUG, and set the exit code.
 * A `--json` display's summary event that named the cause already (the last line) is not repeated.
 */
export function reportCommandError(error: unknown, exitCode: number, prefix = ''): void {
  const message = fileSystemErrorInWords(error) ?? (error instanceof Error ? error.message : String(error));
  if (!causeReportedAsJson(error)) console.error(redactSecrets(`duplexsynth: ${prefix}${message.split('\n')[0]}`));
  if (process.env.DUPLEXSYNTH_DEBUG && error instanceof Error && error.stack) console.error(redactSecrets(error.stack));
  process.exitCode = exitCode;
}
