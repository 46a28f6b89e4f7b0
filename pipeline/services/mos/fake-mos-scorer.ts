/**
 * A stand-in MOS scorer for tests of code that uses a {@link RecordingMosScorer}: no model runs; every
 * channel gets the same scores and is taken to hold speech. It records every call.
 */
import type { DnsmosScores, MultiChannelAudio, DnsmosRecordingOptions, DnsmosRecordingScores } from './dnsmos.ts';
import type { RecordingMosScorer } from './mos-scorer.ts';

/** What the fake was asked: channel count, samples per channel and the rate in Hz. */
export interface FakeMosCall {
  channels: number;
  sampleCount: number;
  sampleRate: number;
}

/** The P.835/P.808 values every channel gets unless the constructor says otherwise. */
export const FAKE_MOS_SCORES: Readonly<Pick<DnsmosScores, 'ovrl' | 'sig' | 'bak' | 'p808'>> = Object.freeze({
  ovrl: 3,
  sig: 3.5,
  bak: 4,
  p808: 3.6,
});

/** A deterministic {@link RecordingMosScorer} that records its calls in {@link FakeMosScorer.calls}. */
export class FakeMosScorer implements RecordingMosScorer {
  readonly calls: FakeMosCall[] = [];

  /** @param scores the values of every channel (and so of the dialogue) */
  constructor(private readonly scores: Pick<DnsmosScores, 'ovrl' | 'sig' | 'bak' | 'p808'> = FAKE_MOS_SCORES) {}

  /** Records the call; every channel scores {@link FAKE_MOS_SCORES} over one window (its progress reported per channel, as the real scorer's last batch would). */
  async scoreRecording(
    audio: MultiChannelAudio,
    options: Pick<DnsmosRecordingOptions, 'onProgress'> = {},
  ): Promise<DnsmosRecordingScores> {
    const sampleCount = audio.channels[0]?.length ?? 0;
    this.calls.push({ channels: audio.channels.length, sampleCount, sampleRate: audio.sampleRate });
    for (const channel of audio.channels) options.onProgress?.(channel.length / audio.sampleRate);
    const { ovrl, sig, bak, p808 } = this.scores;
    const scores: DnsmosScores = {
      ovrl,
      sig,
      bak,
      p808,
      raw: { ovrl, sig, bak },
      windows: 1,
      hopCount: 1,
      durationSeconds: sampleCount / audio.sampleRate,
    };
    return {
      channels: audio.channels.map((_, channel) => ({ channel, hasSpeech: true, scores })),
      dialogue: { ovrl, sig, bak, p808, channelCount: audio.channels.length },
    };
  }
}
