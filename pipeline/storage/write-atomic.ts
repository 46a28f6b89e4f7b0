/**
 * Atomic file writes: a file gets its final name only once all of its bytes are on the disk, and the
 * temporary files a killed writer left are recognised and removed. Every dataset file, cache entry and
 * report goes through {@link writeAtomic}.
 */
import { randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { link, mkdir, open, readdir, rename, rm, stat, statfs, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { DiskFullError } from '../model/build-errors.ts';
import { hostIdentifier, isProcessRunning } from './process-liveness.ts';
import { redactSecrets } from './redact.ts';

/** Temporary files of {@link writeAtomic}: `{file}.{host}-{pid}-{random}.tmp` (host: 8 hex digits). */
const TEMPORARY_FILE = /\.([0-9a-f]{8})-(\d+)-[0-9a-f]{8}\.tmp$/;
/** Temporary files write-file-atomic (used before) left: `{file}.{decimal murmur hash}`. */
const LEGACY_TEMPORARY_FILE = /\.(json|wav|jsonl|md|txt)\.\d{1,10}$/;
/** Age after which a temporary file whose writer cannot be checked (another host, legacy name) is removed. */
const ORPHAN_AGE_MILLISECONDS = 24 * 3600 * 1000;

/**
 * A temporary path beside `file` for this process, `{file}.{host}-{pid}-{random}.tmp`: what
 * {@link removeOrphanedTemporaryFiles} removes once this process no longer runs (a file a killed
 * process left behind). Every short-lived file a build makes in its folders is named so.
 */
export function temporaryPathFor(file: string): string {
  return `${file}.${hostIdentifier()}-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
}

/**
 * Write a file atomically: the data goes to a temporary file beside it (`{file}.{host}-{pid}-{random}.tmp`),
 * is flushed to the disk (fsync), its length is checked against the data, and only then is it renamed
 * over `file`. Readers see either the old file or the complete new one; a short write never ends up
 * under the final name (a single `fs.write` whose short count is ignored would let a cut WAV on a
 * filling disk reach its final name). Parent folders are created. Text is written as UTF-8 with every registered API
 * key replaced by its variable name (./redact.ts).
 * @param options `durable: false` skips the fsync, for a file in a work folder that is flushed whole
 *   before it is renamed into place (./file-system-sync.ts); the length check and rename still happen.
 * @throws DiskFullError (./build-errors.ts) when the file system is full or the write came out short,
 *   naming the file, the bytes needed and the bytes free; Error naming the file and the cause for
 *   every other failure (read-only file system, a file where a folder should be, permissions), with the
 *   system error's `code` kept. The temporary file is removed on failure.
 */
export async function writeAtomic(
  file: string,
  data: Uint8Array | string,
  options: { durable?: boolean } = {},
): Promise<void> {
  const bytes =
    typeof data === 'string'
      ? Buffer.from(redactSecrets(data), 'utf8')
      : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const temporary = temporaryPathFor(file);
  let handle: FileHandle | undefined;
  try {
    handle = await openCreatingFolder(temporary);
    await handle.writeFile(bytes); // loops over short writes; ENOSPC surfaces here
    if (options.durable !== false) await handle.sync();
    const { size } = await handle.stat();
    if (size !== bytes.byteLength) {
      throw Object.assign(new Error(`wrote ${size} of ${bytes.byteLength} bytes`), { code: 'ESHORTWRITE' });
    }
    await handle.close();
    handle = undefined;
    await rename(temporary, file);
  } catch (error) {
    await handle?.close().catch(() => {});
    await rm(temporary, { force: true }).catch(() => {});
    throw await describeWriteFailure(file, bytes.byteLength, error);
  }
}

/** Bytes not held in memory: their number, and how to get them (e.g. read from the file they are stored in, checked against its recorded hash). */
export interface DeferredBytes {
  byteLength: number;
  read(): Promise<Uint8Array>;
}

/**
 * Puts `data` at `file` as a hard link to `source`, a file that holds exactly `data` and is never
 * rewritten in place (a content-cache entry: storage/content-cache.ts writes each entry to a new file
 * and renames it over the old), so the bytes are on disk once; else, when linking fails (another
 * filesystem: EXDEV; one without hard links: EPERM, ENOTSUP; too many links: EMLINK; the source gone:
 * ENOENT; any other reason) or `source` has another length than `data`, writes them ({@link writeAtomic}
 * with `options`; {@link DeferredBytes} are read only then).
 * Atomic either way: the link is made under a temporary name, then renamed over `file`. Like DVC's
 * `cache.type: hardlink`, the two names share one file: a program that rewrites one of them in place
 * changes the other (the cache notices by its sha256 and computes the entry again).
 * @returns 'linked' or 'written'
 * @throws as {@link writeAtomic} when writing; what `data.read` throws; the rename's error when the
 *   link cannot be put in place
 */
export async function linkOrWriteAtomic(
  file: string,
  data: Uint8Array | DeferredBytes,
  source: string,
  options: { durable?: boolean } = {},
): Promise<'linked' | 'written'> {
  const temporary = temporaryPathFor(file);
  let linked = false;
  try {
    await link(source, temporary).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      await mkdir(path.dirname(temporary), { recursive: true }); // the folder, or the source, is missing
      await link(source, temporary);
    });
    linked = (await stat(temporary)).size === data.byteLength;
  } catch {
    // linking is an optimization: any failure leaves the bytes to be written
  }
  if (!linked) {
    await rm(temporary, { force: true }).catch(() => {});
    await writeAtomic(file, data instanceof Uint8Array ? data : await data.read(), options);
    return 'written';
  }
  try {
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
  // `file` already a link to `source`: rename(2) between two links to one file does nothing (POSIX) and
  // leaves the temporary name; it is removed (ENOENT, ignored, in every other case)
  await rm(temporary, { force: true });
  return 'linked';
}

/**
 * {@link writeAtomic} for data that comes in chunks (an archive too large to hold in memory): the
 * chunks go to the temporary file as they arrive (the source waits while the disk does), then fsync,
 * length check and rename as for {@link writeAtomic}.
 * @returns the number of bytes written
 * @throws as {@link writeAtomic} (DiskFullError naming the file, the bytes written so far and the
 *   bytes free); the source's own error. The temporary file is removed on failure.
 */
export async function writeAtomicChunks(file: string, chunks: AsyncIterable<Uint8Array>): Promise<number> {
  const temporary = temporaryPathFor(file);
  let handle: FileHandle | undefined;
  let written = 0;
  let sourceFailed = false;
  const iterator = chunks[Symbol.asyncIterator]();
  try {
    handle = await openCreatingFolder(temporary);
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await iterator.next();
      } catch (error) {
        sourceFailed = true;
        throw error;
      }
      if (next.done) break;
      await handle.writeFile(next.value); // loops over short writes; ENOSPC surfaces here
      written += next.value.byteLength;
    }
    await handle.sync();
    const { size } = await handle.stat();
    if (size !== written) throw Object.assign(new Error(`wrote ${size} of ${written} bytes`), { code: 'ESHORTWRITE' });
    await handle.close();
    handle = undefined;
    await rename(temporary, file);
    return written;
  } catch (error) {
    await handle?.close().catch(() => {});
    await rm(temporary, { force: true }).catch(() => {});
    if (sourceFailed) throw error;
    await iterator.return?.().catch(() => {}); // tells the source to stop (a stream is destroyed)
    throw await describeWriteFailure(file, written, error);
  }
}

/**
 * Creates `temporary` for writing (`wx`); its folder is made (recursively) only when the open finds it
 * missing: a build writes thousands of files into folders that exist, and a `mkdir` before each was
 * two more file-system calls per file.
 * @throws the open's or the mkdir's error (EEXIST when the temporary file exists, ENOTDIR, EACCES, …)
 */
async function openCreatingFolder(temporary: string): Promise<FileHandle> {
  try {
    return await open(temporary, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await mkdir(path.dirname(temporary), { recursive: true });
    return await open(temporary, 'wx');
  }
}

/** A one-line error for a failed write of `neededBytes` to `file`. */
async function describeWriteFailure(file: string, neededBytes: number, error: unknown): Promise<Error> {
  if (error instanceof DiskFullError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'ESHORTWRITE') {
    const available = await freeBytes(path.dirname(file));
    const free = available === undefined ? '' : `, ${formatBytes(available)} free`;
    const what =
      code === 'ESHORTWRITE'
        ? `the write came out short (${(error as Error).message})`
        : code === 'EDQUOT'
          ? 'disk quota exceeded'
          : 'no space left on the device';
    return new DiskFullError(
      `${file}: ${what}: it needs ${formatBytes(neededBytes)}${free}; free some space or choose another folder`,
      file,
      neededBytes,
      available,
      { cause: error },
    );
  }
  const reasons: Record<string, string> = {
    EROFS: 'the file system is read-only',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    ENOTDIR: 'a part of the path is a file, not a folder',
    EEXIST: 'a part of the path is a file, not a folder',
    EISDIR: 'a folder is in the way',
    ENAMETOOLONG: 'the path is too long',
    ENOENT: 'a folder on the path cannot be created',
  };
  const reason =
    (code !== undefined ? reasons[code] : undefined) ?? (error instanceof Error ? error.message : String(error));
  return Object.assign(
    new Error(`${file}: cannot write: ${reason}${code && reasons[code] ? ` (${code})` : ''}`, { cause: error }),
    code ? { code } : {},
  );
}

/** Bytes free for an unprivileged writer on the file system holding `directory` (or its nearest existing parent); undefined when unknown. */
export async function freeBytes(directory: string): Promise<number | undefined> {
  let current = path.resolve(directory);
  for (;;) {
    try {
      const stats = await statfs(current);
      return stats.bavail * stats.bsize;
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return undefined;
      current = parent;
    }
  }
}

/** `1.5 MB` style (decimal units). */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * Remove the temporary files a killed writer left under `directory` (recursively): those of
 * {@link writeAtomic} whose writer, on this host, no longer runs, those of another host or of
 * write-file-atomic (used before) once older than a day. Files of a running writer are kept, so this
 * is safe while another build uses the same cache.
 * @returns the paths removed
 */
export async function removeOrphanedTemporaryFiles(directory: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { recursive: true, withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const removed: string[] = [];
  const now = Date.now();
  const thisHost = hostIdentifier();
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const match = TEMPORARY_FILE.exec(entry.name);
    const legacy = match === null && LEGACY_TEMPORARY_FILE.test(entry.name);
    if (match === null && !legacy) continue;
    const file = path.join(entry.parentPath, entry.name);
    let orphaned: boolean;
    if (match !== null && match[1] === thisHost) {
      orphaned = isProcessRunning({ host: thisHost, pid: Number(match[2]), startTime: null }) === false;
    } else {
      const modified = await stat(file).then(
        (stats) => stats.mtimeMs,
        () => now,
      );
      orphaned = now - modified > ORPHAN_AGE_MILLISECONDS;
    }
    if (orphaned) {
      await rm(file, { force: true });
      removed.push(file);
    }
  }
  return removed;
}
