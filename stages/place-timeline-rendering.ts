/**
 * A placed timeline rendered and stored: both channels mastered (true-peak limited, encoded to PCM
 * 16-bit WAV, with the full-band master likewise) on this thread or in a render pool's worker, and the
 * WAV files stored as the two data files of the placement's cache entry, which the dataset's WAVs link
 * to.
 */
import { readFile } from 'node:fs/promises';
import {
  encodeMix,
  masterMixPausing,
  type MasteredMix,
  type WavBufferAllocator,
} from '../pipeline/audio/master-mix.ts';
import type { RenderPool } from '../pipeline/audio/render-pool.ts';
import type { PlannedBargeIn } from '../pipeline/timeline/place-barge-in-variant.ts';
import type { StageCacheKey } from '../pipeline/run/stage.ts';
import { bytesHash, type ContentCache, type StoredFile } from '../pipeline/storage/content-cache.ts';
import type { SpokenUtterance } from './synthesize-speech.ts';
import type { PlacedTimeline } from './place-timeline-compose.ts';

/** An utterance as placed, without its samples (they are in the rendered WAV): what the summaries, events and metadata read. */
export type PlacedUtterance = Omit<SpokenUtterance, 'audio' | 'fullBand'>;

/**
 * A placed dialogue as the dataset writes it: the {@link PlacedTimeline} with its two float tracks
 * replaced by the WAV file the cache stores (`audio/{id}.wav`: 2 channels, PCM 16-bit at `sampleRate`,
 * from `encodeWavPcm16`), and the full-band master likewise (`audio_fullband/{id}.wav`). The bytes are
 * not held: the dataset's WAVs are hard links to these files (stages/render-dataset.ts), and what needs
 * the samples reads them ({@link readStoredWav}).
 */
export interface RenderedTimeline extends Omit<PlacedTimeline, 'tracks' | 'fullBand'> {
  wavFile: StoredWav;
  fullBand?: { sampleRate: number; file: StoredWav };
}

/** A rendered WAV as the cache stores it: its file (written atomically, never rewritten in place), the sha256 of its bytes and their number. */
export interface StoredWav {
  path: string;
  sha256: string;
  byteLength: number;
}

/**
 * The bytes of a stored WAV, checked against the length and sha256 recorded when it was stored.
 * @throws Error naming the file when it cannot be read or differs from what was recorded (changed
 *   since it was stored: the cache notices that on its next read and renders the entry again)
 */
export async function readStoredWav(stored: StoredWav): Promise<Buffer> {
  let bytes: Buffer;
  try {
    bytes = await readFile(stored.path);
  } catch (error) {
    throw new Error(
      `${stored.path}: cannot read the rendered WAV: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  if (bytes.byteLength !== stored.byteLength || bytesHash(bytes) !== stored.sha256) {
    throw new Error(
      `${stored.path}: the rendered WAV differs from the ${stored.byteLength} bytes and sha256 recorded when it was stored (changed since; the next build renders it again)`,
    );
  }
  return bytes;
}

/** The barge-in variant rendered: {@link RenderedTimeline} plus the barge-ins and the utterances as spoken (cut answers), without samples. */
export interface RenderedBargeInTimeline extends RenderedTimeline {
  bargeIns: PlannedBargeIn[];
  answersTooShort: number[];
  utterances: PlacedUtterance[];
}

/** A timeline encoded but not stored ({@link renderTimeline}): its tracks replaced by the WAV bytes, and the full-band master's likewise. */
export interface EncodedTimeline extends Omit<PlacedTimeline, 'tracks' | 'fullBand'> {
  wav: Uint8Array;
  fullBand?: { wav: Uint8Array; sampleRate: number };
}

/**
 * The timeline as written, not stored: both tracks encoded to one PCM 16-bit WAV (and the full-band
 * tracks to another), the bytes the place-timeline stages store (views of one new buffer).
 * @throws AudioArgumentError as encodeWavPcm16 (tracks of different lengths)
 */
export function renderTimeline(timeline: PlacedTimeline): EncodedTimeline {
  const { metadata, parts } = unstoredRendering(timeline, encodeMix(timeline));
  const { fullBand, ...rest } = metadata;
  return {
    ...rest,
    wav: parts[0]!,
    ...(fullBand ? { fullBand: { wav: parts[1]!, sampleRate: fullBand.sampleRate } } : {}),
  };
}

/** What a rendering stores before it is stored: the rendered value without its files (`metadata`) and the WAV files' bytes (`parts`: the WAV, then the full-band WAV when `metadata.fullBand` is set). */
export interface UnstoredRendering<M> {
  metadata: M;
  parts: Uint8Array[];
}

/** A rendering's metadata: the rendered value without its WAV files (the full-band master's rate only). */
export type RenderedMetadata<T extends RenderedTimeline> = Omit<T, 'wavFile' | 'fullBand'> & {
  fullBand?: { sampleRate: number };
};

/** The timeline with its tracks replaced by the WAV files in `mastered` (views of its buffer). */
function unstoredRendering(
  timeline: PlacedTimeline,
  { bytes, wavBytes }: MasteredMix,
): UnstoredRendering<RenderedMetadata<RenderedTimeline>> {
  const { tracks: _tracks, fullBand, ...rest } = timeline;
  return {
    metadata: { ...rest, ...(fullBand ? { fullBand: { sampleRate: fullBand.sampleRate } } : {}) },
    parts: fullBand ? [bytes.subarray(0, wavBytes), bytes.subarray(wavBytes)] : [bytes.subarray(0, wavBytes)],
  };
}

/**
 * A composed (not yet limited) timeline as stored: its tracks mastered (true-peak limited, both WAVs
 * encoded into one buffer) on this thread by {@link masterMixPausing}, which lets the event loop through
 * between the steps (the tracks and the WAV buffer are then a scratch set the caller holds until the
 * bytes are stored: withScratchBuffers), or in `pool`'s worker by masterMix, which takes the tracks
 * (new arrays then) and sends new WAV bytes back. The same bytes either way.
 * @param allocateWav where the WAV bytes go on this thread (default: a new array)
 * @throws AudioArgumentError as masterMix; the worker's error
 */
export async function masterTimeline(
  timeline: PlacedTimeline,
  pool: RenderPool | null | undefined,
  allocateWav?: WavBufferAllocator,
): Promise<UnstoredRendering<RenderedMetadata<RenderedTimeline>>> {
  const mix = {
    tracks: timeline.tracks,
    sampleRate: timeline.sampleRate,
    ...(timeline.fullBand ? { fullBand: timeline.fullBand } : {}),
  };
  return unstoredRendering(
    timeline,
    pool ? await pool.master(mix) : await masterMixPausing(mix, undefined, allocateWav),
  );
}

/**
 * The rendering under `key`, or `render()` stored there: the WAV and the full-band WAV as the entry's
 * two data files (ContentCache.binaryFiles, each whole on disk so the dataset's WAVs can be hard links
 * to them), the rest as its metadata. A miss returns what a hit would read back (its metadata through
 * JSON), so both write the same bytes; either way the value names the files ({@link StoredWav}) and
 * holds none of the bytes, which may be a scratch buffer reused once this settles.
 */
export async function cachedRendering<T extends RenderedTimeline>(
  cache: ContentCache,
  key: StageCacheKey,
  render: () => Promise<UnstoredRendering<RenderedMetadata<T>>>,
): Promise<T> {
  return cache.binaryFiles<T, RenderedMetadata<T>, UnstoredRendering<RenderedMetadata<T>>>(
    key.stage,
    key.keyMaterial,
    render,
    {
      encode: (rendering) => rendering,
      decode: (parts, metadata) => {
        const { fullBand, ...rest } = metadata;
        const [wav, fullBandWav] = parts;
        if (wav === undefined || (fullBand !== undefined) !== (fullBandWav !== undefined) || parts.length > 2)
          throw new Error(
            `${parts.length} data files for a rendering ${fullBand ? 'with' : 'without'} a full-band master`,
          );
        const stored = ({ path: file, sha256, bytes }: StoredFile): StoredWav => ({
          path: file,
          sha256,
          byteLength: bytes.byteLength,
        });
        return {
          ...rest,
          wavFile: stored(wav),
          ...(fullBand && fullBandWav
            ? { fullBand: { sampleRate: fullBand.sampleRate, file: stored(fullBandWav) } }
            : {}),
        } as unknown as T;
      },
    },
    '.wav',
  );
}
