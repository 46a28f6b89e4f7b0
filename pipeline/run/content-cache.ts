/**
 * Content-addressed cache (DVC-style): a stage's result is stored under the sha256 of a canonical
 * JSON of everything that determines it (stage name and version, parameters, input content), so a
 * rerun with the same inputs reuses it and any change of an input or parameter recomputes it.
 *
 * Layout: `{cacheDirectory}/{stage}/{key[0..2]}/{key}.json` (and `.wav` for audio entries).
 * Every entry is written atomically (temporary file, then rename), so an interrupted run never leaves
 * a half-written entry that a later run would trust. An entry damaged afterwards (unreadable, not
 * JSON, a data file whose length or sha256 differs from what its metadata file records, or that the
 * codec cannot decode) is treated as a miss: recomputed, overwritten and counted as `corrupt`.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, statfs, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import canonicalizeModule from 'canonicalize';
import { DiskFullError } from './build-errors.ts';
import { hostIdentifier, isProcessRunning } from './process-liveness.ts';
import { redactSecrets } from './redact.ts';

// canonicalize is CommonJS (module.exports = function); its typings declare an ES default export.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/**
 * sha256 (hex) of the canonical JSON (RFC 8785) of `value`: key order does not matter,
 * `undefined` fields are dropped.
 * @throws TypeError when `value` holds something JSON cannot represent (a function, a bigint)
 */
export function contentHash(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('contentHash: value has no JSON representation');
  return createHash('sha256').update(text).digest('hex');
}

/** sha256 (hex) of raw bytes or a string. */
export function bytesHash(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Counts per stage, for the run report and the "synthesizes nothing" check. `misses` includes the
 * `corrupt` entries (found but damaged, so recomputed and overwritten).
 */
export type CacheStatistics = Record<string, { hits: number; misses: number; corrupt: number }>;

/** Options of {@link ContentCache}. */
export interface ContentCacheOptions {
  /** Called for every damaged entry found (it is then recomputed): the entry's file and what is wrong with it. */
  onCorrupt?: (file: string, reason: string) => void;
}

/**
 * What a binary entry's metadata file holds: the codec's metadata plus the data file's length and
 * sha256, so a truncated or altered data file is noticed even when it still decodes.
 */
interface BinaryEntryEnvelope<M> {
  contentCacheEntry: 1;
  dataBytes: number;
  dataSha256: string;
  metadata: M;
}

/** A cache entry that exists but cannot be used. */
class CorruptEntryError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(reason);
  }
}

/** A content-addressed cache rooted at one folder. */
export class ContentCache {
  readonly statistics: CacheStatistics = {};

  /**
   * @param directory the cache's root folder (created on first write)
   * @param options `onCorrupt` to hear about damaged entries
   */
  constructor(
    readonly directory: string,
    private readonly options: ContentCacheOptions = {},
  ) {}

  /** Path of an entry: `{directory}/{stage}/{key[0..2]}/{key}{extension}`. */
  entryPath(stage: string, key: string, extension: string): string {
    return path.join(this.directory, stage, key.slice(0, 2), `${key}${extension}`);
  }

  private count(stage: string, outcome: 'hit' | 'miss' | 'corrupt'): void {
    const entry = (this.statistics[stage] ??= { hits: 0, misses: 0, corrupt: 0 });
    if (outcome === 'hit') entry.hits += 1;
    else entry.misses += 1;
    if (outcome === 'corrupt') entry.corrupt += 1;
  }

  /** Count a miss, or a corrupt entry (reported to `onCorrupt`) when `error` is a CorruptEntryError; rethrow anything else. */
  private countFailedRead(stage: string, error: unknown): void {
    if (!(error instanceof CorruptEntryError)) throw error;
    this.count(stage, 'corrupt');
    this.options.onCorrupt?.(error.file, error.message);
  }

  /**
   * Return the cached JSON result for (stage, keyMaterial), computing and storing it on a miss.
   * An entry that cannot be read or parsed counts as `corrupt` and is recomputed and overwritten.
   * @param stage stage name, e.g. `rewrite-spoken`
   * @param keyMaterial everything the result depends on (hashed with `contentHash`)
   * @param compute produces the result; its value must be JSON-serialisable
   */
  async json<T>(stage: string, keyMaterial: unknown, compute: () => Promise<T>): Promise<T> {
    const file = this.entryPath(stage, contentHash({ stage, keyMaterial }), '.json');
    try {
      const cached = await readEntry(file);
      if (cached !== undefined) {
        const value = parseEntry(file, cached) as T;
        this.count(stage, 'hit');
        return value;
      }
      this.count(stage, 'miss');
    } catch (error) {
      this.countFailedRead(stage, error);
    }
    const value = await compute();
    await writeAtomic(file, JSON.stringify(value));
    return value;
  }

  /**
   * Like `json`, for results made of binary data plus JSON metadata (e.g. synthesized audio).
   * `encode`/`decode` convert between the value and its (bytes, metadata) pair. An entry whose
   * metadata cannot be read or parsed, whose data file is missing or differs from the length and
   * sha256 recorded beside the metadata, or that `decode` throws on, counts as `corrupt` and is
   * recomputed and overwritten. (Entries written before the length and sha256 were recorded hold
   * the bare metadata; they are still read, checked by `decode` only.)
   */
  async binary<T, M>(
    stage: string,
    keyMaterial: unknown,
    compute: () => Promise<T>,
    codec: { encode(value: T): { bytes: Uint8Array; metadata: M }; decode(bytes: Buffer, metadata: M): T },
    extension: string,
  ): Promise<T> {
    const key = contentHash({ stage, keyMaterial });
    const dataFile = this.entryPath(stage, key, extension);
    const metadataFile = this.entryPath(stage, key, '.json');
    try {
      const [metadataText, bytes] = await Promise.all([readEntry(metadataFile), readEntry(dataFile)]);
      // the metadata is written last: without it the entry is merely incomplete (a miss)
      if (metadataText !== undefined) {
        const value = decodeBinaryEntry(metadataFile, parseEntry(metadataFile, metadataText), dataFile, bytes, codec);
        this.count(stage, 'hit');
        return value;
      }
      this.count(stage, 'miss');
    } catch (error) {
      this.countFailedRead(stage, error);
    }
    const value = await compute();
    const encoded = codec.encode(value);
    const envelope: BinaryEntryEnvelope<M> = {
      contentCacheEntry: 1,
      dataBytes: encoded.bytes.byteLength,
      dataSha256: bytesHash(encoded.bytes),
      metadata: encoded.metadata,
    };
    await writeAtomic(dataFile, encoded.bytes);
    // metadata last: its presence marks the entry complete
    await writeAtomic(metadataFile, JSON.stringify(envelope));
    return value;
  }
}

/** The entry's bytes, or undefined when it does not exist. @throws CorruptEntryError when it exists but cannot be read */
async function readEntry(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new CorruptEntryError(file, `cannot read: ${code ?? (error as Error).message}`);
  }
}

/** @throws CorruptEntryError when `bytes` is not JSON */
function parseEntry(file: string, bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new CorruptEntryError(file, `not valid JSON: ${(error as Error).message}`);
  }
}

function isEnvelope(value: unknown): value is BinaryEntryEnvelope<unknown> {
  return typeof value === 'object' && value !== null && (value as { contentCacheEntry?: unknown }).contentCacheEntry === 1;
}

/** Check a binary entry's data against its metadata file and decode it. @throws CorruptEntryError when it does not fit */
function decodeBinaryEntry<T, M>(
  metadataFile: string,
  stored: unknown,
  dataFile: string,
  bytes: Buffer | undefined,
  codec: { decode(bytes: Buffer, metadata: M): T },
): T {
  if (bytes === undefined) throw new CorruptEntryError(dataFile, `missing, though its metadata ${path.basename(metadataFile)} exists`);
  let metadata: M;
  if (isEnvelope(stored)) {
    if (bytes.byteLength !== stored.dataBytes) throw new CorruptEntryError(dataFile, `${bytes.byteLength} bytes, expected ${stored.dataBytes}`);
    if (bytesHash(bytes) !== stored.dataSha256) throw new CorruptEntryError(dataFile, 'sha256 differs from the one recorded at write time');
    metadata = stored.metadata as M;
  } else {
    metadata = stored as M; // an entry from before the envelope
  }
  try {
    return codec.decode(bytes, metadata);
  } catch (error) {
    throw new CorruptEntryError(dataFile, `cannot decode: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Temporary files of {@link writeAtomic}: `{file}.{host}-{pid}-{random}.tmp` (host: 8 hex digits). */
const TEMPORARY_FILE = /\.([0-9a-f]{8})-(\d+)-[0-9a-f]{8}\.tmp$/;
/** Temporary files write-file-atomic (used before) left: `{file}.{decimal murmur hash}`. */
const LEGACY_TEMPORARY_FILE = /\.(json|wav|jsonl|md|txt)\.\d{1,10}$/;
/** Age after which a temporary file whose writer cannot be checked (another host, legacy name) is removed. */
const ORPHAN_AGE_MILLISECONDS = 24 * 3600 * 1000;

/**
 * Write a file atomically: the data goes to a temporary file beside it (`{file}.{host}-{pid}-{random}.tmp`),
 * is flushed to the disk (fsync), its length is checked against the data, and only then is it renamed
 * over `file`. Readers see either the old file or the complete new one; a short write never ends up
 * under the final name (write-file-atomic, used before, wrote with one `fs.write` and ignored a short
 * count: on a filling disk a cut WAV got its final name; issue 11). Parent folders are created. Text is written as UTF-8 with every registered API
 * key replaced by its variable name (./redact.ts).
 * @throws DiskFullError (./build-errors.ts) when the file system is full or the write came out short,
 *   naming the file, the bytes needed and the bytes free; Error naming the file and the cause for
 *   every other failure (read-only file system, a file where a folder should be, permissions), with the
 *   system error's `code` kept. The temporary file is removed on failure.
 */
export async function writeAtomic(file: string, data: Uint8Array | string): Promise<void> {
  const bytes = typeof data === 'string' ? Buffer.from(redactSecrets(data), 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const temporary = `${file}.${hostIdentifier()}-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  let handle: FileHandle | undefined;
  try {
    await mkdir(path.dirname(file), { recursive: true });
    handle = await open(temporary, 'wx');
    await handle.writeFile(bytes); // loops over short writes; ENOSPC surfaces here
    await handle.sync();
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

/** A one-line error for a failed write of `neededBytes` to `file`. */
async function describeWriteFailure(file: string, neededBytes: number, error: unknown): Promise<Error> {
  if (error instanceof DiskFullError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'ESHORTWRITE') {
    const available = await freeBytes(path.dirname(file));
    const free = available === undefined ? '' : `, ${formatBytes(available)} free`;
    const what = code === 'ESHORTWRITE' ? `the write came out short (${(error as Error).message})` : code === 'EDQUOT' ? 'disk quota exceeded' : 'no space left on the device';
    return new DiskFullError(`${file}: ${what}: it needs ${formatBytes(neededBytes)}${free}; free some space or choose another folder`, file, neededBytes, available, { cause: error });
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
  const reason = (code !== undefined ? reasons[code] : undefined) ?? (error instanceof Error ? error.message : String(error));
  return Object.assign(new Error(`${file}: cannot write: ${reason}${code && reasons[code] ? ` (${code})` : ''}`, { cause: error }), code ? { code } : {});
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
      const modified = await stat(file).then((stats) => stats.mtimeMs, () => now);
      orphaned = now - modified > ORPHAN_AGE_MILLISECONDS;
    }
    if (orphaned) {
      await rm(file, { force: true });
      removed.push(file);
    }
  }
  return removed;
}
