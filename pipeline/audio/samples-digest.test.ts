import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { recordStoredSamplesDigest, samplesDigest } from './samples-digest.ts';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('samplesDigest', () => {
  it('is the sha256 of the float32 bytes, with −0 hashed as +0, and does not change the samples', () => {
    const samples = Float32Array.from([0.5, 0, -0.25, 0]);
    expect(samplesDigest(samples)).toBe(sha256(new Uint8Array(samples.buffer)));
    const negativeZero = Float32Array.from([0.5, -0, -0.25, -0]);
    expect(samplesDigest(negativeZero)).toBe(samplesDigest(samples));
    expect(Object.is(negativeZero[1], -0)).toBe(true);
    expect(samplesDigest(Float32Array.from([0.5, 0, -0.25, 2 ** -15]))).not.toBe(samplesDigest(samples));
    // a view hashes its own samples only
    const longer = Float32Array.from([9, 0.5, 0, -0.25, 0, 9]);
    expect(samplesDigest(longer.subarray(1, 5))).toBe(samplesDigest(samples));
  });

  it("names a clip recorded as a stored file's part by that file and part, never as a hash; other arrays with the same values are hashed", () => {
    const fileSha256 = 'a'.repeat(64);
    const clip = Float32Array.from([0.125, -0.5]);
    const fullBand = Float32Array.from([0.125, 0, -0.5]);
    recordStoredSamplesDigest(clip, fileSha256, 'audio');
    recordStoredSamplesDigest(fullBand, fileSha256, 'full-band');
    expect(samplesDigest(clip)).toBe(`stored:${fileSha256}:audio`);
    expect(samplesDigest(fullBand)).toBe(`stored:${fileSha256}:full-band`);
    const copy = Float32Array.from(clip);
    expect(samplesDigest(copy)).toBe(sha256(new Uint8Array(copy.buffer)));
    expect(samplesDigest(copy)).not.toBe(samplesDigest(clip));
  });
});
