import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../pipeline/config.ts';
import {
  BUILT_IN_LANGUAGE_PACK_DIRECTORY,
  parseLanguagePack,
  readLanguagePackFile,
  registerLanguagePacks,
} from '../pipeline/model/language-pack.ts';
import type { SourceConversation } from '../pipeline/model/types.ts';
import { checkCorpusNumbersCanBeSpoken } from './rewrite-spoken-numbers.ts';

function conversation(answer: string): SourceConversation {
  return {
    id: 'eu_0001',
    sourceFile: 'eu.json',
    conversationNumber: 1,
    language: 'eu',
    turns: [
      { turnNumber: 1, question: 'Noiz?', answer: 'Duela asko.', answerable: true, topic: 't', topicSwitch: false },
      { turnNumber: 2, question: 'Zehazki?', answer, answerable: true, topic: 't', topicSwitch: false },
    ],
  };
}

/** Basque from the Spanish pack, with `numbers` replaced (default: Spanish's number library). */
function registerBasque(numbers?: unknown): void {
  const spanish = readLanguagePackFile(path.join(BUILT_IN_LANGUAGE_PACK_DIRECTORY, 'es.yaml'));
  registerLanguagePacks([
    parseLanguagePack(
      { ...spanish, code: 'eu', name: 'Basque', numbers: numbers ?? spanish.numbers },
      '/packs/eu.yaml',
    ),
  ]);
}

function configWith(rewrite: unknown) {
  return resolveConfig(
    { languages: ['eu'], corpus: { path: 'eu.json', language: 'eu' }, llm: { rewrite } },
    'eu-build.yaml',
    '/tmp',
  );
}

describe('checkCorpusNumbersCanBeSpoken', () => {
  it('stops a rules rewrite of a corpus with digits when the pack leaves numbers to a language model', () => {
    registerBasque('language-model');
    const check = () => checkCorpusNumbersCanBeSpoken(configWith('rules'), [conversation('1889an.')]);
    expect(check).toThrow(ConfigError);
    expect(check).toThrow(
      /^\/packs\/eu\.yaml: numbers: language-model: no number library writes Basque numbers, and the corpus has digits \(eu_0001 turn 2 answer: "1889"\); .*an LLM rewrite backend is needed \(llm\.rewrite: /,
    );
    // full-width digits are digits too (NFKC)
    expect(() => checkCorpusNumbersCanBeSpoken(configWith('rules'), [conversation('１８８９an.')])).toThrow(
      /turn 2 answer: "1889"/,
    );
  });

  it('lets through a corpus without digits, an LLM rewrite, and a pack with a number library', () => {
    registerBasque('language-model');
    expect(() => checkCorpusNumbersCanBeSpoken(configWith('rules'), [conversation('Aspaldi.')])).not.toThrow();
    const llm = configWith({ backend: 'replay', file: 'responses.jsonl', model: 'recorded' });
    expect(() => checkCorpusNumbersCanBeSpoken(llm, [conversation('1889an.')])).not.toThrow();
    registerBasque();
    expect(() => checkCorpusNumbersCanBeSpoken(configWith('rules'), [conversation('1889an.')])).not.toThrow();
  });
});
