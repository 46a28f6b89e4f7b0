/**
 * The buffers a placement composes its tracks and encodes its WAV bytes into: new arrays when a render
 * pool's worker masters the tracks, else a reused set of scratch buffers that one placement holds at a
 * time, so a build does not allocate a dialogue's tracks and WAV bytes anew for each dialogue.
 */
import type { WavBufferAllocator } from '../pipeline/audio/master-mix.ts';
import type { RenderPool } from '../pipeline/audio/render-pool.ts';
import { newTrack, type TrackAllocator } from './place-timeline-compose.ts';

/** Longest track kept for reuse by a {@link ScratchBuffers} set: 2^23 samples (32 MiB; 5.8 min at 24 kHz); longer ones are new arrays. */
const SCRATCH_TRACK_SAMPLES = 2 ** 23;

/** Largest WAV buffer kept for reuse by a {@link ScratchBuffers} set: 2^26 bytes (64 MiB; both masters of a 5.8-min dialogue at 16 and 24 kHz); larger ones are new arrays. */
const SCRATCH_WAV_BYTES = 2 ** 26;

/** Where a placement's audio goes: its tracks (`allocateTrack`) and, mastered on this thread, its WAV bytes (`allocateWav`; absent: new arrays). */
export interface PlacementBuffers {
  allocateTrack: TrackAllocator;
  allocateWav?: WavBufferAllocator;
}

/**
 * Reused buffers for one placement at a time, from composing to storing: one per track slot, and one
 * for the WAV bytes of both masters. New arrays for a dialogue's four tracks would be 40 % of the
 * build's large allocations, and its WAV bytes 526 MB of a 20-dialogue saturation build's 1.6 GB;
 * every 64 MB of them brings a full garbage collection nearer ("external memory pressure",
 * `node --trace-gc`; pipeline/run/heap-growth.ts): reusing the tracks and the WAV buffer keeps such a
 * build to about half the full collections (10-11 against 18-20). Each track is a zero-filled view of its slot's buffer and the WAV bytes a view of theirs, valid
 * until the same buffer of the same set is taken again.
 */
class ScratchBuffers implements PlacementBuffers {
  private readonly tracks: Float32Array[] = [];
  private wav = new Uint8Array(0);

  readonly allocateTrack: TrackAllocator = (slot, length) => {
    if (length > SCRATCH_TRACK_SAMPLES) return new Float32Array(length);
    let buffer = this.tracks[slot];
    if (buffer === undefined || buffer.length < length) {
      buffer = new Float32Array(
        Math.min(SCRATCH_TRACK_SAMPLES, Math.max(length, Math.ceil((buffer?.length ?? 0) * 1.25))),
      );
      this.tracks[slot] = buffer;
    }
    return buffer.subarray(0, length).fill(0);
  };

  readonly allocateWav: WavBufferAllocator = (byteLength) => {
    if (byteLength > SCRATCH_WAV_BYTES) return new Uint8Array(byteLength);
    if (this.wav.byteLength < byteLength)
      this.wav = new Uint8Array(
        Math.min(SCRATCH_WAV_BYTES, Math.max(byteLength, Math.ceil(this.wav.byteLength * 1.25))),
      );
    // every byte is written by the encoder (encodeWavFilesPcm16): no clearing
    return this.wav.subarray(0, byteLength);
  };
}

/** Sets no placement holds now (as many exist as placements ever ran at once). */
const idleScratchBuffers: ScratchBuffers[] = [];

/**
 * Runs `use` with a set of reused buffers that no other placement holds until it settles. The
 * placement stages let the event loop through while they master and store a dialogue
 * (masterMixPausing, the cache's writes), so placements overlap: the barge-in variant of one dialogue
 * beside the next dialogue's base, a queue worker's jobs beside each other. Each takes its own set (a
 * new one when every set is held).
 */
async function withScratchBuffers<T>(use: (buffers: PlacementBuffers) => Promise<T>): Promise<T> {
  const set = idleScratchBuffers.pop() ?? new ScratchBuffers();
  try {
    return await use(set);
  } finally {
    idleScratchBuffers.push(set);
  }
}

/**
 * Runs `use` with the buffers a placement composes and encodes into: new arrays when `renderPool`
 * masters the tracks (the worker takes their buffers and sends new WAV bytes back), else a set of
 * reused buffers ({@link withScratchBuffers}) held until `use` settles, so the WAV bytes must be stored
 * (not kept) by then.
 */
export function withPlacementBuffers<T>(
  renderPool: RenderPool | null | undefined,
  use: (buffers: PlacementBuffers) => Promise<T>,
): Promise<T> {
  return renderPool ? use({ allocateTrack: newTrack }) : withScratchBuffers(use);
}
