import { afterAll, describe, expect, it } from 'vitest';
import { resample } from './resample.ts';
import { createResamplePool } from './resample-pool.ts';

const pool = createResamplePool(2);
afterAll(async () => {
  await pool.close();
});

function signal(length: number, seed: number): Float32Array {
  const samples = new Float32Array(length);
  for (let index = 0; index < length; index++)
    samples[index] = 0.3 * Math.sin(index / (5 + seed)) + 0.1 * Math.sin(index / 2.3);
  return samples;
}

describe('resampling in worker threads', () => {
  it('gives the same samples as resample on this thread, for each converter, several at once', async () => {
    const inputs = [
      { channels: [signal(24000 * 2, 1)], sampleRate: 24000 },
      { channels: [signal(22050, 2), signal(22050, 3)], sampleRate: 22050 },
    ];
    for (const quality of ['best', 'speex'] as const) {
      const pooled = await Promise.all(inputs.map((audio) => pool.resample(audio, 16000, quality)));
      for (const [index, audio] of inputs.entries()) {
        const direct = await resample(audio, 16000, quality);
        expect(pooled[index]!.sampleRate).toBe(16000);
        expect(pooled[index]!.channels.map((channel) => Array.from(channel))).toEqual(
          direct.channels.map((channel) => Array.from(channel)),
        );
      }
    }
    // the caller keeps its input
    expect(inputs[0]!.channels[0]!.length).toBe(48000);
  });

  it('passes resample errors on, and needs a positive number of threads', async () => {
    await expect(
      pool.resample({ channels: [new Float32Array(10)], sampleRate: 16000.5 }, 16000, 'best'),
    ).rejects.toThrow(/positive integer/);
    expect(() => createResamplePool(0)).toThrow(RangeError);
  });
});
