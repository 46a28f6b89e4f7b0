/**
 * Worker entry of the resampling pool (resample-pool.ts): resamples one audio value per task with
 * {@link resample}. Compiled, the pool starts this module's `.js` in dist/ directly; from the sources
 * it starts resample-worker.mjs, which registers tsx's loader in the worker and imports this file.
 */
import type { RawAudio } from './raw-audio.ts';
import { resample, type ResampleQuality } from './resample.ts';

/** One task: the channels (float32 samples per channel) at `sampleRate` Hz, to `targetRate` Hz. */
export interface ResampleTask {
  channels: Float32Array[];
  sampleRate: number;
  targetRate: number;
  quality: ResampleQuality;
}

/** Resamples one task's audio; returns {channels, sampleRate} (copied back: a small cost next to the resampling). */
export default async function resampleTask({
  channels,
  sampleRate,
  targetRate,
  quality,
}: ResampleTask): Promise<RawAudio> {
  const output = await resample({ channels, sampleRate }, targetRate, quality);
  return { channels: output.channels, sampleRate: output.sampleRate };
}
