import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  benchmarkLoaderSettings,
  classifyEvents,
  evaluableEventsReport,
  evaluableShare,
  formatEvaluableEventsMarkdown,
  type LoaderSettings,
} from './evaluable-events.ts';
import { parseEventsLine } from './jsonl.ts';
import { CONFORMANCE_VECTORS } from './test-fixtures.ts';

/** Events of a hand-written JSONL line (times in seconds, as the benchmark files have them). */
const line = (events: Record<'0' | '1', [string, number, number][]>) =>
  parseEventsLine(
    JSON.stringify({
      id: 'hand',
      events: Object.fromEntries(
        Object.entries(events).map(([channel, list]) => [
          channel,
          list.map(([event, start, end]) => ({ event, time: [start, end] })),
        ]),
      ),
    }),
    'hand-written',
  ).events;

const task = (useContext: boolean, ignoredEvents: LoaderSettings['ignoredEvents'] = []): LoaderSettings => ({
  channels: [1],
  ignoreShortPause: true,
  ignoredEvents,
  useContext,
});

const decisionOf = (events: ReturnType<typeof line>, settings: LoaderSettings, type: string, channel: 0 | 1) => {
  const found = classifyEvents(events, settings).filter(
    (decision) => decision.event === type && decision.channel === channel,
  );
  expect(found).toHaveLength(1);
  return found[0]!.dropped;
};

describe('the benchmark loader rules, on hand-written event lines', () => {
  it('keeps a system TURN_SHIFT (listed on channel 0) that starts after the user TURN ends; it evaluates channel 1', () => {
    const events = line({
      '0': [
        ['TURN', 3.2, 6],
        ['TURN_SHIFT', 3.0, 3.2],
      ],
      '1': [['TURN', 1, 3]],
    });
    const [decision] = classifyEvents(events, task(false));
    expect(decision).toMatchObject({ event: 'TURN_SHIFT', channel: 0, userChannel: 1, dropped: null });
  });

  it('drops a system TURN_SHIFT whose answer starts at the very centisecond the user stops (closed interval)', () => {
    const events = line({
      '0': [
        ['TURN', 3.0, 6],
        ['TURN_SHIFT', 3.0, 3.0],
      ],
      '1': [['TURN', 1, 3]],
    });
    expect(decisionOf(events, task(false), 'TURN_SHIFT', 0)).toBe('system-speaking');
  });

  it('drops a system TURN_SHIFT that overlaps the user (start > end)', () => {
    const events = line({
      '0': [
        ['TURN', 2.8, 6],
        ['TURN_SHIFT', 3.0, 2.8],
      ],
      '1': [['TURN', 1, 3]],
    });
    expect(decisionOf(events, task(true), 'TURN_SHIFT', 0)).toBe('system-speaking');
  });

  it("drops a TURN_SHIFT when the system is inside its own TURN_HOLD at the user's end", () => {
    // system holds [2.0, 4.0] (two TURNs with a pause), the user speaks a TURN inside the hold
    const events = line({
      '0': [
        ['TURN', 0.5, 2],
        ['TURN', 4, 6],
        ['TURN_HOLD', 2, 4],
        ['TURN_SHIFT', 3.5, 6.2],
      ],
      '1': [['TURN', 2.5, 3.5]],
    });
    expect(decisionOf(events, task(false), 'TURN_SHIFT', 0)).toBe('system-speaking');
  });

  it('a TURN_SHIFT listed on channel 1 evaluates channel 0: not evaluated in task data, evaluated in chat data', () => {
    const events = line({
      '0': [['TURN', 1, 3]],
      '1': [
        ['TURN', 3.5, 6],
        ['TURN_SHIFT', 3.0, 3.5],
      ],
    });
    expect(decisionOf(events, task(false), 'TURN_SHIFT', 1)).toBe('channel-not-evaluated');
    expect(decisionOf(events, { ...task(false), channels: [0, 1] }, 'TURN_SHIFT', 1)).toBeNull();
  });

  it('drops a TURN_SHIFT whose start matches no TURN end of the evaluated channel (a mismatch in the second decimal)', () => {
    const events = line({
      '0': [
        ['TURN', 3.2, 6],
        ['TURN_SHIFT', 3.01, 3.2],
      ],
      '1': [['TURN', 1, 3]],
    });
    expect(decisionOf(events, task(false), 'TURN_SHIFT', 0)).toBe('no-turn-ends-there');
  });

  it('keeps a user TURN_HOLD between two user TURNs with the system silent; drops it when the system speaks at its start', () => {
    const quiet = line({
      '0': [],
      '1': [
        ['TURN', 1, 2.5],
        ['TURN', 3.3, 5],
        ['TURN_HOLD', 2.5, 3.3],
      ],
    });
    expect(decisionOf(quiet, task(false), 'TURN_HOLD', 1)).toBeNull();
    const talking = line({
      '0': [['TURN', 0.2, 2.5]],
      '1': [
        ['TURN', 1, 2.5],
        ['TURN', 3.3, 5],
        ['TURN_HOLD', 2.5, 3.3],
      ],
    });
    expect(decisionOf(talking, task(false), 'TURN_HOLD', 1)).toBe('system-speaking');
    const system = line({
      '0': [
        ['TURN', 1, 2.5],
        ['TURN', 3.3, 5],
        ['TURN_HOLD', 2.5, 3.3],
      ],
      '1': [],
    });
    expect(decisionOf(system, task(false), 'TURN_HOLD', 0)).toBe('channel-not-evaluated');
  });

  it('drops a TURN_HOLD without a TURN of its own channel ending at its start', () => {
    const events = line({
      '0': [],
      '1': [
        ['TURN', 1, 2.4],
        ['TURN', 3.3, 5],
        ['TURN_HOLD', 2.5, 3.3],
      ],
    });
    expect(decisionOf(events, task(false), 'TURN_HOLD', 1)).toBe('no-turn-ends-there');
  });

  it('keeps a user BARGE_IN with context only, anchored at a user TURN start, while the system speaks', () => {
    const events = line({
      '0': [['TURN', 1, 5]],
      '1': [
        ['TURN', 4, 7],
        ['BARGE_IN', 4, 5],
      ],
    });
    expect(decisionOf(events, task(false), 'BARGE_IN', 1)).toBe('needs-context');
    expect(decisionOf(events, task(true), 'BARGE_IN', 1)).toBeNull();
    const unanchored = line({
      '0': [['TURN', 1, 5]],
      '1': [
        ['TURN', 4.01, 7],
        ['BARGE_IN', 4, 5],
      ],
    });
    expect(decisionOf(unanchored, task(true), 'BARGE_IN', 1)).toBe('no-turn-starts-there');
    const silentSystem = line({
      '0': [['TURN', 1, 3.99]],
      '1': [
        ['TURN', 4, 7],
        ['BARGE_IN', 4, 5],
      ],
    });
    expect(decisionOf(silentSystem, task(true), 'BARGE_IN', 1)).toBe('system-not-speaking');
  });

  it('keeps a user BC inside a system TURN (its pauses count as inside) with context; drops one outside', () => {
    const events = line({
      '0': [
        ['TURN', 1, 6],
        ['SHORTPAUSE', 3, 3.4],
      ],
      '1': [
        ['BC', 3.1, 3.5],
        ['BC', 6.5, 6.9],
      ],
    });
    const decisions = classifyEvents(events, task(true)).filter((decision) => decision.event === 'BC');
    expect(decisions.map((decision) => decision.dropped)).toEqual([null, 'system-not-speaking']);
    expect(
      classifyEvents(events, task(false))
        .filter((decision) => decision.event === 'BC')
        .every((decision) => decision.dropped === 'needs-context'),
    ).toBe(true);
  });

  it('ignores SHORTPAUSE under --ignore-short-pause; otherwise needs a containing TURN and a silent system', () => {
    const events = line({
      '0': [],
      '1': [
        ['TURN', 1, 4],
        ['SHORTPAUSE', 2, 2.3],
      ],
    });
    expect(decisionOf(events, task(false), 'SHORTPAUSE', 1)).toBe('short-pause-ignored');
    expect(decisionOf(events, { ...task(false), ignoreShortPause: false }, 'SHORTPAUSE', 1)).toBeNull();
    const orphan = line({
      '0': [],
      '1': [
        ['TURN', 1, 2],
        ['SHORTPAUSE', 2, 2.3],
      ],
    });
    expect(decisionOf(orphan, { ...task(false), ignoreShortPause: false }, 'SHORTPAUSE', 1)).toBe(
      'no-turn-contains-it',
    );
  });

  it('the barge-in datasets ignore TURN_SHIFT, TURN_HOLD and BC, and keep BARGE_IN with context', () => {
    const [withoutContext, withContext] = benchmarkLoaderSettings('task', { bargeInVariant: true });
    const events = line({
      '0': [
        ['TURN', 1, 5],
        ['TURN', 7.3, 9],
        ['TURN_SHIFT', 7, 7.3],
      ],
      '1': [
        ['TURN', 4, 7],
        ['BARGE_IN', 4, 5],
        ['BC', 2, 2.4],
      ],
    });
    const kept = (settings: LoaderSettings) =>
      classifyEvents(events, settings)
        .filter((decision) => decision.dropped === null)
        .map((decision) => decision.event);
    expect(kept(withoutContext!.settings)).toEqual([]);
    expect(kept(withContext!.settings)).toEqual(['BARGE_IN']);
    expect(decisionOf(events, withContext!.settings, 'TURN_SHIFT', 0)).toBe('event-type-ignored');
    expect(withContext!.name).toBe('task barge-in, channels 1, with context');
  });
});

describe('the report', () => {
  it('counts samples and drops per type and names the dialogues with unexpected drops', () => {
    const good = line({
      '0': [
        ['TURN', 3.2, 6],
        ['TURN_SHIFT', 3.0, 3.2],
      ],
      '1': [
        ['TURN', 1, 3],
        ['BC', 4, 4.5],
      ],
    });
    const bad = line({
      '0': [
        ['TURN', 3.0, 6],
        ['TURN_SHIFT', 3.0, 3.0],
      ],
      '1': [['TURN', 1, 3]],
    });
    const report = evaluableEventsReport('task, with context', task(true), [
      { id: 'good', events: good },
      { id: 'bad', events: bad },
    ]);
    expect(report.byType.TURN_SHIFT).toEqual({ inFile: 2, samples: 1, dropped: { 'system-speaking': 1 } });
    expect(report.byType.BC).toEqual({ inFile: 1, samples: 1, dropped: {} });
    expect(evaluableShare(report, 'TURN_SHIFT')).toEqual({ candidates: 2, samples: 1 });
    expect(report.dialoguesWithDrops).toEqual([
      { id: 'bad', event: 'TURN_SHIFT', start: 300, reason: 'system-speaking' },
    ]);
    const markdown = formatEvaluableEventsMarkdown('Evaluable events', [report]);
    expect(markdown).toContain('| TURN_SHIFT | 2 | 1 | 1 |');
    expect(markdown).toContain('- bad: TURN_SHIFT at 3.00 s: system-speaking');
  });

  it('on the benchmark toy MT-QA line, every system TURN_SHIFT is kept (its constant 0.20 s gap)', () => {
    const vector = CONFORMANCE_VECTORS[1];
    const events = parseEventsLine(readFileSync(vector.jsonl, 'utf8').split('\n')[0]!, vector.jsonl).events;
    const [, withContext] = benchmarkLoaderSettings('task');
    const report = evaluableEventsReport(withContext!.name, withContext!.settings, [{ id: vector.id, events }]);
    const shifts = evaluableShare(report, 'TURN_SHIFT');
    expect(shifts.candidates).toBeGreaterThan(0);
    expect(shifts.samples).toBe(shifts.candidates);
    expect(report.byType.SHORTPAUSE.samples).toBe(0);
  });
});
