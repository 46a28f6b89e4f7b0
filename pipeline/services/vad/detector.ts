/**
 * The interface every voice activity detection engine implements (silero-vad.ts, webrtc-vad.ts, the
 * fake). Its own module so that the engines and voice-activity-detector.ts, which loads them by name,
 * do not import each other; voice-activity-detector.ts re-exports it.
 */
import type { SpeechSegment } from '../../model/types.ts';

/** Finds speech in a mono signal. */
export interface VoiceActivityDetector {
  /** Engine identifier: `silero`, `webrtc`, or a fake's name. */
  readonly id: string;
  /**
   * Speech segments of one mono signal.
   *
   * @param samples mono samples, nominal range [-1, 1]; not changed.
   * @param sampleRate Hz, a positive integer.
   * @returns segments in integer centiseconds from `samples[0]`, sorted by start, non-overlapping, start < end.
   * @throws VoiceActivityDetectionError on any failure.
   */
  detect(samples: Float32Array, sampleRate: number): Promise<SpeechSegment[]>;
  /**
   * Optional: several signals at once, when the engine can batch them (same result as calling
   * {@link detect} on each).
   */
  detectMany?(channels: readonly Float32Array[], sampleRate: number): Promise<SpeechSegment[][]>;
  /** Optional: frees the engine's native resources (model session, WebAssembly memory). */
  release?(): Promise<void>;
}
