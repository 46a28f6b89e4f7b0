/**
 * Step 1 of DNSMOS (./dnsmos.ts): one channel resampled to the models' 16 kHz, with the output length
 * `librosa.resample` gives.
 */
import { resample, type ResampleQuality } from '../../audio/resample.ts';
import { DNSMOS_SAMPLE_RATE } from './dnsmos-windows.ts';

/**
 * Resamples one channel to 16 kHz with the project's resampler (../../audio/resample.ts, libsamplerate
 * `SRC_SINC_BEST_QUALITY` by default). The output has `ceil(n * 16000 / sampleRate)` samples, the
 * length `librosa.resample` produces (the last one from the zeros after the signal). Returns the input
 * array itself when it is at 16 kHz already.
 * @throws RangeError for a non-positive or non-integer sample rate.
 */
export async function resampleTo16k(
  samples: Float32Array,
  sampleRate: number,
  quality: ResampleQuality = 'best',
): Promise<Float32Array> {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0)
    throw new RangeError(`sample rate must be a positive integer in Hz, got ${sampleRate}`);
  if (sampleRate === DNSMOS_SAMPLE_RATE) return samples;
  if (samples.length === 0) return new Float32Array(0);
  return (await resample({ channels: [samples], sampleRate }, DNSMOS_SAMPLE_RATE, quality, { length: 'ceil' }))
    .channels[0]!;
}
