import { describe, expect, it } from 'vitest';
import { FakeMosScorer } from './fake-mos-scorer.ts';

describe('FakeMosScorer', () => {
  it('records each call and scores every channel alike', async () => {
    const fake = new FakeMosScorer({ ovrl: 2.5, sig: 3, bak: 3.5, p808: 3 });
    const result = await fake.scoreRecording({
      channels: [new Float32Array(16000), new Float32Array(16000)],
      sampleRate: 8000,
    });
    expect(fake.calls).toEqual([{ channels: 2, sampleCount: 16000, sampleRate: 8000 }]);
    expect(result.dialogue).toEqual({ ovrl: 2.5, sig: 3, bak: 3.5, p808: 3, channelCount: 2 });
    expect(result.channels.map((channel) => channel.scores?.durationSeconds)).toEqual([2, 2]);
  });
});
