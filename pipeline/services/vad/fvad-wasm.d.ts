/**
 * Types for `@echogarden/fvad-wasm` 0.2 (libfvad, the WebRTC VAD, compiled to WebAssembly with
 * Emscripten), which ships none. Only what webrtc-vad.ts uses; names as the module exports them.
 */
declare module '@echogarden/fvad-wasm' {
  /** The instantiated Emscripten module. Pointers are byte offsets into the module's memory. */
  export interface FvadModule {
    /** Creates a detector (mode 0, 8000 Hz); returns its pointer, 0 when out of memory. */
    _fvad_new(): number;
    /** Frees a detector. */
    _fvad_free(instance: number): void;
    /** Resets a detector to its initial state (mode 0, 8000 Hz). */
    _fvad_reset(instance: number): void;
    /** Sets the aggressiveness 0-3; returns 0, or -1 for an invalid mode. */
    _fvad_set_mode(instance: number, mode: number): number;
    /** Sets the input rate (8000, 16000, 32000 or 48000 Hz); returns 0, or -1 for another rate. */
    _fvad_set_sample_rate(instance: number, sampleRate: number): number;
    /**
     * Classifies one frame of 16-bit samples (10, 20 or 30 ms at the set rate) at `frame`; returns 1
     * (speech), 0 (no speech) or -1 (invalid frame length).
     */
    _fvad_process(instance: number, frame: number, length: number): number;
    /** Allocates `bytes` bytes in the module's memory; returns the pointer. */
    _malloc(bytes: number): number;
    /** Frees memory from `_malloc`. */
    _free(pointer: number): void;
    /** The module's memory as 16-bit integers (replaced when the memory grows). */
    HEAP16: Int16Array;
  }
  /** Instantiates the module (loads fvad.wasm next to fvad.js). */
  const createFvadModule: (moduleArguments?: Record<string, unknown>) => Promise<FvadModule>;
  export default createFvadModule;
}
