/**
 * The whole build against the real service clients, pointed at loopback servers that speak the real
 * protocols (Gemini API + CosyVoice2 FastAPI with voice prompts; OpenAI-compatible chat + OpenAI-style
 * speech), with faults injected: the dataset must come out valid and the faults retried.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_CONFIG_FILE, loadConfigFile, resolveConfig, type BuildConfig } from '../config.ts';
import {
  GEMINI_LOOPBACK_API_KEY,
  geminiDialogueResponder,
  geminiReplies,
  startGeminiLoopbackServer,
} from '../services/llm/testing/gemini-loopback-server.ts';
import { openAIDialogueResponder, startOpenAILoopbackServer } from '../services/llm/testing/openai-loopback-server.ts';
import { startCosyVoiceLoopbackServer } from '../services/tts/testing/cosyvoice-loopback-server.ts';
import { faultsByRequestIndex } from '../services/tts/testing/loopback-speech.ts';
import { startOpenAiSpeechLoopbackServer } from '../services/tts/testing/openai-speech-loopback-server.ts';
import { writePromptManifest } from '../services/tts/testing/prompt-fixtures.ts';
import { runBuild } from '../orchestration/build.ts';
import { verifyDataset } from './verify-dataset.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-services-'));
});
afterEach(() => {
  vi.unstubAllEnvs();
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The demo corpus, English only, first dialogue, no quality scoring; `llm` and `tts.en` from the caller. */
async function serviceConfig(name: string, llm: unknown, ttsEnglish: unknown): Promise<BuildConfig> {
  const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
  const config = resolveConfig(
    {
      name,
      seed: 5,
      languages: ['en'],
      corpus: { path: base.corpus.path, limit: 1 },
      output: { directory: path.join(scratch, name, 'out'), cacheDirectory: path.join(scratch, name, 'cache') },
      llm,
      tts: { en: ttsEnglish },
      synthesis: { concurrency: 4 },
      quality: { enabled: false },
    },
    `${name} (test)`,
    scratch,
  );
  return config;
}

/*
 * The speech-rate watch of the remote clients is on, with its defaults. It once failed this test under
 * load: it judged the median tempo of the last 8 utterances in the order they complete, and this
 * dialogue's short utterances (backchannels, "Yes, it was.", the padded "And, ..." forms) run at 0.48-0.94
 * times the prompts' tempo, so an unlucky order put enough of them in one window to quarantine correct
 * speech. The watch now looks only at utterances of at least 1.5 s (synthesis-speech-rate.ts); the
 * worst order of these 26 utterances is replayed in synthesis-checks.test.ts.
 */

describe('build with real service clients on loopback servers', () => {
  it('gemini + cosyvoice2 (zero-shot voice prompts from a speaker prompt pool), with 429 and 500 faults', async () => {
    let geminiCalls = 0;
    const responder = geminiDialogueResponder();
    const gemini = await startGeminiLoopbackServer({
      responder: (request) => {
        geminiCalls += 1;
        // the first call is rate-limited with a RetryInfo delay, as the real API does
        if (geminiCalls === 1) return geminiReplies.rateLimited('0.2s');
        return responder(request);
      },
    });
    const cosyvoice = await startCosyVoiceLoopbackServer({
      faults: faultsByRequestIndex({ 0: { kind: 'http-error', status: 500 } }),
    });
    try {
      const prompts = path.join(scratch, 'prompts');
      await rm(prompts, { recursive: true, force: true });
      await import('node:fs/promises').then((fs) => fs.mkdir(prompts, { recursive: true }));
      await writePromptManifest(prompts);
      vi.stubEnv('DUPLEXSYNTH_TEST_GEMINI_KEY', GEMINI_LOOPBACK_API_KEY);
      const config = await serviceConfig(
        'gemini-cosyvoice',
        {
          rewrite: {
            backend: 'gemini',
            baseUrl: gemini.url,
            apiKeyVariable: 'DUPLEXSYNTH_TEST_GEMINI_KEY',
            retry: { initialDelaySeconds: 0.05, maxDelaySeconds: 2 },
          },
          translate: { backend: 'none' },
        },
        {
          backend: 'cosyvoice2',
          service: {
            urls: [cosyvoice.url],
            sampleRate: 24000,
            retry: { initialDelaySeconds: 0.05, maxDelaySeconds: 1 },
          },
          speakerPrompts: { manifest: path.join(prompts, 'manifest.jsonl') },
        },
      );
      const report = await runBuild(config);
      expect(report.datasets[0]!.failed).toEqual([]);
      expect(geminiCalls).toBeGreaterThanOrEqual(2);
      expect(cosyvoice.requests.length).toBeGreaterThan(10);
      const directory = path.join(config.output.directory, 'data/en/task/topiocqa');
      expect(await verifyDataset(directory)).toMatchObject({ dialogues: 1, problems: [] });
      const metadata = JSON.parse(await readFile(path.join(directory, 'metadata/demo_topiocqa_0001.json'), 'utf8'));
      expect([metadata.speakers.user.speakerId, metadata.speakers.system.speakerId].sort()).toEqual([
        'fixture:speaker-0',
        'fixture:speaker-1',
      ]);
      expect(metadata.speakers.user.engine).toBe('cosyvoice2');
      expect(metadata.text.rewrittenBy).toMatch(/gemini|gemma/);
    } finally {
      await gemini.close();
      await cosyvoice.close();
    }
  });

  it('openai-compatible + openai-speech', async () => {
    const chat = await startOpenAILoopbackServer({ responder: openAIDialogueResponder() });
    const speech = await startOpenAiSpeechLoopbackServer({});
    try {
      const config = await serviceConfig(
        'openai',
        {
          rewrite: { backend: 'openai-compatible', baseUrl: `${chat.url}/v1`, model: 'local-model' },
          translate: { backend: 'none' },
        },
        {
          backend: 'openai-speech',
          service: { urls: [speech.url], sampleRate: 24000 },
          voices: { user: { voice: 'alloy' }, system: { voice: 'echo' } },
        },
      );
      const report = await runBuild(config);
      expect(report.datasets[0]!.failed).toEqual([]);
      expect(speech.requests.length).toBeGreaterThan(10);
      const directory = path.join(config.output.directory, 'data/en/task/topiocqa');
      expect(await verifyDataset(directory)).toMatchObject({ dialogues: 1, problems: [] });
    } finally {
      await chat.close();
      await speech.close();
    }
  });
});
