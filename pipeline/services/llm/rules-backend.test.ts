import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BUILT_IN_LANGUAGE_PACK_DIRECTORY,
  parseLanguagePack,
  readLanguagePackFile,
  registerLanguagePacks,
} from '../../model/language-pack.ts';
import { backendFingerprint } from './dialogue-text-backend.ts';
import { DialogueTextError, UnsupportedTaskError } from './errors.ts';
import { RULES_CANNOT_TRANSLATE, RulesTextBackend } from './rules-backend.ts';

describe('RulesTextBackend', () => {
  const backend = new RulesTextBackend();

  it('rewrites a conversation into speakable English, turn for turn', async () => {
    const turns = await backend.rewrite({
      dialogueId: 'd1',
      language: 'en',
      turns: [
        {
          turnNumber: 1,
          question: 'when was the eiffel tower built',
          answer: 'Between 1887 and 1889',
          answerable: true,
        },
        { turnNumber: 2, question: 'how tall is it?', answer: '330 m (1,083 ft)', answerable: true },
        { turnNumber: 3, question: 'was it the tallest in the world?', answer: 'Yes', answerable: true },
        {
          turnNumber: 4,
          question: 'which hotel is cheapest?',
          answer: 'UNANSWERABLE text is ignored',
          answerable: false,
        },
        { turnNumber: 5, question: 'what about the last one', answer: null, answerable: true },
      ],
    });
    expect(turns).toEqual([
      {
        turnNumber: 1,
        question: 'When was the eiffel tower built?',
        answer: 'It was between eighteen eighty-seven and eighteen eighty-nine.',
      },
      { turnNumber: 2, question: 'How tall is it?', answer: "It's three hundred thirty meters." },
      { turnNumber: 3, question: 'Was it the tallest in the world?', answer: 'Yes, it was.' },
      { turnNumber: 4, question: 'Which hotel is cheapest?', answer: "I'm sorry, I don't know that." },
      { turnNumber: 5, question: 'What about the last one?', answer: null },
    ]);
  });

  it('names the dialogue and turn when a turn cannot be made speakable', async () => {
    await expect(
      backend.rewrite({
        dialogueId: 'd9',
        language: 'en',
        turns: [{ turnNumber: 2, question: 'who?', answer: '(nothing)' }],
      }),
    ).rejects.toThrow(
      new DialogueTextError({
        dialogueId: 'd9',
        task: 'rewrite-spoken',
        kind: 'invalid',
        problems: [{ turnNumber: 2, field: 'answer', message: 'empty answer to "who?": "(nothing)"' }],
      }).message,
    );
  });

  it('has spoken-style rules for English only: another language is spoken as written, and checked', async () => {
    const turns = [{ turnNumber: 1, question: ' ¿Dónde está la torre? ', answer: 'En París.', answerable: true }];
    expect(await backend.rewrite({ dialogueId: 'd1', language: 'es', turns } as never)).toEqual([
      { turnNumber: 1, question: '¿Dónde está la torre?', answer: 'En París.' },
    ]);
  });

  it("writes another language's numbers, years and units by its pack's number library", async () => {
    const turns = [
      { turnNumber: 1, question: '¿Cuándo se construyó?', answer: 'Entre 1887 y 1889; mide 330 m.', answerable: true },
    ];
    expect(await backend.rewrite({ dialogueId: 'd1', language: 'es', turns } as never)).toEqual([
      {
        turnNumber: 1,
        question: '¿Cuándo se construyó?',
        answer:
          'Entre mil ochocientos ochenta y siete y mil ochocientos ochenta y nueve; mide trescientos treinta metros.',
      },
    ]);
  });

  it('keeps the digits of a language no number library covers, saying an LLM rewrite must write them', async () => {
    const spanish = readLanguagePackFile(path.join(BUILT_IN_LANGUAGE_PACK_DIRECTORY, 'es.yaml'));
    registerLanguagePacks([
      parseLanguagePack({ ...spanish, code: 'eu', name: 'Basque', numbers: 'language-model' }, 'eu.yaml'),
    ]);
    const digits = [{ turnNumber: 1, question: 'Noiz?', answer: '1889an.', answerable: true }];
    await expect(backend.rewrite({ dialogueId: 'd1', language: 'eu', turns: digits } as never)).rejects.toThrow(
      /turn 1 answer: contains Arabic digits \("1889"\).*no number library \(eu\.yaml: numbers: language-model\).*LLM rewrite/,
    );
  });

  it('refuses to translate, saying what to configure', async () => {
    const promise = backend.translate({ dialogueId: 'd1', sourceLanguage: 'en', targetLanguage: 'ja', turns: [] });
    await expect(promise).rejects.toThrow(UnsupportedTaskError);
    await expect(promise).rejects.toThrow(
      'dialogue d1: the rules backend cannot translate; configure llm.translate with a replay file or a real LLM backend (gemini or openai-compatible)',
    );
    expect(() => backendFingerprint(backend, 'translate', 'ja')).toThrow(RULES_CANNOT_TRANSLATE);
  });

  it('has a versioned fingerprint', () => {
    expect(backendFingerprint(backend, 'rewrite-spoken')).toBe('rules|version=1');
  });
});
