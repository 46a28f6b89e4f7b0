/**
 * `--dry-run` (planBuild) against an OpenAI-compatible chat server and an OpenAI-style speech server
 * on loopback: the plan sends them no request and writes nothing; it counts what a build would ask
 * for; after a real build (which does send requests) it finds the texts and clips in the cache.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_FILE, loadConfigFile, resolveConfig, type BuildConfig } from '../config.ts';
import { openAIDialogueResponder, startOpenAILoopbackServer } from '../services/llm/testing/openai-loopback-server.ts';
import { startOpenAiSpeechLoopbackServer } from '../services/tts/testing/openai-speech-loopback-server.ts';
import { runBuild } from './build.ts';
import { formatBuildPlan, planBuild, planSynthesis, PLANNING_WINDOW_UTTERANCES } from './plan-build.ts';
import type { ScriptUtterance } from '../model/types.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-plan-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('planBuild (--dry-run)', () => {
  it('calls no service and writes nothing; after a real build it finds everything in the cache', async () => {
    const chat = await startOpenAILoopbackServer({ responder: openAIDialogueResponder() });
    const speech = await startOpenAiSpeechLoopbackServer({});
    try {
      const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
      const config: BuildConfig = resolveConfig(
        {
          name: 'plan',
          seed: 5,
          languages: ['en'],
          corpus: { path: base.corpus.path, limit: 1 },
          output: { directory: path.join(scratch, 'out'), cacheDirectory: path.join(scratch, 'cache') },
          llm: {
            rewrite: { backend: 'openai-compatible', baseUrl: `${chat.url}/v1`, model: 'local-model' },
            translate: { backend: 'none' },
          },
          tts: {
            en: {
              backend: 'openai-speech',
              service: { urls: [speech.url], sampleRate: 24000 },
              voices: { user: { voice: 'alloy' }, system: { voice: 'echo' } },
            },
          },
          quality: { enabled: false },
        },
        'plan (test)',
        scratch,
      );

      const before = await planBuild(config);
      expect(chat.requests).toHaveLength(0);
      expect(speech.requests).toHaveLength(0);
      expect(existsSync(config.output.directory)).toBe(false);
      expect(existsSync(config.output.cacheDirectory)).toBe(false);
      const english = before.languages[0]!;
      expect(english.dialogues).toBe(1);
      expect(english.text).toMatchObject({ remote: true, cached: 0, serviceRequests: 1 });
      const phrases = config.timeline.backchannels.enabled ? (config.timeline.backchannels.phrases.en ?? []).length : 0;
      expect(english.utterances).toBeGreaterThan(4);
      // without the text the plan counts the source's questions and answers (a build may split some questions in two)
      expect(english.synthesis).toMatchObject({ remote: true, cached: 0, requests: english.utterances + phrases });
      expect(formatBuildPlan(before)).toContain('1 service requests');

      const report = await runBuild(config);
      expect(report.datasets[0]!.failed).toEqual([]);
      const chatRequests = chat.requests.length;
      const speechRequests = speech.requests.length;
      expect(chatRequests).toBeGreaterThan(0);
      expect(speechRequests).toBeGreaterThan(0);

      const after = await planBuild(config);
      expect(chat.requests).toHaveLength(chatRequests);
      expect(speech.requests).toHaveLength(speechRequests);
      const cached = after.languages[0]!;
      expect(cached.text).toMatchObject({ cached: 1, serviceRequests: 0 });
      // the plan looks up the clips under the keys the build used (questions split for TURN_HOLDs included)
      expect(cached.synthesis.requests).toBe(0);
      expect(cached.synthesis.cached).toBeGreaterThanOrEqual(cached.utterances);
    } finally {
      await chat.close();
      await speech.close();
    }
  });
});

describe('planSynthesis: a dry run holds one window of clips, whatever the conversation length', () => {
  it('hands the synthesis a window of at most PLANNING_WINDOW_UTTERANCES utterances at a time, in order, and keeps only the too-short question parts', async () => {
    const utterances: ScriptUtterance[] = Array.from({ length: 150 }, (_, index) => ({
      index,
      turnNumber: Math.floor(index / 2) + 1,
      kind: index % 2 === 0 ? 'question' : 'answer',
      role: index % 2 === 0 ? 'user' : 'system',
      text: `utterance ${index}`,
      ...(index === 10 || index === 140 ? { part: 1 } : {}),
    }));
    const windows: number[][] = [];
    const tooShort = await planSynthesis(
      utterances,
      async (window) => {
        windows.push(window.map((utterance) => utterance.index));
        // parts of turn 6 (index 10) and turn 71 (index 140) come out at 0.2 s; every other clip at 1.5 s
        return window.map((utterance) => ({
          turnNumber: utterance.turnNumber,
          durationCs: utterance.part === undefined ? 150 : utterance.index === 10 ? 20 : 150,
          ...(utterance.part !== undefined ? { part: utterance.part } : {}),
        }));
      },
      30,
    );
    expect(windows.map((window) => window.length)).toEqual([
      PLANNING_WINDOW_UTTERANCES,
      PLANNING_WINDOW_UTTERANCES,
      150 - 2 * PLANNING_WINDOW_UTTERANCES,
    ]);
    expect(windows.flat()).toEqual(utterances.map((utterance) => utterance.index));
    expect([...tooShort]).toEqual([6]);
  });
});
