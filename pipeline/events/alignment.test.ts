import { describe, expect, it } from 'vitest';
import type { AlignedWord } from '../model/types.ts';
import {
  AlignmentParseError,
  formatAlignment,
  parseAlignment,
  segmentsFromEvents,
  segmentsFromWords,
} from './alignment.ts';
import { SegmentValidationError } from './rules.ts';
import { event } from './test-fixtures.ts';

function word(channel: 0 | 1, start: number, end: number, text: string): AlignedWord {
  return { channel, start, end, word: text };
}

describe('parseAlignment', () => {
  it('reads channel, start, end, word with exact centiseconds (0-2 decimals)', () => {
    expect(parseAlignment('1\t0.00\t0.23\t新しい\n0\t9.59\t10.2\tx\n1\t33\t33.11\tあ\n', 'a.txt')).toEqual([
      word(1, 0, 23, '新しい'),
      word(0, 959, 1020, 'x'),
      word(1, 3300, 3311, 'あ'),
    ]);
  });

  it('tolerates a missing final newline, CRLF line ends and a byte-order mark; empty text has no words', () => {
    expect(parseAlignment('\uFEFF0\t0.10\t0.74\ta\r\n1\t1.00\t1.50\tb', 'a.txt')).toEqual([
      word(0, 10, 74, 'a'),
      word(1, 100, 150, 'b'),
    ]);
    expect(parseAlignment('', 'a.txt')).toEqual([]);
  });

  it.each([
    ['a blank line', '0\t0.10\t0.74\ta\n\n0\t1.00\t1.50\tb\n', /^a\.txt:2: line: blank line$/],
    ['a trailing blank line', '0\t0.10\t0.74\ta\n\n', /^a\.txt:2: line: blank line$/],
    ['3 fields', '0\t0.10\t0.74\ta\n0\t1.00\t1.50\n', /^a\.txt:2: line: expected 4 tab-separated fields .* found 3$/],
    ['5 fields', '0\t0.10\t0.74\ta\tb\n', /^a\.txt:1: line: expected 4 .* found 5$/],
    ['spaces instead of tabs', '0 0.10 0.74 a\n', /^a\.txt:1: line: expected 4 .* found 1$/],
    ['channel 2', '2\t0.10\t0.74\ta\n', /^a\.txt:1: channel: must be 0 or 1, got "2"$/],
    ['3 decimals', '0\t0.105\t0.74\ta\n', /^a\.txt:1: start: not seconds with at most 2 decimals: "0.105"$/],
    ['a negative time', '0\t-0.10\t0.74\ta\n', /^a\.txt:1: start: /],
    ['a non-number', '0\t0.10\tabc\ta\n', /^a\.txt:1: end: not seconds with at most 2 decimals: "abc"$/],
    ['end = start', '0\t0.10\t0.10\ta\n', /^a\.txt:1: end: 0\.10 is not after start 0\.10$/],
    ['an empty word', '0\t0.10\t0.74\t \n', /^a\.txt:1: word: empty$/],
  ])('rejects %s, naming file, line and field', (_name, text, message) => {
    const run = () => parseAlignment(text, 'a.txt');
    expect(run).toThrow(AlignmentParseError);
    expect(run).toThrow(message);
  });
});

describe('formatAlignment', () => {
  it('writes 2 decimals, sorted by (start, channel, end), one line per word', () => {
    const words = [word(1, 3300, 3311, 'b'), word(0, 3300, 3400, 'a'), word(0, 10, 1020, 'c')];
    expect(formatAlignment(words)).toBe('0\t0.10\t10.20\tc\n0\t33.00\t34.00\ta\n1\t33.00\t33.11\tb\n');
    expect(formatAlignment([])).toBe('');
  });

  it('rejects words that would corrupt the file', () => {
    expect(() => formatAlignment([word(0, 0, 10, 'a\tb')])).toThrow(/word 0: .* contains a tab or line break/);
    expect(() => formatAlignment([word(0, 0.5, 10, 'a')])).toThrow(
      /word 0: times must be non-negative integer centiseconds/,
    );
  });
});

describe('segmentsFromWords', () => {
  it('merges words of a channel that touch or overlap, keeps channels apart', () => {
    const words = [
      word(0, 100, 150, 'a'),
      word(1, 120, 200, 'x'),
      word(0, 150, 200, 'b'), // touches
      word(0, 190, 260, 'c'), // overlaps
      word(0, 261, 300, 'd'), // 1 cs gap: new segment
    ];
    expect(segmentsFromWords(words)).toEqual({
      0: [
        { start: 100, end: 260 },
        { start: 261, end: 300 },
      ],
      1: [{ start: 120, end: 200 }],
    });
  });

  it('does not shorten a segment when a later word ends inside it', () => {
    expect(segmentsFromWords([word(0, 0, 500, 'long'), word(0, 100, 200, 'inside')])[0]).toEqual([
      { start: 0, end: 500 },
    ]);
  });
});

describe('segmentsFromEvents', () => {
  it('takes each TURN or BC span minus its SHORTPAUSEs and ignores relation events', () => {
    const events = {
      0: [event('TURN', 0, 300), event('SHORTPAUSE', 100, 130), event('SHORTPAUSE', 200, 240), event('BC', 900, 960)],
      1: [event('TURN_SHIFT', 300, 350), event('TURN', 350, 700), event('BARGE_IN', 350, 360)],
    };
    expect(segmentsFromEvents(events)).toEqual({
      0: [
        { start: 0, end: 100 },
        { start: 130, end: 200 },
        { start: 240, end: 300 },
        { start: 900, end: 960 },
      ],
      1: [{ start: 350, end: 700 }],
    });
  });

  it('rejects a SHORTPAUSE outside every TURN/BC, or overlapping another, naming channel and event index', () => {
    const outside = { 0: [], 1: [event('TURN', 0, 300), event('SHORTPAUSE', 290, 320)] };
    expect(() => segmentsFromEvents(outside)).toThrow(SegmentValidationError);
    expect(() => segmentsFromEvents(outside)).toThrow(
      /^channel 1, event 1: SHORTPAUSE \[290, 320\] lies inside no TURN or BC$/,
    );
    const overlapping = {
      0: [event('TURN', 0, 300), event('SHORTPAUSE', 100, 150), event('SHORTPAUSE', 140, 160)],
      1: [],
    };
    expect(() => segmentsFromEvents(overlapping)).toThrow(/^channel 0, event 2: SHORTPAUSE overlaps/);
  });
});
