/**
 * The MOS (mean opinion score) seam: what the quality stage asks of a speech-quality scorer. The real
 * one is DNSMOS (./dnsmos.ts, `DnsmosScorer`, onnxruntime on the Microsoft DNS Challenge models);
 * tests use {@link FakeMosScorer} (./fake-mos-scorer.ts), which records its calls.
 */
import type { DnsmosRecordingOptions, DnsmosRecordingScores, MultiChannelAudio } from './dnsmos.ts';

/** Scores a recording per channel and as a dialogue (channels with speech only). */
export interface RecordingMosScorer {
  /**
   * @param audio every channel of the recording (float samples in [-1, 1]) at its sample rate, Hz
   * @param options `onProgress`: channel-seconds scored so far, in parts (DnsmosRecordingOptions)
   * @returns per-channel scores (null for a channel without speech) and the dialogue's means
   */
  scoreRecording(
    audio: MultiChannelAudio,
    options?: Pick<DnsmosRecordingOptions, 'onProgress'>,
  ): Promise<DnsmosRecordingScores>;
}
