/**
 * The hashes that name and check content cache entries (./content-cache.ts): sha256 of a value's
 * canonical JSON, and of raw bytes.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.ts';

/**
 * sha256 (hex) of the canonical JSON (RFC 8785) of `value`: key order does not matter,
 * `undefined` fields are dropped.
 * @throws TypeError when `value` holds something JSON cannot represent (a function, a bigint)
 */
export function contentHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** sha256 (hex) of raw bytes or a string. */
export function bytesHash(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}
