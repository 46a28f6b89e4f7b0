/**
 * The benchmark profile (system answers only after a gap), pinned offsets, and the barge-in variant,
 * checked through the events the benchmark's loader would sample (pipeline/events/evaluable-events.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { computeEvents } from '../events/index.ts';
import { benchmarkLoaderSettings, classifyEvents } from '../events/evaluable-events.ts';
import type { Channel } from '../model/types.ts';
import { kolmogorovSmirnovDistance } from './empirical-distribution.ts';
import { buildFidelityReport, generatedDialogueTiming } from './fidelity.ts';
import { placeBargeInVariant, type VariantUtterance } from './place-barge-in-variant.ts';
import {
  placeDialogue,
  placedUtteranceSegments,
  TimelinePlacementError,
  type UtteranceToPlace,
} from './place-dialogue.ts';
import { dialogueRandomStream } from '../model/random.ts';
import { makeStatistics } from './test-helpers.ts';
import { fitTimingModel, loadDefaultTimingStatistics, type TimingStatistics } from './timing-statistics.ts';

let english: TimingStatistics;
let japanese: TimingStatistics;
beforeAll(async () => {
  english = await loadDefaultTimingStatistics('en');
  japanese = await loadDefaultTimingStatistics('ja');
});

const USER: Channel = 1;
const SYSTEM: Channel = 0;

/** Questions (user, 1.2–3.5 s) and answers (system, 1.5–9 s), with words every 30–45 cs. */
function layout(id: string, pairs: number): VariantUtterance[] {
  const random = dialogueRandomStream(5, id, 'test-layout');
  const utterance = (channel: Channel, low: number, high: number): VariantUtterance => {
    const durationCs = random.integer(low, high);
    const wordEndsCs: number[] = [];
    for (let end = random.integer(20, 40); end < durationCs; end += random.integer(30, 45)) wordEndsCs.push(end);
    wordEndsCs.push(durationCs);
    return { channel, durationCs, wordEndsCs };
  };
  return Array.from({ length: pairs }, () => [utterance(USER, 120, 350), utterance(SYSTEM, 150, 900)]).flat();
}

describe('benchmark profile: the system never overlaps the user', () => {
  it.each([
    ['en', () => english],
    ['ja', () => japanese],
  ])(
    '%s: every system answer starts at least 0.01 s after the question ends, so the loader keeps every system TURN_SHIFT',
    (_language, statistics) => {
      const [, withContext] = benchmarkLoaderSettings('task');
      const systemGaps: number[] = [];
      let userOverlaps = 0;
      let shifts = 0;
      for (let dialogue = 0; dialogue < 60; dialogue += 1) {
        const id = `d${dialogue}`;
        const utterances = layout(id, 10);
        const placed = placeDialogue({
          dialogueId: id,
          seed: 3,
          utterances,
          statistics: statistics(),
          options: { gapOnlyChannel: SYSTEM },
        });
        for (const transition of placed.transitions) {
          if (utterances[transition.index]!.channel === SYSTEM) systemGaps.push(transition.offset);
          else if (transition.offset < 0) userOverlaps += 1;
        }
        const decisions = classifyEvents(
          computeEvents(placedUtteranceSegments(utterances, placed)),
          withContext!.settings,
        );
        const systemShifts = decisions.filter(
          (decision) => decision.event === 'TURN_SHIFT' && decision.channel === SYSTEM,
        );
        shifts += systemShifts.length;
        expect(systemShifts.every((decision) => decision.dropped === null)).toBe(true);
      }
      expect(shifts).toBe(60 * 10); // one system TURN_SHIFT per answer
      expect(Math.min(...systemGaps)).toBeGreaterThanOrEqual(1);
      expect(userOverlaps).toBeGreaterThan(0); // the user still overlaps at the measured rate
      // the gaps follow the positive part of the measured offsets
      const target = fitTimingModel(statistics()).speakerChangeGaps['channel1->channel0']!.values;
      expect(kolmogorovSmirnovDistance(systemGaps, target)).toBeLessThan(0.06);
    },
  );

  it('the fidelity report compares system gaps with the positive part and user offsets with the whole', () => {
    const timings = Array.from({ length: 40 }, (_, dialogue) => {
      const id = `f${dialogue}`;
      const utterances = layout(id, 10);
      const placed = placeDialogue({
        dialogueId: id,
        seed: 9,
        utterances,
        statistics: english,
        options: { gapOnlyChannel: SYSTEM },
      });
      return generatedDialogueTiming(id, utterances, placed, USER);
    });
    const report = buildFidelityReport(english, timings, { backchannelsGenerated: false, gapOnlyChannel: SYSTEM });
    const toSystem = report.directions.find((entry) => entry.direction === 'channel1->channel0')!;
    const toUser = report.directions.find((entry) => entry.direction === 'channel0->channel1')!;
    expect(toSystem.part).toBe('gaps');
    expect(toSystem.measuredBargeInFraction).toBe(0);
    expect(toSystem.generatedOverlapFraction).toBe(0);
    expect(toSystem.kolmogorovSmirnovDistance).toBeLessThanOrEqual(0.05);
    expect(toUser.part).toBe('whole');
    expect(toUser.kolmogorovSmirnovDistance).toBeLessThanOrEqual(0.08);
    expect(report.checks.find((check) => check.name === 'no-offset-atoms')?.passed).toBe(true);
  });

  it('reports generated atoms when the statistics force one value', () => {
    const statistics = makeStatistics({
      speakerChange: Array.from({ length: 300 }, (_, index) => (index % 2 === 0 ? 20 : 20 + (index % 97))),
    });
    const timings = Array.from({ length: 10 }, (_, dialogue) => {
      const id = `a${dialogue}`;
      const utterances = layout(id, 8);
      const placed = placeDialogue({ dialogueId: id, seed: 1, utterances, statistics, options: { smoothing: false } });
      return generatedDialogueTiming(id, utterances, placed, USER);
    });
    const report = buildFidelityReport(statistics, timings, { backchannelsGenerated: false });
    // half the measured values are 0.20 s: an atom; the sampler spreads it (censored), so fewer remain
    expect(report.atoms.measured.some((atom) => atom.valueSeconds === 0.2)).toBe(true);
    const check = report.checks.find((entry) => entry.name === 'no-offset-atoms')!;
    expect(check.passed).toBe(report.atoms.generated.length === 0);
  });
});

describe('pinned offsets', () => {
  it('places a pinned transition exactly and draws the others', () => {
    const utterances: UtteranceToPlace[] = layout('p', 4);
    const pinned = new Map([[3, -Math.min(60, utterances[2]!.durationCs - 100)]]);
    const placed = placeDialogue({ dialogueId: 'p', seed: 1, utterances, statistics: english, pinnedOffsets: pinned });
    expect(placed.offsets[2]).toBe(pinned.get(3));
    expect(placed.transitions[2]!.source).toBe('pinned');
  });

  it('refuses a pinned offset that breaks a constraint, naming the utterance', () => {
    const utterances: UtteranceToPlace[] = [
      { channel: USER, durationCs: 200 },
      { channel: SYSTEM, durationCs: 300 },
    ];
    expect(() =>
      placeDialogue({ dialogueId: 'x', seed: 1, utterances, statistics: english, pinnedOffsets: new Map([[1, -190]]) }),
    ).toThrow(TimelinePlacementError);
    expect(() =>
      placeDialogue({ dialogueId: 'x', seed: 1, utterances, statistics: english, pinnedOffsets: new Map([[1, -190]]) }),
    ).toThrow(/utterance 1/);
  });
});

describe('barge-in variant', () => {
  it.each(['next-word-boundary', 'runs-on'] as const)(
    '%s: the user barges in on every answer long enough; all are BARGE_INs the loader keeps with context',
    (systemYields) => {
      const [, withContext] = benchmarkLoaderSettings('task', { bargeInVariant: true });
      let bargeIns = 0;
      let answers = 0;
      for (let dialogue = 0; dialogue < 40; dialogue += 1) {
        const id = `v${dialogue}`;
        const utterances = layout(id, 8);
        const variant = placeBargeInVariant(
          { dialogueId: id, seed: 2, utterances, statistics: english },
          { systemChannel: SYSTEM, systemYields, maximumDraws: 100 },
        );
        answers += utterances.filter(
          (utterance, index) => utterance.channel === SYSTEM && index + 1 < utterances.length,
        ).length;
        expect(variant.bargeIns.length + variant.answersTooShort.length).toBe(7);
        for (const bargeIn of variant.bargeIns) {
          const answer = utterances[bargeIn.answerIndex]!;
          expect(bargeIn.leadCs).toBeGreaterThanOrEqual(100);
          expect(bargeIn.cutCs - bargeIn.leadCs).toBeGreaterThan(40);
          expect(bargeIn.cutCs - bargeIn.leadCs).toBeGreaterThanOrEqual(bargeIn.drawnOverlapCs);
          if (systemYields === 'runs-on') expect(bargeIn.cutCs).toBe(answer.durationCs);
          else {
            expect(answer.wordEndsCs).toContain(bargeIn.cutCs);
            // the system must stop: at least 1 s or 3 words of the answer are left unspoken
            expect(bargeIn.unspokenCs).toBe(answer.durationCs - bargeIn.cutCs);
            expect(
              bargeIn.unspokenCs >= 100 || answer.wordEndsCs.filter((end) => end > bargeIn.cutCs).length >= 3,
            ).toBe(true);
          }
          expect(variant.utterances[bargeIn.answerIndex]!.durationCs).toBe(bargeIn.cutCs);
          const start = variant.placement.starts[bargeIn.questionIndex]!;
          expect(start - variant.placement.starts[bargeIn.answerIndex]!).toBe(bargeIn.leadCs);
        }
        // too short: no room for the 1 s lead, a 0.41 s overlap to a word end and (next-word-boundary) 1 s or 3 words left unspoken
        for (const index of variant.answersTooShort)
          expect(utterances[index]!.durationCs).toBeLessThan(
            100 + 41 + 60 + (systemYields === 'runs-on' ? 0 : 45 + 100),
          );
        const events = computeEvents(placedUtteranceSegments(variant.utterances, variant.placement));
        const kept = classifyEvents(events, withContext!.settings).filter((decision) => decision.dropped === null);
        const userBargeIns = events[USER].filter((event) => event.event === 'BARGE_IN');
        // every planned barge-in is a BARGE_IN event starting at its question, and every BARGE_IN is kept
        for (const bargeIn of variant.bargeIns)
          expect(userBargeIns.map((event) => event.start)).toContain(variant.placement.starts[bargeIn.questionIndex]);
        // and every BARGE_IN is a planned one: an answer not barged in on gets no overlap beyond 0.40 s
        expect(userBargeIns).toHaveLength(variant.bargeIns.length);
        expect(kept.filter((decision) => decision.event === 'BARGE_IN')).toHaveLength(userBargeIns.length);
        expect(kept.every((decision) => decision.event === 'BARGE_IN')).toBe(true);
        expect(events[SYSTEM].filter((event) => event.event === 'BARGE_IN')).toHaveLength(0); // the system never barges in
        bargeIns += variant.bargeIns.length;
      }
      expect(bargeIns / answers).toBeGreaterThan(0.6);
    },
  );

  it('draws the same variant again for the same seed, another for another seed', () => {
    const utterances = layout('same', 8);
    const once = placeBargeInVariant(
      { dialogueId: 'same', seed: 4, utterances, statistics: japanese },
      { systemChannel: SYSTEM, systemYields: 'next-word-boundary', maximumDraws: 100 },
    );
    const again = placeBargeInVariant(
      { dialogueId: 'same', seed: 4, utterances, statistics: japanese },
      { systemChannel: SYSTEM, systemYields: 'next-word-boundary', maximumDraws: 100 },
    );
    const other = placeBargeInVariant(
      { dialogueId: 'same', seed: 5, utterances, statistics: japanese },
      { systemChannel: SYSTEM, systemYields: 'next-word-boundary', maximumDraws: 100 },
    );
    expect(again).toEqual(once);
    expect(other.bargeIns).not.toEqual(once.bargeIns);
  });

  it('refuses statistics without barge-ins, naming the dialogue', () => {
    const statistics = makeStatistics({ speakerChange: [10, 20, 30, 40] });
    expect(() =>
      placeBargeInVariant(
        { dialogueId: 'nb', seed: 1, utterances: layout('nb', 2), statistics },
        { systemChannel: SYSTEM, systemYields: 'runs-on', maximumDraws: 10 },
      ),
    ).toThrow(/dialogue nb: .*no barge-ins/);
  });
});
