import { describe, expect, it } from 'vitest';
import type { TextTurn } from '../../model/types.ts';
import { loadPromptTemplate } from '../../prompts/prompt-template.ts';
import {
  buildRepairRequest,
  buildTranslateRequest,
  DEFAULT_DIALOGUE_TEXT_RECOVERY,
  rewriteConversation,
  translateConversation,
  type GenerationSettings,
  type RewriteTurn,
} from './dialogue-text.ts';
import { backendFingerprint, LanguageModelTextBackend } from './dialogue-text-backend.ts';
import { LanguageModelCallError, QuarantinedDialogueError } from './errors.ts';
import { FakeLanguageModel } from './fake-language-model.ts';
import type { GenerationRequest } from './language-model.ts';
import { readDialogueRequest, validReplyTurns } from './testing/dialogue-replies.ts';

const settings: GenerationSettings = { model: 'test-model', temperature: 0, seed: 7, structuredOutput: false };
const recovery = { ...DEFAULT_DIALOGUE_TEXT_RECOVERY, repairPrompt: loadPromptTemplate('repair-dialogue.v1') };

const spokenTurns: TextTurn[] = [
  { turnNumber: 1, question: 'Who designed the tower?', answer: 'It was designed by Gustave Eiffel.' },
  { turnNumber: 2, question: 'When was it finished?', answer: 'It was finished in eighteen eighty-nine.' },
  { turnNumber: 3, question: 'How tall is it?', answer: 'It is three hundred thirty meters tall.' },
  { turnNumber: 4, question: 'And the other one?', answer: null },
];
const translateInput = {
  dialogueId: 'd1',
  sourceLanguage: 'en' as const,
  targetLanguage: 'ja' as const,
  turns: spokenTurns,
};

/** The correct reply to whatever request comes (the loopback servers' default). */
function correct(request: GenerationRequest): string {
  const dialogue = readDialogueRequest(request.system, request.prompt);
  if (dialogue === undefined) throw new Error('not a dialogue request');
  return JSON.stringify({ turns: validReplyTurns(dialogue) });
}

function turnsOf(request: GenerationRequest): number[] {
  return readDialogueRequest(request.system, request.prompt)?.turns.map((turn) => turn.turn) ?? [];
}

describe('repair', () => {
  it('sends one repair request quoting the reply and the problems, and accepts the repaired reply', async () => {
    const english = JSON.stringify({
      turns: spokenTurns.map((turn) => ({ question: turn.question, answer: turn.answer })),
    });
    const model = new FakeLanguageModel({ results: [english], respond: correct });
    const turns = await translateConversation(model, translateInput, { settings, recovery });
    expect(turns.map((turn) => turn.turnNumber)).toEqual([1, 2, 3, 4]);
    expect(turns[3]?.answer).toBeNull();
    expect(model.calls).toHaveLength(2);
    const repair = model.calls[1]!;
    expect(repair.system).toBe(model.calls[0]!.system);
    expect(repair.prompt).toContain(model.calls[0]!.prompt);
    expect(repair.prompt).toContain(english);
    expect(repair.prompt).toContain('- turn 1 question: contains no kana or kanji');
    expect(repair.prompt).toContain('exactly 4 turns');
    expect(repair.trace).toEqual({
      dialogueId: 'd1',
      task: 'translate',
      promptVersion: 'translate.v1+repair-dialogue.v1',
    });
    expect({ model: repair.model, temperature: repair.temperature, seed: repair.seed }).toEqual({
      model: 'test-model',
      temperature: 0,
      seed: 7,
    });
  });

  it('repairs the wrong number of turns', async () => {
    const model = new FakeLanguageModel({
      respond: (request, callIndex) =>
        callIndex === 0 ? JSON.stringify({ turns: JSON.parse(correct(request)).turns.slice(0, 3) }) : correct(request),
    });
    await expect(translateConversation(model, translateInput, { settings, recovery })).resolves.toHaveLength(4);
    expect(model.calls[1]?.prompt).toContain('- expected 4 turns, got 3');
  });

  it('quarantines when the repaired reply is still invalid, with the reason in one line', async () => {
    const model = new FakeLanguageModel({ respond: (request) => correct(request).replace('一番目', 'first ') });
    const promise = translateConversation(model, translateInput, { settings, recovery });
    await expect(promise).rejects.toThrow(QuarantinedDialogueError);
    const error = (await promise.catch((caught: unknown) => caught)) as QuarantinedDialogueError;
    expect(error.message).toMatch(
      /^quarantined: dialogue d1 \(translate\): the reply is invalid after one repair request: turn 1 question: contains untranslated Latin text \("first"\)/,
    );
    expect(error.message).not.toContain('\n');
    expect(error).toMatchObject({
      dialogueId: 'd1',
      task: 'translate',
      quarantineCause: 'invalid',
      isRetryable: false,
    });
    expect(model.calls).toHaveLength(2);
  });

  it('quarantines an unparseable reply after the repair, and at once when repair is off', async () => {
    const prose = new FakeLanguageModel({ respond: () => 'Sorry, I cannot help with that.' });
    await expect(translateConversation(prose, translateInput, { settings, recovery })).rejects.toThrow(
      /^quarantined: dialogue d1 \(translate\): the reply could not be parsed after one repair request: the reply contains no parseable JSON object$/,
    );
    const noRepair = new FakeLanguageModel({ respond: () => 'Sorry.' });
    await expect(
      translateConversation(noRepair, translateInput, { settings, recovery: { ...recovery, repair: false } }),
    ).rejects.toThrow(/^quarantined: dialogue d1 \(translate\): the reply could not be parsed: /);
    expect(noRepair.calls).toHaveLength(1);
  });

  it('builds the repair request with the same schema and cuts a long reply', () => {
    const original = buildTranslateRequest(translateInput, { ...settings, structuredOutput: true });
    const repair = buildRepairRequest(
      original,
      'x'.repeat(20_000),
      [{ turnNumber: 2, field: 'answer', message: 'is empty' }],
      4,
    );
    expect(repair.responseSchema).toEqual(original.responseSchema);
    expect(repair.prompt).toContain('… (cut)');
    expect(repair.prompt.length).toBeLessThan(original.prompt.length + 13_000);
    expect(repair.prompt).toContain('- turn 2 answer: is empty');
  });
});

describe('MAX_TOKENS: halving instead of resending', () => {
  it('splits the conversation into halves and joins their replies', async () => {
    const model = new FakeLanguageModel({
      respond: (request) =>
        turnsOf(request).length > 2
          ? { text: '{"turns": [{"question": "', finishReason: 'max-tokens' }
          : correct(request),
    });
    const turns = await translateConversation(model, translateInput, { settings, recovery });
    expect(turns.map((turn) => turn.turnNumber)).toEqual([1, 2, 3, 4]);
    expect(model.calls.map(turnsOf)).toEqual([
      [1, 2, 3, 4],
      [1, 2],
      [3, 4],
    ]);
    expect(model.calls[1]?.prompt).toContain('conversation of 2 turns');
  });

  it('halves recursively down to maximumSplitDepth, then quarantines', async () => {
    const cut = new FakeLanguageModel({ respond: () => ({ text: '{"turns": [', finishReason: 'max-tokens' }) });
    const promise = translateConversation(cut, translateInput, {
      settings,
      recovery: { ...recovery, maximumSplitDepth: 1 },
    });
    await expect(promise).rejects.toThrow(
      'quarantined: dialogue d1 (translate, turns 1-2): the reply was cut at the output token limit (MAX_TOKENS) and already split 1 times (maximumSplitDepth 1)',
    );
    expect(cut.calls.map(turnsOf)).toEqual([
      [1, 2, 3, 4],
      [1, 2],
    ]);

    const single = new FakeLanguageModel({ respond: () => ({ text: '', finishReason: 'max-tokens' }) });
    await expect(
      translateConversation(single, { ...translateInput, turns: spokenTurns.slice(0, 1) }, { settings, recovery }),
    ).rejects.toMatchObject({
      quarantineCause: 'max-tokens',
      message: expect.stringContaining('a single turn cannot be split'),
    });
  });

  it('splits a rewrite too, keeping unanswerable turns and null answers', async () => {
    const source: RewriteTurn[] = [
      { turnNumber: 1, question: 'who designed it', answer: 'Gustave Eiffel' },
      { turnNumber: 2, question: 'which hotel is cheapest', answer: null, answerable: false },
      { turnNumber: 3, question: 'and the last one', answer: null },
    ];
    const model = new FakeLanguageModel({
      respond: (request) => (turnsOf(request).length > 1 ? { text: '', finishReason: 'max-tokens' } : correct(request)),
    });
    const turns = await rewriteConversation(
      model,
      { dialogueId: 'd2', language: 'en', turns: source },
      { settings, recovery },
    );
    expect(turns).toEqual([
      { turnNumber: 1, question: 'Who designed it?', answer: expect.stringContaining('Gustave Eiffel') },
      { turnNumber: 2, question: 'Which hotel is cheapest?', answer: "Sorry, I'm not sure about that one." },
      { turnNumber: 3, question: 'And the last one?', answer: null },
    ]);
    expect(model.calls.map(turnsOf)).toEqual([[1, 2, 3], [1, 2], [1], [2], [3]]);
  });
});

describe('other outcomes', () => {
  it('quarantines a safety stop without a repair', async () => {
    const model = new FakeLanguageModel({ respond: () => ({ text: '', finishReason: 'safety' }) });
    await expect(translateConversation(model, translateInput, { settings, recovery })).rejects.toThrow(
      'quarantined: dialogue d1 (translate): the generation ended with finish reason "safety"',
    );
    expect(model.calls).toHaveLength(1);
  });

  it('lets call errors through unchanged (the retry wrapper and the runner handle them)', async () => {
    const model = new FakeLanguageModel({
      respond: () => {
        throw new LanguageModelCallError('down', { statusCode: 503 });
      },
    });
    await expect(translateConversation(model, translateInput, { settings, recovery })).rejects.toBeInstanceOf(
      LanguageModelCallError,
    );
  });

  it('puts the recovery steps into the backend fingerprint only when on', () => {
    const plain = new LanguageModelTextBackend(new FakeLanguageModel(), { settings });
    const recovering = new LanguageModelTextBackend(new FakeLanguageModel(), {
      settings,
      recovery: DEFAULT_DIALOGUE_TEXT_RECOVERY,
    });
    expect(backendFingerprint(plain, 'rewrite-spoken')).not.toContain('recovery');
    expect(backendFingerprint(recovering, 'rewrite-spoken')).toMatch(
      /\|recovery=repair=repair-dialogue\.v1#[0-9a-f]{12},split-depth=2$/,
    );
    const deeper = new LanguageModelTextBackend(new FakeLanguageModel(), {
      settings,
      recovery: { repair: true, maximumSplitDepth: 3 },
    });
    expect(backendFingerprint(deeper, 'rewrite-spoken')).not.toBe(backendFingerprint(recovering, 'rewrite-spoken'));
  });
});
