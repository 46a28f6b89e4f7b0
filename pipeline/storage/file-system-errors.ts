/**
 * File-system errors in words: every command's one-line message names the path, says what is wrong
 * in words (the errno code follows in parentheses, for searching) and what to do, instead of Node's
 * raw `ENOTDIR: not a directory, open '…'`.
 */

/** Words and advice per errno code (Linux, as Node reports them). */
const FILE_SYSTEM_REASONS: Readonly<Record<string, { words: string; advice?: string }>> = {
  ENOENT: { words: 'does not exist', advice: 'check the path' },
  ENOTDIR: { words: 'a part of the path is a file, not a folder', advice: 'check the path' },
  EISDIR: { words: 'is a folder, where a file is needed', advice: 'give the file inside it' },
  ELOOP: { words: 'too many symbolic links (a link that points back to itself)', advice: 'fix or remove the link' },
  EACCES: { words: 'permission denied', advice: 'check its permissions' },
  EPERM: { words: 'operation not permitted', advice: 'check its permissions' },
  EROFS: { words: 'the file system is read-only', advice: 'choose a writable folder' },
  ENAMETOOLONG: { words: 'the path is too long', advice: 'use a shorter path' },
  EMFILE: { words: 'too many open files', advice: 'raise the limit (ulimit -n)' },
  ENFILE: { words: 'too many open files on the system', advice: 'retry when fewer files are open' },
  EIO: { words: 'input/output error (the disk or network share failed)', advice: 'check the device' },
  ENOSPC: { words: 'no space left on the device', advice: 'free some space' },
  EDQUOT: { words: 'disk quota exceeded', advice: 'free some space' },
  EBUSY: { words: 'busy (in use by another process)', advice: 'retry when it is free' },
  ENXIO: { words: 'a special file with nothing behind it', advice: 'give a regular file' },
  ERR_FS_FILE_TOO_LARGE: { words: 'too large to read into memory (over 2 GiB)', advice: 'give a smaller file' },
  ERR_STRING_TOO_LONG: { words: 'too large to read as text', advice: 'give a smaller file' },
};

/**
 * An input file refused before it is read (pipeline/storage/read-input-file.ts): not a regular file
 * (FIFO, device, socket, directory) or larger than the caller's bound. The message is
 * `{file}: {reason}`; {@link describeFileSystemError} uses the reason in its own line.
 */
export class InputFileError extends Error {
  constructor(
    readonly file: string,
    readonly kind: 'not-regular' | 'too-large',
    readonly reason: string,
    /** The file's size in bytes (`too-large`). */
    readonly size?: number,
    /** The bound it exceeds, bytes (`too-large`). */
    readonly maximumBytes?: number,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'InputFileError';
  }
}

/** The errno code of an error, when it has one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * One line for a failed file-system call on `file`: `{file}: {what}: {words} ({CODE}); {advice}`.
 * An error without a known code keeps its own first line (after the path).
 * @param error what the call threw
 * @param file the path the user gave (or the one the call used)
 * @param what what the file is to the command (`dataset folder`, `corpus`, `config file`), or omitted
 */
export function describeFileSystemError(error: unknown, file: string, what?: string): string {
  const code = errorCode(error);
  const reason = code === undefined ? undefined : FILE_SYSTEM_REASONS[code];
  const subject = what ? `${file}: ${what}` : file;
  if (error instanceof InputFileError) return `${subject}: ${error.reason}`;
  if (reason === undefined) {
    const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    return `${subject}: ${message.replace(/^[A-Z_]+: /, '')}`;
  }
  return `${subject}: ${reason.words} (${code})${reason.advice ? `; ${reason.advice}` : ''}`;
}

/** Whether a message is Node's raw errno text (`ENOTDIR: not a directory, open '…'`), for handlers that reword it. */
export function isRawFileSystemMessage(message: string): boolean {
  return (
    /^(E[A-Z]+|ERR_FS_[A-Z_]+): /.test(message) ||
    /^[A-Z][A-Z_]+: [^,]+, (open|scandir|stat|lstat|mkdir|rename|read|readlink|opendir|unlink|rmdir|access) '/.test(
      message,
    )
  );
}
