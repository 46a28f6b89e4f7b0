/** Which benchmark dimensions a dataset gives no sample for, from its evaluable-events reports. */
import { describe, expect, it } from 'vitest';
import { benchmarkLoaderSettings, evaluableEventsReport } from './evaluable-events.ts';
import { missingDimensionWarnings } from './benchmark-dimensions.ts';
import { newLanguageNote } from '../orchestration/summary-markdown.ts';
import type { BenchmarkEvent, ChannelEvents } from '../model/types.ts';

const event = (type: BenchmarkEvent['event'], start: number, end: number) =>
  ({ event: type, start, end }) as BenchmarkEvent;

/** The user (channel 1) asks, the system (channel 0) answers with a TURN_SHIFT, the user backchannels inside it. */
const withBackchannel: ChannelEvents = [
  [event('TURN', 300, 900), event('TURN_SHIFT', 250, 300)],
  [event('TURN', 0, 250), event('BC', 500, 560)],
];

function reports(events: ChannelEvents, bargeInVariant = false) {
  return benchmarkLoaderSettings('task', { bargeInVariant }).map(({ name, settings }) =>
    evaluableEventsReport(name, settings, [{ id: 'd1', events }]),
  );
}

describe('missingDimensionWarnings', () => {
  it('names each dimension of a base dataset that gets no sample, and not the barge-in one', () => {
    expect(missingDimensionWarnings('tq', 'default', reports(withBackchannel))).toEqual([
      "tq: no TURN_HOLD sample: the benchmark's pause-handling dimension gets nothing from this dataset",
    ]);
  });

  it('counts only what the loader keeps: a BC while the system is silent is no sample', () => {
    const silentSystem: ChannelEvents = [
      [event('TURN', 300, 900), event('TURN_SHIFT', 250, 300)],
      [event('TURN', 0, 250), event('BC', 1000, 1060)],
    ];
    expect(missingDimensionWarnings('tq', 'default', reports(silentSystem))).toContain(
      "tq: no BC sample: the benchmark's backchannel dimension gets nothing from this dataset",
    );
  });

  it('checks a barge-in variant for barge-ins only', () => {
    expect(missingDimensionWarnings('tq_bargein', 'barge-in', reports(withBackchannel, true))).toEqual([
      "tq_bargein: no BARGE_IN sample: the benchmark's barge-in dimension gets nothing from this dataset",
    ]);
    const bargedIn: ChannelEvents = [
      [event('TURN', 300, 900), event('TURN_SHIFT', 250, 300)],
      [event('TURN', 0, 250), event('TURN', 500, 800), event('BARGE_IN', 500, 900)],
    ];
    expect(missingDimensionWarnings('tq_bargein', 'barge-in', reports(bargedIn, true))).toEqual([]);
  });

  it('says nothing without a report', () => {
    expect(missingDimensionWarnings('tq', 'default', [])).toEqual([]);
  });
});

describe('newLanguageNote', () => {
  it('points to the docs page for a language the evaluation does not take, in one line', () => {
    const note = newLanguageNote(['en', 'nl', 'th']);
    expect(note).toMatch(/^nl, th: .*docs\/new-language-benchmark\.md/);
    expect(note).not.toContain('\n');
    expect(newLanguageNote(['en', 'ja'])).toBeNull();
  });
});
