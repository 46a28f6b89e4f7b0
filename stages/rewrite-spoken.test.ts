import { describe, expect, it } from 'vitest';
import type { SourceTurn } from '../pipeline/model/types.ts';
import { LanguageModelTextBackend } from '../pipeline/services/llm/dialogue-text-backend.ts';
import { FakeLanguageModel } from '../pipeline/services/llm/fake-language-model.ts';
import { RulesTextBackend } from '../pipeline/services/llm/rules-backend.ts';
import { rewriteSpoken, rewriteSpokenFingerprint } from './rewrite-spoken.ts';

const sourceTurns: SourceTurn[] = [
  { turnNumber: 1, question: 'who won the 3rd race', answer: 'Maurice Garin', answerable: true, topic: 'Tour de France', topicSwitch: false },
  { turnNumber: 2, question: 'which hotel is cheapest?', answer: null, answerable: false, topic: '', topicSwitch: false },
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
      results: [JSON.stringify({ turns: [{ question: 'Who won the third race?', answer: 'Maurice Garin won it.' }, { question: 'Which hotel is the cheapest?', answer: "I'm sorry, I don't know that." }] })],
    });
    const backend = new LanguageModelTextBackend(model, { settings: { model: 'm', temperature: 0, seed: 1, structuredOutput: false } });
    const output = await rewriteSpoken(sourceTurns, backend, { dialogueId: 'demo_0001' });
    expect(output.turns.map((turn) => turn.answer)).toEqual(['Maurice Garin won it.', "I'm sorry, I don't know that."]);
    expect(output.producedBy).toBe('language-model(fake) m rewrite-spoken.v1');
    expect(output.fingerprint).toBe(rewriteSpokenFingerprint(backend));
    expect(model.calls[0]?.prompt).toContain('"answerable": false');
  });

  it('rejects an empty conversation', async () => {
    await expect(rewriteSpoken([], new RulesTextBackend(), { dialogueId: 'demo_0009' })).rejects.toThrow('dialogue demo_0009: no turns to rewrite');
  });
});
