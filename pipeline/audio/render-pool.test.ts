import { afterAll, describe, expect, it } from 'vitest';
import { masterMix, type ComposedMix } from './master-mix.ts';
import { createRenderPool } from './render-pool.ts';
import { truePeakDbtp } from './true-peak-limiter.ts';
import { decodeWav } from './wav.ts';

const pool = createRenderPool(1);
afterAll(async () => {
  await pool.close();
});

/** Two tracks of loud tone bursts (80 ms in every 200 ms, peaks above -1 dBTP) and, with `fullBand`, two at 24 kHz. */
function mix(seconds: number, fullBand: boolean): ComposedMix {
  const burst = (rate: number, index: number) => {
    const phase = (index % Math.round(0.2 * rate)) / Math.round(0.08 * rate);
    return phase < 1 ? Math.sin(Math.PI * phase) ** 2 : 0;
  };
  const tone = (rate: number, frequency: number, gain: number) =>
    Float32Array.from(
      { length: Math.round(seconds * rate) },
      (_, index) => gain * burst(rate, index) * Math.sin((2 * Math.PI * frequency * index) / rate + 0.7),
    );
  return {
    tracks: [tone(16000, 997, 1.2), tone(16000, 440, 0.4)],
    sampleRate: 16000,
    ...(fullBand
      ? {
          fullBand: {
            tracks: [tone(24000, 1499, 1.3), tone(24000, 440, 0.4)] as [Float32Array, Float32Array],
            sampleRate: 24000,
          },
        }
      : {}),
  };
}

describe('mastering in a worker thread', () => {
  it('gives the bytes masterMix gives on this thread (limited to -1 dBTP), full band or not, several at once; the tracks are moved, not copied', async () => {
    const inputs = [mix(1.5, true), mix(0.7, false), mix(2.2, true)];
    const expected = inputs.map((input) =>
      masterMix({
        tracks: [input.tracks[0].slice(), input.tracks[1].slice()],
        sampleRate: input.sampleRate,
        ...(input.fullBand
          ? {
              fullBand: {
                tracks: [input.fullBand.tracks[0].slice(), input.fullBand.tracks[1].slice()],
                sampleRate: input.fullBand.sampleRate,
              },
            }
          : {}),
      }),
    );
    const pooled = await Promise.all(inputs.map((input) => pool.master(input)));
    for (const [index, result] of pooled.entries()) {
      expect(result.wavBytes).toBe(expected[index]!.wavBytes);
      expect(Buffer.from(result.bytes).equals(Buffer.from(expected[index]!.bytes))).toBe(true);
      const written = decodeWav(result.bytes.subarray(0, result.wavBytes), 'mastered');
      expect(truePeakDbtp(written.channels[0]!, 16000)).toBeLessThanOrEqual(-1);
      expect(inputs[index]!.tracks[0].length).toBe(0); // detached: moved to the worker
    }
    expect(decodeWav(pooled[0]!.bytes.subarray(pooled[0]!.wavBytes), 'full band').sampleRate).toBe(24000);
  });

  it('refuses a track that is a view of a larger buffer, tracks of different lengths, and a pool of no threads', async () => {
    const shared = new Float32Array(200);
    await expect(
      pool.master({ tracks: [shared.subarray(0, 100), shared.subarray(100)], sampleRate: 16000 }),
    ).rejects.toThrow(/view of a larger buffer/);
    await expect(
      pool.master({ tracks: [new Float32Array(10), new Float32Array(11)], sampleRate: 16000 }),
    ).rejects.toThrow(/differ|length/);
    expect(() => createRenderPool(0)).toThrow(RangeError);
  });
});
