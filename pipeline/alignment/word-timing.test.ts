import { describe, expect, it } from 'vitest';
import type { SpeechSegment } from '../model/types.ts';
import type { SpokenWord } from './spoken-words.ts';
import {
  assertWordTiling,
  mergeSegmentsToCount,
  mergeTouchingWords,
  placeWordsAtEngineTimes,
  spreadWordsOverSegments,
  WordTimingError,
  wordsAtMoraTimes,
} from './word-timing.ts';

const word = (text: string, weight: number, pauseAfter = false, morae: number | null = null): SpokenWord => ({
  text,
  weight,
  morae,
  pauseAfter,
});

describe('mergeSegmentsToCount', () => {
  it('merges across the shortest silences first, earliest on ties', () => {
    const segments = [
      { start: 0, end: 10 },
      { start: 30, end: 40 },
      { start: 50, end: 60 },
      { start: 70, end: 80 },
    ];
    expect(mergeSegmentsToCount(segments, 3)).toEqual([
      { start: 0, end: 10 },
      { start: 30, end: 60 },
      { start: 70, end: 80 },
    ]);
    expect(mergeSegmentsToCount(segments, 1)).toEqual([{ start: 0, end: 80 }]);
    expect(mergeSegmentsToCount(segments, 9)).toEqual(segments);
    expect(segments).toHaveLength(4);
  });
});

describe('spreadWordsOverSegments', () => {
  it('puts segment breaks after punctuated words and splits each segment by weight', () => {
    const words = [word('Hello', 5), word('there', 5, true), word('how', 3), word('are', 3), word('you', 3, true)];
    const segments = [
      { start: 0, end: 60 },
      { start: 90, end: 180 },
    ];
    const tiling = spreadWordsOverSegments(words, segments);
    expect(tiling.segments).toEqual(segments);
    expect(tiling.words).toEqual([
      { start: 0, end: 30, word: 'Hello' },
      { start: 30, end: 60, word: 'there' },
      { start: 90, end: 120, word: 'how' },
      { start: 120, end: 150, word: 'are' },
      { start: 150, end: 180, word: 'you' },
    ]);
    assertWordTiling(tiling.words, tiling.segments);
  });

  it('merges segments when there are fewer words than segments', () => {
    const tiling = spreadWordsOverSegments(
      [word('Okay', 4)],
      [
        { start: 0, end: 20 },
        { start: 40, end: 50 },
      ],
    );
    expect(tiling.segments).toEqual([{ start: 0, end: 50 }]);
    expect(tiling.words).toEqual([{ start: 0, end: 50, word: 'Okay' }]);
  });

  it('gives every word at least 1 cs even in a tiny segment', () => {
    const tiling = spreadWordsOverSegments([word('a', 1), word('b', 100), word('c', 1)], [{ start: 5, end: 8 }]);
    expect(tiling.words.map((item) => [item.start, item.end])).toEqual([
      [5, 6],
      [6, 7],
      [7, 8],
    ]);
  });

  it('throws when words outnumber the centiseconds of speech', () => {
    expect(() => spreadWordsOverSegments([word('a', 1), word('b', 1), word('c', 1)], [{ start: 0, end: 2 }])).toThrow(
      WordTimingError,
    );
    expect(() => spreadWordsOverSegments([], [{ start: 0, end: 2 }])).toThrow(WordTimingError);
  });
});

describe('placeWordsAtEngineTimes', () => {
  it('assigns each word to the segment holding it and puts boundaries between engine spans', () => {
    const segments = [
      { start: 0, end: 50 },
      { start: 80, end: 150 },
    ];
    const tiling = placeWordsAtEngineTimes(
      [
        { text: 'こんにちは', start: 2, end: 48.4 },
        { text: '今日', start: 81, end: 100.2 },
        { text: 'は', start: 101, end: 112 },
        { text: 'いい', start: 112, end: 152 },
      ],
      segments,
    );
    expect(tiling.words).toEqual([
      { start: 0, end: 50, word: 'こんにちは' },
      { start: 80, end: 101, word: '今日' },
      { start: 101, end: 112, word: 'は' },
      { start: 112, end: 150, word: 'いい' },
    ]);
  });
});

describe('wordsAtMoraTimes', () => {
  const morae = [0.1, 0.2, 0.3, 0.4].map((start) => ({ start, end: start + 0.1, phonemes: 'k a' }));
  it('spans each word over its morae, shifted by the cut', () => {
    expect(
      wordsAtMoraTimes([word('きっ', 2, false, 2), word('て', 1, false, 1), word('を', 1, false, 1)], morae, 5),
    ).toEqual(
      [
        { text: 'きっ', start: 5, end: 25 },
        { text: 'て', start: 25, end: 35 },
        { text: 'を', start: 35, end: 45 },
      ].map((item) => ({ ...item, start: expect.closeTo(item.start, 9), end: expect.closeTo(item.end, 9) })),
    );
  });
  it('returns null when counts differ or a reading is unknown', () => {
    expect(wordsAtMoraTimes([word('a', 3, false, 3)], morae, 0)).toBeNull();
    expect(wordsAtMoraTimes([word('a', 2, false, 2), word('AI', 4, false, null)], morae, 0)).toBeNull();
  });
});

describe('assertWordTiling and mergeTouchingWords', () => {
  const segments: SpeechSegment[] = [
    { start: 0, end: 10 },
    { start: 20, end: 30 },
  ];
  it('accepts a tiling and merging the words gives the segments back', () => {
    const words = [
      { start: 0, end: 4, word: 'a' },
      { start: 4, end: 10, word: 'b' },
      { start: 20, end: 30, word: 'c' },
    ];
    expect(() => assertWordTiling(words, segments)).not.toThrow();
    expect(mergeTouchingWords(words)).toEqual(segments);
  });
  it.each([
    [
      'a gap inside a segment',
      [
        { start: 0, end: 4, word: 'a' },
        { start: 5, end: 10, word: 'b' },
        { start: 20, end: 30, word: 'c' },
      ],
    ],
    ['an empty segment', [{ start: 0, end: 10, word: 'a' }]],
    [
      'a word crossing a silence',
      [
        { start: 0, end: 25, word: 'a' },
        { start: 25, end: 30, word: 'b' },
      ],
    ],
    [
      'a zero-length word',
      [
        { start: 0, end: 0, word: 'a' },
        { start: 0, end: 10, word: 'b' },
        { start: 20, end: 30, word: 'c' },
      ],
    ],
  ])('rejects %s', (_name, words) => {
    expect(() => assertWordTiling(words, segments)).toThrow(WordTimingError);
  });
});
