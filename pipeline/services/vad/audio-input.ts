/** Checks and choices about the audio handed to a detector, shared by the engines. */
import { VoiceActivityDetectionError } from './errors.ts';

/**
 * Checks one mono signal before analysis.
 *
 * @param engine engine id for the error message.
 * @param samples mono samples.
 * @param sampleRate Hz.
 * @throws VoiceActivityDetectionError `invalid-audio` when `sampleRate` is not a positive integer or a
 *   sample is NaN or infinite (the message gives the first such index).
 */
export function checkAudioInput(engine: string, samples: Float32Array, sampleRate: number): void {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) {
    throw new VoiceActivityDetectionError(
      engine,
      'invalid-audio',
      `sample rate ${sampleRate} Hz is not a positive integer`,
    );
  }
  // x * 0 is 0 for every finite x and NaN for NaN and the infinities: one fast pass, then find the culprit.
  let probe = 0;
  for (let index = 0; index < samples.length; index++) probe += (samples[index] as number) * 0;
  if (probe === 0) return;
  const index = samples.findIndex((sample) => !Number.isFinite(sample));
  throw new VoiceActivityDetectionError(
    engine,
    'invalid-audio',
    `sample ${index} is ${samples[index]}, not a finite number`,
  );
}

/**
 * Which signal the boundary refinement measures levels on: the original when its rate is a multiple of
 * 100 Hz (10 ms frames then hold whole samples, and no band is lost to resampling, so fricatives above
 * 8 kHz count as they do for the clean speech detector), otherwise the signal the model analysed.
 *
 * @param original the caller's samples at `originalRate` Hz.
 * @param analysed the samples the engine analysed, at `analysedRate` Hz (a multiple of 100).
 */
export function refinementInput(
  original: Float32Array,
  originalRate: number,
  analysed: Float32Array,
  analysedRate: number,
): { samples: Float32Array; sampleRate: number } {
  return originalRate % 100 === 0
    ? { samples: original, sampleRate: originalRate }
    : { samples: analysed, sampleRate: analysedRate };
}
