/**
 * Waveform envelopes kept in the build's content cache under the WAV's sha256, so that a report page
 * is drawn without reading its WAV again: the machine that rendered a dialogue (a local build, or a
 * worker of a queued build) stores the envelopes while the WAV is at hand, and the report, on
 * whichever machine, reads a few kilobytes instead of the recording.
 */
import type { ContentCache } from '../storage/content-cache.ts';
import { readWavEnvelopes, type WaveformEnvelope } from './waveform.ts';

/** Cache folder of the envelopes. */
export const WAVEFORM_CACHE_STAGE = 'waveform-envelopes';

/** Version of the entries' layout (part of the key). */
const ENTRY_VERSION = 1;

/** Where a dialogue's envelopes may be cached: the cache and the WAV's sha256 (the manifest's). */
export interface EnvelopeCache {
  cache: ContentCache;
  sha256: string;
}

/**
 * The {@link readWavEnvelopes} of `file`, from the cache entry of (`sha256`, `columns`) when there is
 * one, else read from the file and stored. An entry holds per channel the minimum then the maximum
 * column values as 32-bit floats, so a hit gives the very values a read would.
 * @param columns columns per channel (a positive integer)
 * @throws as readWavEnvelopes on a miss; as the cache's write on a miss (disk full)
 */
export async function cachedWavEnvelopes(
  file: string,
  columns: number,
  where: EnvelopeCache | null,
): Promise<WaveformEnvelope[]> {
  if (where === null) return readWavEnvelopes(file, columns);
  return where.cache.binary<WaveformEnvelope[], { channels: number; columns: number }>(
    WAVEFORM_CACHE_STAGE,
    { version: ENTRY_VERSION, sha256: where.sha256, columns },
    () => readWavEnvelopes(file, columns),
    {
      encode: (envelopes) => {
        const values = new Float32Array(envelopes.length * 2 * columns);
        envelopes.forEach((envelope, channel) => {
          values.set(envelope.minimum, channel * 2 * columns);
          values.set(envelope.maximum, (channel * 2 + 1) * columns);
        });
        return {
          bytes: new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
          metadata: { channels: envelopes.length, columns },
        };
      },
      decode: (bytes, metadata) => {
        if (metadata.columns !== columns || bytes.byteLength !== metadata.channels * 2 * columns * 4)
          throw new Error(
            `a waveform entry of ${bytes.byteLength} bytes for ${metadata.channels} × ${columns} columns`,
          );
        // copied: the read buffer's offset need not be a multiple of 4
        const values = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
        return Array.from({ length: metadata.channels }, (_, channel) => ({
          minimum: values.slice(channel * 2 * columns, (channel * 2 + 1) * columns),
          maximum: values.slice((channel * 2 + 1) * columns, (channel * 2 + 2) * columns),
        }));
      },
    },
    '.f32',
  );
}
