import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { detectSpeechSegments } from '../../../audio/speech-regions.ts';
import type { Clock } from '../../clock.ts';
import { createCosyVoice2Synthesizer } from '../cosyvoice2-fastapi.ts';
import { createCosyVoice2TritonSynthesizer } from '../cosyvoice2-triton.ts';
import { startCosyVoiceLoopbackServer } from './cosyvoice-loopback-server.ts';
import { faultsByRequestIndex, serviceMilliseconds, speechLikeSignal } from './loopback-speech.ts';
import { startOpenAiSpeechLoopbackServer } from './openai-speech-loopback-server.ts';
import { startTritonLoopbackServer } from './triton-loopback-server.ts';
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
    // on a clock that moves by its sleeps only: the hold is exact
    const clock = recordingClock();
    const server = await startCosyVoiceLoopbackServer({ realTimeFactor: 0.5, speech: 'speech-like', clock });
    const directory = await fixtureDirectory();
    try {
      const prompt = await writePromptFixture(directory, 'This is the prompt speaker.');
      const synthesizer = await createCosyVoice2Synthesizer({ urls: [server.url] });
      const output = await synthesizer.synthesize({
        text: 'One two three, four five six.',
        language: 'en',
        voice: { mode: 'zero-shot', promptWav: prompt.path, promptText: prompt.transcript },
      });
      expect(output.audio.channels[0]!.length).toBeGreaterThan(0);
      const record = server.requests.at(-1)!;
      expect(record.status).toBe(200);
      await untilTrue(() => record.finishedAt > record.startedAt);
      // half the duration of the audio sent (int16: 2 bytes a sample, before the client trims its tail)
      const held = 0.5 * ((record.audioBytes / 2 / 24000) * 1000);
      expect(held).toBeGreaterThan(500);
      expect(record.finishedAt - record.startedAt).toBeCloseTo(held, 6);
      expect(clock.waits.reduce((sum, wait) => sum + wait, 0)).toBeCloseTo(held, 6);
    } finally {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    }
  });
});

/** A clock whose time moves only by its sleeps, each recorded. */
function recordingClock(): Clock & { waits: number[] } {
  let now = 0;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    sleep: async (milliseconds) => {
      waits.push(milliseconds);
      now += milliseconds;
    },
  };
}

/** A clock whose sleeps end only when aborted; `pending` holds the waits not yet aborted, `aborted` the aborted ones. */
function stoppedClock(): Clock & { pending: number[]; aborted: number[] } {
  const pending: number[] = [];
  const aborted: number[] = [];
  return {
    pending,
    aborted,
    now: () => 0,
    sleep: (milliseconds, signal) =>
      new Promise((_resolve, reject) => {
        pending.push(milliseconds);
        signal?.addEventListener('abort', () => {
          pending.splice(pending.indexOf(milliseconds), 1);
          aborted.push(milliseconds);
          reject(signal.reason);
        });
      }),
  };
}

async function untilTrue(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}

describe('loopback speech servers on an injected clock', () => {
  it('CosyVoice2: a delay fault, then the service time in four stream steps, are waited on the given clock and timed by it', async () => {
    const clock = recordingClock();
    const server = await startCosyVoiceLoopbackServer({
      latencyMs: 60_000,
      chunkBytes: 1000,
      speech: 'speech-like',
      faults: faultsByRequestIndex({ 0: { kind: 'delay', milliseconds: 250 } }),
      clock,
    });
    const directory = await fixtureDirectory();
    try {
      const prompt = await writePromptFixture(directory, 'This is the prompt speaker.');
      const synthesizer = await createCosyVoice2Synthesizer({ urls: [server.url], checks: { enabled: false } });
      await synthesizer.synthesize({
        text: 'One two three, four five six.',
        language: 'en',
        voice: { mode: 'zero-shot', promptWav: prompt.path, promptText: prompt.transcript },
      });
      // the 250 ms fault, then the four steps due at 250 + 60000 x 1/4, 2/4, 3/4, 4/4
      expect(clock.waits).toEqual([250, 15_000, 15_000, 15_000, 15_000]);
      await untilTrue(() => server.requests[0]!.finishedAt > 0);
      expect(server.requests.map((request) => [request.status, request.startedAt, request.finishedAt])).toEqual([
        [200, 0, 60_250],
      ]);
    } finally {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('OpenAI speech: a delay fault and the service time are waited on the given clock', async () => {
    const clock = recordingClock();
    const server = await startOpenAiSpeechLoopbackServer({
      latencyMs: 30_000,
      chunkBytes: 1_000_000,
      faults: faultsByRequestIndex({ 0: { kind: 'delay', milliseconds: 40 } }),
      clock,
    });
    try {
      const response = await fetch(`${server.url}/v1/audio/speech`, {
        method: 'POST',
        body: JSON.stringify({ model: 'm', input: 'Hello there.', voice: 'alloy', response_format: 'wav' }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      // one chunk: one step, due at 40 + 30000
      expect(clock.waits).toEqual([40, 30_000]);
    } finally {
      await server.close();
    }
  });

  it('Triton: the answer waits out the service time on the given clock, and close ends that wait', async () => {
    const directory = await fixtureDirectory();
    const clock = stoppedClock();
    const server = await startTritonLoopbackServer({ latencyMs: 45_000, speech: 'speech-like', clock });
    try {
      const prompt = await writePromptFixture(directory, 'This is the prompt speaker.', { sampleRate: 24000 });
      const synthesizer = await createCosyVoice2TritonSynthesizer({ urls: [server.url], retry: { maxRetries: 0 } });
      const answer = synthesizer
        .synthesize({
          text: 'One two three.',
          language: 'en',
          voice: { promptWav: prompt.path, promptText: prompt.transcript },
        })
        .then(
          () => 'answered',
          (error: unknown) => (error as { failure?: string }).failure,
        );
      await untilTrue(() => clock.pending.length === 1);
      expect(clock.pending).toEqual([45_000]);
      expect(server.requests[0]!.status).toBe(0);
      await server.close();
      expect(clock.aborted).toEqual([45_000]);
      // the connection was closed without an answer
      expect(await answer).toBe('service-unreachable');
      expect(server.requests[0]!.status).toBe(0);
    } finally {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    }
  });
});
