/**
 * The true-peak limiter, judged by ffmpeg's EBU R 128 meter (`ebur128=peak=true`, pipeline/quality/loudness.ts):
 * a speech-like track with a few inter-sample overs reads above 0 dBTP before and at most -1 dBTP after,
 * with the same integrated loudness; samples away from the overs and tracks without overs are untouched.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureLoudness } from '../quality/loudness.ts';
import { limitTruePeakInPlace, samplePeaks, truePeakDbtp } from './true-peak-limiter.ts';
import { encodeWavPcm16 } from './wav.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-true-peak-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Places of the overs in {@link speechWithOvers}, seconds. */
const OVERS_AT = [1.3, 3.1, 5.7];

/**
 * Six seconds of a voiced, syllable-modulated harmonic complex (150 Hz, 20 harmonics, 4 Hz syllables)
 * near -18 LUFS, peaks under -1 dBTP, with three 2 ms Hann-shaped bursts (a click, a plosive) at a quarter of the rate and 45° phase: their
 * samples reach only 0.71 of full scale, the waveform between them 0.999 (an inter-sample over).
 */
function speechWithOvers(sampleRate: number): Float32Array {
  const samples = new Float32Array(6 * sampleRate);
  for (let n = 0; n < samples.length; n++) {
    const t = n / sampleRate;
    let voice = 0;
    for (let harmonic = 1; harmonic <= 20 && harmonic * 150 < sampleRate / 2; harmonic++)
      voice += Math.sin(2 * Math.PI * 150 * harmonic * t + harmonic) / harmonic;
    samples[n] = 0.25 * voice * Math.max(0, Math.sin(2 * Math.PI * 4 * t));
  }
  const burst = Math.round(0.002 * sampleRate);
  for (const at of OVERS_AT) {
    const start = Math.round(at * sampleRate);
    for (let k = 0; k < burst; k++) {
      const window = 0.5 * (1 - Math.cos((2 * Math.PI * k) / (burst - 1)));
      samples[start + k] = 0.999 * window * Math.sin((Math.PI / 2) * (start + k) + Math.PI / 4);
    }
  }
  return samples;
}

async function measured(samples: Float32Array, sampleRate: number, name: string) {
  const file = path.join(scratch, `${name}.wav`);
  await writeFile(file, encodeWavPcm16({ channels: [samples], sampleRate }));
  return measureLoudness(file);
}

describe('limitTruePeakInPlace', () => {
  for (const sampleRate of [16000, 24000]) {
    it(`brings a ${sampleRate / 1000} kHz track with inter-sample overs to <= -1 dBTP as ffmpeg measures it, loudness unchanged`, async () => {
      const original = speechWithOvers(sampleRate);
      const limited = Float32Array.from(original);
      const result = limitTruePeakInPlace(limited, sampleRate);
      const [before, after] = [
        await measured(original, sampleRate, `before-${sampleRate}`),
        await measured(limited, sampleRate, `after-${sampleRate}`),
      ];
      expect(before.truePeakDbtp!).toBeGreaterThan(-0.5);
      expect(Math.abs(result.beforeDbtp - before.truePeakDbtp!)).toBeLessThanOrEqual(0.15); // the estimate reads what ffmpeg reads
      expect(result.beforeDbtp).toBe(truePeakDbtp(original, sampleRate)); // the limiter's skips never drop a point that reaches the ceiling
      expect(after.truePeakDbtp!).toBeLessThanOrEqual(-1);
      expect(truePeakDbtp(limited, sampleRate)).toBeLessThanOrEqual(-1.09);
      expect(Math.abs(after.integratedLufs! - before.integratedLufs!)).toBeLessThanOrEqual(0.1 + 1e-9); // ffmpeg prints tenths
      // only the neighbourhood of the overs changed (burst 2 ms, hold and ramp 5 ms each side)
      const near = (n: number) => OVERS_AT.some((at) => n >= (at - 0.02) * sampleRate && n <= (at + 0.03) * sampleRate);
      let changedElsewhere = 0;
      for (let n = 0; n < original.length; n++) if (!near(n) && limited[n] !== original[n]) changedElsewhere++;
      expect(changedElsewhere).toBe(0);
      expect(result.samplesChanged).toBeGreaterThan(0);
      expect(result.samplesChanged).toBeLessThan(OVERS_AT.length * 0.03 * sampleRate);
    });
  }

  it('leaves a track under the ceiling exactly as it is, and is deterministic', () => {
    const quiet = speechWithOvers(16000).map((value) => value * 0.5); // overs at -6 dBTP
    const copy = Float32Array.from(quiet);
    expect(limitTruePeakInPlace(copy, 16000)).toMatchObject({ samplesChanged: 0, maximumReductionDb: 0 });
    expect(copy).toEqual(quiet);
    const [first, second] = [speechWithOvers(16000), speechWithOvers(16000)];
    limitTruePeakInPlace(first, 16000);
    limitTruePeakInPlace(second, 16000);
    expect(Buffer.from(first.buffer).equals(Buffer.from(second.buffer))).toBe(true);
    expect(limitTruePeakInPlace(new Float32Array(100), 16000).beforeDbtp).toBe(-Infinity);
  });

  it('brings a sustained over (a steady tone above the ceiling from the first sample to the last) under the ceiling', () => {
    // the moving average used to count 0 beyond the ends, so each pass lowered the ends only part of the
    // way and 8 passes left them above: "left above -1.10 dBTP after 8 passes" (a 997 Hz tone at 0.95)
    for (const [sampleRate, frequency, gain] of [
      [16000, 997, 0.95],
      [16000, 3990, 1.05],
      [24000, 1499, 1.3],
    ] as const) {
      const tone = Float32Array.from(
        { length: sampleRate },
        (_, index) => gain * Math.sin((2 * Math.PI * frequency * index) / sampleRate + 0.7),
      );
      const limited = limitTruePeakInPlace(tone, sampleRate);
      expect(limited.beforeDbtp).toBeGreaterThan(-1);
      expect(truePeakDbtp(tone, sampleRate)).toBeLessThanOrEqual(-1.1 + 1e-6);
    }
  });

  it('finds overs in silence at block borders and at both ends, as the estimate without skips does', () => {
    // the skips test blocks of 256 samples by the largest |sample| of each and its neighbours: bursts that
    // straddle a border, sit in the first samples or in the short last block must still be found
    for (const sampleRate of [16000, 24000]) {
      const length = 256 * 40 + 77;
      const track = new Float32Array(length);
      const burst = Math.round(0.002 * sampleRate);
      // a 12-sample burst in the last 14 samples of a block, the next one silent: the points there belong to the next block's outputs
      for (const [start, size] of [
        [0, burst],
        [256 * 7 - burst / 2, burst],
        [256 * 20 - 3, burst],
        [256 * 30 - 14, 12],
        [length - burst, burst],
      ]) {
        for (let k = 0; k < size!; k++) {
          const window = 0.5 * (1 - Math.cos((2 * Math.PI * k) / (size! - 1)));
          track[Math.round(start!) + k] =
            0.999 * window * Math.sin((Math.PI / 2) * (Math.round(start!) + k) + Math.PI / 4);
        }
      }
      const unskipped = samplePeaks(track, sampleRate);
      const skipped = samplePeaks(track, sampleRate, 0.8);
      for (let n = 0; n < length; n++)
        if (unskipped[n]! >= 0.8 || skipped[n]! >= 0.8) expect(skipped[n]).toBe(unskipped[n]);
      const limited = Float32Array.from(track);
      const result = limitTruePeakInPlace(limited, sampleRate);
      expect(result.beforeDbtp).toBe(truePeakDbtp(track, sampleRate));
      expect(result.beforeDbtp).toBeGreaterThan(-1);
      expect(truePeakDbtp(limited, sampleRate)).toBeLessThanOrEqual(-1.09);
      expect(result.afterDbtp).toBe(truePeakDbtp(limited, sampleRate));
    }
  });

  it('refuses a ceiling or hold it cannot use', () => {
    expect(() => limitTruePeakInPlace(new Float32Array(10), 16000, { ceilingDbtp: Number.NaN })).toThrow(RangeError);
    expect(() => limitTruePeakInPlace(new Float32Array(10), 16000, { holdSeconds: 0 })).toThrow(RangeError);
  });
});
