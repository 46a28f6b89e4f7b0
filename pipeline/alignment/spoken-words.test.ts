import { describe, expect, it } from 'vitest';
import {
  defaultWordTokenizer,
  loadJapaneseTokenizer,
  splitEnglishWords,
  splitJapaneseMorphemes,
} from './spoken-words.ts';

describe('splitEnglishWords', () => {
  it('splits on whitespace, strips outer punctuation, flags pausing punctuation and weights by spoken length', () => {
    const words = splitEnglishWords('"Well," she said -- it\'s 1889, isn\'t it?  U.S. (maybe)');
    expect(words.map((word) => word.text)).toEqual([
      'Well',
      'she',
      'said',
      "it's",
      '1889',
      "isn't",
      'it',
      'U.S',
      'maybe',
    ]);
    expect(words.filter((word) => word.pauseAfter).map((word) => word.text)).toEqual(['Well', '1889', 'it', 'U.S']);
    expect(words.find((word) => word.text === '1889')?.weight).toBe(16);
    expect(words.find((word) => word.text === 'she')?.weight).toBe(3);
    expect(splitEnglishWords(' ... ')).toEqual([]);
  });
});

describe('splitJapaneseMorphemes', () => {
  it('drops punctuation and spaces, counts morae from the pronunciation, flags pauses', async () => {
    const tokenizer = await loadJapaneseTokenizer();
    expect(await loadJapaneseTokenizer()).toBe(tokenizer); // loaded once
    const words = splitJapaneseMorphemes(tokenizer, '今日は「切手」と、コーヒー。 AIです！');
    expect(words.map((word) => word.text)).toEqual(['今日', 'は', '切手', 'と', 'コーヒー', 'AI', 'です']);
    expect(words.map((word) => word.morae)).toEqual([2, 1, 3, 1, 4, null, 2]);
    expect(words.find((word) => word.text === 'AI')?.weight).toBe(4);
    expect(words.filter((word) => word.pauseAfter).map((word) => word.text)).toEqual(['と', 'コーヒー', 'です']);
    expect(await defaultWordTokenizer.tokenize('はい。', 'ja')).toEqual([
      { text: 'はい', weight: 2, morae: 2, pauseAfter: true },
    ]);
  });
});

describe('spoken length in grapheme clusters', () => {
  it('weighs a Devanagari word by its clusters, a vowel sign or virama counting with its letter', () => {
    const [word] = splitEnglishWords('किताब', 'hi');
    // कि ता ब: three clusters (code points: 5)
    expect(word?.weight).toBe(3);
  });

  it('weighs Thai segmenter words by clusters, tone marks included in their letter', async () => {
    const { splitSegmenterWords } = await import('./spoken-words.ts');
    const words = splitSegmenterWords('ไม่ใช่', 'th');
    const total = words.reduce((sum, word) => sum + word.weight, 0);
    // ไ ม่ ใ ช่: four clusters; six code points
    expect(total).toBe(4);
  });
});
