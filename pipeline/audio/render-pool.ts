/**
 * Mastering composed dialogues (master-mix.ts: true-peak limiting and WAV encoding, about a fifth of
 * the build thread's CPU per dialogue) in worker threads (piscina), so the build's thread goes on
 * decoding, resampling and placing the next dialogues meanwhile and keeps fast speech servers busy.
 * The tracks are moved to the worker, not copied, and the WAV bytes moved back; they are the bytes
 * {@link masterMix} gives on the build's thread (same code, same samples).
 */
import { startWorkerPool } from './worker-pool.ts';
import type { ComposedMix, MasteredMix } from './master-mix.ts';
import { wavPcm16ByteLength } from './wav.ts';

/** A pool of rendering threads; `close` it when done. */
export interface RenderPool {
  /** Threads in the pool. */
  readonly threads: number;
  /**
   * {@link masterMix} in a worker. The tracks are MOVED there: afterwards `mix`'s tracks are empty
   * (detached), so each track must own its whole buffer (not a view of a larger one).
   * @throws AudioArgumentError (as masterMix) for tracks of different lengths; RangeError when a track
   *   is a view of a larger buffer; the worker's error when it fails
   */
  master(mix: ComposedMix): Promise<MasteredMix>;
  close(): Promise<void>;
}

/**
 * Starts a pool of up to `threads` worker threads (started on first use; each loads master-mix.ts
 * once: compiled render-worker.js from dist/, or render-worker.mjs with tsx's loader from the sources).
 * @throws RangeError when `threads` is not a positive integer
 */
export function createRenderPool(threads: number): RenderPool {
  const pool = startWorkerPool('render-worker', threads, 'rendering');
  return {
    threads,
    master: async (mix) => {
      const tracks = [...mix.tracks, ...(mix.fullBand?.tracks ?? [])];
      for (const track of tracks) {
        if (track.byteOffset !== 0 || track.byteLength !== track.buffer.byteLength)
          throw new RangeError('render pool: a track is a view of a larger buffer and cannot be moved to the worker');
      }
      // the output-rate WAV's length, known before the tracks leave (the same check masterMix makes)
      const wavBytes = wavPcm16ByteLength({ channels: mix.tracks, sampleRate: mix.sampleRate });
      const bytes = (await pool.run(mix, {
        transferList: tracks.map((track) => track.buffer as ArrayBuffer),
      })) as Uint8Array;
      return { bytes, wavBytes };
    },
    close: () => pool.destroy(),
  };
}
