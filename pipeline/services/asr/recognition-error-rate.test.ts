import { describe, expect, it } from 'vitest';
import { languagePackOf } from '../../model/language-pack.ts';
import { normaliseForErrorRate, recognitionErrorRate, tokenEditDistance } from './recognition-error-rate.ts';

describe('tokenEditDistance', () => {
  it('counts substitutions, insertions and deletions over tokens', () => {
    expect(tokenEditDistance(['a', 'b', 'c'], ['a', 'b', 'c'])).toBe(0);
    expect(tokenEditDistance(['a', 'b', 'c'], ['a', 'x', 'c'])).toBe(1);
    expect(tokenEditDistance(['a', 'b', 'c'], ['en', 'a', 'b', 'c'])).toBe(1);
    expect(tokenEditDistance(['a', 'b', 'c'], ['b'])).toBe(2);
    expect(tokenEditDistance([], ['a', 'b'])).toBe(2);
  });
});

describe('recognitionErrorRate', () => {
  const english = languagePackOf('en');

  it('ignores case and punctuation in English', () => {
    const result = recognitionErrorRate('When was it built?', 'when was it built', english);
    expect(result).toMatchObject({ rate: 0, unit: 'word', edits: 0, referenceTokens: 4 });
  });

  it('counts a spoken language tag before the text as an inserted word', () => {
    const result = recognitionErrorRate('When was it built?', 'En. When was it built?', english);
    expect(result.edits).toBe(1);
    expect(result.rate).toBeCloseTo(0.25, 10);
    expect(result.hypothesis).toBe('en when was it built');
  });

  it('spells the digits of a transcript as the text has them', () => {
    expect(normaliseForErrorRate('It opened in 1887.', english)).toBe(
      normaliseForErrorRate('It opened in eighteen eighty-seven.', english),
    );
  });

  it('counts characters for Japanese', () => {
    const result = recognitionErrorRate(
      '東京タワーはいつ建てられましたか？',
      '東京タワーはいつ建てられましたか',
      languagePackOf('ja'),
    );
    expect(result).toMatchObject({ rate: 0, unit: 'character' });
    const wrong = recognitionErrorRate('東京タワー', '京都タワー', languagePackOf('ja'));
    expect(wrong.referenceTokens).toBe(5);
    expect(wrong.edits).toBe(2);
  });

  it('gives a rate over an empty reference as the inserted tokens', () => {
    expect(recognitionErrorRate('', 'hello there', english).rate).toBe(2);
    expect(recognitionErrorRate('...', '', english).rate).toBe(0);
  });
});
