/**
 * The one resampler: libsamplerate's sinc converters (WebAssembly, deterministic) or the SpeexDSP
 * resampler, for every rate change in the project (synthesized speech to the dataset rate, voice
 * prompts, speech detection at 16 kHz, DNSMOS at 16 kHz). ./resample-pool.ts runs it in worker threads.
 */
import libsamplerate from '@alexanderolsen/libsamplerate-js';
import { AudioArgumentError, assertWellFormed, type RawAudio } from './raw-audio.ts';

/**
 * Resampler: libsamplerate's sinc converters 'best', 'medium', 'fastest'
 * (http://www.mega-nerd.com/SRC/api_misc.html#Converters), or 'speex': the SpeexDSP resampler at
 * quality {@link SPEEX_RESAMPLER_QUALITY} (WebAssembly with SIMD), about 100 times faster than 'best'
 * at 24 -> 16 kHz on this machine kind (3000 against 37 s of audio per CPU second) with in-band
 * error below -110 dB on test tones; its output differs from libsamplerate's in the last bits, so the
 * 16-bit samples written differ too.
 */
export type ResampleQuality = 'best' | 'medium' | 'fastest' | 'speex';

/** Options of {@link resample}. */
export interface ResampleOptions {
  /** Output samples per channel: `round` (default) or `ceil` of `length * targetRate / sourceRate`. */
  length?: 'round' | 'ceil';
}

/** SpeexDSP quality (0..10) of the 'speex' resampler: 7, filter of 96 input samples' delay at 24 -> 16 kHz. */
export const SPEEX_RESAMPLER_QUALITY = 7;

const CONVERTER_BY_QUALITY = {
  best: libsamplerate.ConverterType.SRC_SINC_BEST_QUALITY,
  medium: libsamplerate.ConverterType.SRC_SINC_MEDIUM_QUALITY,
  fastest: libsamplerate.ConverterType.SRC_SINC_FASTEST,
} as const;

type SampleRateConverter = Awaited<ReturnType<typeof libsamplerate.create>>;
const converterCache = new Map<string, Promise<SampleRateConverter>>();

/** One libsamplerate converter per (source rate, target rate, quality), created once and kept. */
function converterFor(
  sourceRate: number,
  targetRate: number,
  quality: Exclude<ResampleQuality, 'speex'>,
): Promise<SampleRateConverter> {
  const key = `${sourceRate}:${targetRate}:${quality}`;
  let converter = converterCache.get(key);
  if (!converter) {
    converter = libsamplerate.create(1, sourceRate, targetRate, { converterType: CONVERTER_BY_QUALITY[quality] });
    converterCache.set(key, converter);
  }
  return converter;
}

function greatestCommonDivisor(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * Input samples (per side) of context around each chunk: 0.25 s. libsamplerate's best sinc filter
 * reaches about 10 ms into the input at the rates used here, so the chunk edges do not affect the kept
 * output (checked: chunked and whole-signal output are bit-identical).
 */
const RESAMPLE_CONTEXT_SECONDS = 0.25;
/** Largest chunk (input or output samples) sent to libsamplerate's `simple` call; its own limit is 1,008,000. */
const RESAMPLE_MAX_CHUNK_SAMPLES = 500_000;

/**
 * Resamples every channel to `targetRate` Hz with libsamplerate (WebAssembly), sinc converter, best
 * quality by default. Output length per channel is `round(length * targetRate / sourceRate)` samples;
 * time 0 stays at time 0 (libsamplerate compensates its filter delay). The result is deterministic.
 *
 * Long audio is processed in chunks cut at input positions where the rate ratio maps to a whole output
 * sample, each with {@link RESAMPLE_CONTEXT_SECONDS} of context on both sides (zeros beyond the ends),
 * because libsamplerate-js's own chunking for inputs over 1,008,000 samples loses output.
 * Cost: about 7x faster than real time at 48 kHz -> 16 kHz with 'best' on this machine kind.
 *
 * @param audio input audio; not changed.
 * @param targetRate output sample rate in Hz (positive integer).
 * @param quality libsamplerate converter: 'best' (SRC_SINC_BEST_QUALITY, default), 'medium', 'fastest';
 *   or 'speex' (SpeexDSP, quality {@link SPEEX_RESAMPLER_QUALITY}, the whole signal at once, no chunks).
 * @param options `length: 'ceil'` for `ceil(length * targetRate / sourceRate)` samples (the length
 *   `librosa.resample` gives, which DNSMOS expects; the last sample comes from the zeros after the signal)
 * @returns new audio at `targetRate`; audio already at `targetRate` is copied.
 * @throws AudioArgumentError when either rate is not a positive integer or the audio is malformed.
 */
export async function resample(
  audio: RawAudio,
  targetRate: number,
  quality: ResampleQuality = 'best',
  options: ResampleOptions = {},
): Promise<RawAudio> {
  assertWellFormed(audio, 'resample');
  const sourceRate = audio.sampleRate;
  for (const rate of [sourceRate, targetRate]) {
    if (!Number.isInteger(rate) || rate <= 0)
      throw new AudioArgumentError(`resample: sample rate ${rate} Hz is not a positive integer`);
  }
  if (sourceRate === targetRate)
    return { channels: audio.channels.map((channel) => channel.slice()), sampleRate: targetRate };
  if (quality === 'speex') {
    const speex = await speexResampler(sourceRate, targetRate);
    const length = (samples: number) =>
      (options.length === 'ceil' ? Math.ceil : Math.round)((samples * targetRate) / sourceRate);
    return {
      channels: audio.channels.map((channel) => speex.resample(channel, length(channel.length))),
      sampleRate: targetRate,
    };
  }

  const converter = await converterFor(sourceRate, targetRate, quality);
  const divisor = greatestCommonDivisor(sourceRate, targetRate);
  const inputStep = sourceRate / divisor; // input samples that map to exactly `outputStep` output samples
  const outputStep = targetRate / divisor;
  const context = Math.ceil((RESAMPLE_CONTEXT_SECONDS * sourceRate) / inputStep) * inputStep;
  const largestRatio = Math.max(1, targetRate / sourceRate);
  const coreSteps = Math.max(1, Math.floor((RESAMPLE_MAX_CHUNK_SAMPLES / largestRatio - 2 * context) / inputStep));
  const core = coreSteps * inputStep;

  const contextOut = (context / inputStep) * outputStep;
  const channels = audio.channels.map((input) => {
    const outputLength = (options.length === 'ceil' ? Math.ceil : Math.round)((input.length * targetRate) / sourceRate);
    const output = new Float32Array(outputLength);
    const roundedLength = Math.ceil(input.length / inputStep) * inputStep;
    const padded = new Float32Array(context + roundedLength + context);
    padded.set(input, context);
    for (let coreStart = 0; coreStart < input.length; coreStart += core) {
      // `coreStart` is a multiple of inputStep, so it maps to output sample coreStart / inputStep * outputStep.
      const coreLength = Math.min(core, roundedLength - coreStart);
      const converted = converter.simple(padded.subarray(coreStart, coreStart + context + coreLength + context));
      const outputStart = (coreStart / inputStep) * outputStep;
      const wanted = Math.min((coreLength / inputStep) * outputStep, outputLength - outputStart);
      output.set(converted.subarray(contextOut, contextOut + wanted), outputStart);
    }
    return output;
  });
  return { channels, sampleRate: targetRate };
}

type SpeexModule = Awaited<ReturnType<typeof import('@echogarden/speex-resampler-wasm/simd').default>>;
let speexModule: Promise<SpeexModule> | null = null;
const speexResamplers = new Map<string, Promise<SpeexMonoResampler>>();

/** One SpeexDSP resampler state per rate pair, reset before each signal. */
class SpeexMonoResampler {
  private scratch = { pointer: 0, floats: 0 };
  private readonly counts: number;

  constructor(
    private readonly module: SpeexModule,
    private readonly state: number,
    private readonly sourceRate: number,
    private readonly targetRate: number,
  ) {
    this.counts = module._malloc(8);
  }

  /**
   * The whole signal resampled to `outputLength` samples (`round` or `ceil` of `length * target / source`), time 0 at time 0 (the
   * filter's leading zeros skipped, its delay flushed with trailing zeros). Deterministic.
   */
  resample(input: Float32Array, outputLength: number): Float32Array {
    const module = this.module;
    module._speex_resampler_reset_mem(this.state);
    module._speex_resampler_skip_zeros(this.state);
    const inputLength =
      input.length +
      module._speex_resampler_get_input_latency(this.state) +
      2 * Math.ceil(this.sourceRate / this.targetRate) +
      2;
    const needed = inputLength + outputLength;
    if (this.scratch.floats < needed) {
      if (this.scratch.pointer !== 0) module._free(this.scratch.pointer);
      this.scratch = { pointer: module._malloc(needed * 4), floats: needed };
    }
    const inputPointer = this.scratch.pointer;
    const outputPointer = inputPointer + inputLength * 4;
    let heap = module.HEAPF32;
    heap.set(input, inputPointer >> 2);
    heap.fill(0, (inputPointer >> 2) + input.length, (inputPointer >> 2) + inputLength);
    module.HEAPU32[this.counts >> 2] = inputLength;
    module.HEAPU32[(this.counts >> 2) + 1] = outputLength;
    module._speex_resampler_process_float(this.state, 0, inputPointer, this.counts, outputPointer, this.counts + 4);
    const written = module.HEAPU32[(this.counts >> 2) + 1]!;
    heap = module.HEAPF32; // the memory may have been replaced
    const output = new Float32Array(outputLength);
    output.set(heap.subarray(outputPointer >> 2, (outputPointer >> 2) + Math.min(written, outputLength)));
    return output;
  }
}

/** The shared SpeexDSP resampler for a rate pair (module loaded once). @throws Error when the state cannot be made */
function speexResampler(sourceRate: number, targetRate: number): Promise<SpeexMonoResampler> {
  const key = `${sourceRate}:${targetRate}`;
  let resampler = speexResamplers.get(key);
  if (!resampler) {
    speexModule ??= import('@echogarden/speex-resampler-wasm/simd').then((loaded) => loaded.default());
    resampler = speexModule.then((module) => {
      const errorPointer = module._malloc(4);
      const state = module._speex_resampler_init(1, sourceRate, targetRate, SPEEX_RESAMPLER_QUALITY, errorPointer);
      module._free(errorPointer);
      if (state === 0)
        throw new AudioArgumentError(
          `resample: the Speex resampler cannot convert ${sourceRate} Hz to ${targetRate} Hz`,
        );
      return new SpeexMonoResampler(module, state, sourceRate, targetRate);
    });
    speexResamplers.set(key, resampler);
  }
  return resampler;
}
