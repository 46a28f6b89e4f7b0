import { beforeAll, describe, expect, it } from 'vitest';
import { FakeSpeechSynthesizer } from '../services/tts/fake-speech-synthesizer.ts';
import { synthesizeUtterance } from '../services/tts/synthesize-utterance.ts';
import {
  containsKanji,
  describeKanaReadingOptions,
  DEFAULT_KANA_READING_OPTIONS,
  kanaReadingOfTokens,
  toKanaReading,
} from './japanese-kana.ts';
import { loadJapaneseTokenizer } from '../alignment/spoken-words.ts';

beforeAll(async () => {
  await loadJapaneseTokenizer();
});

describe('toKanaReading', () => {
  it('rewrites kanji morphemes in hiragana and keeps kana, punctuation, Latin letters and digits', async () => {
    const reading = await toKanaReading('今日は東京でAIの会議が2024年にありました！');
    expect(reading.text).toBe('きょうはとうきょうでAIのかいぎが2024ねんにありました！');
    expect(
      reading.morphemes.filter((morpheme) => morpheme.origin === 'dictionary').map((morpheme) => morpheme.surface),
    ).toEqual(['今日', '東京', '会議', '年']);
    expect(reading.unreadKanji).toEqual([]);
  });

  it('keeps the morpheme surfaces so the original text can be rebuilt', async () => {
    const text = '「高慢と偏見」を書いたのは誰ですか？ ジェーン・オースティンです。';
    const reading = await toKanaReading(text);
    expect(reading.morphemes.map((morpheme) => morpheme.surface).join('')).toBe(text);
    expect(containsKanji(reading.text)).toBe(false);
  });

  it('offers katakana, the pronunciation field and every morpheme', async () => {
    expect((await toKanaReading('今日は東京です。', { script: 'katakana' })).text).toBe('キョウはトウキョウです。');
    expect((await toKanaReading('今日は東京です。', { source: 'pronunciation' })).text).toBe(
      'きょーはとーきょーです。',
    );
    expect((await toKanaReading('今日は東京です。', { source: 'pronunciation', scope: 'all-morphemes' })).text).toBe(
      'きょーわとーきょーです。',
    );
  });

  it('reports kanji the dictionary cannot read and keeps them', () => {
    const reading = kanaReadingOfTokens([
      { surface_form: '犇', reading: '*', pronunciation: '*' },
      { surface_form: 'めく', reading: 'メク', pronunciation: 'メク' },
    ]);
    expect(reading.text).toBe('犇めく');
    expect(reading.unreadKanji).toEqual(['犇']);
  });

  it('labels its options for engine versions', () => {
    expect(describeKanaReadingOptions(DEFAULT_KANA_READING_OPTIONS)).toBe('kana hiragana/reading/kanji-morphemes');
  });
});

describe('synthesizeUtterance with a kana reading', () => {
  it('times the original morphemes when the engine is given the kana text (alignmentText)', async () => {
    const text = '今日は東京で会議がありました。';
    const reading = await toKanaReading(text);
    const engine = new FakeSpeechSynthesizer();
    const utterance = await synthesizeUtterance(
      engine,
      { text: reading.text, language: 'ja', voice: {} },
      { sampleRate: 16000, alignmentText: text },
    );
    expect(engine.calls[0]?.text).toBe('きょうはとうきょうでかいぎがありました。');
    expect(utterance.words.map((word) => word.word)).toEqual([
      '今日',
      'は',
      '東京',
      'で',
      '会議',
      'が',
      'あり',
      'まし',
      'た',
    ]);
    const withoutOption = await synthesizeUtterance(
      engine,
      { text: reading.text, language: 'ja', voice: {} },
      { sampleRate: 16000 },
    );
    expect(withoutOption.words.map((word) => word.word)).not.toContain('東京');
  });
});
