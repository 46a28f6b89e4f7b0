/** The errors voice activity detection throws. */

/** Settings given to a detector are out of range (message names the setting and the value). */
export class VoiceActivityOptionsError extends Error {
  override readonly name = 'VoiceActivityOptionsError';
  constructor(detail: string) {
    super(`voice activity detection settings: ${detail}`);
  }
}

/** Why a detection failed. */
export type VoiceActivityFailure =
  | 'model-missing' // the model file is not where it should be
  | 'model-load' // onnxruntime or WebAssembly could not load the model
  | 'inference' // the model failed on a frame
  | 'invalid-audio'; // the samples or the sample rate cannot be analysed

/** A detector could not be created or could not analyse audio. The message names the engine and the reason. */
export class VoiceActivityDetectionError extends Error {
  override readonly name = 'VoiceActivityDetectionError';
  constructor(
    readonly engine: string,
    readonly failure: VoiceActivityFailure,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${engine} voice activity detection failed (${failure}): ${detail}`, options);
  }
}
