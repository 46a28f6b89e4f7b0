/**
 * One way in for every input file a command reads (corpora, configurations, language packs, dataset
 * files): the file is opened without blocking, the open handle is checked to be a regular file no
 * larger than a bound, and the bytes are read from that same handle, so a FIFO, a device such as
 * `/dev/zero` or a socket is refused at once with one line instead of hanging or filling memory.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { InputFileError } from './file-system-errors.ts';

export { InputFileError } from './file-system-errors.ts';

/**
 * Largest input file read into memory as bytes by default: 1 GiB, below Node's 2 GiB buffer limit
 * (a dataset's longest dialogue WAV is a few tens of MB).
 */
export const DEFAULT_MAXIMUM_INPUT_BYTES = 1024 * 1024 * 1024;
/**
 * Largest input file read as text by default: 500 MB, below V8's longest string (2^29 - 24 UTF-16
 * code units, about 536 million), so a file under it always decodes.
 */
export const DEFAULT_MAXIMUM_TEXT_BYTES = 500_000_000;

/** What {@link openInputFile}, {@link readInputFile} and {@link readInputText} are told about the bound. */
export interface InputFileBound {
  /** Largest size accepted, bytes (a positive integer). */
  maximumBytes?: number;
  /** Name of the bound for the message (a config key or environment variable), e.g. `corpus.maximumFileBytes`. */
  boundName?: string;
}

/** Words for a file type that is not a regular file, from its stats. */
function fileTypeWords(stats: {
  isFIFO(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSocket(): boolean;
}): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'a special file';
}

/** The checks of {@link openInputFile} on a file's stats. @throws as openInputFile */
function checkInputStats(file: string, stats: Stats, maximumBytes: number, boundName: string | undefined): void {
  if (stats.isDirectory()) {
    // what readFile reports for a folder, so callers keep their errno wording
    throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${file}'`), {
      code: 'EISDIR',
      syscall: 'read',
      path: file,
    });
  }
  if (!stats.isFile()) {
    throw new InputFileError(file, 'not-regular', `is ${fileTypeWords(stats)}, not a regular file`);
  }
  if (stats.size > maximumBytes) {
    const name = boundName === undefined ? '' : ` (${boundName})`;
    throw new InputFileError(
      file,
      'too-large',
      `${stats.size} bytes, more than the ${maximumBytes} allowed${name}`,
      stats.size,
      maximumBytes,
    );
  }
}

/**
 * Opens `file` for reading with O_NONBLOCK (a FIFO with no writer does not block the open) and
 * checks the open handle: it must be a regular file (symbolic links are followed) of at most
 * `maximumBytes`. The caller reads from the handle and closes it.
 * @returns the handle and the file's size in bytes
 * @throws an `EISDIR` error (as `readFile` throws) for a directory; InputFileError `not-regular` (`{file}: is a FIFO, not a regular file`) or `too-large`
 *   (`{file}: {size} bytes, more than the {maximumBytes} allowed ({boundName})`); the file-system
 *   error of `open` or `fstat` (with its errno `code`) when the file cannot be opened
 */
export async function openInputFile(
  file: string,
  bound: InputFileBound = {},
): Promise<{ handle: FileHandle; size: number }> {
  const maximumBytes = bound.maximumBytes ?? DEFAULT_MAXIMUM_INPUT_BYTES;
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    checkInputStats(file, stats, maximumBytes, bound.boundName);
    return { handle, size: stats.size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The bytes of an input file, read from the handle {@link openInputFile} checked.
 * @throws InputFileError and file-system errors as {@link openInputFile}
 */
export async function readInputFile(file: string, bound: InputFileBound = {}): Promise<Buffer> {
  const { handle } = await openInputFile(file, bound);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * The bytes of an input file as a stream, for a file too large to hold in memory at once (a dataset's
 * WAV copied into an export): the handle is opened and checked as {@link openInputFile}, and the
 * stream reads from that same handle (it closes it at its end, on an error, or when destroyed).
 * @returns the stream (chunks of at most 64 KiB) and the file's size in bytes
 * @throws InputFileError and file-system errors as {@link openInputFile}, before any byte is read
 */
export async function openInputStream(
  file: string,
  bound: InputFileBound = {},
): Promise<{ stream: Readable & AsyncIterable<Buffer>; size: number }> {
  const { handle, size } = await openInputFile(file, bound);
  return { stream: handle.createReadStream({ autoClose: true }), size };
}

/**
 * The text of an input file as UTF-8 (lenient: bad sequences become U+FFFD), read as
 * {@link readInputFile}; the default bound is {@link DEFAULT_MAXIMUM_TEXT_BYTES}.
 * @throws InputFileError and file-system errors as {@link openInputFile}
 */
export async function readInputText(file: string, bound: InputFileBound = {}): Promise<string> {
  const bytes = await readInputFile(file, { maximumBytes: DEFAULT_MAXIMUM_TEXT_BYTES, ...bound });
  return bytes.toString('utf8');
}

/**
 * {@link readInputText} for callers that cannot wait (a language pack read while a config is
 * resolved): the same O_NONBLOCK open, checks on the open descriptor, and read from it.
 * @throws InputFileError and file-system errors as {@link openInputFile}
 */
export function readInputTextSync(file: string, bound: InputFileBound = {}): string {
  const descriptor = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    checkInputStats(file, fstatSync(descriptor), bound.maximumBytes ?? DEFAULT_MAXIMUM_TEXT_BYTES, bound.boundName);
    return readFileSync(descriptor, 'utf8');
  } finally {
    closeSync(descriptor);
  }
}
