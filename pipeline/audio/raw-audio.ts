/**
 * The audio value every stage passes around, and pure helpers over it (the WAV codec is ./wav.ts,
 * resampling ./resample.ts) (echogarden style: audio is a
 * plain value, normalized once at the boundary; a helper's name says whether it copies or mutates).
 *
 * Conventions:
 * - samples are 32-bit floats, nominal range [-1, 1] (full scale = 1.0);
 * - `channels[c][i]` is sample `i` of channel `c`; every channel has the same length;
 * - `sampleRate` is in Hz (samples per second per channel);
 * - positions and lengths given to these helpers are in samples unless a name says otherwise.
 */
import { addSamples, quantizeSamples, samplesOnPcm16Grid } from './audio-kernels.ts';

/** Audio as a plain value: one Float32Array per channel, all the same length, at `sampleRate` Hz. */
export interface RawAudio {
  channels: Float32Array[];
  /** Samples per second per channel, in Hz. */
  sampleRate: number;
}

/** A WAV buffer could not be decoded. `source` names the file, URL or process it came from. */
export class WavDecodeError extends Error {
  override readonly name = 'WavDecodeError';
  constructor(
    readonly source: string,
    readonly reason: string,
  ) {
    super(`Cannot decode WAV audio from ${source}: ${reason}`);
  }
}

/** An audio helper was called with audio or positions it cannot work with (mismatched rates, out of range, ...). */
export class AudioArgumentError extends Error {
  override readonly name = 'AudioArgumentError';
}

/** Number of channels of `audio`. */
export function channelCount(audio: RawAudio): number {
  return audio.channels.length;
}

/** Length of `audio` in samples per channel (0 for audio without channels). */
export function sampleCount(audio: RawAudio): number {
  return audio.channels[0]?.length ?? 0;
}

/** Duration of `audio` in seconds (samples per channel / sampleRate). */
export function durationSeconds(audio: RawAudio): number {
  return sampleCount(audio) / audio.sampleRate;
}

/**
 * Converts a sample to the signed 16-bit integer it is written as: `round(x * 32768)` clamped to
 * [-32768, 32767], halves rounded towards +infinity (as `Math.round`), so the result is deterministic;
 * NaN stays NaN (a typed array stores it as 0). Inside the range the rounding is
 * `floor(x * 32768 + 32768.5) - 32768` in integer arithmetic: exact (the sum of a float32 sample times
 * 2^15 and 32768.5 fits a double's 53 bits wherever the rounding can go either way) and about 1.3 x
 * faster than `Math.round` in the JavaScript encoder's loop (the saturation bench's profile); -0 gives
 * +0. The reference of the WebAssembly encoder (audio-kernels.ts; scripts/check-audio-kernels.ts
 * compares the two on every float32).
 */
export function toPcm16Integer(sample: number): number {
  const scaled = sample * 32768;
  if (scaled >= 32767) return 32767;
  if (scaled > -32768) return ((scaled + 32768.5) | 0) - 32768;
  return scaled <= -32768 ? -32768 : scaled;
}

/**
 * Rounds samples to the 16-bit PCM grid (value = integer / 32768, integer in [-32768, 32767]), so the
 * audio that is analysed is exactly the audio {@link encodeWavPcm16} writes: encoding the result and
 * decoding it again gives back the same floats. Values outside [-1, 32767/32768] are clipped.
 *
 * @param into where the result goes: a new array by default (the input is not changed), or `samples`
 *   itself to round in place (no copy, for a buffer the caller owns); not a view that partly overlaps
 *   `samples`
 * @returns `into`, of the same length as `samples`
 * @throws RangeError when `into` has another length
 */
export function quantizeToPcm16(
  samples: Float32Array,
  into: Float32Array = new Float32Array(samples.length),
): Float32Array {
  if (into.length !== samples.length)
    throw new RangeError(`quantizeToPcm16: ${into.length} output samples for ${samples.length} input samples`);
  const quantized = into;
  // `+ 0` writes +0 where rounding gave −0 (e.g. −1e-6): the values a decoded WAV holds, so a clip's
  // float bytes (hashed for cache keys when not named by their synthesis cache entry:
  // samples-digest.ts) need no −0 fix-up copy
  if (quantizeSamples(samples, quantized)) return quantized; // WebAssembly SIMD, the same values (audio-kernels.ts)
  for (let index = 0; index < samples.length; index++)
    quantized[index] = toPcm16Integer(samples[index] as number) / 32768 + 0;
  return quantized;
}

/**
 * Whether every sample is already on the 16-bit PCM grid, i.e. {@link quantizeToPcm16} would give back
 * the same values: integer / 32768 with the integer in [-32768, 32767], and no −0 (quantizing writes +0).
 * Audio decoded from 16-bit PCM always is, so a caller can keep it as it is instead of rounding a copy.
 */
export function isOnPcm16Grid(samples: Float32Array): boolean {
  const answer = samplesOnPcm16Grid(samples); // WebAssembly SIMD, the same answer (audio-kernels.ts)
  if (answer !== null) return answer;
  for (let index = 0; index < samples.length; index++) {
    const scaled = (samples[index] as number) * 32768;
    if ((scaled | 0) !== scaled || scaled > 32767 || scaled < -32768 || (scaled === 0 && 1 / scaled < 0)) return false;
  }
  return true;
}

/**
 * Averages all channels into one (equal weights). Mono input is copied.
 *
 * @returns a new Float32Array with one sample per frame.
 * @throws AudioArgumentError when the audio has no channels or channels differ in length.
 */
export function downmixToMono(audio: RawAudio): Float32Array {
  assertWellFormed(audio, 'downmixToMono');
  const first = audio.channels[0] as Float32Array;
  if (audio.channels.length === 1) return first.slice();
  const mono = new Float32Array(first.length);
  const weight = 1 / audio.channels.length;
  for (let index = 0; index < mono.length; index++) {
    let sum = 0;
    for (const channel of audio.channels) sum += channel[index] as number;
    mono[index] = sum * weight;
  }
  return mono;
}

/**
 * Copies samples `[startSample, endSample)` of every channel.
 *
 * @throws AudioArgumentError when the bounds are not integers with 0 <= start <= end <= length.
 */
export function sliceBySamples(audio: RawAudio, startSample: number, endSample: number): RawAudio {
  assertWellFormed(audio, 'sliceBySamples');
  const length = sampleCount(audio);
  if (
    !Number.isInteger(startSample) ||
    !Number.isInteger(endSample) ||
    startSample < 0 ||
    endSample < startSample ||
    endSample > length
  ) {
    throw new AudioArgumentError(`sliceBySamples: range [${startSample}, ${endSample}) is not inside [0, ${length}]`);
  }
  return {
    channels: audio.channels.map((channel) => channel.slice(startSample, endSample)),
    sampleRate: audio.sampleRate,
  };
}

/**
 * Joins audio values end to end into a new value.
 *
 * @throws AudioArgumentError when the list is empty or the parts differ in sample rate or channel count.
 */
export function concatenate(parts: readonly RawAudio[]): RawAudio {
  const first = parts[0];
  if (!first) throw new AudioArgumentError('concatenate: no audio given');
  for (const part of parts) {
    assertWellFormed(part, 'concatenate');
    if (part.sampleRate !== first.sampleRate || part.channels.length !== first.channels.length) {
      throw new AudioArgumentError(
        `concatenate: parts differ (${part.channels.length} channels at ${part.sampleRate} Hz vs ${first.channels.length} at ${first.sampleRate} Hz)`,
      );
    }
  }
  const total = parts.reduce((sum, part) => sum + sampleCount(part), 0);
  const channels = first.channels.map((_, channelIndex) => {
    const joined = new Float32Array(total);
    let position = 0;
    for (const part of parts) {
      const channel = part.channels[channelIndex] as Float32Array;
      joined.set(channel, position);
      position += channel.length;
    }
    return joined;
  });
  return { channels, sampleRate: first.sampleRate };
}

/**
 * Mixes (adds) a mono clip into `track` starting at sample `offsetSample`. MUTATES `track`. No clipping
 * or limiting is applied: sums beyond [-1, 1] stay as they are until quantization.
 *
 * @param track one channel of a timeline, changed in place.
 * @param clip the samples to add; not changed.
 * @param offsetSample sample index in `track` where `clip[0]` lands (integer >= 0).
 * @throws AudioArgumentError when the offset is not a non-negative integer or the clip would run past the track end.
 */
export function placeOnTrackInPlace(track: Float32Array, clip: Float32Array, offsetSample: number): void {
  if (!Number.isInteger(offsetSample) || offsetSample < 0 || offsetSample + clip.length > track.length) {
    throw new AudioArgumentError(
      `placeOnTrackInPlace: a clip of ${clip.length} samples at offset ${offsetSample} does not fit in a track of ${track.length} samples`,
    );
  }
  const target = track.subarray(offsetSample, offsetSample + clip.length);
  // WebAssembly SIMD (audio-kernels.ts) where it runs, else the same sums in JavaScript
  if (addSamples(target, clip)) return;
  for (let index = 0; index < clip.length; index++) target[index] = (target[index] as number) + (clip[index] as number);
}

/** @throws AudioArgumentError naming `caller` when the audio has no channels, no positive rate, or channels of different lengths */
export function assertWellFormed(audio: RawAudio, caller: string): void {
  const first = audio.channels[0];
  if (!first) throw new AudioArgumentError(`${caller}: audio has no channels`);
  if (!(audio.sampleRate > 0))
    throw new AudioArgumentError(`${caller}: sample rate ${audio.sampleRate} Hz is not positive`);
  for (const channel of audio.channels) {
    if (channel.length !== first.length)
      throw new AudioArgumentError(`${caller}: channels differ in length (${channel.length} vs ${first.length})`);
  }
}
