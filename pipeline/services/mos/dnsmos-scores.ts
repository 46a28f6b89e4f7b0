/**
 * What DNSMOS (./dnsmos.ts) returns for one channel and for a recording of several channels, and the
 * energy rule that decides which channels of a recording hold speech worth scoring.
 */
import type { P835Values } from './dnsmos-windows.ts';

/** DNSMOS of one channel. All MOS values are on the 1..5 scale (the mapping may exceed it slightly). */
export interface DnsmosScores {
  /** P.835 overall quality, mean over windows of the mapped values. */
  ovrl: number;
  /** P.835 speech signal quality. */
  sig: number;
  /** P.835 background noise quality. */
  bak: number;
  /** P.808 MOS (`model_v8.onnx` output, used as is). */
  p808: number;
  /** Means over windows of the raw (unmapped) `sig_bak_ovr.onnx` outputs (`OVRL_raw` etc. of the reference). */
  raw: P835Values;
  /** pDNSMOS values (personalized model and polynomials), present when the scorer was loaded with `personalized: true`. */
  personalized?: P835Values & { raw: P835Values };
  /** Number of windows scored. */
  windows: number;
  /** `num_hops` of the reference (windows considered, including skipped ones). */
  hopCount: number;
  /** Duration of the channel in seconds (16 kHz samples before doubling / 16000, `len_in_sec`). */
  durationSeconds: number;
}

/** A recording with any number of channels: `channels[c][i]` is sample i of channel c, in -1..1. */
export interface MultiChannelAudio {
  channels: Float32Array[];
  sampleRate: number;
}

/** Options of {@link DnsmosScorer.scoreRecording}. */
export interface DnsmosRecordingOptions {
  /**
   * Which channels contain speech (e.g. from a voice activity detector). Default: decided per channel
   * by {@link channelHasSpeech}.
   */
  channelHasSpeech?: boolean[];
  /**
   * Progress: called with the channel-seconds of audio scored since the last call (after each batch
   * of windows; a channel without speech at once), summing to the recording's channels × duration.
   */
  onProgress?: (channelSeconds: number) => void;
}

/** Per-channel result of {@link DnsmosScorer.scoreRecording}. */
export interface DnsmosChannelResult {
  channel: number;
  hasSpeech: boolean;
  /** null for a channel without speech (not scored: DNSMOS of silence is meaningless). */
  scores: DnsmosScores | null;
}

/** Dialogue-level DNSMOS: per-channel values averaged over the channels with speech. */
export interface DnsmosDialogueScores {
  ovrl: number;
  sig: number;
  bak: number;
  p808: number;
  personalized?: P835Values;
  /** Number of channels averaged. */
  channelCount: number;
}

/** Result of {@link DnsmosScorer.scoreRecording}. */
export interface DnsmosRecordingScores {
  channels: DnsmosChannelResult[];
  /** null when no channel has speech. */
  dialogue: DnsmosDialogueScores | null;
}

/** Options of {@link channelHasSpeech}. */
export interface ChannelSpeechOptions {
  /** Level a 30 ms frame's RMS must exceed, dB relative to full scale. Default -50. */
  thresholdDbfs?: number;
  /** Total duration of such frames needed, seconds. Default 0.3. */
  minimumSeconds?: number;
}

/**
 * Energy rule deciding whether a channel holds speech worth scoring: at least `minimumSeconds`
 * (0.3 s) of non-overlapping 30 ms frames whose RMS level is above `thresholdDbfs` (-50 dBFS).
 * Synthetic dialogue channels are digital silence (or a low noise floor) while the other side talks,
 * so this separates talking from silent channels; pass VAD results to
 * {@link DnsmosScorer.scoreRecording} instead when you have them.
 */
export function channelHasSpeech(
  samples: Float32Array,
  sampleRate: number,
  options: ChannelSpeechOptions = {},
): boolean {
  const threshold = Math.pow(10, (options.thresholdDbfs ?? -50) / 20);
  const thresholdSquared = threshold * threshold;
  const frameLength = Math.max(1, Math.round(0.03 * sampleRate));
  const framesNeeded = Math.ceil(((options.minimumSeconds ?? 0.3) * sampleRate) / frameLength);
  let loudFrames = 0;
  for (let start = 0; start + frameLength <= samples.length; start += frameLength) {
    let energy = 0;
    for (let index = start; index < start + frameLength; index++) energy += samples[index]! * samples[index]!;
    if (energy / frameLength > thresholdSquared && ++loudFrames >= framesNeeded) return true;
  }
  return false;
}

/**
 * The dialogue-level DNSMOS of a recording: the arithmetic mean of each value over the scored
 * channels (the channels with speech), personalized values included when `personalized`.
 *
 * @param scored the per-channel scores, at least one.
 */
export function dialogueDnsmosScores(scored: readonly DnsmosScores[], personalized: boolean): DnsmosDialogueScores {
  const mean = (pick: (scores: DnsmosScores) => number): number =>
    scored.reduce((sum, scores) => sum + pick(scores), 0) / scored.length;
  const dialogue: DnsmosDialogueScores = {
    ovrl: mean((scores) => scores.ovrl),
    sig: mean((scores) => scores.sig),
    bak: mean((scores) => scores.bak),
    p808: mean((scores) => scores.p808),
    channelCount: scored.length,
  };
  if (personalized) {
    dialogue.personalized = {
      ovrl: mean((scores) => scores.personalized!.ovrl),
      sig: mean((scores) => scores.personalized!.sig),
      bak: mean((scores) => scores.personalized!.bak),
    };
  }
  return dialogue;
}
