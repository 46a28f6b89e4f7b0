import { createRequire } from 'node:module';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import kuromoji from 'kuromoji';
import { toKatakana } from 'wanakana';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SourceConversation, TextTurn } from '../../pipeline/model/types.ts';
import { createDialogueTextBackend } from '../../pipeline/services/llm/backend-settings.ts';
import { buildRewriteRequest, buildTranslateRequest } from '../../pipeline/services/llm/dialogue-text.ts';
import { requestKey } from '../../pipeline/services/llm/language-model.ts';
import { ReplayModel } from '../../pipeline/services/llm/replay-model.ts';
import { rewriteSpoken } from '../../stages/rewrite-spoken.ts';
import { translateDialogue } from '../../stages/translate.ts';
import {
  DEMO_GENERATION_SETTINGS,
  DEMO_RECORDED_RESPONSES_FILE,
  loadDemoConversations,
  recordDemoResponses,
} from './demo-recordings.ts';

let conversations: SourceConversation[];
const results = new Map<string, { spoken: TextTurn[]; japanese: TextTurn[] }>();

beforeAll(async () => {
  conversations = await loadDemoConversations();
  // The backend exactly as the demo config builds it: replay with default temperature and seed.
  const backend = createDialogueTextBackend({ backend: 'replay', file: DEMO_RECORDED_RESPONSES_FILE, model: DEMO_GENERATION_SETTINGS.model });
  for (const conversation of conversations) {
    const spoken = await rewriteSpoken(conversation.turns, backend, { dialogueId: conversation.id });
    const japanese = await translateDialogue(spoken.turns, backend, { dialogueId: conversation.id, targetLanguage: 'ja' });
    results.set(conversation.id, { spoken: spoken.turns, japanese: japanese.turns });
  }
});

describe('demo corpus', () => {
  it('has the quirks the demo is meant to show', () => {
    expect(conversations).toHaveLength(4);
    const turns = conversations.flatMap((conversation) => conversation.turns);
    for (const conversation of conversations) expect(conversation.turns.length).toBeGreaterThanOrEqual(6);
    expect(turns.filter((turn) => !turn.answerable)).toHaveLength(1);
    expect(turns.filter((turn) => !turn.question.trim().endsWith('?'))).toHaveLength(1);
    expect(turns.some((turn) => turn.answer === 'Yes')).toBe(true);
    expect(turns.filter((turn) => turn.topicSwitch).length).toBeGreaterThanOrEqual(1);
    expect(turns.filter((turn) => /\d/.test(turn.answer ?? '')).length).toBeGreaterThanOrEqual(10);
  });
});

describe('demo recordings', () => {
  it('cover the rewrite and the translations (ja, and the hand-written zh and de) of every demo conversation, and nothing else', async () => {
    const expectedKeys = new Set<string>();
    for (const conversation of conversations) {
      const result = results.get(conversation.id);
      expect(result, conversation.id).toBeDefined();
      expectedKeys.add(requestKey(buildRewriteRequest({ dialogueId: conversation.id, language: 'en', turns: conversation.turns }, DEMO_GENERATION_SETTINGS)));
      for (const targetLanguage of ['ja', 'zh', 'de']) {
        expectedKeys.add(
          requestKey(buildTranslateRequest({ dialogueId: conversation.id, sourceLanguage: 'en', targetLanguage, turns: result?.spoken ?? [] }, DEMO_GENERATION_SETTINGS)),
        );
      }
    }
    expect(expectedKeys.size).toBe(conversations.length * 4);
    expect(new Set(await new ReplayModel(DEMO_RECORDED_RESPONSES_FILE).keys())).toEqual(expectedKeys);
  });

  it('are up to date: regenerating them gives the committed file byte for byte', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'demo-recordings-'));
    try {
      const outputFile = join(directory, 'recorded-responses.jsonl');
      await recordDemoResponses({ outputFile });
      expect(await readFile(outputFile, 'utf8')).toBe(await readFile(DEMO_RECORDED_RESPONSES_FILE, 'utf8'));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('give full English answer sentences and keep the unanswerable turn answered with an apology', () => {
    for (const conversation of conversations) {
      const spoken = results.get(conversation.id)?.spoken ?? [];
      expect(spoken).toHaveLength(conversation.turns.length);
      for (const [index, turn] of spoken.entries()) {
        expect(turn.question).toMatch(/\?$/);
        expect(turn.answer?.split(/\s+/).length ?? 0, `${conversation.id} turn ${turn.turnNumber}`).toBeGreaterThanOrEqual(6);
        if (conversation.turns[index]?.answerable === false) expect(turn.answer).toMatch(/don't know/);
      }
    }
  });

  describe('Japanese', () => {
    let tokenizer: kuromoji.Tokenizer<kuromoji.IpadicFeatures>;
    beforeAll(async () => {
      const dictionary = join(dirname(createRequire(import.meta.url).resolve('kuromoji/package.json')), 'dict');
      tokenizer = await new Promise((resolve, reject) => {
        kuromoji.builder({ dicPath: dictionary }).build((error, built) => (error ? reject(error) : resolve(built)));
      });
    });

    /** Morae of a text: katakana of the pronunciation, small kana (except ッ) not counted. */
    function countMorae(text: string): number {
      const katakana = tokenizer
        .tokenize(text)
        .map((token) => (token.pronunciation !== undefined && token.pronunciation !== '*' ? token.pronunciation : toKatakana(token.surface_form)))
        .join('');
      return [...katakana].filter((character) => /[\u30A1-\u30FA\u30FC]/.test(character) && !/[ァィゥェォャュョヮ]/.test(character)).length;
    }

    it('answers are polite full sentences of at least eight morae', () => {
      for (const conversation of conversations) {
        for (const turn of results.get(conversation.id)?.japanese ?? []) {
          const where = `${conversation.id} turn ${turn.turnNumber}`;
          expect(turn.question, where).toMatch(/？$/);
          expect(turn.answer, where).toMatch(/(です|ます|でした|ました|ません)。$/);
          expect(countMorae(turn.answer ?? ''), where).toBeGreaterThanOrEqual(8);
        }
      }
    });
  });
});
