import { describe, expect, it } from 'vitest';
import { countMorae, estimateMorae, moraeFromOpenJtalkPhonemes } from './japanese-morae.ts';
import type { EngineTiming } from '../model/types.ts';

describe('countMorae', () => {
  it.each([
    ['キャ', 1], // small ャ joins the preceding kana
    ['きゃく', 2],
    ['きって', 3], // っ counts
    ['キッテ', 3],
    ['コーヒー', 4], // ー counts
    ['コンニチワ', 5], // ン counts
    ['ほん', 2],
    ['トーキョー', 4],
    ['ファイル', 3], // small ァ joins フ
    ['ヴァイオリン', 5],
    ['ヶ', 1],
    ['', 0],
    ['今日', 0], // kanji are not kana
    ['ABC', 0],
  ])('%s has %i morae', (reading, morae) => {
    expect(countMorae(reading)).toBe(morae);
  });
});

describe('estimateMorae', () => {
  it('counts kana exactly and estimates digits and other letters', () => {
    expect(estimateMorae('エッフェル塔')).toBe(4 + 2);
    expect(estimateMorae('330')).toBe(9);
    expect(estimateMorae('AI')).toBe(4);
    expect(estimateMorae('、。')).toBe(0);
  });
});

describe('moraeFromOpenJtalkPhonemes', () => {
  const timings = (labels: string): EngineTiming[] =>
    labels.split(' ').map((label, index) => ({ label, start: index / 10, end: (index + 1) / 10 }));

  it('groups consonants with their nucleus and skips pauses (きって、コーヒー)', () => {
    const morae = moraeFromOpenJtalkPhonemes(timings('sil k i cl t e pau k o o h i i sil'));
    expect(morae.map((mora) => mora.phonemes)).toEqual(['k i', 'cl', 't e', 'k o', 'o', 'h i', 'i']);
    expect(morae[0]).toEqual({ start: 0.1, end: 0.3, phonemes: 'k i' });
    expect(morae[3]).toMatchObject({ start: 0.7, end: 0.9 });
  });

  it('counts devoiced vowels and the moraic nasal (です, こんにちは)', () => {
    expect(moraeFromOpenJtalkPhonemes(timings('sil d e s U sil'))).toHaveLength(2);
    expect(moraeFromOpenJtalkPhonemes(timings('sil k o N n i ch i w a sil'))).toHaveLength(5);
  });
});
