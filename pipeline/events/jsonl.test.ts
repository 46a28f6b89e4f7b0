import { describe, expect, it } from 'vitest';
import type { ChannelEvents } from '../model/types.ts';
import { EventsLineParseError, formatEventsLine, formatSeconds, parseEventsLine } from './jsonl.ts';
import { event } from './test-fixtures.ts';

describe('formatSeconds', () => {
  it.each([
    [0, '0.0'],
    [1, '0.01'],
    [10, '0.1'],
    [345, '3.45'],
    [2770, '27.7'],
    [3300, '33.0'],
    [5185, '51.85'],
    [11881, '118.81'],
    [999999, '9999.99'],
    [-21, '-0.21'],
  ])('writes %i cs as Python repr(%i / 100) = %s', (centiseconds, expected) => {
    expect(formatSeconds(centiseconds)).toBe(expected);
  });

  it('rejects non-integer centiseconds', () => {
    expect(() => formatSeconds(3.5)).toThrow(RangeError);
  });
});

describe('formatEventsLine', () => {
  it('matches Python json.dumps byte for byte, including id escaping (ensure_ascii)', () => {
    // Expected text produced by Python 3: json.dumps({"id": ..., "events": ...}).
    const id = 'a"b\\c\n\t\u0001\u007f ダイアログ 😀 é';
    const events: ChannelEvents = {
      0: [],
      1: [event('TURN_SHIFT', 5205, 5184), event('TURN', 0, 3300), event('BC', 1, 123456)],
    };
    expect(formatEventsLine(id, events)).toBe(
      '{"id": "a\\"b\\\\c\\n\\t\\u0001\\u007f \\u30c0\\u30a4\\u30a2\\u30ed\\u30b0 \\ud83d\\ude00 \\u00e9", ' +
        '"events": {"0": [], "1": [{"event": "TURN_SHIFT", "time": [52.05, 51.84]}, ' +
        '{"event": "TURN", "time": [0.0, 33.0]}, {"event": "BC", "time": [0.01, 1234.56]}]}}',
    );
  });

  it('rejects an empty id and non-integer times (naming channel and event index)', () => {
    expect(() => formatEventsLine('', { 0: [], 1: [] })).toThrow(/id must not be empty/);
    expect(() => formatEventsLine('x', { 0: [], 1: [event('TURN', 0, 10), event('BC', 20, 30.5)] })).toThrow(
      /^channel 1, event 1 \(BC\): time must be integer centiseconds/,
    );
  });
});

describe('parseEventsLine', () => {
  const good = '{"id": "x", "events": {"0": [{"event": "TURN", "time": [0.0, 3.25]}], "1": []}}';

  it('reads times into integer centiseconds', () => {
    expect(parseEventsLine(good, 'test.jsonl:1')).toEqual({ id: 'x', events: { 0: [event('TURN', 0, 325)], 1: [] } });
  });

  it('round-trips ids that need escaping', () => {
    const id = 'ダイアログ "1"\\😀';
    const events: ChannelEvents = { 0: [event('TURN', 0, 3300)], 1: [event('TURN_SHIFT', 3300, 3250)] };
    expect(parseEventsLine(formatEventsLine(id, events), 'inline')).toEqual({ id, events });
  });

  it.each([
    ['not JSON', '{"id": "x", "events": ', /^test\.jsonl:7: line: not valid JSON/],
    ['a missing channel', '{"id": "x", "events": {"0": []}}', /^test\.jsonl:7: events\.1: /],
    [
      'an unknown event type',
      '{"id": "x", "events": {"0": [{"event": "SHIFT", "time": [1.0, 2.0]}], "1": []}}',
      /^test\.jsonl:7: events\.0\.0\.event: /,
    ],
    [
      'a time finer than 0.01 s',
      '{"id": "x", "events": {"0": [], "1": [{"event": "BC", "time": [1.0, 2.005]}]}}',
      /^test\.jsonl:7: events\.1\.0\.time\.1: time must be seconds rounded to 0\.01 s/,
    ],
    [
      'a time that is not a pair',
      '{"id": "x", "events": {"0": [{"event": "BC", "time": [1.0]}], "1": []}}',
      /^test\.jsonl:7: events\.0\.0\.time/,
    ],
    ['an empty id', '{"id": "", "events": {"0": [], "1": []}}', /^test\.jsonl:7: id: /],
    ['an unknown key', '{"id": "x", "events": {"0": [], "1": []}, "extra": 1}', /^test\.jsonl:7: line: /],
  ])('rejects %s with an error naming source and field', (_name, line, message) => {
    const run = () => parseEventsLine(line, 'test.jsonl:7');
    expect(run).toThrow(EventsLineParseError);
    expect(run).toThrow(message);
  });
});
