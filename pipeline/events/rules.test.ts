import { describe, expect, it } from 'vitest';
import type { ChannelEvents, ChannelSegments, SpeechSegment } from '../model/types.ts';
import { parseAlignment, segmentsFromEvents, segmentsFromWords } from './alignment.ts';
import { formatEventsLine, parseEventsLine } from './jsonl.ts';
import {
  buildIpus,
  computeEvents,
  DEFAULT_EVENT_THRESHOLDS,
  SegmentValidationError,
  turnRelations,
  type Ipu,
} from './rules.ts';
import { event } from './test-fixtures.ts';

/** `s(0, 300, 400, 900)` -> segments [0,300], [400,900] (centiseconds). */
function s(...times: number[]): SpeechSegment[] {
  const segments: SpeechSegment[] = [];
  for (let i = 0; i < times.length; i += 2) segments.push({ start: times[i] as number, end: times[i + 1] as number });
  return segments;
}

function dialogue(channel0: SpeechSegment[], channel1: SpeechSegment[]): ChannelSegments {
  return { 0: channel0, 1: channel1 };
}

describe('DEFAULT_EVENT_THRESHOLDS', () => {
  it('holds the docs/events.md values in centiseconds', () => {
    expect(DEFAULT_EVENT_THRESHOLDS).toEqual({ maxPauseInIpu: 50, maxBackchannel: 80, bargeInOverlap: 40 });
  });
});

describe('rule 1: IPUs and SHORTPAUSE (pause of exactly 0.50 s merges, 0.51 s splits)', () => {
  it('merges across a 0.50 s silence and lists it as a SHORTPAUSE', () => {
    expect(computeEvents(dialogue(s(0, 200, 250, 400), []))[0]).toEqual([
      event('TURN', 0, 400),
      event('SHORTPAUSE', 200, 250),
    ]);
  });

  it('splits at a 0.51 s silence (two TURNs of one speaker -> TURN_HOLD)', () => {
    expect(computeEvents(dialogue(s(0, 200, 251, 400), []))[0]).toEqual([
      event('TURN', 0, 200),
      event('TURN_HOLD', 200, 251),
      event('TURN', 251, 400),
    ]);
  });

  it('merges touching segments without a SHORTPAUSE (no silence between them)', () => {
    const ipus = buildIpus(s(0, 100, 100, 300));
    expect(ipus).toEqual([{ start: 0, end: 300, segments: s(0, 100, 100, 300), pauses: [], kind: 'TURN' }]);
  });

  it('lists every silence inside one IPU, in order', () => {
    const [ipu] = buildIpus(s(0, 100, 130, 200, 240, 500));
    expect(ipu?.pauses).toEqual([
      { start: 100, end: 130 },
      { start: 200, end: 240 },
    ]);
  });
});

describe('rule 2: BC vs TURN (0.80 s -> BC, 0.81 s -> TURN)', () => {
  it('labels an IPU of exactly 0.80 s a BC and 0.81 s a TURN', () => {
    expect(buildIpus(s(0, 80)).map((ipu) => ipu.kind)).toEqual(['BC']);
    expect(buildIpus(s(0, 81)).map((ipu) => ipu.kind)).toEqual(['TURN']);
  });

  it('counts the pauses inside the IPU in its length', () => {
    expect(computeEvents(dialogue(s(0, 30, 50, 80), []))[0]).toEqual([event('BC', 0, 80), event('SHORTPAUSE', 30, 50)]);
    expect(buildIpus(s(0, 30, 50, 81))[0]?.kind).toBe('TURN');
  });

  it('is exact where floating-point seconds are not (91.19 - 90.39 = 0.80 s)', () => {
    const words = parseAlignment('0\t90.39\t91.19\tうん\n', 'inline');
    expect(computeEvents(segmentsFromWords(words))[0]).toEqual([event('BC', 9039, 9119)]);
  });
});

describe('rule 4: sequencing (overlap of exactly 0.40 s -> TURN_SHIFT, 0.41 s -> BARGE_IN)', () => {
  it('gives the first TURN of the dialogue no relation event', () => {
    expect(computeEvents(dialogue(s(0, 300), []))).toEqual({ 0: [event('TURN', 0, 300)], 1: [] });
  });

  it('measures a TURN_SHIFT gap from the floor end to the new turn start', () => {
    expect(computeEvents(dialogue(s(0, 300), s(350, 700)))).toEqual({
      0: [event('TURN', 0, 300)],
      1: [event('TURN_SHIFT', 300, 350), event('TURN', 350, 700)],
    });
  });

  it('treats an overlap of exactly 0.40 s as a TURN_SHIFT with start > end, listed after its TURN', () => {
    expect(computeEvents(dialogue(s(0, 500), s(460, 900)))[1]).toEqual([
      event('TURN', 460, 900),
      event('TURN_SHIFT', 500, 460),
    ]);
  });

  it('treats an overlap of 0.41 s as a BARGE_IN, listed after its TURN on equal start', () => {
    expect(computeEvents(dialogue(s(0, 500), s(459, 900)))[1]).toEqual([
      event('TURN', 459, 900),
      event('BARGE_IN', 459, 500),
    ]);
  });

  it('reports floor-transfer offsets (turn.start - floor.end) with direction', () => {
    const segments = dialogue(s(0, 500, 1000, 1400), s(459, 900));
    const ipus = { 0: buildIpus(segments[0]), 1: buildIpus(segments[1]) };
    expect(
      turnRelations(ipus).map(({ event, channel, floorChannel, offset }) => ({ event, channel, floorChannel, offset })),
    ).toEqual([
      { event: 'BARGE_IN', channel: 1, floorChannel: 0, offset: -41 },
      { event: 'TURN_SHIFT', channel: 0, floorChannel: 1, offset: 100 },
    ]);
  });
});

describe('simultaneous starts on both channels: TURNs sorted by (start, end, channel)', () => {
  it('with identical spans, channel 0 comes first and channel 1 barges in; the floor stays with channel 0', () => {
    expect(computeEvents(dialogue(s(100, 400, 500, 800), s(100, 400)))).toEqual({
      0: [event('TURN', 100, 400), event('TURN_HOLD', 400, 500), event('TURN', 500, 800)],
      1: [event('TURN', 100, 400), event('BARGE_IN', 100, 400)],
    });
  });

  it('with equal starts and different ends, the shorter TURN comes first and the longer one barges in', () => {
    expect(computeEvents(dialogue(s(100, 500), s(100, 300)))).toEqual({
      0: [event('TURN', 100, 500), event('BARGE_IN', 100, 300)],
      1: [event('TURN', 100, 300)],
    });
  });

  it('does not depend on anything but the spans (same output on repeated runs and input copies)', () => {
    const segments = dialogue(s(100, 400), s(100, 400));
    expect(computeEvents(structuredClone(segments))).toEqual(computeEvents(segments));
  });
});

describe('rule 3 and rule 6: backchannels do not take part in turn-taking', () => {
  it('measures a TURN_SHIFT from the other speaker last TURN, across that speaker BC (rule 6)', () => {
    // channel 0: TURN [0, 3.00], BC [4.00, 4.60] (0.60 s, separated by 1.00 s); channel 1 starts at 6.00.
    expect(computeEvents(dialogue(s(0, 300, 400, 460), s(600, 1000)))).toEqual({
      0: [event('TURN', 0, 300), event('BC', 400, 460)],
      1: [event('TURN_SHIFT', 300, 600), event('TURN', 600, 1000)],
    });
  });

  it('lets neither the other speaker BC nor one own BC interrupt a hold (rule 3)', () => {
    // channel 1 holds the floor from 6.00; channel 0 says a BC at 11.00; channel 1 continues at 13.00,
    // says a BC at 18.00 and continues at 20.00.
    expect(computeEvents(dialogue(s(0, 300, 1100, 1160), s(600, 1000, 1300, 1700, 1800, 1860, 2000, 2400)))).toEqual({
      0: [event('TURN', 0, 300), event('BC', 1100, 1160)],
      1: [
        event('TURN_SHIFT', 300, 600),
        event('TURN', 600, 1000),
        event('TURN_HOLD', 1000, 1300),
        event('TURN', 1300, 1700),
        event('TURN_HOLD', 1700, 2000),
        event('BC', 1800, 1860),
        event('TURN', 2000, 2400),
      ],
    });
  });

  it('gives a BC no relation event even when it overlaps the other speaker', () => {
    expect(computeEvents(dialogue(s(0, 1000), s(500, 560)))).toEqual({
      0: [event('TURN', 0, 1000)],
      1: [event('BC', 500, 560)],
    });
  });
});

describe('rule 5: after a barge-in that ends first, the floor stays with the interrupted turn', () => {
  it('makes the interrupter next TURN a TURN_SHIFT from the interrupted turn end, not a TURN_HOLD', () => {
    // channel 0 speaks 0-10 s; channel 1 barges in at 2 s and stops at 5 s; channel 1 speaks again at
    // 11 s (shift from 10 s, not hold from 5 s); channel 0 answers at 16 s.
    expect(computeEvents(dialogue(s(0, 1000, 1600, 2000), s(200, 500, 1100, 1500)))).toEqual({
      0: [event('TURN', 0, 1000), event('TURN_SHIFT', 1500, 1600), event('TURN', 1600, 2000)],
      1: [
        event('TURN', 200, 500),
        event('BARGE_IN', 200, 1000),
        event('TURN_SHIFT', 1000, 1100),
        event('TURN', 1100, 1500),
      ],
    });
  });

  it('also measures an overlapping TURN_SHIFT of the interrupter from the interrupted turn end', () => {
    // channel 1 comes back at 9.60 s, 0.40 s before channel 0 ends at 10 s.
    expect(computeEvents(dialogue(s(0, 1000), s(200, 500, 960, 1500)))[1]).toEqual([
      event('TURN', 200, 500),
      event('BARGE_IN', 200, 1000),
      event('TURN', 960, 1500),
      event('TURN_SHIFT', 1000, 960),
    ]);
  });

  it('moves the floor to the interrupter when the barge-in ends later (next TURN is a TURN_HOLD)', () => {
    expect(computeEvents(dialogue(s(0, 1000), s(900, 1300, 1400, 1800)))[1]).toEqual([
      event('TURN', 900, 1300),
      event('BARGE_IN', 900, 1000),
      event('TURN_HOLD', 1300, 1400),
      event('TURN', 1400, 1800),
    ]);
  });
});

describe('rule 7: order within a channel', () => {
  it('puts SHORTPAUSEs starting before an overlapping TURN_SHIFT before it, and after it otherwise', () => {
    expect(computeEvents(dialogue(s(0, 500), s(470, 480, 490, 520, 560, 900)))[1]).toEqual([
      event('TURN', 470, 900),
      event('SHORTPAUSE', 480, 490),
      event('TURN_SHIFT', 500, 470),
      event('SHORTPAUSE', 520, 560),
    ]);
  });

  it('keeps emission order on equal starts: unit, its SHORTPAUSEs, then its relation event', () => {
    expect(computeEvents(dialogue(s(0, 500), s(470, 500, 520, 900)))[1]).toEqual([
      event('TURN', 470, 900),
      event('SHORTPAUSE', 500, 520),
      event('TURN_SHIFT', 500, 470),
    ]);
  });

  it('keeps an earlier IPU first on equal starts (a BC starting where the relation event of a later TURN starts)', () => {
    expect(computeEvents(dialogue(s(0, 300), s(300, 360, 500, 900)))[1]).toEqual([
      event('BC', 300, 360),
      event('TURN_SHIFT', 300, 500),
      event('TURN', 500, 900),
    ]);
  });
});

describe('input validation', () => {
  const cases: [string, ChannelSegments, RegExp][] = [
    [
      'unsorted',
      dialogue([], s(500, 600, 100, 200)),
      /^channel 1, segment 1: starts at 100, before the previous segment ends \(600\)/,
    ],
    ['overlapping', dialogue(s(0, 300, 250, 400), []), /^channel 0, segment 1: starts at 250/],
    ['start = end', dialogue(s(0, 100, 200, 200), []), /^channel 0, segment 1: end 200 is not after start 200/],
    ['start > end', dialogue([], s(300, 100)), /^channel 1, segment 0: end 100 is not after start 300/],
    [
      'non-integer',
      dialogue([], s(0, 100, 200, 345.5)),
      /^channel 1, segment 1: start and end must be integer centiseconds/,
    ],
    ['negative', dialogue(s(-10, 100), []), /^channel 0, segment 0: start -10 is negative/],
  ];
  it.each(cases)(
    'rejects %s segments with a SegmentValidationError naming channel and index',
    (_name, segments, message) => {
      const run = () => computeEvents(segments);
      expect(run).toThrow(SegmentValidationError);
      expect(run).toThrow(message);
    },
  );

  it('rejects thresholds that are not non-negative integers', () => {
    expect(() => computeEvents(dialogue([], []), { ...DEFAULT_EVENT_THRESHOLDS, bargeInOverlap: 0.4 })).toThrow(
      /bargeInOverlap/,
    );
  });
});

/** mulberry32: a tiny seeded generator, so failures reproduce. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random channel segments (gaps ≥ 1 cs); on a 10 cs grid for some seeds so ties across channels occur. */
function randomSegments(random: () => number, grid: number): SpeechSegment[] {
  const integer = (max: number) => Math.floor(random() * max);
  const segments: SpeechSegment[] = [];
  let time = Math.round(integer(300) / grid) * grid;
  const count = integer(40);
  for (let i = 0; i < count; i++) {
    const length = Math.max(grid, Math.round((1 + integer(random() < 0.4 ? 90 : 600)) / grid) * grid);
    segments.push({ start: time, end: time + length });
    const gap = random() < 0.5 ? 1 + integer(70) : 1 + integer(500);
    time += length + Math.max(grid, Math.round(gap / grid) * grid);
  }
  return segments;
}

/**
 * Checks what the benchmark loader relies on (docs/events.md, "How the benchmark's loader uses the events") and
 * what the rules imply, on one dialogue. `label` (the seed) goes into every assertion message.
 */
function checkInvariants(label: string, segments: ChannelSegments): void {
  const events: ChannelEvents = computeEvents(segments);
  const of = (channel: 0 | 1, type: string) => events[channel].filter((e) => e.event === type);
  for (const channel of [0, 1] as const) {
    const other = channel === 0 ? 1 : 0;
    const ownTurns = of(channel, 'TURN');
    const otherTurns = of(other, 'TURN');
    const starts = events[channel].map((e) => e.start);
    expect(starts, `${label}: channel ${channel} sorted by start`).toEqual([...starts].sort((a, b) => a - b));
    for (const shift of of(channel, 'TURN_SHIFT')) {
      const at = `${label}: channel ${channel} TURN_SHIFT [${shift.start}, ${shift.end}]`;
      expect(
        otherTurns.some((turn) => turn.end === shift.start),
        `${at} starts at another-channel TURN end`,
      ).toBe(true);
      expect(
        ownTurns.some((turn) => turn.start === shift.end),
        `${at} ends at own TURN start`,
      ).toBe(true);
      expect(shift.start - shift.end, `${at} overlap <= 40`).toBeLessThanOrEqual(40);
    }
    for (const hold of of(channel, 'TURN_HOLD')) {
      const at = `${label}: channel ${channel} TURN_HOLD [${hold.start}, ${hold.end}]`;
      expect(
        ownTurns.some((turn) => turn.end === hold.start),
        `${at} starts at own TURN end`,
      ).toBe(true);
      expect(
        ownTurns.some((turn) => turn.start === hold.end),
        `${at} ends at own TURN start`,
      ).toBe(true);
    }
    for (const bargeIn of of(channel, 'BARGE_IN')) {
      const at = `${label}: channel ${channel} BARGE_IN [${bargeIn.start}, ${bargeIn.end}]`;
      expect(
        ownTurns.some((turn) => turn.start === bargeIn.start),
        `${at} starts at own TURN start`,
      ).toBe(true);
      expect(
        otherTurns.some((turn) => turn.end === bargeIn.end),
        `${at} ends at another-channel TURN end`,
      ).toBe(true);
      expect(bargeIn.end - bargeIn.start, `${at} overlap > 40`).toBeGreaterThan(40);
    }
    for (const pause of of(channel, 'SHORTPAUSE')) {
      expect(pause.end - pause.start, `${label}: SHORTPAUSE length`).toBeGreaterThan(0);
      expect(pause.end - pause.start, `${label}: SHORTPAUSE length`).toBeLessThanOrEqual(50);
    }
    for (const bc of of(channel, 'BC')) expect(bc.end - bc.start, `${label}: BC length`).toBeLessThanOrEqual(80);
    for (const turn of ownTurns) expect(turn.end - turn.start, `${label}: TURN length`).toBeGreaterThan(80);
  }
  const turnCount = of(0, 'TURN').length + of(1, 'TURN').length;
  const relationCount = (['TURN_HOLD', 'TURN_SHIFT', 'BARGE_IN'] as const).reduce(
    (sum, type) => sum + of(0, type).length + of(1, type).length,
    0,
  );
  expect(relationCount, `${label}: one relation per TURN but the first`).toBe(Math.max(0, turnCount - 1));

  const ipus: Record<0 | 1, Ipu[]> = { 0: buildIpus(segments[0]), 1: buildIpus(segments[1]) };
  for (const relation of turnRelations(ipus)) {
    expect(relation.offset, `${label}: offset`).toBe(relation.turn.start - relation.floor.end);
  }

  // The events-derivation of the conformance vectors recovers the input, and the JSONL line round-trips.
  expect(segmentsFromEvents(events), `${label}: segmentsFromEvents`).toEqual(segments);
  const id = `dialogue_${label}`;
  expect(parseEventsLine(formatEventsLine(id, events), label), `${label}: JSONL round trip`).toEqual({ id, events });
}

describe('properties on seeded random dialogues', () => {
  it('hold for 400 dialogues (seeds 1-400; every third on a 10 cs grid so equal starts across channels occur)', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const random = seededRandom(seed);
      const grid = seed % 3 === 0 ? 10 : 1;
      checkInvariants(`seed ${seed}`, dialogue(randomSegments(random, grid), randomSegments(random, grid)));
    }
  });
});
