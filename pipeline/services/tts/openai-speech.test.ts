/**
 * The real OpenAI-style speech client against a loopback server of that protocol.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createOpenAiSpeechSynthesizer } from './openai-speech.ts';
import { SpeechSynthesisQuarantineError } from './remote-synthesizer.ts';
import { faultsByRequestIndex, type LoopbackServer } from './testing/loopback-speech.ts';
import { startOpenAiSpeechLoopbackServer } from './testing/openai-speech-loopback-server.ts';

const FAST = {
  retry: { maxRetries: 3, initialDelaySeconds: 0.01, maxDelaySeconds: 0.05, jitter: 0 },
  endpointCooldown: { initialSeconds: 0.02, maximumSeconds: 0.1 },
};
const TEXT = 'It was written by Jane Austen and published a long time ago.';
const servers: LoopbackServer[] = [];

async function server(options: Parameters<typeof startOpenAiSpeechLoopbackServer>[0] = {}): Promise<LoopbackServer> {
  const started = await startOpenAiSpeechLoopbackServer(options);
  servers.push(started);
  return started;
}

afterAll(async () => {
  await Promise.all(servers.map((started) => started.close()));
});

describe('openai-speech client', () => {
  it('posts the JSON request and decodes a WAV answer at the rate in its header', async () => {
    const loopback = await server({ sampleRate: 22050 });
    const synthesizer = await createOpenAiSpeechSynthesizer({ urls: [loopback.url], model: 'cosyvoice2', ...FAST });
    const output = await synthesizer.synthesize({ text: TEXT, language: 'en', voice: { voice: 'alloy', speed: 1.25 } });
    expect(output.audio.sampleRate).toBe(22050);
    expect(loopback.requests[0]?.fields).toEqual({
      model: 'cosyvoice2',
      input: TEXT,
      voice: 'alloy',
      response_format: 'wav',
      speed: '1.25',
    });
  });

  it('reads a streamed WAV header with placeholder sizes, and PCM at the configured rate', async () => {
    const streaming = await server({ wavHeader: 'streaming' });
    const wav = await createOpenAiSpeechSynthesizer({ urls: [streaming.url], ...FAST });
    const fromWav = await wav.synthesize({ text: TEXT, language: 'en', voice: { voice: 'alloy' } });
    const raw = await server({ sampleRate: 24000 });
    const pcm = await createOpenAiSpeechSynthesizer({
      urls: [raw.url],
      responseFormat: 'pcm',
      sampleRate: 24000,
      ...FAST,
    });
    const fromPcm = await pcm.synthesize({ text: TEXT, language: 'en', voice: { voice: 'alloy' } });
    expect(fromPcm.audio.sampleRate).toBe(24000);
    expect((fromPcm.audio.channels[0] as Float32Array).length).toBe((fromWav.audio.channels[0] as Float32Array).length);
    expect(raw.requests[0]?.fields.response_format).toBe('pcm');
  });

  it('uses the configured path for servers without /v1', async () => {
    const loopback = await server({ path: '/audio/speech' });
    const synthesizer = await createOpenAiSpeechSynthesizer({ urls: [loopback.url], path: '/audio/speech', ...FAST });
    await synthesizer.synthesize({ text: TEXT, language: 'en', voice: { voice: 'alloy' } });
    expect(loopback.requests).toHaveLength(1);
    const wrongPath = await createOpenAiSpeechSynthesizer({ urls: [loopback.url], ...FAST });
    const error = await wrongPath
      .synthesize({ text: TEXT, language: 'en', voice: { voice: 'alloy' } })
      .catch((caught: unknown) => caught);
    expect((error as SpeechSynthesisQuarantineError).reason).toBe('not-retryable');
    expect((error as Error).message).toMatch(/HTTP 404/);
  });

  it('does not retry a rejected voice (400) but retries 502 and a cut stream', async () => {
    const picky = await server({ voices: ['alloy'] });
    const synthesizer = await createOpenAiSpeechSynthesizer({ urls: [picky.url], ...FAST });
    const error = await synthesizer
      .synthesize({ text: TEXT, language: 'en', voice: { voice: 'nobody' } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SpeechSynthesisQuarantineError);
    expect((error as Error).message).toMatch(/Invalid value for 'voice'/);
    expect(picky.requests).toHaveLength(1);

    const flaky = await server({
      faults: faultsByRequestIndex({
        0: { kind: 'http-error', status: 502 },
        1: { kind: 'cut-stream', fraction: 0.5, how: 'reset' },
      }),
    });
    const retrying = await createOpenAiSpeechSynthesizer({ urls: [flaky.url], ...FAST });
    await retrying.synthesize({ text: TEXT, language: 'en', voice: { voice: 'alloy' } });
    expect(retrying.statistics().failures).toEqual({ 'service-error': 1, 'truncated-audio': 1 });
  });

  it('leaves Japanese text as written unless kana readings are turned on', async () => {
    const loopback = await server();
    const plain = await createOpenAiSpeechSynthesizer({ urls: [loopback.url], ...FAST, checks: { enabled: false } });
    await plain.synthesize({ text: '東京は大きな都市です。', language: 'ja', voice: { voice: 'alloy' } });
    const kana = await createOpenAiSpeechSynthesizer({
      urls: [loopback.url],
      ...FAST,
      kanaReading: { enabled: true, script: 'katakana' },
    });
    await kana.synthesize({ text: '東京は大きな都市です。', language: 'ja', voice: { voice: 'alloy' } });
    expect(loopback.requests.map((request) => request.fields.input)).toEqual([
      '東京は大きな都市です。',
      'トウキョウはオオキナトシです。',
    ]);
  });
});
