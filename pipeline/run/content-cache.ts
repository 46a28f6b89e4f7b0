/**
 * Content-addressed cache (DVC-style): a stage's result is stored under the sha256 of a canonical
 * JSON of everything that determines it (stage name and version, parameters, input content), so a
 * rerun with the same inputs reuses it and any change of an input or parameter recomputes it.
 *
 * Layout: `{cacheDirectory}/{stage}/{key[0..2]}/{key}.json` (and `.wav` for audio entries).
 * Every entry is written atomically (temporary file, then rename), so an interrupted run never leaves
 * a half-written entry that a later run would trust.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import canonicalizeModule from 'canonicalize';
import writeFileAtomic from 'write-file-atomic';

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

/** Counts of hits and misses per stage, for the run report and the "synthesizes nothing" check. */
export type CacheStatistics = Record<string, { hits: number; misses: number }>;

/** A content-addressed cache rooted at one folder. */
export class ContentCache {
  readonly statistics: CacheStatistics = {};

  constructor(readonly directory: string) {}

  /** Path of an entry: `{directory}/{stage}/{key[0..2]}/{key}{extension}`. */
  entryPath(stage: string, key: string, extension: string): string {
    return path.join(this.directory, stage, key.slice(0, 2), `${key}${extension}`);
  }

  private count(stage: string, hit: boolean): void {
    const entry = (this.statistics[stage] ??= { hits: 0, misses: 0 });
    if (hit) entry.hits += 1;
    else entry.misses += 1;
  }

  /**
   * Return the cached JSON result for (stage, keyMaterial), computing and storing it on a miss.
   * @param stage stage name, e.g. `rewrite-spoken`
   * @param keyMaterial everything the result depends on (hashed with `contentHash`)
   * @param compute produces the result; its value must be JSON-serialisable
   */
  async json<T>(stage: string, keyMaterial: unknown, compute: () => Promise<T>): Promise<T> {
    const file = this.entryPath(stage, contentHash({ stage, keyMaterial }), '.json');
    const cached = await readIfExists(file);
    if (cached !== undefined) {
      this.count(stage, true);
      return JSON.parse(cached.toString('utf8')) as T;
    }
    this.count(stage, false);
    const value = await compute();
    await writeAtomic(file, JSON.stringify(value));
    return value;
  }

  /**
   * Like `json`, for results made of binary data plus JSON metadata (e.g. synthesized audio).
   * `encode`/`decode` convert between the value and its (bytes, metadata) pair.
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
    const [metadataText, bytes] = await Promise.all([readIfExists(metadataFile), readIfExists(dataFile)]);
    if (metadataText !== undefined && bytes !== undefined) {
      this.count(stage, true);
      return codec.decode(bytes, JSON.parse(metadataText.toString('utf8')) as M);
    }
    this.count(stage, false);
    const value = await compute();
    const encoded = codec.encode(value);
    await writeAtomic(dataFile, encoded.bytes);
    // metadata last: its presence marks the entry complete
    await writeAtomic(metadataFile, JSON.stringify(encoded.metadata));
    return value;
  }
}

async function readIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Write a file atomically: to a temporary file beside it, then rename (write-file-atomic), creating
 * parent folders. Readers see either the old file or the complete new one, never a partial write.
 */
export async function writeAtomic(file: string, data: Uint8Array | string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
}
