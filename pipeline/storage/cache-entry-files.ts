/**
 * The files of a content cache entry (./content-cache.ts): the envelopes a JSON entry and the
 * metadata file of a binary entry hold (the value or metadata with its sha256, the data files'
 * lengths and sha256), reading and parsing them, and checking stored data against what was recorded,
 * each failure a {@link CorruptEntryError} naming the damaged file.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { bytesHash, contentHash } from './content-hash.ts';

/**
 * What a binary entry's metadata file holds: the codec's metadata plus the data file's length and
 * sha256, so a truncated or altered data file is noticed even when it still decodes.
 */
export interface BinaryEntryEnvelope<M> {
  contentCacheEntry: 2;
  dataBytes: number;
  dataSha256: string;
  /** sha256 of the canonical JSON of `metadata` ({@link contentHash}). */
  metadataSha256: string;
  metadata: M;
}

/**
 * What the metadata file of an entry of several data files holds ({@link ContentCache.binaryFiles}):
 * each data file's length and sha256 (index = part), and the metadata and its hash.
 */
export interface FilesEntryEnvelope<M> {
  contentCacheEntry: 3;
  files: { bytes: number; sha256: string }[];
  /** sha256 of the canonical JSON of `metadata` ({@link contentHash}). */
  metadataSha256: string;
  metadata: M;
}

/**
 * One data file of an entry as {@link ContentCache.binaryFiles} hands it to its codec: the bytes, the
 * file that holds them (stored atomically and never rewritten in place, so a hard link to it keeps
 * these bytes: the dataset writer links its WAVs to it) and their sha256, checked against the bytes on
 * every read and computed from them on every write.
 */
export interface StoredFile {
  bytes: Buffer;
  path: string;
  sha256: string;
}

/** What a JSON entry's file holds: the value and the sha256 of its canonical JSON. */
export interface JsonEntryEnvelope {
  contentCacheEntry: 2;
  valueSha256: string;
  value: unknown;
}

/** The JSON text of `value` as stored, and the hash of what a reader parses back from it. */
export function serializeValue(value: unknown): { text: string; parsed: unknown; sha256: string } {
  const text = JSON.stringify(value);
  // hash what a reader gets back (JSON.stringify drops undefined, turns NaN into null, calls toJSON)
  const parsed = text === undefined ? null : (JSON.parse(text) as unknown);
  return { text: text ?? 'null', parsed, sha256: contentHash(parsed) };
}

/** A cache entry that exists but cannot be used. */
export class CorruptEntryError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(reason);
  }
}

/** The entry's bytes, or undefined when it does not exist. @throws CorruptEntryError when it exists but cannot be read */
export async function readEntry(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new CorruptEntryError(file, `cannot read: ${code ?? (error as Error).message}`);
  }
}

/** @throws CorruptEntryError when `bytes` is not JSON */
export function parseEntry(file: string, bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new CorruptEntryError(file, `not valid JSON: ${(error as Error).message}`);
  }
}

/** A JSON entry's file text: the envelope with the value's hash. */
export function jsonEnvelopeText(value: unknown): string {
  const { parsed, sha256 } = serializeValue(value);
  const envelope: JsonEntryEnvelope = { contentCacheEntry: 2, valueSha256: sha256, value: parsed };
  return JSON.stringify(envelope);
}

/** A binary entry's metadata file: the data's length and sha256, the metadata and its hash. */
export function binaryEnvelope<M>(bytes: Uint8Array, metadata: M): BinaryEntryEnvelope<M> {
  const { parsed, sha256 } = serializeValue(metadata);
  return {
    contentCacheEntry: 2,
    dataBytes: bytes.byteLength,
    dataSha256: bytesHash(bytes),
    metadataSha256: sha256,
    metadata: parsed as M,
  };
}

export function entryVersion(value: unknown): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as { contentCacheEntry?: unknown }).contentCacheEntry
    : undefined;
}

export function isJsonEnvelope(value: unknown): value is JsonEntryEnvelope {
  return entryVersion(value) === 2 && 'valueSha256' in (value as object);
}

export function isFilesEnvelope(value: unknown): value is FilesEntryEnvelope<unknown> {
  return (
    entryVersion(value) === 3 &&
    Array.isArray((value as { files?: unknown }).files) &&
    typeof (value as { metadataSha256?: unknown }).metadataSha256 === 'string'
  );
}

/** `codec.decode` of an entry's stored files. @throws CorruptEntryError (naming the metadata file) when it throws */
export function decodeStoredFiles<T, M>(
  metadataFile: string,
  parts: StoredFile[],
  metadata: M,
  codec: { decode(parts: StoredFile[], metadata: M): T },
): T {
  try {
    return codec.decode(parts, metadata);
  } catch (error) {
    throw new CorruptEntryError(
      metadataFile,
      `cannot decode: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** A binary entry's metadata file: version 1 (data hash only) or 2 (data and metadata hashes). */
export function isBinaryEnvelope(value: unknown): value is {
  contentCacheEntry: 1 | 2;
  dataBytes: number;
  dataSha256: string;
  metadataSha256?: string;
  metadata: unknown;
} {
  const version = entryVersion(value);
  return (version === 1 || version === 2) && 'dataSha256' in (value as object);
}

/**
 * A data file's bytes against the length and sha256 its metadata file recorded.
 * @returns the sha256 (hex) of `bytes`
 * @throws CorruptEntryError naming `file` when either differs
 */
export function checkRecordedData(file: string, bytes: Buffer, recordedBytes: number, recordedSha256: string): string {
  if (bytes.byteLength !== recordedBytes)
    throw new CorruptEntryError(file, `${bytes.byteLength} bytes, expected ${recordedBytes}`);
  const sha256 = bytesHash(bytes);
  if (sha256 !== recordedSha256)
    throw new CorruptEntryError(file, 'sha256 differs from the one recorded at write time');
  return sha256;
}

/** Check a binary entry's data against its metadata file and decode it. @throws CorruptEntryError when it does not fit */
export function decodeBinaryEntry<T, M>(
  metadataFile: string,
  stored: unknown,
  dataFile: string,
  bytes: Buffer | undefined,
  codec: { decode(bytes: Buffer, metadata: M): T },
): T {
  if (bytes === undefined)
    throw new CorruptEntryError(dataFile, `missing, though its metadata ${path.basename(metadataFile)} exists`);
  let metadata: M;
  if (isJsonEnvelope(stored))
    throw new CorruptEntryError(metadataFile, "holds a JSON value, not a binary entry's metadata");
  if (isBinaryEnvelope(stored)) {
    checkRecordedData(dataFile, bytes, stored.dataBytes, stored.dataSha256);
    if (stored.contentCacheEntry === 2 && contentHash(stored.metadata) !== stored.metadataSha256) {
      throw new CorruptEntryError(metadataFile, 'metadata differs from the sha256 recorded at write time');
    }
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
