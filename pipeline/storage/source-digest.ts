/**
 * A digest of the project's own code, for cache entries that hold what the code made from its inputs
 * as a whole (a dialogue's dataset record, a WAV's signal checks): an entry made by other code is
 * never taken for this code's.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { bytesHash } from './content-hash.ts';
import { PACKAGE_ROOT } from './package-files.ts';

let sourceDigestMemo: string | null = null;

/**
 * sha256 of the project's code (every non-test module under pipeline/, stages/ and corpora/, with
 * its path), read once per process: a record made by other code is never taken for this code's.
 */
export function sourceDigest(): string {
  if (sourceDigestMemo !== null) return sourceDigestMemo;
  const parts: string[] = [];
  for (const top of ['pipeline', 'stages', 'corpora']) {
    const root = path.join(PACKAGE_ROOT, top);
    let entries: string[];
    try {
      entries = readdirSync(root, { recursive: true }) as string[];
    } catch {
      continue;
    }
    for (const relative of entries.sort()) {
      if (!/\.(ts|js|mjs|wasm|json|yaml)$/.test(relative) || /\.(test|bench)\.ts$/.test(relative)) continue;
      let bytes: Buffer;
      try {
        bytes = readFileSync(path.join(root, relative));
      } catch {
        continue; // a folder named like a module
      }
      parts.push(`${top}/${relative.split(path.sep).join('/')}:${bytesHash(bytes)}`);
    }
  }
  sourceDigestMemo = bytesHash(parts.join('\n'));
  return sourceDigestMemo;
}
