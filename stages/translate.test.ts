import { describe, expect, it } from 'vitest';
import type { TextTurn } from '../pipeline/model/types.ts';
import { LanguageModelTextBackend } from '../pipeline/services/llm/dialogue-text-backend.ts';
import { DialogueTextError, UnsupportedTaskError } from '../pipeline/services/llm/errors.ts';
import { FakeLanguageModel } from '../pipeline/services/llm/fake-language-model.ts';
import { RulesTextBackend } from '../pipeline/services/llm/rules-backend.ts';
import { translateDialogue, translateFingerprint } from './translate.ts';

const spoken: TextTurn[] = [
  { turnNumber: 1, question: 'Who won the first race?', answer: 'It was won by Maurice Garin.' },
  { turnNumber: 2, question: 'And the next one?', answer: null },
];
const settings = { model: 'm', temperature: 0, seed: 1, structuredOutput: false };

describe('translateDialogue', () => {
  it('translates with a language model backend; null answers stay null', async () => {
    const model = new FakeLanguageModel({
      results: [
        '```json\n' +
          JSON.stringify({
            turns: [
              { question: '第一回のレースで優勝したのは誰ですか？', answer: '優勝したのはモーリス・ガランです。' },
              { question: '次のレースはどうですか？', answer: null },
            ],
          }) +
          '\n```',
      ],
    });
    const backend = new LanguageModelTextBackend(model, { settings });
    const output = await translateDialogue(spoken, backend, { dialogueId: 'demo_0004', targetLanguage: 'ja' });
    expect(output.turns).toEqual([
      {
        turnNumber: 1,
        question: '第一回のレースで優勝したのは誰ですか？',
        answer: '優勝したのはモーリス・ガランです。',
      },
      { turnNumber: 2, question: '次のレースはどうですか？', answer: null },
    ]);
    expect(output.producedBy).toBe('language-model(fake) m translate.v1');
    expect(output.fingerprint).toBe(translateFingerprint(backend, 'ja'));
  });

  it("translations into two languages by the shared template never share a cache key; Japanese keeps its own template's key", () => {
    const backend = new LanguageModelTextBackend(new FakeLanguageModel({ results: [] }), { settings });
    // the cache key is {fingerprint, dialogueId, turns}: a fingerprint without the language would let a
    // build of zh then de take de's translation from zh's cache entry
    expect(translateFingerprint(backend, 'zh')).not.toBe(translateFingerprint(backend, 'de'));
    expect(translateFingerprint(backend, 'de')).toMatch(/prompt=translate-spoken\.v1#[0-9a-f]{12}\|.*target=de$/);
    expect(translateFingerprint(backend, 'ja')).not.toMatch(/target=/);
  });

  it('fails on English left in the translation, naming dialogue and turn', async () => {
    const model = new FakeLanguageModel({
      results: [
        JSON.stringify({
          turns: [
            { question: 'Who won the first race?', answer: 'モーリス・ガランです。' },
            { question: '次は？', answer: null },
          ],
        }),
      ],
    });
    const promise = translateDialogue(spoken, new LanguageModelTextBackend(model, { settings }), {
      dialogueId: 'demo_0004',
      targetLanguage: 'ja',
    });
    await expect(promise).rejects.toThrow(DialogueTextError);
    await expect(promise).rejects.toThrow(/dialogue demo_0004: .*turn 1 question: contains no kana or kanji/);
  });

  it('the rules backend refuses with what to configure', async () => {
    const promise = translateDialogue(spoken, new RulesTextBackend(), {
      dialogueId: 'demo_0004',
      targetLanguage: 'ja',
    });
    await expect(promise).rejects.toThrow(UnsupportedTaskError);
    await expect(promise).rejects.toThrow(
      'configure llm.translate with a replay file or a real LLM backend (gemini or openai-compatible)',
    );
  });

  it('rejects translating into the source language and empty input', async () => {
    const backend = new LanguageModelTextBackend(new FakeLanguageModel(), { settings });
    await expect(translateDialogue(spoken, backend, { dialogueId: 'd', targetLanguage: 'en' })).rejects.toThrow(
      /both en/,
    );
    await expect(translateDialogue([], backend, { dialogueId: 'd', targetLanguage: 'ja' })).rejects.toThrow(/no turns/);
  });
});
