/**
 * The last step of rendering a composed dialogue: every track true-peak limited (true-peak-limiter.ts,
 * -1 dBTP), then encoded as 16-bit WAV, the output-rate file and the full-band one in one buffer. The
 * build runs it on the build's thread or in a worker thread (render-pool.ts); both give the same bytes
 * (the same code on the same samples).
 */
import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import { limitTruePeakInPlace } from './true-peak-limiter.ts';
import { encodeWavFilesPcm16 } from './wav.ts';

/** A composed dialogue before limiting: two tracks (index = channel) and, when written, the full-band ones. */
export interface ComposedMix {
  /** Two mono tracks of equal length, float samples (full scale 1.0), at `sampleRate`. */
  tracks: [Float32Array, Float32Array];
  /** Hz. */
  sampleRate: number;
  /** The full-band tracks at their own rate (audio.fullBandMaster), or absent. */
  fullBand?: { tracks: [Float32Array, Float32Array]; sampleRate: number };
}

/** The WAV files of a mastered mix: `bytes` holds the output-rate WAV, then the full-band WAV (if any) from byte `wavBytes` on. */
export interface MasteredMix {
  bytes: Uint8Array;
  /** Length of the output-rate WAV at the start of `bytes`. */
  wavBytes: number;
}

/**
 * True-peak limits every track of `mix` IN PLACE (MUTATES the tracks; a track under the ceiling is
 * left exactly as it is).
 */
export function limitMixInPlace(mix: ComposedMix): void {
  for (const track of mix.tracks) limitTruePeakInPlace(track, mix.sampleRate);
  for (const track of mix.fullBand?.tracks ?? []) limitTruePeakInPlace(track, mix.fullBand!.sampleRate);
}

/**
 * Where a mastered mix's WAV bytes go: `byteLength` bytes, each of which the encoder writes (a new
 * array by default; a reused scratch buffer on the build's thread, stages/place-timeline.ts).
 */
export type WavBufferAllocator = (byteLength: number) => Uint8Array;

/**
 * Encodes the tracks of `mix` as they are: one buffer with the output-rate WAV and then the full-band
 * WAV (encodeWavFilesPcm16: 2 channels, PCM 16-bit).
 * @param allocate where the bytes go (default: a new array)
 * @throws AudioArgumentError (encodeWavPcm16) when tracks differ in length or a rate is not a positive integer
 */
export function encodeMix(mix: ComposedMix, allocate?: WavBufferAllocator): MasteredMix {
  const audios = [
    { channels: mix.tracks, sampleRate: mix.sampleRate },
    ...(mix.fullBand ? [{ channels: mix.fullBand.tracks, sampleRate: mix.fullBand.sampleRate }] : []),
  ];
  const { bytes, files } = encodeWavFilesPcm16(audios, allocate);
  return { bytes, wavBytes: files[0]!.byteLength };
}

/**
 * {@link masterMix} with the event loop let through before each track is limited and before the WAVs
 * are encoded (`pause`, default `setImmediate`): the same steps in the same order, so the same bytes.
 * On the build's thread a dialogue's mastering is 100-300 ms of work; in one piece it kept answers
 * from being taken in and the next requests from being sent, and the servers' queues ran dry
 * (`monitorEventLoopDelay` over a saturation build: p99 117 ms, max 295 ms).
 * MUTATES the tracks; the caller must keep them from other use until it settles.
 * @param allocate where the WAV bytes go (encodeMix; default: a new array)
 * @throws AudioArgumentError as masterMix
 */
export async function masterMixPausing(
  mix: ComposedMix,
  pause: () => Promise<unknown> = () => setImmediatePromise(),
  allocate?: WavBufferAllocator,
): Promise<MasteredMix> {
  for (const track of mix.tracks) {
    await pause();
    limitTruePeakInPlace(track, mix.sampleRate);
  }
  for (const track of mix.fullBand?.tracks ?? []) {
    await pause();
    limitTruePeakInPlace(track, mix.fullBand!.sampleRate);
  }
  await pause();
  return encodeMix(mix, allocate);
}

/**
 * {@link limitMixInPlace} (MUTATES the tracks), then {@link encodeMix}.
 * @throws AudioArgumentError as encodeMix
 */
export function masterMix(mix: ComposedMix): MasteredMix {
  limitMixInPlace(mix);
  return encodeMix(mix);
}
