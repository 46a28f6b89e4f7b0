/**
 * Types for `@echogarden/speex-resampler-wasm` 0.3 (the SpeexDSP resampler compiled to WebAssembly
 * with Emscripten), which ships none. Only what raw-audio.ts uses; names as the module exports them
 * (speex/speex_resampler.h). Pointers are byte offsets into the module's memory.
 */
declare module '@echogarden/speex-resampler-wasm/simd' {
  export interface SpeexResamplerModule {
    /** `speex_resampler_init(channels, in_rate, out_rate, quality 0-10, *err)`: a resampler state pointer, 0 on error. */
    _speex_resampler_init(
      channels: number,
      inputRate: number,
      outputRate: number,
      quality: number,
      errorPointer: number,
    ): number;
    _speex_resampler_destroy(state: number): void;
    /** Clears the filter memory (as a fresh state). */
    _speex_resampler_reset_mem(state: number): number;
    /** Drops the filter's leading zeros from the output, so time 0 stays at time 0. */
    _speex_resampler_skip_zeros(state: number): number;
    /** Input samples of delay (half the filter length). */
    _speex_resampler_get_input_latency(state: number): number;
    /**
     * Resamples float samples of one channel: reads up to *inputLength samples at `input`, writes up
     * to *outputLength at `output`; on return both hold the counts consumed and written.
     */
    _speex_resampler_process_float(
      state: number,
      channel: number,
      input: number,
      inputLengthPointer: number,
      output: number,
      outputLengthPointer: number,
    ): number;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    /** The module's memory as 32-bit floats / unsigned integers (replaced when the memory grows). */
    HEAPF32: Float32Array;
    HEAPU32: Uint32Array;
  }
  /** Instantiates the module (loads the .wasm next to the .js). */
  const createSpeexResamplerModule: (moduleArguments?: Record<string, unknown>) => Promise<SpeexResamplerModule>;
  export default createSpeexResamplerModule;
}
