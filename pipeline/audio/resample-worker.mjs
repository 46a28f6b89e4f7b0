// Worker entry of the resampling pool (resample-pool.ts): loads resample.ts through tsx's loader
// (registered in this worker) and resamples one audio value per task. Plain JavaScript because a
// worker's entry is loaded before any loader is registered.
import { register } from 'tsx/esm/api';

register();
const { resample } = await import('./resample.ts');

/** Task: {channels, sampleRate, targetRate, quality}; returns {channels, sampleRate} (copied back: a small cost next to the resampling). */
export default async function resampleTask({ channels, sampleRate, targetRate, quality }) {
  const output = await resample({ channels, sampleRate }, targetRate, quality);
  return { channels: output.channels, sampleRate: output.sampleRate };
}
