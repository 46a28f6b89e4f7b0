/**
 * Worker entry of the render pool (render-pool.ts): masters one composed dialogue per task
 * ({@link masterMix}: true-peak limiting, WAV encoding). Compiled, the pool starts this module's `.js`
 * in dist/ directly; from the sources it starts render-worker.mjs, which registers tsx's loader in the
 * worker and imports this file.
 */
import { Piscina } from 'piscina';
import { masterMix, type ComposedMix } from './master-mix.ts';

/**
 * Masters one mix (its tracks were moved here, not copied); the WAV bytes are moved back to the
 * build's thread. The output-rate WAV's length is for the caller to work out (wavPcm16ByteLength).
 */
export default function renderTask(mix: ComposedMix): unknown {
  return Piscina.move(masterMix(mix).bytes);
}
