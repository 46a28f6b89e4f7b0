/**
 * WebRTC VAD (libfvad, the voice activity detector of the WebRTC project) compiled to WebAssembly by
 * `@echogarden/fvad-wasm`. A Gaussian-mixture model over six sub-band energies, with its own short
 * hangover; gives a 0/1 decision per 10, 20 or 30 ms frame of 16-bit samples at 8, 16, 32 or 48 kHz.
 *
 * Pipeline of {@link WebRtcVoiceActivityDetector.detect}: use the input rate when libfvad accepts it,
 * otherwise resample to 16 kHz -> 16-bit frames -> 0/1 per frame -> the same post-processing as Silero
 * (speech-timestamps.ts, the decisions read as probabilities 0 and 1) -> integer centiseconds ->
 * boundary refinement (boundary-refinement.ts).
 */
import type { FvadModule } from '@echogarden/fvad-wasm';
import type { SpeechSegment } from '../../model/types.ts';
import { resample, type ResampleQuality } from '../../audio/resample.ts';
import { checkAudioInput, refinementInput } from './audio-input.ts';
import {
  DEFAULT_BOUNDARY_REFINEMENT_OPTIONS,
  refineSpeechBoundaries,
  resolveBoundaryRefinementOptions,
  type BoundaryRefinementOptions,
} from './boundary-refinement.ts';
import { VoiceActivityDetectionError, VoiceActivityOptionsError } from './errors.ts';
import {
  resolveSpeechTimestampOptions,
  sampleSegmentsToCentiseconds,
  speechSampleSegments,
  type SpeechTimestampOptions,
} from './speech-timestamps.ts';
import type { VoiceActivityDetector } from './detector.ts';

/** Engine id of this detector (the `VoiceActivityEngine` name). */
export const WEBRTC_ENGINE_ID = 'webrtc';
/** Sample rates libfvad accepts, Hz. */
export const WEBRTC_SAMPLE_RATES: readonly number[] = Object.freeze([8000, 16000, 32000, 48000]);
/** Rate other inputs are resampled to, Hz. */
export const WEBRTC_FALLBACK_SAMPLE_RATE = 16000;

/** libfvad aggressiveness: 0 (quality, most permissive) to 3 (very aggressive, most speech rejected). */
export type WebRtcVadMode = 0 | 1 | 2 | 3;
/** Frame lengths libfvad accepts, milliseconds. */
export type WebRtcFrameMilliseconds = 10 | 20 | 30;

/** Settings of the WebRTC engine; the decisions are read as probabilities 0 and 1, durations in seconds. */
export interface WebRtcVadOptions extends SpeechTimestampOptions {
  mode: WebRtcVadMode;
  frameMilliseconds: WebRtcFrameMilliseconds;
  /** Boundary refinement settings, or null to keep the frame decisions' boundaries. */
  boundaryRefinement: BoundaryRefinementOptions | null;
  /** libsamplerate converter for inputs at rates libfvad does not accept. */
  resampleQuality: ResampleQuality;
}

/** Input form of {@link WebRtcVadOptions}: any subset; `boundaryRefinement` may be partial, or false to switch it off. */
export type WebRtcVadOptionsInput = Partial<Omit<WebRtcVadOptions, 'boundaryRefinement'>> & {
  boundaryRefinement?: Partial<BoundaryRefinementOptions> | false | null;
};

/**
 * Defaults and their sources (same material as the Silero defaults, see silero-vad.ts):
 * - `mode: 3` (the most aggressive of libfvad's `fvad_set_mode`): measured on 20 s of white noise, no
 *   mode makes a segment at -60 or -50 dBFS, but modes 0 and 1 make segments from -40 dBFS noise and
 *   mode 2 from -30 dBFS, mode 3 from none of them; on the test dialogue its unrefined ends are
 *   at most 0.09 s late against 0.15 s for modes 0 and 1 (shorter hangover), and it still finds every
 *   espeak-ng utterance and 0.2 s backchannel.
 * - `frameMilliseconds: 10`: the finest decision grid libfvad offers (one centisecond).
 * - `threshold: 0.5`, `negativeThreshold: 0.5`: any value in (0, 1] reads a 1 as speech and a 0 as
 *   silence; hysteresis has no meaning for 0/1 decisions.
 * - `minSpeechSeconds: 0.1`, `minSilenceSeconds: 0.1`, `speechPadSeconds: 0`: as for Silero
 *   (backchannels of 0.16 s must survive, 0.3 s pauses must split, refinement sets boundaries).
 * - `boundaryRefinement`: on, {@link DEFAULT_BOUNDARY_REFINEMENT_OPTIONS}.
 * - `resampleQuality: 'fastest'`: libfvad analyses below 4 kHz (it downsamples to 8 kHz internally).
 */
export const DEFAULT_WEBRTC_VAD_OPTIONS: Readonly<WebRtcVadOptions> = Object.freeze({
  mode: 3,
  frameMilliseconds: 10,
  threshold: 0.5,
  negativeThreshold: 0.5,
  minSpeechSeconds: 0.1,
  minSilenceSeconds: 0.1,
  speechPadSeconds: 0,
  boundaryRefinement: DEFAULT_BOUNDARY_REFINEMENT_OPTIONS,
  resampleQuality: 'fastest',
});

/**
 * Completes and checks WebRTC settings ({@link DEFAULT_WEBRTC_VAD_OPTIONS} fill the gaps).
 *
 * @throws VoiceActivityOptionsError naming the invalid setting.
 */
export function resolveWebRtcVadOptions(options: WebRtcVadOptionsInput = {}): WebRtcVadOptions {
  const timestamps = resolveSpeechTimestampOptions(
    {
      ...options,
      negativeThreshold: options.negativeThreshold ?? options.threshold ?? DEFAULT_WEBRTC_VAD_OPTIONS.negativeThreshold,
    },
    DEFAULT_WEBRTC_VAD_OPTIONS,
  );
  const mode = options.mode ?? DEFAULT_WEBRTC_VAD_OPTIONS.mode;
  if (![0, 1, 2, 3].includes(mode)) throw new VoiceActivityOptionsError(`mode ${mode} is not 0, 1, 2 or 3`);
  const frameMilliseconds = options.frameMilliseconds ?? DEFAULT_WEBRTC_VAD_OPTIONS.frameMilliseconds;
  if (![10, 20, 30].includes(frameMilliseconds))
    throw new VoiceActivityOptionsError(`frameMilliseconds ${frameMilliseconds} is not 10, 20 or 30`);
  const resampleQuality = options.resampleQuality ?? DEFAULT_WEBRTC_VAD_OPTIONS.resampleQuality;
  if (!['best', 'medium', 'fastest'].includes(resampleQuality))
    throw new VoiceActivityOptionsError(`resampleQuality "${resampleQuality}" is not best, medium or fastest`);
  const refinement = options.boundaryRefinement;
  const boundaryRefinement =
    refinement === false || refinement === null ? null : resolveBoundaryRefinementOptions(refinement ?? {});
  return { ...timestamps, mode, frameMilliseconds, boundaryRefinement, resampleQuality };
}

let modulePromise: Promise<FvadModule> | undefined;

/**
 * The WebAssembly module, instantiated once per process on first use.
 *
 * @throws VoiceActivityDetectionError `model-load` when the package is missing or will not instantiate.
 */
function loadFvadModule(): Promise<FvadModule> {
  modulePromise ??= (async () => {
    try {
      const { default: createFvadModule } = await import('@echogarden/fvad-wasm');
      return await createFvadModule();
    } catch (error) {
      modulePromise = undefined;
      throw new VoiceActivityDetectionError(
        WEBRTC_ENGINE_ID,
        'model-load',
        `cannot load @echogarden/fvad-wasm (run \`npm install\`): ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  })();
  return modulePromise;
}

/** Converts a sample to 16-bit: round(x * 32768), clamped to [-32768, 32767] (as encodeWavPcm16 writes it). */
function toInt16(sample: number): number {
  const scaled = Math.round(sample * 32768);
  return scaled > 32767 ? 32767 : scaled < -32768 ? -32768 : scaled;
}

/** WebRTC VAD behind the {@link VoiceActivityDetector} seam. Create it with {@link createWebRtcVoiceActivityDetector}. */
export class WebRtcVoiceActivityDetector implements VoiceActivityDetector {
  readonly id = WEBRTC_ENGINE_ID;
  private released = false;

  constructor(
    private readonly fvad: FvadModule,
    private readonly instance: number,
    readonly options: Readonly<WebRtcVadOptions>,
  ) {}

  /**
   * libfvad's decision (1 speech, 0 not) for every frame of a signal at a rate libfvad accepts. Frame k
   * covers samples [k * n, (k + 1) * n) with n = rate * frameMilliseconds / 1000; the last partial
   * frame is padded with zeros. The detector's state is reset first, so results do not depend on
   * earlier calls.
   *
   * @param samples mono samples, nominal range [-1, 1], at `sampleRate`.
   * @param sampleRate one of {@link WEBRTC_SAMPLE_RATES}, Hz.
   * @returns one 0/1 value per frame.
   * @throws VoiceActivityDetectionError `invalid-audio` for another rate, `inference` when libfvad
   *   rejects a frame or the detector was released.
   */
  frameDecisions(samples: Float32Array, sampleRate: number): Uint8Array {
    if (this.released)
      throw new VoiceActivityDetectionError(WEBRTC_ENGINE_ID, 'inference', 'the detector was released');
    if (!WEBRTC_SAMPLE_RATES.includes(sampleRate)) {
      throw new VoiceActivityDetectionError(
        WEBRTC_ENGINE_ID,
        'invalid-audio',
        `libfvad needs 8000, 16000, 32000 or 48000 Hz, got ${sampleRate}`,
      );
    }
    const fvad = this.fvad;
    fvad._fvad_reset(this.instance);
    if (
      fvad._fvad_set_mode(this.instance, this.options.mode) !== 0 ||
      fvad._fvad_set_sample_rate(this.instance, sampleRate) !== 0
    ) {
      throw new VoiceActivityDetectionError(
        WEBRTC_ENGINE_ID,
        'inference',
        `libfvad rejected mode ${this.options.mode} at ${sampleRate} Hz`,
      );
    }
    const frameSamples = (sampleRate * this.options.frameMilliseconds) / 1000;
    const frames = Math.ceil(samples.length / frameSamples);
    const decisions = new Uint8Array(frames);
    const pointer = fvad._malloc(frameSamples * 2);
    try {
      const heapIndex = pointer >> 1;
      for (let frame = 0; frame < frames; frame++) {
        const heap = fvad.HEAP16; // re-read: the view is replaced if the memory grows
        const start = frame * frameSamples;
        for (let index = 0; index < frameSamples; index++) {
          const position = start + index;
          heap[heapIndex + index] = position < samples.length ? toInt16(samples[position] as number) : 0;
        }
        const decision = fvad._fvad_process(this.instance, pointer, frameSamples);
        if (decision < 0)
          throw new VoiceActivityDetectionError(
            WEBRTC_ENGINE_ID,
            'inference',
            `libfvad rejected frame ${frame} of ${frameSamples} samples`,
          );
        decisions[frame] = decision;
      }
    } finally {
      fvad._free(pointer);
    }
    return decisions;
  }

  /**
   * Speech segments of one mono signal.
   *
   * @param samples mono samples, nominal range [-1, 1]; not changed.
   * @param sampleRate Hz, a positive integer (resampled to 16 kHz unless libfvad accepts it).
   * @returns segments in integer centiseconds from `samples[0]`, sorted, non-overlapping, start < end.
   * @throws VoiceActivityDetectionError `invalid-audio` (bad rate, non-finite samples) or `inference`.
   */
  async detect(samples: Float32Array, sampleRate: number): Promise<SpeechSegment[]> {
    checkAudioInput(WEBRTC_ENGINE_ID, samples, sampleRate);
    const analysedRate = WEBRTC_SAMPLE_RATES.includes(sampleRate) ? sampleRate : WEBRTC_FALLBACK_SAMPLE_RATE;
    const analysed =
      analysedRate === sampleRate
        ? samples
        : ((await resample({ channels: [samples], sampleRate }, analysedRate, this.options.resampleQuality))
            .channels[0] as Float32Array);
    const decisions = this.frameDecisions(analysed, analysedRate);
    const frameSamples = (analysedRate * this.options.frameMilliseconds) / 1000;
    const sampleSegments = speechSampleSegments(decisions, frameSamples, analysed.length, analysedRate, this.options);
    const segments = sampleSegmentsToCentiseconds(sampleSegments, analysedRate);
    if (!this.options.boundaryRefinement) return segments;
    const levelSource = refinementInput(samples, sampleRate, analysed, analysedRate);
    return refineSpeechBoundaries(
      segments,
      levelSource.samples,
      levelSource.sampleRate,
      this.options.boundaryRefinement,
    );
  }

  /** Frees the libfvad instance. The detector cannot be used afterwards. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.fvad._fvad_free(this.instance);
  }
}

/**
 * Loads libfvad (once per process) and returns a detector with its own libfvad instance.
 *
 * @param options any of {@link WebRtcVadOptions}; the rest from {@link DEFAULT_WEBRTC_VAD_OPTIONS}.
 * @throws VoiceActivityOptionsError for invalid settings; VoiceActivityDetectionError `model-load`
 *   when the WebAssembly module cannot be loaded or libfvad cannot allocate a detector.
 */
export async function createWebRtcVoiceActivityDetector(
  options: WebRtcVadOptionsInput = {},
): Promise<WebRtcVoiceActivityDetector> {
  const resolved = resolveWebRtcVadOptions(options);
  const fvad = await loadFvadModule();
  const instance = fvad._fvad_new();
  if (instance === 0)
    throw new VoiceActivityDetectionError(WEBRTC_ENGINE_ID, 'model-load', 'libfvad could not allocate a detector');
  return new WebRtcVoiceActivityDetector(fvad, instance, Object.freeze(resolved));
}
