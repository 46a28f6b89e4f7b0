import { median } from 'simple-statistics';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildIpus, computeEvents, turnRelations } from '../events/index.ts';
import type { Channel } from '../model/types.ts';
import {
  DEFAULT_PLACE_DIALOGUE_OPTIONS,
  placeDialogue,
  placedUtteranceSegments,
  TimelinePlacementError,
  type PlacedDialogue,
  type UtteranceToPlace,
} from './place-dialogue.ts';
import { kolmogorovSmirnovDistance } from './empirical-distribution.ts';
import { dialogueRandomStream } from '../model/random.ts';
import { makeStatistics } from './test-helpers.ts';
import { loadDefaultTimingStatistics, samplingDistributions, type TimingStatistics } from './timing-statistics.ts';

let english: TimingStatistics;
let japanese: TimingStatistics;
beforeAll(async () => {
  english = await loadDefaultTimingStatistics('en');
  japanese = await loadDefaultTimingStatistics('ja');
});

/** Question/answer order: user (channel 1) asks, system (channel 0) answers. */
function alternating(count: number, durationCs: number | ((index: number) => number)): UtteranceToPlace[] {
  return Array.from({ length: count }, (_, index) => ({
    channel: (index % 2 === 0 ? 1 : 0) as Channel,
    durationCs: typeof durationCs === 'number' ? durationCs : durationCs(index),
  }));
}

/** Random utterance layouts (own seeded stream): lengths 2–30, 30 % same-speaker continuations. */
function randomLayout(index: number, minimumDurationCs: number): UtteranceToPlace[] {
  const random = dialogueRandomStream(7, `layout-${index}`, 'test-layout');
  const count = random.integer(2, 30);
  let channel: Channel = random.integer(0, 1) as Channel;
  return Array.from({ length: count }, (_, position) => {
    if (position > 0 && random.integer(1, 10) > 3) channel = channel === 0 ? 1 : 0;
    return { channel, durationCs: random.integer(minimumDurationCs, 1500) };
  });
}

/** Checks every placement constraint of place-dialogue.ts; returns the violations found (none expected). */
function constraintViolations(utterances: readonly UtteranceToPlace[], placed: PlacedDialogue): string[] {
  const options = DEFAULT_PLACE_DIALOGUE_OPTIONS;
  const violations: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) violations.push(what);
  };
  check(placed.starts[0] === options.leadingSilenceCs, 'leading silence');
  const lastEnd: Record<Channel, number | null> = { 0: null, 1: null };
  let latestEnd = Number.NEGATIVE_INFINITY;
  utterances.forEach((utterance, index) => {
    const start = placed.starts[index] as number;
    const end = placed.ends[index] as number;
    check(end - start === utterance.durationCs, `utterance ${index}: duration`);
    const own = lastEnd[utterance.channel];
    check(
      own === null || start - own >= options.minimumSameSpeakerGapCs,
      `utterance ${index}: overlaps or nearly touches its own speaker`,
    );
    if (index > 0) {
      const previous = utterances[index - 1] as UtteranceToPlace;
      // every utterance ends later than all before it, so the floor is the previous utterance
      check(
        placed.transitions[index - 1]?.floorIndex === index - 1,
        `utterance ${index}: floor is not the previous utterance`,
      );
      check(placed.offsets[index - 1] === start - (placed.ends[index - 1] as number), `utterance ${index}: offset`);
      check(end - latestEnd >= options.minimumOutlastCs, `utterance ${index}: swallowed by the floor`);
      if (previous.channel !== utterance.channel) {
        check(
          start - (placed.starts[index - 1] as number) >= options.minimumLeadCs,
          `utterance ${index}: swallows the previous utterance`,
        );
      }
    }
    lastEnd[utterance.channel] = end;
    latestEnd = Math.max(latestEnd, end);
  });
  check(placed.totalDurationCs === latestEnd + options.trailingSilenceCs, 'total duration');
  check(
    placed.resampled ===
      placed.unassignableDraws + placed.transitions.reduce((sum, transition) => sum + transition.rejectedDraws, 0),
    'resampled count',
  );
  check(placed.fallbacks === placed.transitions.filter((transition) => transition.fallback).length, 'fallback count');
  return violations;
}

describe('placeDialogue: randomness', () => {
  it('is deterministic for the same seed and dialogue id', () => {
    const utterances = alternating(24, (index) => 150 + index * 17);
    const first = placeDialogue({ dialogueId: 'topiocqa_dev_0001', seed: 3, utterances, statistics: english });
    const second = placeDialogue({ dialogueId: 'topiocqa_dev_0001', seed: 3, utterances, statistics: english });
    expect(second).toEqual(first);
    const otherSeed = placeDialogue({ dialogueId: 'topiocqa_dev_0001', seed: 4, utterances, statistics: english });
    expect(otherSeed.offsets).not.toEqual(first.offsets);
  });

  it.each([
    ['en', () => english],
    ['ja', () => japanese],
  ])('%s: no two of 50 dialogues share 5 consecutive offsets', (_language, statistics) => {
    const owner = new Map<string, number>();
    for (let dialogue = 0; dialogue < 50; dialogue += 1) {
      const placed = placeDialogue({
        dialogueId: `topiocqa_dev_${String(dialogue).padStart(4, '0')}`,
        seed: 0,
        utterances: alternating(21, 400),
        statistics: statistics(),
      });
      for (let index = 0; index + 5 <= placed.offsets.length; index += 1) {
        const window = placed.offsets.slice(index, index + 5).join(',');
        const earlier = owner.get(window);
        if (earlier !== undefined && earlier !== dialogue) {
          throw new Error(`dialogues ${earlier} and ${dialogue} share offsets ${window}`);
        }
        owner.set(window, dialogue);
      }
    }
  });
});

describe('placeDialogue: offsets follow the statistics', () => {
  it.each([
    ['en', () => english],
    ['ja', () => japanese],
  ])('%s: 2,000 speaker-change offsets match the pooled distribution (KS distance)', (_language, statistics) => {
    const drawn: number[] = [];
    const systemResponses: number[] = [];
    const userResponses: number[] = [];
    let resampled = 0;
    for (let dialogue = 0; drawn.length < 2000; dialogue += 1) {
      // Long utterances (60 s) so the placement constraints almost never reject a draw.
      const placed = placeDialogue({
        dialogueId: `ks-${dialogue}`,
        seed: 11,
        utterances: alternating(21, 6000),
        statistics: statistics(),
      });
      drawn.push(...placed.offsets);
      resampled += placed.resampled;
      placed.offsets.forEach((offset, index) => (index % 2 === 0 ? systemResponses : userResponses).push(offset));
    }
    const pooled = samplingDistributions(statistics()).speakerChange['channel1->channel0'];
    const distance = kolmogorovSmirnovDistance(drawn, pooled);
    // 1.95 / sqrt(2000) ≈ 0.044 is the one-sample critical value at α = 0.001.
    expect(distance).toBeLessThan(0.04);
    expect(resampled / drawn.length).toBeLessThan(0.01);
    expect(Math.abs(median(drawn) - median([...pooled]))).toBeLessThanOrEqual(5);
    // both directions are drawn, neither is a constant (docs/dataset-format.md, known defects)
    expect(new Set(systemResponses).size).toBeGreaterThan(100);
    expect(new Set(userResponses).size).toBeGreaterThan(100);
    const overlapShare = drawn.filter((offset) => offset < 0).length / drawn.length;
    expect(Math.abs(overlapShare - statistics().speakerChange.pooledSummary.overlapFraction)).toBeLessThan(0.04);
  });

  it('uses each direction’s own offsets when the statistics say per-direction (smoothing off: measured values exactly)', () => {
    const statistics = makeStatistics({
      speakerChange: { 'channel0->channel1': [-60, 200], 'channel1->channel0': [10, 20] },
      samplerUse: 'per-direction',
    });
    for (let dialogue = 0; dialogue < 20; dialogue += 1) {
      const placed = placeDialogue({
        dialogueId: `direction-${dialogue}`,
        seed: 1,
        utterances: alternating(12, 500),
        statistics,
        options: { smoothing: false },
      });
      placed.offsets.forEach((offset, index) => {
        // even transitions: user (1) -> system (0); odd: system -> user
        expect(index % 2 === 0 ? [10, 20] : [-60, 200]).toContain(offset);
      });
    }
  });

  it('draws same-speaker gaps from TURN_HOLD gaps, redrawing those not above the 0.6 s minimum', () => {
    const statistics = makeStatistics({ speakerChange: [30], turnHoldGaps: [51, 55, 90] });
    const utterances: UtteranceToPlace[] = [
      { channel: 1, durationCs: 300 },
      { channel: 1, durationCs: 300 },
      { channel: 0, durationCs: 300 },
      { channel: 0, durationCs: 300 },
    ];
    const placed = placeDialogue({
      dialogueId: 'holds',
      seed: 5,
      utterances,
      statistics,
      options: { smoothing: false },
    });
    expect(placed.transitions.map((transition) => transition.kind)).toEqual([
      'same-speaker',
      'speaker-change',
      'same-speaker',
    ]);
    expect(placed.offsets).toEqual([90, 30, 90]);
    expect(placed.starts).toEqual([50, 440, 770, 1160]);
    // 51 and 55 fit no same-speaker transition: replaced during the assignment and never used
    expect(placed.resampled).toBe(
      placed.unassignableDraws + placed.transitions[0]!.rejectedDraws + placed.transitions[2]!.rejectedDraws,
    );
    expect(placed.unplacedDraws).toBeGreaterThanOrEqual(placed.unassignableDraws);
    const events = computeEvents(placedUtteranceSegments(utterances, placed));
    // relation events start at the floor end, so they sort before their TURN (docs/events.md step 4)
    expect(events[1].map((event) => [event.event, event.start, event.end])).toEqual([
      ['TURN', 50, 350],
      ['TURN_HOLD', 350, 440],
      ['TURN', 440, 740],
    ]);
    expect(events[0].map((event) => [event.event, event.start, event.end])).toEqual([
      ['TURN_SHIFT', 740, 770],
      ['TURN', 770, 1070],
      ['TURN_HOLD', 1070, 1160],
      ['TURN', 1160, 1460],
    ]);
  });
});

describe('placeDialogue: constraints', () => {
  it('never overlaps a speaker with themselves and never swallows an utterance (3,000 random dialogues, smoothing off)', () => {
    let transitions = 0;
    let resampled = 0;
    const violations: string[] = [];
    const measuredValues = new Map(
      [english, japanese].map((statistics) => {
        const distributions = samplingDistributions(statistics);
        return [
          statistics,
          {
            sameSpeaker: new Set(distributions.sameSpeaker),
            speakerChange: new Set(distributions.speakerChange['channel0->channel1']),
          },
        ] as const;
      }),
    );
    for (let dialogue = 0; dialogue < 3000; dialogue += 1) {
      const utterances = randomLayout(dialogue, 20);
      const statistics = dialogue % 2 === 0 ? english : japanese;
      const placed = placeDialogue({
        dialogueId: `random-${dialogue}`,
        seed: 2,
        utterances,
        statistics,
        options: { smoothing: false },
      });
      violations.push(
        ...constraintViolations(utterances, placed).map((violation) => `dialogue ${dialogue}: ${violation}`),
      );
      const measured = measuredValues.get(statistics)!;
      placed.transitions.forEach((transition) => {
        if (transition.fallback) return;
        const values = transition.kind === 'same-speaker' ? measured.sameSpeaker : measured.speakerChange;
        if (!values.has(transition.offset))
          violations.push(`dialogue ${dialogue}: offset ${transition.offset} is not a measured value`);
      });
      transitions += placed.transitions.length;
      resampled += placed.resampled;
    }
    expect(violations).toEqual([]);
    expect(transitions).toBeGreaterThan(30_000);
    expect(resampled).toBeGreaterThan(0);
  });

  it('turns every intended speaker change into TURN_SHIFT or BARGE_IN with exactly the drawn offset', () => {
    let bargeIns = 0;
    let speakerChanges = 0;
    for (let dialogue = 0; dialogue < 1000; dialogue += 1) {
      // all utterances longer than 0.80 s, so each is a TURN (docs/events.md step 2)
      const utterances = randomLayout(dialogue, 81);
      const placed = placeDialogue({
        dialogueId: `events-${dialogue}`,
        seed: 9,
        utterances,
        statistics: dialogue % 2 ? english : japanese,
      });
      const segments = placedUtteranceSegments(utterances, placed);
      const relations = turnRelations({ 0: buildIpus(segments[0]), 1: buildIpus(segments[1]) });
      expect(relations).toHaveLength(placed.transitions.length);
      relations.forEach((relation, index) => {
        const transition = placed.transitions[index]!;
        const expected =
          transition.kind === 'same-speaker' ? 'TURN_HOLD' : transition.offset < -40 ? 'BARGE_IN' : 'TURN_SHIFT';
        expect(relation.event).toBe(expected);
        expect(relation.offset).toBe(transition.offset);
        expect(relation.turn.start).toBe(placed.starts[transition.index]);
      });
      const events = computeEvents(segments);
      const bargeInEvents = [...events[0], ...events[1]].filter((event) => event.event === 'BARGE_IN').length;
      expect(bargeInEvents).toBe(
        placed.offsets.filter((offset, index) => placed.transitions[index]!.kind === 'speaker-change' && offset < -40)
          .length,
      );
      bargeIns += bargeInEvents;
      speakerChanges += placed.transitions.filter((transition) => transition.kind === 'speaker-change').length;
    }
    // barge-ins occur, in both directions' worth of transitions, at a rate near the data's (~25 %)
    expect(bargeIns / speakerChanges).toBeGreaterThan(0.1);
    expect(bargeIns / speakerChanges).toBeLessThan(0.3);
  });

  it('produces no BARGE_IN when the drawn values have no overlap above 0.40 s', () => {
    // (smoothing off: with smoothing, -0.40 s can become -0.41 s, a barge-in drawn from the smoothed distribution)
    const statistics = makeStatistics({ speakerChange: [-40, -30, -5, 0, 15, 60, 200] });
    for (let dialogue = 0; dialogue < 300; dialogue += 1) {
      const utterances = randomLayout(dialogue, 81);
      const placed = placeDialogue({
        dialogueId: `calm-${dialogue}`,
        seed: 1,
        utterances,
        statistics,
        options: { smoothing: false },
      });
      const events = computeEvents(placedUtteranceSegments(utterances, placed));
      expect([...events[0], ...events[1]].some((event) => event.event === 'BARGE_IN')).toBe(false);
    }
  });
});

describe('placeDialogue: redraws and fallback (smoothing off)', () => {
  it('replaces values no transition can take and keeps only feasible measured values', () => {
    // -500 can never fit (200 cs utterances allow at most 100 cs overlap), 20 always fits
    const statistics = makeStatistics({ speakerChange: [-500, 20] });
    const placed = placeDialogue({
      dialogueId: 'redraw',
      seed: 1,
      utterances: alternating(200, 200),
      statistics,
      options: { smoothing: false },
    });
    expect(placed.backchannelLengthIndices).toEqual([]);
    expect(placed.offsets.every((offset) => offset === 20)).toBe(true);
    expect(placed.fallbacks).toBe(0);
    // stratified draws: the lower half of the strata per direction (100 and 99 transitions: 50 + 50)
    // draw -500, and each is replaced once, by the lowest feasible measured value (20)
    expect(placed.transitions.length).toBe(199);
    expect(placed.unassignableDraws).toBe(100);
    expect(placed.resampled).toBe(placed.unassignableDraws);
    expect(placed.unplacedDraws).toBe(placed.unassignableDraws);
  });

  it('falls back to the smallest feasible measured value when draws run out', () => {
    // Only 20 lies under the largest gap (30 cs): every other value is replaced, the replacements run
    // out (one per transition), and the transitions left without a value fall back to 20.
    const statistics = makeStatistics({ speakerChange: [-900, 20, 40, 60, 80, 100, 120] });
    const placed = placeDialogue({
      dialogueId: 'fallback',
      seed: 1,
      utterances: alternating(100, 200),
      statistics,
      options: { maximumDraws: 1, smoothing: false, maximumGapCs: 30 },
    });
    expect(placed.fallbacks).toBeGreaterThan(0);
    expect(placed.offsets.every((offset) => offset === 20)).toBe(true);
    expect(placed.fallbacks).toBe(placed.transitions.filter((transition) => transition.source === 'fallback').length);
  });

  it('falls back to the lowest feasible start when no measured value fits', () => {
    const statistics = makeStatistics({ speakerChange: [-900, -500] });
    const placed = placeDialogue({
      dialogueId: 'nothing-fits',
      seed: 1,
      utterances: alternating(4, 200),
      statistics,
      options: { maximumDraws: 5, smoothing: false },
    });
    // [50, 250] on channel 1; then the lowest start is the largest lower bound:
    // utterance 1: 1 s after the previous start (minimumLeadCs) -> 150, offset -100;
    // utterance 2: 0.6 s after its own speaker's end at 250 (minimumSameSpeakerGapCs) -> 310, offset -40;
    // utterance 3: max(310 + 100, 350 + 60) = 410, offset 410 - 510 = -100.
    expect(placed.starts).toEqual([50, 150, 310, 410]);
    expect(placed.offsets).toEqual([-100, -40, -100]);
    expect(placed.fallbacks).toBe(3);
    // assignment: each direction's own values plus 5 replacements per transition fail (2 + 10, 1 + 5);
    // placement: 5 fresh draws per transition fail
    expect(placed.unassignableDraws).toBe(18);
    expect(placed.resampled).toBe(18 + 15);
  });

  it('redraws gaps above maximumGapCs', () => {
    const statistics = makeStatistics({ speakerChange: [10, 5000] });
    const placed = placeDialogue({
      dialogueId: 'capped',
      seed: 1,
      utterances: alternating(50, 300),
      statistics,
      options: { maximumGapCs: 300, smoothing: false },
    });
    expect(placed.offsets.every((offset) => offset === 10)).toBe(true);
    expect(placed.resampled).toBeGreaterThan(0);
  });
});

describe('placeDialogue: options and input errors', () => {
  const statistics = () => makeStatistics({ speakerChange: [20] });

  it('applies leading and trailing silence and optional jitter', () => {
    const placed = placeDialogue({
      dialogueId: 'silences',
      seed: 1,
      utterances: alternating(3, 100),
      statistics: statistics(),
      options: { leadingSilenceCs: 120, trailingSilenceCs: 30 },
    });
    expect(placed.starts).toEqual([120, 240, 360]);
    expect(placed.leadingSilenceCs).toBe(120);
    expect(placed.backchannelLengthIndices).toEqual([]);
    expect(placed.totalDurationCs).toBe(490);
    const jittered = placeDialogue({
      dialogueId: 'jitter',
      seed: 1,
      utterances: alternating(200, 300),
      statistics: statistics(),
      options: { jitterCs: 5 },
    });
    expect(Math.min(...jittered.offsets)).toBeGreaterThanOrEqual(15);
    expect(Math.max(...jittered.offsets)).toBeLessThanOrEqual(25);
    expect(new Set(jittered.offsets).size).toBe(11);
  });

  it('lists utterances short enough to become BCs (<= 0.80 s)', () => {
    const utterances: UtteranceToPlace[] = [
      { channel: 1, durationCs: 300 },
      { channel: 0, durationCs: 80 },
      { channel: 1, durationCs: 81 },
    ];
    expect(
      placeDialogue({ dialogueId: 'short', seed: 1, utterances, statistics: statistics() }).backchannelLengthIndices,
    ).toEqual([1]);
  });

  it('rejects invalid input, naming the dialogue', () => {
    const base = { dialogueId: 'bad', seed: 1, statistics: statistics() };
    expect(() => placeDialogue({ ...base, utterances: [] })).toThrow(/dialogue bad: no utterances/);
    expect(() => placeDialogue({ ...base, utterances: [{ channel: 1, durationCs: 1.5 }] })).toThrow(
      TimelinePlacementError,
    );
    expect(() => placeDialogue({ ...base, utterances: [{ channel: 2 as Channel, durationCs: 100 }] })).toThrow(
      /channel must be 0 or 1/,
    );
    expect(() =>
      placeDialogue({ ...base, utterances: alternating(2, 100), options: { minimumSameSpeakerGapCs: 50 } }),
    ).toThrow(/must exceed the IPU pause threshold of 50 cs/);
    expect(() => placeDialogue({ ...base, utterances: alternating(2, 100), options: { minimumOutlastCs: 0 } })).toThrow(
      /minimumOutlastCs/,
    );
    expect(() =>
      placeDialogue({
        ...base,
        utterances: [{ channel: 1, durationCs: 100, speechSegments: [{ start: 50, end: 120 }] }],
      }),
    ).toThrow(/speech segment 0/);
    expect(() => placeDialogue({ ...base, seed: 1.5, utterances: alternating(2, 100) })).toThrow(RangeError);
    expect(() => placeDialogue({ ...base, dialogueId: '', utterances: alternating(2, 100) })).toThrow(RangeError);
    const noHolds = makeStatistics({ speakerChange: [20], turnHoldGaps: [] });
    expect(() =>
      placeDialogue({
        ...base,
        statistics: noHolds,
        utterances: [
          { channel: 1, durationCs: 100 },
          { channel: 1, durationCs: 100 },
        ],
      }),
    ).toThrow(/no same-speaker values/);
  });
});
