import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { detectSpeechSegments } from '../../../audio/speech-regions.ts';
import { createCosyVoice2Synthesizer } from '../cosyvoice2-fastapi.ts';
import { startCosyVoiceLoopbackServer } from './cosyvoice-loopback-server.ts';
import { serviceMilliseconds, speechLikeSignal } from './loopback-speech.ts';
import { fixtureDirectory, writePromptFixture } from './prompt-fixtures.ts';

describe('speech-like loopback audio', () => {
  it('is deterministic, grows with the words and pauses at commas and sentence ends', () => {
    const text = 'Hello there, how are you today? I am fine.';
    const first = speechLikeSignal(text, 24000, 40);
    expect(speechLikeSignal(text, 24000, 40)).toEqual(first);
    expect(speechLikeSignal(`${text} And you?`, 24000, 40).length).toBeGreaterThan(first.length);
    // three phrases: "Hello there," / "how are you today?" / "I am fine."
    const segments = detectSpeechSegments(first, 24000);
    expect(segments.length).toBe(3);
    expect(Math.max(...first.map(Math.abs))).toBeLessThanOrEqual(1);
  });

  it('service time is the fixed latency plus the real-time factor times the audio duration', () => {
    expect(serviceMilliseconds(5, 0.02, 48000, 24000)).toBeCloseTo(5 + 40, 9);
    expect(serviceMilliseconds(0, 0, 48000, 24000)).toBe(0);
  });

  it('a CosyVoice2 loopback server with a real-time factor holds each request for that share of its audio', async () => {
    const server = await startCosyVoiceLoopbackServer({ realTimeFactor: 0.5, speech: 'speech-like' });
    const directory = await fixtureDirectory();
    try {
      const prompt = await writePromptFixture(directory, 'This is the prompt speaker.');
      const synthesizer = await createCosyVoice2Synthesizer({ urls: [server.url] });
      const output = await synthesizer.synthesize({ text: 'One two three, four five six.', language: 'en', voice: { mode: 'zero-shot', promptWav: prompt.path, promptText: prompt.transcript } });
      const audioSeconds = output.audio.channels[0]!.length / output.audio.sampleRate;
      const record = server.requests.at(-1)!;
      expect(record.status).toBe(200);
      // the answer cannot end before its service time (a lower bound; no upper limit is asserted)
      expect(record.finishedAt - record.startedAt).toBeGreaterThanOrEqual(0.5 * audioSeconds * 1000 - 5);
    } finally {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    }
  });
});
