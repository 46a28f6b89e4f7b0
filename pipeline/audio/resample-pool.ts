/**
 * Resampling in worker threads (piscina): the same {@link resample} of resample.ts, run on other
 * cores so that libsamplerate's 'best' converter (about 30 ms of CPU per second of audio at 24 or
 * 22.05 -> 16 kHz, most of the build's local cost) does not hold the build's thread. The output is
 * bit-identical to calling `resample` directly (same code, same input).
 */
import type { RawAudio } from './raw-audio.ts';
import type { ResampleQuality } from './resample.ts';
import { startWorkerPool } from './worker-pool.ts';

/** A pool of resampling threads; `close` it when done (idle threads also end on their own). */
export interface ResamplePool {
  /** Threads in the pool. */
  readonly threads: number;
  /**
   * Resamples `audio` to `targetRate` Hz in a worker. The channels are copied to the worker and the
   * result back (structured clone; the caller keeps its input).
   * @throws AudioArgumentError (as `resample`) for bad rates or malformed audio.
   */
  resample(audio: RawAudio, targetRate: number, quality: ResampleQuality): Promise<RawAudio>;
  close(): Promise<void>;
}

/**
 * Starts a pool of `threads` worker threads (each loads resample.ts once, on first use: compiled
 * resample-worker.js from dist/, or resample-worker.mjs with tsx's loader from the sources).
 * @throws RangeError when `threads` is not a positive integer.
 */
export function createResamplePool(threads: number): ResamplePool {
  const pool = startWorkerPool('resample-worker', threads, 'resampling');
  return {
    threads,
    resample: async (audio, targetRate, quality) => {
      const result = (await pool.run({
        channels: audio.channels,
        sampleRate: audio.sampleRate,
        targetRate,
        quality,
      })) as RawAudio;
      return { channels: result.channels, sampleRate: result.sampleRate };
    },
    close: () => pool.destroy(),
  };
}
