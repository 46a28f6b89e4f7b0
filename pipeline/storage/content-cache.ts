/**
 * Content-addressed cache (DVC-style): a stage's result is stored under the sha256 of a canonical
 * JSON of everything that determines it (stage name and version, parameters, input content), so a
 * rerun with the same inputs reuses it and any change of an input or parameter recomputes it.
 *
 * Layout: `{cacheDirectory}/{stage}/{key[0..2]}/{key}.json` (and `.wav` for audio entries; `.1.wav`
 * and on for the further data files of an entry of several, {@link ContentCache.binaryFiles}).
 * Every entry is written atomically (temporary file, then rename), so an interrupted run never leaves
 * a half-written entry that a later run would trust. Every entry carries the sha256 of its content,
 * checked on every read: a JSON entry is `{contentCacheEntry: 2, valueSha256, value}` (the hash of
 * the value's canonical JSON), a binary entry's metadata file records the data file's length and
 * sha256 and the hash of its own metadata (the word timings beside the audio). An entry damaged
 * afterwards (unreadable, not JSON, a hash or length that differs, a data file the codec cannot
 * decode) is treated as a miss: recomputed, overwritten and counted as `corrupt`.
 *
 * Entries written before the hashes were recorded (a bare JSON value; a binary envelope of version 1)
 * are read as before and rewritten with their hashes, so a cache from an earlier version keeps its
 * results (LLM replies cost money) and is checked from then on.
 */
import path from 'node:path';
import {
  binaryEnvelope,
  checkRecordedData,
  CorruptEntryError,
  decodeBinaryEntry,
  decodeStoredFiles,
  isBinaryEnvelope,
  isFilesEnvelope,
  isJsonEnvelope,
  jsonEnvelopeText,
  parseEntry,
  readEntry,
  serializeValue,
  type FilesEntryEnvelope,
  type StoredFile,
} from './cache-entry-files.ts';
import { bytesHash, contentHash } from './content-hash.ts';
import { writeAtomic } from './write-atomic.ts';

export { bytesHash, contentHash } from './content-hash.ts';
export type { StoredFile } from './cache-entry-files.ts';

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

/** How {@link ContentCache.binary} turns a value into one data file and metadata, and back. */
export interface BinaryCodec<T, M> {
  encode(value: T): { bytes: Uint8Array; metadata: M };
  decode(bytes: Buffer, metadata: M): T;
  /**
   * Told the sha256 (hex) of the data file behind a value `binary` returns: on a hit, of the bytes read
   * (checked against the recorded sha256; computed for an entry from before it was recorded); on a miss,
   * of the bytes `encode` made and `binary` stored (a planning cache that stores nothing passes no miss
   * here). On a miss the value is what `compute` returned, not decoded from the file: a codec that names
   * the value by the file must make sure decoding gives back the same value (e.g. audio already on the
   * 16-bit grid). It must not throw (on a hit, a throw counts the entry as damaged and recomputes it).
   */
  stored?(value: T, dataSha256: string): void;
}

/** How {@link ContentCache.binaryFiles} turns a computed value (`U`) into data files and metadata (`M`), and stored files and metadata back into its result (`T`). */
export interface FilesCodec<T, M, U = T> {
  encode(value: U): { parts: readonly Uint8Array[]; metadata: M };
  decode(parts: StoredFile[], metadata: M): T;
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
        const stored = parseEntry(file, cached);
        let value: T;
        if (isJsonEnvelope(stored)) {
          if (contentHash(stored.value) !== stored.valueSha256)
            throw new CorruptEntryError(file, 'content differs from the sha256 recorded at write time');
          value = stored.value as T;
        } else {
          if (isBinaryEnvelope(stored))
            throw new CorruptEntryError(file, "holds a binary entry's metadata, not a JSON value");
          value = stored as T; // an entry from before the hash: rewritten with it, checked from now on
          await this.store(file, jsonEnvelopeText(value));
        }
        this.count(stage, 'hit');
        return value;
      }
      this.count(stage, 'miss');
    } catch (error) {
      this.countFailedRead(stage, error);
    }
    const value = await compute();
    await this.store(file, jsonEnvelopeText(value));
    return value;
  }

  /**
   * Write one entry file atomically (a planning cache that never writes overrides this).
   * @throws as writeAtomic (disk full, permissions)
   */
  protected async store(file: string, data: string | Uint8Array): Promise<void> {
    await writeAtomic(file, data);
  }

  /** Damaged entries found so far (all stages): recomputed and overwritten. */
  get corruptEntries(): number {
    return Object.values(this.statistics).reduce((total, entry) => total + entry.corrupt, 0);
  }

  /**
   * Like {@link binary}, for results made of several data files plus JSON metadata (a rendered dialogue:
   * its WAV and its full-band WAV), each file whole on disk so it can be linked rather than copied.
   * Part 0 is `{key}{extension}`, part i `{key}.{i}{extension}`; the metadata file (`{key}.json`,
   * written last) records every part's length and sha256. On a hit and on a miss alike, `decode` gets the
   * parts as stored ({@link StoredFile}) and the metadata as read back through JSON, so both return the
   * same value. A metadata file that cannot be read or parsed, a part that is missing or differs from
   * its recorded length or sha256, or a `decode` that throws counts as `corrupt`: recomputed and
   * overwritten. What `compute` returns (`U`) may differ from what `decode` makes (`T`): e.g. the bytes
   * in a buffer the caller reuses once this settles, and a value that names the stored files instead;
   * on a miss, each part's `bytes` handed to `decode` is a view of what `encode` returned.
   * @throws what `compute` throws; as writeAtomic when an entry cannot be stored
   */
  async binaryFiles<T, M, U = T>(
    stage: string,
    keyMaterial: unknown,
    compute: () => Promise<U>,
    codec: FilesCodec<T, M, U>,
    extension: string,
  ): Promise<T> {
    const key = contentHash({ stage, keyMaterial });
    const partFile = (index: number) => this.entryPath(stage, key, index === 0 ? extension : `.${index}${extension}`);
    const metadataFile = this.entryPath(stage, key, '.json');
    try {
      const metadataText = await readEntry(metadataFile);
      // the metadata is written last: without it the entry is merely incomplete (a miss)
      if (metadataText !== undefined) {
        const stored = parseEntry(metadataFile, metadataText);
        if (!isFilesEnvelope(stored))
          throw new CorruptEntryError(metadataFile, 'is not the metadata of an entry of several data files');
        if (contentHash(stored.metadata) !== stored.metadataSha256)
          throw new CorruptEntryError(metadataFile, 'metadata differs from the sha256 recorded at write time');
        const parts = await Promise.all(
          stored.files.map(async (recorded, index): Promise<StoredFile> => {
            const file = partFile(index);
            const bytes = await readEntry(file);
            if (bytes === undefined)
              throw new CorruptEntryError(file, `missing, though its metadata ${path.basename(metadataFile)} exists`);
            return { bytes, path: file, sha256: checkRecordedData(file, bytes, recorded.bytes, recorded.sha256) };
          }),
        );
        const value = decodeStoredFiles(metadataFile, parts, stored.metadata as M, codec);
        this.count(stage, 'hit');
        return value;
      }
      this.count(stage, 'miss');
    } catch (error) {
      this.countFailedRead(stage, error);
    }
    const { parts, metadata } = codec.encode(await compute());
    const stored: StoredFile[] = [];
    for (const [index, part] of parts.entries()) {
      const file = partFile(index);
      await this.store(file, part);
      stored.push({
        bytes: Buffer.from(part.buffer, part.byteOffset, part.byteLength),
        path: file,
        sha256: bytesHash(part),
      });
    }
    const { parsed, sha256 } = serializeValue(metadata);
    const envelope: FilesEntryEnvelope<M> = {
      contentCacheEntry: 3,
      files: stored.map((part) => ({ bytes: part.bytes.byteLength, sha256: part.sha256 })),
      metadataSha256: sha256,
      metadata: parsed as M,
    };
    // metadata last: its presence marks the entry complete
    await this.store(metadataFile, JSON.stringify(envelope));
    return decodeStoredFiles(metadataFile, stored, parsed as M, codec);
  }

  /**
   * Like `json`, for results made of binary data plus JSON metadata (e.g. synthesized audio).
   * `encode`/`decode` convert between the value and its (bytes, metadata) pair. An entry whose
   * metadata cannot be read or parsed, whose data file is missing or differs from the length and
   * sha256 recorded beside the metadata, or that `decode` throws on, counts as `corrupt` and is
   * recomputed and overwritten. (Entries written before the length and sha256 were recorded hold
   * the bare metadata; they are still read, checked by `decode` only.) `codec.stored`, when given, is
   * told the sha256 of the data file behind the value returned, on a hit (as checked) and on a miss (as
   * written) alike.
   */
  async binary<T, M>(
    stage: string,
    keyMaterial: unknown,
    compute: () => Promise<T>,
    codec: BinaryCodec<T, M>,
    extension: string,
  ): Promise<T> {
    const key = contentHash({ stage, keyMaterial });
    const dataFile = this.entryPath(stage, key, extension);
    const metadataFile = this.entryPath(stage, key, '.json');
    try {
      const [metadataText, bytes] = await Promise.all([readEntry(metadataFile), readEntry(dataFile)]);
      // the metadata is written last: without it the entry is merely incomplete (a miss)
      if (metadataText !== undefined) {
        const stored = parseEntry(metadataFile, metadataText);
        const value = decodeBinaryEntry(metadataFile, stored, dataFile, bytes, codec);
        let dataSha256 = isBinaryEnvelope(stored) ? stored.dataSha256 : null;
        // an entry from before the metadata hash: rewritten with it, checked from now on
        if (!isBinaryEnvelope(stored) || stored.contentCacheEntry !== 2) {
          const envelope = binaryEnvelope(bytes!, (isBinaryEnvelope(stored) ? stored.metadata : stored) as M);
          dataSha256 = envelope.dataSha256;
          await this.store(metadataFile, JSON.stringify(envelope));
        }
        codec.stored?.(value, dataSha256!);
        this.count(stage, 'hit');
        return value;
      }
      this.count(stage, 'miss');
    } catch (error) {
      this.countFailedRead(stage, error);
    }
    const value = await compute();
    const encoded = codec.encode(value);
    await this.store(dataFile, encoded.bytes);
    const envelope = binaryEnvelope(encoded.bytes, encoded.metadata);
    // metadata last: its presence marks the entry complete
    await this.store(metadataFile, JSON.stringify(envelope));
    codec.stored?.(value, envelope.dataSha256);
    return value;
  }
}
