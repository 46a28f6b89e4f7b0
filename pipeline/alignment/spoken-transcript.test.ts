import { describe, expect, it } from 'vitest';
import { splitEnglishWords } from './spoken-words.ts';
import { spokenPrefix } from './spoken-transcript.ts';

describe('spokenPrefix', () => {
  const answer = 'It was built between eighteen eighty-seven and eighteen eighty-nine, for the fair.';
  const words = splitEnglishWords(answer).map((word) => word.text);

  it('ends a cut English answer at its last spoken word, punctuation after it left out', () => {
    expect(spokenPrefix(answer, words.slice(0, 5), ' ')).toBe('It was built between eighteen');
    expect(spokenPrefix(answer, words.slice(0, 9), ' ')).toBe(
      'It was built between eighteen eighty-seven and eighteen eighty-nine',
    );
  });

  it('gives the whole text, punctuation included, when every word was spoken', () => {
    expect(spokenPrefix(answer, words, ' ')).toBe(answer);
  });

  it('finds Japanese morphemes in order in the text', () => {
    const text = 'エッフェル塔は、千八百八十七年から建てられました。';
    expect(spokenPrefix(text, ['エッフェル', '塔', 'は', '千', '八百'], '')).toBe('エッフェル塔は、千八百');
    expect(
      spokenPrefix(
        text,
        ['エッフェル', '塔', 'は', '千', '八百', '八十', '七', '年', 'から', '建て', 'られ', 'まし', 'た'],
        '',
      ),
    ).toBe(text);
  });

  it('repeated words are matched in order, not at their first occurrence', () => {
    expect(spokenPrefix('eighteen eighty and eighteen ninety', ['eighteen', 'eighty', 'and', 'eighteen'], ' ')).toBe(
      'eighteen eighty and eighteen',
    );
  });

  it('joins the words when one is not in the text (an alignment from elsewhere); empty when none was spoken', () => {
    expect(spokenPrefix('Hello there.', ['hello', 'there'], ' ')).toBe('hello there');
    expect(spokenPrefix('Hello there.', [], ' ')).toBe('');
  });
});
