import { access, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContentCache, contentHash } from '../pipeline/storage/content-cache.ts';
import type { SourceTurn } from '../pipeline/model/types.ts';
import { LanguageModelTextBackend } from '../pipeline/services/llm/dialogue-text-backend.ts';
import { FakeLanguageModel } from '../pipeline/services/llm/fake-language-model.ts';
import { RulesTextBackend } from '../pipeline/services/llm/rules-backend.ts';
import { rewriteSpoken, rewriteSpokenFingerprint, rewriteSpokenStage } from './rewrite-spoken.ts';
import {
  forgetRegisteredLanguagePacks,
  languagePackOf,
  registerLanguagePacks,
} from '../pipeline/model/language-pack.ts';

const sourceTurns: SourceTurn[] = [
  {
    turnNumber: 1,
    question: 'who won the 3rd race',
    answer: 'Maurice Garin',
    answerable: true,
    topic: 'Tour de France',
    topicSwitch: false,
  },
  {
    turnNumber: 2,
    question: 'which hotel is cheapest?',
    answer: null,
    answerable: false,
    topic: '',
    topicSwitch: false,
  },
];

describe('rewriteSpoken', () => {
  it('rewrites source turns with the rules backend and says what produced them', async () => {
    const output = await rewriteSpoken(sourceTurns, new RulesTextBackend(), { dialogueId: 'demo_0001' });
    expect(output).toEqual({
      turns: [
        { turnNumber: 1, question: 'Who won the third race?', answer: 'It was Maurice Garin.' },
        { turnNumber: 2, question: 'Which hotel is cheapest?', answer: "Sorry, I'm not sure about that one." },
      ],
      producedBy: 'rules v1',
      fingerprint: 'rules|version=1',
      description: { backend: 'rules', rulesVersion: 1 },
    });
  });

  it('asks a language model backend once per conversation', async () => {
    const model = new FakeLanguageModel({
      results: [
        JSON.stringify({
          turns: [
            { question: 'Who won the third race?', answer: 'Maurice Garin won it.' },
            { question: 'Which hotel is the cheapest?', answer: "I'm sorry, I don't know that." },
          ],
        }),
      ],
    });
    const backend = new LanguageModelTextBackend(model, {
      settings: { model: 'm', temperature: 0, seed: 1, structuredOutput: false },
    });
    const output = await rewriteSpoken(sourceTurns, backend, { dialogueId: 'demo_0001' });
    expect(output.turns.map((turn) => turn.answer)).toEqual(['Maurice Garin won it.', "I'm sorry, I don't know that."]);
    expect(output.producedBy).toBe('language-model(fake) m rewrite-spoken.v2');
    expect(output.fingerprint).toBe(rewriteSpokenFingerprint(backend));
    expect(model.calls[0]?.prompt).toContain('"answerable": false');
  });

  it('rejects an empty conversation', async () => {
    await expect(rewriteSpoken([], new RulesTextBackend(), { dialogueId: 'demo_0009' })).rejects.toThrow(
      'dialogue demo_0009: no turns to rewrite',
    );
  });
});

describe('rewriteSpokenStage', () => {
  it('stores its result under the key it declares, the entry builds before the stage shape wrote ({fingerprint, dialogueId, turns})', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-rewrite-stage-'));
    try {
      const cache = new ContentCache(directory);
      const backend = new RulesTextBackend();
      const turns = sourceTurns.map((turn) => ({
        turnNumber: turn.turnNumber,
        question: turn.question,
        answer: turn.answer,
        answerable: turn.answerable,
      }));
      const input = { dialogueId: 'demo_0001', turns };
      const [key] = await rewriteSpokenStage.cacheKeys(input, { backend });
      expect(key).toEqual({
        stage: 'rewrite-spoken',
        keyMaterial: { fingerprint: 'rules|version=1', dialogueId: 'demo_0001', turns },
      });
      const output = await rewriteSpokenStage.run(input, { backend }, { cache });
      expect(output.turns).toEqual((await rewriteSpoken(sourceTurns, backend, { dialogueId: 'demo_0001' })).turns);
      await access(
        cache.entryPath('rewrite-spoken', contentHash({ stage: key!.stage, keyMaterial: key!.keyMaterial }), '.json'),
      );
      await rewriteSpokenStage.run(input, { backend }, { cache });
      expect(cache.statistics['rewrite-spoken']).toEqual({ hits: 1, misses: 1, corrupt: 0 });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('rewrite-spoken cache key of a corpus in another language', () => {
  it("changes with the pack's numbers, which the rules backend spells by", async () => {
    const input = {
      dialogueId: 'es_0001',
      turns: [{ turnNumber: 1, question: '¿Cuánto?', answer: '3,5 km' }],
      language: 'es',
    };
    const parameters = { backend: new RulesTextBackend() };
    const builtIn = await rewriteSpokenStage.cacheKeys(input, parameters);
    const spanish = languagePackOf('es');
    const numbers = spanish.numbers as Exclude<typeof spanish.numbers, string>;
    registerLanguagePacks([{ ...spanish, numbers: { ...numbers, decimalWord: 'punto' } }]);
    try {
      const replaced = await rewriteSpokenStage.cacheKeys(input, parameters);
      expect(JSON.stringify(replaced)).not.toBe(JSON.stringify(builtIn));
    } finally {
      forgetRegisteredLanguagePacks();
    }
  });
});
