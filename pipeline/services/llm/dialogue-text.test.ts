import { beforeAll, describe, expect, it } from 'vitest';
import type { TextTurn } from '../../model/types.ts';
import { loadLanguageIdentification } from '../../text/language-identification.ts';
import {
  buildRewriteRequest,
  buildTranslateRequest,
  parseDialogueResponse,
  rewriteConversation,
  translateConversation,
  type ExpectedDialogue,
  type GenerationSettings,
  type RewriteTurn,
} from './dialogue-text.ts';
import { backendFingerprint, LanguageModelTextBackend } from './dialogue-text-backend.ts';
import { DialogueTextError, UnfinishedGenerationError, UnsupportedTaskError } from './errors.ts';
import { FakeLanguageModel } from './fake-language-model.ts';

// parseDialogueResponse checks each line's language synchronously: the detector is loaded first
beforeAll(loadLanguageIdentification);

const settings: GenerationSettings = { model: 'test-model', temperature: 0, seed: 7, structuredOutput: false };

const sourceTurns: RewriteTurn[] = [
  { turnNumber: 1, question: 'when was it built', answer: '1887', answerable: true },
  { turnNumber: 2, question: 'which is the cheapest hotel?', answer: null, answerable: false },
  { turnNumber: 3, question: 'and the last one?', answer: null },
];

const spokenTurns: TextTurn[] = [
  { turnNumber: 1, question: 'When was it built?', answer: 'It was built in eighteen eighty-seven.' },
  { turnNumber: 2, question: 'Which is the cheapest hotel?', answer: "I'm sorry, I don't know that." },
  { turnNumber: 3, question: 'And the last one?', answer: null },
];

const japaneseReply = {
  turns: [
    { question: 'それはいつ建てられたのですか？', answer: '千八百八十七年に建てられました。' },
    { question: '一番安いホテルはどこですか？', answer: '申し訳ありませんが、それは分かりません。' },
    { question: '最後のものはどうですか？', answer: null },
  ],
};

function expectDialogueError(action: () => unknown, pattern: RegExp): DialogueTextError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(DialogueTextError);
    expect((error as Error).message).toMatch(pattern);
    return error as DialogueTextError;
  }
  throw new Error('expected a DialogueTextError');
}

describe('request building', () => {
  it('fills the rewrite template with the turns as JSON, unanswerable turns without an answer', () => {
    const request = buildRewriteRequest({ dialogueId: 'd1', language: 'en', turns: sourceTurns }, settings);
    expect(request).toMatchObject({
      model: 'test-model',
      temperature: 0,
      seed: 7,
      trace: { dialogueId: 'd1', task: 'rewrite-spoken', promptVersion: 'rewrite-spoken.v2' },
    });
    expect(request.system).toContain('complete spoken sentence');
    expect(request.prompt).toContain('3 turns');
    expect(request.prompt).not.toMatch(/\{\{/);
    const json = JSON.parse(/\{[\s\S]*\}/.exec(request.prompt.split('\n\n')[1] ?? '')?.[0] ?? 'null');
    expect(json.turns).toEqual([
      { turn: 1, question: 'when was it built', answer: '1887' },
      { turn: 2, question: 'which is the cheapest hotel?', answerable: false },
      { turn: 3, question: 'and the last one?', answer: null },
    ]);
    expect(request.responseSchema).toBeUndefined();
  });

  it('adds a JSON schema with the exact turn count in JSON mode', () => {
    const request = buildTranslateRequest(
      { dialogueId: 'd1', sourceLanguage: 'en', targetLanguage: 'ja', turns: spokenTurns },
      { ...settings, structuredOutput: true },
    );
    expect(request.system).toContain('Japanese');
    expect(request.responseSchema).toMatchObject({ properties: { turns: { minItems: 3, maxItems: 3 } } });
  });

  it('refuses unsupported languages', () => {
    expect(() => buildRewriteRequest({ dialogueId: 'd1', language: 'ja', turns: sourceTurns }, settings)).toThrow(
      UnsupportedTaskError,
    );
    expect(() =>
      buildTranslateRequest(
        { dialogueId: 'd1', sourceLanguage: 'en', targetLanguage: 'en', turns: spokenTurns },
        settings,
      ),
    ).toThrow(/no translation prompt from en to en/);
  });
});

describe('parseDialogueResponse', () => {
  const expectedJapanese: ExpectedDialogue = {
    dialogueId: 'demo_0007',
    task: 'translate',
    language: 'ja',
    turns: spokenTurns,
  };

  it('returns the turns with the input turn numbers, tidied', () => {
    const reply = '```json\n' + JSON.stringify(japaneseReply) + '\n```';
    expect(parseDialogueResponse(reply, expectedJapanese)).toEqual([
      { turnNumber: 1, question: 'それはいつ建てられたのですか？', answer: '千八百八十七年に建てられました。' },
      { turnNumber: 2, question: '一番安いホテルはどこですか？', answer: '申し訳ありませんが、それは分かりません。' },
      { turnNumber: 3, question: '最後のものはどうですか？', answer: null },
    ]);
  });

  it('keeps a null answer null even when the reply invents one', () => {
    const reply = structuredClone(japaneseReply);
    (reply.turns[2] as { answer: string | null }).answer = '何か';
    expect(parseDialogueResponse(JSON.stringify(reply), expectedJapanese)[2]?.answer).toBeNull();
  });

  it('rejects a reply without JSON, naming the dialogue', () => {
    const error = expectDialogueError(
      () => parseDialogueResponse('Sorry, I cannot do that.', expectedJapanese),
      /dialogue demo_0007: the translate response could not be parsed/,
    );
    expect(error.kind).toBe('unparseable');
    expect(error.responseText).toBe('Sorry, I cannot do that.');
  });

  it('rejects the wrong shape', () => {
    expectDialogueError(() => parseDialogueResponse('{"turns": [{"q": "x"}]}', expectedJapanese), /turns\.0\.question/);
  });

  it('rejects the wrong number of turns', () => {
    const reply = { turns: japaneseReply.turns.slice(0, 2) };
    expectDialogueError(
      () => parseDialogueResponse(JSON.stringify(reply), expectedJapanese),
      /expected 3 turns, got 2/,
    );
  });

  it('rejects Arabic digits, naming the turn and field', () => {
    const reply = structuredClone(japaneseReply);
    reply.turns[0]!.answer = '1887年に建てられました。';
    const error = expectDialogueError(
      () => parseDialogueResponse(JSON.stringify(reply), expectedJapanese),
      /turn 1 answer: contains Arabic digits \("1887"\)/,
    );
    expect(error.problems).toEqual([expect.objectContaining({ turnNumber: 1, field: 'answer' })]);
  });

  it('rejects full-width digits too', () => {
    const reply = structuredClone(japaneseReply);
    reply.turns[0]!.answer = '１８８７年に建てられました。';
    expectDialogueError(
      () => parseDialogueResponse(JSON.stringify(reply), expectedJapanese),
      /turn 1 answer: contains Arabic digits/,
    );
  });

  it('rejects English left untranslated, but allows acronyms', () => {
    const reply = structuredClone(japaneseReply);
    reply.turns[1]!.question = 'Which is the cheapest hotel?';
    reply.turns[0]!.answer = 'NHKによると、千八百八十七年に建てられました。';
    const error = expectDialogueError(
      () => parseDialogueResponse(JSON.stringify(reply), expectedJapanese),
      /turn 2 question: contains no kana or kanji; turn 2 question: contains untranslated Latin text/,
    );
    expect(error.problems).toHaveLength(2);
  });

  it('rejects Latin words mixed into Japanese unless allowed', () => {
    const reply = structuredClone(japaneseReply);
    reply.turns[0]!.answer = 'Eiffel塔は千八百八十七年に建てられました。';
    expectDialogueError(
      () => parseDialogueResponse(JSON.stringify(reply), expectedJapanese),
      /untranslated Latin text \("Eiffel"\)/,
    );
    expect(() =>
      parseDialogueResponse(JSON.stringify(reply), expectedJapanese, { allowedLatinWords: new Set(['Eiffel']) }),
    ).not.toThrow();
  });

  it('rejects empty strings and missing answers', () => {
    const reply = structuredClone(japaneseReply);
    reply.turns[0]!.question = '  ';
    (reply.turns[1] as { answer: string | null }).answer = null;
    expectDialogueError(
      () => parseDialogueResponse(JSON.stringify(reply), expectedJapanese),
      /turn 1 question: is empty; turn 2 answer: is null but the input has an answer/,
    );
  });

  it('rejects digits and markup in an English rewrite', () => {
    const expectedEnglish: ExpectedDialogue = {
      dialogueId: 'd2',
      task: 'rewrite-spoken',
      language: 'en',
      turns: sourceTurns,
    };
    const reply = {
      turns: [
        { question: 'When was it built?', answer: 'In **1887**.' },
        { question: 'Which hotel?', answer: "I don't know." },
        { question: 'And the last one?', answer: null },
      ],
    };
    expectDialogueError(
      () => parseDialogueResponse(JSON.stringify(reply), expectedEnglish),
      /turn 1 answer: contains Arabic digits .*; turn 1 answer: contains markup/,
    );
  });

  it('requires an answer for an unanswerable turn (the apology)', () => {
    const expectedEnglish: ExpectedDialogue = {
      dialogueId: 'd2',
      task: 'rewrite-spoken',
      language: 'en',
      turns: sourceTurns,
    };
    const reply = {
      turns: [
        { question: 'When was it built?', answer: 'In eighteen eighty-seven.' },
        { question: 'Which hotel?', answer: null },
        { question: 'And the last one?', answer: null },
      ],
    };
    expectDialogueError(() => parseDialogueResponse(JSON.stringify(reply), expectedEnglish), /turn 2 answer: is null/);
  });

  it("reads a rewrite question's pause mark (rewrite-spoken.v2 rule 11) into pausePoint and removes it from the text", () => {
    const expectedEnglish: ExpectedDialogue = {
      dialogueId: 'd2',
      task: 'rewrite-spoken',
      language: 'en',
      turns: sourceTurns,
    };
    const reply = {
      turns: [
        { question: 'Okay, so | when was the tower built?', answer: 'It was built in eighteen eighty-seven.' },
        { question: 'Which hotel there | is the cheapest one?', answer: "I'm sorry, I don't know that." },
        { question: 'And the last one?', answer: null },
      ],
    };
    expect(parseDialogueResponse(JSON.stringify(reply), expectedEnglish)).toEqual([
      {
        turnNumber: 1,
        question: 'Okay, so when was the tower built?',
        answer: 'It was built in eighteen eighty-seven.',
        pausePoint: 2,
      },
      {
        turnNumber: 2,
        question: 'Which hotel there is the cheapest one?',
        answer: "I'm sorry, I don't know that.",
        pausePoint: 3,
      },
      { turnNumber: 3, question: 'And the last one?', answer: null },
    ]);
  });

  it('rejects two pause marks in a question, or one at its end, naming the turn (the repair request then asks again)', () => {
    const expectedEnglish: ExpectedDialogue = {
      dialogueId: 'd2',
      task: 'rewrite-spoken',
      language: 'en',
      turns: sourceTurns,
    };
    const reply = {
      turns: [
        { question: 'Okay, so | when was | the tower built?', answer: 'It was built in eighteen eighty-seven.' },
        { question: 'Which hotel is the cheapest? |', answer: "I'm sorry, I don't know that." },
        { question: 'And the last one?', answer: null },
      ],
    };
    const error = expectDialogueError(
      () => parseDialogueResponse(JSON.stringify(reply), expectedEnglish),
      /turn 1 question: marks 2 pause points with "\|"; at most one; turn 2 question: has its pause mark "\|" at the end/,
    );
    expect(error.message).not.toMatch(/turn 3/);
  });
});

describe('rewriteConversation / translateConversation', () => {
  it('sends one request and parses the reply', async () => {
    const model = new FakeLanguageModel({ results: [`Sure!\n${JSON.stringify(japaneseReply)}`] });
    const turns = await translateConversation(
      model,
      { dialogueId: 'd3', sourceLanguage: 'en', targetLanguage: 'ja', turns: spokenTurns },
      { settings },
    );
    expect(turns).toHaveLength(3);
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]?.trace).toEqual({ dialogueId: 'd3', task: 'translate', promptVersion: 'translate.v1' });
  });

  it('fails on a reply cut at max tokens without parsing it', async () => {
    const model = new FakeLanguageModel({ results: [{ text: '{"turns": [', finishReason: 'max-tokens' }] });
    await expect(
      rewriteConversation(model, { dialogueId: 'd4', language: 'en', turns: sourceTurns }, { settings }),
    ).rejects.toThrow(UnfinishedGenerationError);
    await expect(
      rewriteConversation(
        new FakeLanguageModel({ results: [{ text: '', finishReason: 'safety' }] }),
        { dialogueId: 'd4', language: 'en', turns: sourceTurns },
        { settings },
      ),
    ).rejects.toThrow(/dialogue d4: the rewrite-spoken generation ended with finish reason "safety"/);
  });
});

describe('LanguageModelTextBackend', () => {
  it('describes model, prompt and parameters; the fingerprint leaves out the transport', () => {
    const backend = new LanguageModelTextBackend(new FakeLanguageModel(), { settings });
    expect(backend.id).toBe('language-model(fake)');
    expect(backend.describe('rewrite-spoken')).toMatchObject({
      backend: 'language-model',
      transport: 'fake',
      model: 'test-model',
      promptVersion: 'rewrite-spoken.v2',
      seed: 7,
    });
    const fingerprint = backendFingerprint(backend, 'translate', 'ja');
    expect(fingerprint).toMatch(
      /^language-model\|model=test-model\|prompt=translate\.v1#[0-9a-f]{12}\|temperature=0\|seed=7\|structured-output=false$/,
    );
    const other = new LanguageModelTextBackend(new FakeLanguageModel({ id: 'replay' }), { settings });
    expect(backendFingerprint(other, 'translate', 'ja')).toBe(fingerprint);
    const reseeded = new LanguageModelTextBackend(new FakeLanguageModel(), { settings: { ...settings, seed: 8 } });
    expect(backendFingerprint(reseeded, 'translate', 'ja')).not.toBe(fingerprint);
    expect(() => backend.describe('translate')).toThrow(/target language missing/);
  });
});
