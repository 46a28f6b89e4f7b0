/**
 * Digests of clip samples for cache keys (stages/place-timeline.ts `speechDigest`): once per clip
 * array, either the sha256 of its float32 bytes or, for a clip that is exactly what a stored file
 * decodes to, a name derived from that file's sha256 (already computed when the file was written or
 * checked when it was read), so the samples are not hashed a second time.
 */
import { createHash } from 'node:crypto';

const digests = new WeakMap<Float32Array, string>();

/**
 * The digest of a clip's samples: the one recorded by {@link recordStoredSamplesDigest}, else the sha256
 * (hex) of its float32 bytes with −0 written as +0 (a freshly synthesized clip may hold −0 where the
 * same clip read back from a WAV holds +0; they place and render to the same bytes), once per array.
 * The digest is kept per array object, so callers must not change a clip's samples in place after its
 * digest is taken: the pipeline's edits (capped pauses, cut answers) make new arrays.
 * @param samples one channel, any length
 * @returns 64 hex digits, or `stored:{sha256}:{part}` for a recorded clip (never equal to the former)
 */
export function samplesDigest(samples: Float32Array): string {
  let digest = digests.get(samples);
  if (digest === undefined) {
    digest = createHash('sha256').update(samplesBytes(samples)).digest('hex');
    digests.set(samples, digest);
  }
  return digest;
}

/** Which clip of a synthesis cache entry: the output-rate clip or the engine-rate (full-band) one. */
export type StoredClipPart = 'audio' | 'full-band';

/**
 * Records that `samples` are exactly what part `part` of the stored file with sha256 `fileSha256`
 * decodes to (a synthesis cache entry's WAV), so {@link samplesDigest} names them by that file instead
 * of hashing them: the same file gives the same digest on every read and on the run that wrote it, and
 * other samples never get it. The caller vouches for "exactly": a clip computed on a cache miss
 * qualifies only when decoding what was stored gives back its values (synthesis rounds every clip to
 * the 16-bit grid; −0 reads back as +0, which renders the same). The decoding code is part of the
 * placement's cache key (stages/place-timeline.ts `placementCodeDigest`).
 * @param samples the clip as the caller holds it (the array object is what is recorded)
 * @param fileSha256 sha256 (hex) of the stored file's bytes
 * @param part which of the file's clips `samples` is
 */
export function recordStoredSamplesDigest(samples: Float32Array, fileSha256: string, part: StoredClipPart): void {
  digests.set(samples, `stored:${fileSha256}:${part}`);
}

/**
 * The float32 bytes of `samples` with −0 written as +0: a view of the array itself when it holds no −0
 * (a clip read from a WAV, or rounded by quantizeToPcm16), else a fixed copy.
 */
function samplesBytes(samples: Float32Array): Uint8Array {
  // −0 is the float32 bit pattern 0x80000000: a search of the samples as 32-bit integers (a built-in
  // scan, about 3.5 x faster than comparing each float and Object.is, same answer)
  const negativeZero = new Int32Array(samples.buffer, samples.byteOffset, samples.length).indexOf(-0x80000000);
  if (negativeZero < 0) return new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  const copy = new Float32Array(samples);
  for (let index = negativeZero; index < copy.length; index += 1) copy[index] = copy[index]! + 0;
  return new Uint8Array(copy.buffer);
}
