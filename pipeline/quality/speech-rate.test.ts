import { describe, expect, it } from 'vitest';
import {
  countEnglishSyllables,
  countEnglishWordSyllables,
  countJapaneseMorae,
  VOWEL_GROUP_COUNTER,
} from './speech-rate.ts';

describe('English syllables (vowel-group heuristic)', () => {
  it('counts common words right', () => {
    const expected: Record<string, number> = {
      the: 1,
      when: 1,
      was: 1,
      built: 1,
      tower: 2,
      Eiffel: 2,
      designed: 2,
      between: 2,
      eighteen: 2,
      eighty: 2,
      seven: 2,
      nine: 1,
      make: 1,
      makes: 1,
      table: 2,
      people: 2,
      walked: 1,
      wanted: 2,
      played: 1,
      boxes: 2,
      places: 2,
      changes: 2,
      does: 1,
      goes: 1,
      yes: 1,
      you: 1,
      were: 1,
      "don't": 1,
      beautiful: 3,
      information: 4,
      river: 2,
      Paris: 2,
      engineer: 3,
      company: 3,
      a: 1,
      I: 1,
      '1889': 4,
    };
    const counted = Object.fromEntries(Object.keys(expected).map((word) => [word, countEnglishWordSyllables(word)]));
    expect(counted).toEqual(expected);
    expect(countEnglishWordSyllables('—')).toBe(0);
  });

  it('sums over a text, splitting at hyphens', async () => {
    const result = await countEnglishSyllables('It was built between eighteen eighty-seven and eighteen eighty-nine.', {
      preferBuiltIn: true,
    });
    // it was built be-tween eigh-teen eigh-ty se-ven and eigh-teen eigh-ty nine = 1+1+1+2+2+2+2+1+2+2+1
    expect(result).toEqual({ units: 17, unit: 'syllable', counter: VOWEL_GROUP_COUNTER, estimatedWords: 0 });
  });
});

describe('Japanese morae (kuromoji readings)', () => {
  it('counts the morae of the pronunciation', async () => {
    // エッフェルトーワ イツ タテラレタノデスカ: エ ッ フェ ル ト ー ワ (7) イ ツ (2) タ テ ラ レ タ ノ デ ス カ (9) = 18
    const result = await countJapaneseMorae('エッフェル塔はいつ建てられたのですか？');
    expect(result).toMatchObject({ units: 18, unit: 'mora', estimatedWords: 0 });
    const latin = await countJapaneseMorae('AIです');
    expect(latin.estimatedWords).toBe(1);
  });
});
