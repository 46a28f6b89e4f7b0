/**
 * The remote engines in the registry (the local ones are covered in speech-engines.test.ts).
 */
import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { RemoteServiceSettingsError } from './remote-synthesizer.ts';
import {
  createSpeechSynthesizer,
  isRemoteSpeechEngine,
  REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS,
} from './synthesizer-registry.ts';
import { startCosyVoiceLoopbackServer } from './testing/cosyvoice-loopback-server.ts';
import type { LoopbackServer } from './testing/loopback-speech.ts';
import { fixtureDirectory, writePromptFixture } from './testing/prompt-fixtures.ts';
import { startTritonLoopbackServer } from './testing/triton-loopback-server.ts';

const servers: LoopbackServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

describe('synthesizer registry: remote engines', () => {
  it('creates each remote engine from its settings', async () => {
    const cosyVoice = await startCosyVoiceLoopbackServer();
    const triton = await startTritonLoopbackServer();
    servers.push(cosyVoice, triton);
    const cosyVoice2 = await createSpeechSynthesizer('cosyvoice2', { urls: [cosyVoice.url] });
    expect(cosyVoice2.id).toBe('cosyvoice2');
    // the languages a CosyVoice model speaks come from the language packs (CosyVoice2: no German)
    expect(cosyVoice2.languages).toEqual(['en', 'ja', 'ko', 'zh']);
    const tritonEngine = await createSpeechSynthesizer('cosyvoice2-triton', {
      urls: [triton.url],
      model: 'Fun-CosyVoice3-0.5B-2512 TensorRT-LLM',
    });
    expect(tritonEngine.id).toBe('cosyvoice2-triton');
    expect(tritonEngine.languages).toEqual(['de', 'en', 'es', 'fr', 'ja', 'ko', 'zh']);
    const openAi = await createSpeechSynthesizer('openai-speech', { urls: ['http://127.0.0.1:9'] });
    expect(openAi.id).toBe('openai-speech');
    // an OpenAI-style request names no language: every language with a pack is sent, the served model decides
    expect(openAi.languages).toEqual(['de', 'en', 'es', 'fr', 'ja', 'ko', 'zh']);
  });

  it('passes runtime hooks to remote engines (progress counters)', async () => {
    const cosyVoice = await startCosyVoiceLoopbackServer();
    servers.push(cosyVoice);
    const directory = await fixtureDirectory();
    try {
      const prompt = await writePromptFixture(directory, 'A prompt of the speaker.');
      const progress: number[] = [];
      const synthesizer = await createSpeechSynthesizer(
        'cosyvoice2',
        { urls: [cosyVoice.url] },
        { onProgress: (statistics) => progress.push(statistics.succeeded) },
      );
      await synthesizer.synthesize({
        text: 'Hello there, how are you?',
        language: 'en',
        voice: { promptWav: prompt.path, promptText: prompt.transcript },
      });
      expect(progress).toEqual([1]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('needs settings for remote engines and says which are wrong', async () => {
    await expect(createSpeechSynthesizer('cosyvoice2')).rejects.toThrow(RemoteServiceSettingsError);
    await expect(
      createSpeechSynthesizer('cosyvoice2', { urls: ['http://127.0.0.1:9'], sampleRate: 'fast' }),
    ).rejects.toThrow(/sampleRate/);
    await expect(createSpeechSynthesizer('openai-speech', { urls: ['ftp://example'] })).rejects.toThrow(/urls/);
  });

  it('tells remote engines from local ones and exposes their settings schemas with defaults', () => {
    expect(isRemoteSpeechEngine('cosyvoice2')).toBe(true);
    expect(isRemoteSpeechEngine('espeak-ng')).toBe(false);
    const parsed = REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS.cosyvoice2.parse({ urls: ['http://127.0.0.1:50000'] });
    expect(parsed).toMatchObject({
      sampleRate: 24000,
      concurrencyPerEndpoint: 1,
      requestsPerInterval: null,
      timeoutSeconds: 60,
      retry: { maxRetries: 4, initialDelaySeconds: 1, maxDelaySeconds: 30, backoffFactor: 2, jitter: 0.3 },
      kanaReading: { enabled: true, script: 'hiragana', source: 'reading', scope: 'kanji-morphemes' },
      checks: { enabled: true, speechRateMonitor: { windowSize: 8, minimumTempoRatio: 0.75, maximumTempoRatio: 1.4 } },
      zeroShotFallback: 'none',
      probe: true,
    });
    expect(
      REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS['openai-speech'].parse({ urls: ['http://127.0.0.1:8080'] }).kanaReading
        .enabled,
    ).toBe(false);
  });
});
