import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../model/types.ts';
import {
  buildFidelityReport,
  formatFidelityJson,
  formatFidelityMarkdown,
  generatedDialogueTiming,
  type FidelityReport,
  type GeneratedDialogueTiming,
} from './fidelity.ts';
import { placeDialogue, type PlacedDialogue, type UtteranceToPlace } from './place-dialogue.ts';
import { dialogueRandomStream } from '../model/random.ts';
import { makeStatistics } from './test-helpers.ts';
import { defaultTimingFile } from '../../scripts/derive-default-timing.ts';
import { loadDefaultTimingStatistics, loadTimingStatistics, type TimingStatistics } from './timing-statistics.ts';

let english: TimingStatistics;
let japanese: TimingStatistics;
let englishCallFriend: TimingStatistics;
beforeAll(async () => {
  english = await loadDefaultTimingStatistics('en');
  japanese = await loadDefaultTimingStatistics('ja');
  englishCallFriend = await loadTimingStatistics(defaultTimingFile('en.callfriend'));
});

/**
 * MT-QA layout with realistic speech durations: the user (channel 1) asks questions of 1.5–4 s, the
 * system (channel 0) answers in 2–12 s; `pairs` question/answer pairs.
 */
function questionAnswerLayout(
  id: string,
  pairs: number,
  questionCs: [number, number] = [150, 400],
): UtteranceToPlace[] {
  const random = dialogueRandomStream(23, id, 'test-layout');
  return Array.from({ length: pairs }, () => [
    { channel: 1 as Channel, durationCs: random.integer(questionCs[0], questionCs[1]) },
    { channel: 0 as Channel, durationCs: random.integer(200, 1200) },
  ]).flat();
}

/** Generates `count` dialogues the way a build does (user backchannels on) and returns their timing. */
function generate(
  statistics: TimingStatistics,
  count: number,
  questionCs?: [number, number],
): { timings: GeneratedDialogueTiming[]; placements: PlacedDialogue[] } {
  const timings: GeneratedDialogueTiming[] = [];
  const placements: PlacedDialogue[] = [];
  for (let dialogue = 0; dialogue < count; dialogue += 1) {
    const id = `topiocqa_dev_${String(dialogue).padStart(4, '0')}`;
    const utterances = questionAnswerLayout(id, 10, questionCs);
    const placed = placeDialogue({
      dialogueId: id,
      seed: 7,
      utterances,
      statistics,
      backchannels: { listenerChannel: 1, clipDurationsCs: [32, 45, 58] },
    });
    placements.push(placed);
    timings.push(generatedDialogueTiming(id, utterances, placed));
  }
  return { timings, placements };
}

function check(report: FidelityReport, name: string) {
  return report.checks.find((entry) => entry.name === name)!;
}

describe('fidelity of generated question/answer timelines against the measured statistics', () => {
  it.each([
    ['en', () => english],
    ['ja', () => japanese],
  ])(
    '%s, a build of 150 dialogues: KS ≤ 0.05 per direction, barge-in and backchannel rates within 10 %, no shared 5-runs',
    (_language, statistics) => {
      const { timings, placements } = generate(statistics(), 150);
      const report = buildFidelityReport(statistics(), timings);
      for (const entry of report.directions) {
        expect(entry.generatedCount).toBeGreaterThanOrEqual(1000);
        expect(entry.kolmogorovSmirnovDistance).toBeLessThanOrEqual(0.05);
      }
      expect(report.bargeIn.relativeDifference).toBeLessThanOrEqual(0.1);
      expect(report.backchannels.relativeDifference).toBeLessThanOrEqual(0.1);
      expect(report.sharedRuns.dialoguePairs).toBe(0);
      // the check is meaningful: at this size chance alone would rarely produce a shared run
      expect(report.sharedRuns.expectedByChance).toBeLessThan(0.1);
      expect(report.checks.every((entry) => entry.passed)).toBe(true);
      // the constraints cost little: values no transition could take, and fallbacks
      const transitions = placements.reduce((sum, placed) => sum + placed.transitions.length, 0);
      expect(placements.reduce((sum, placed) => sum + placed.unplacedDraws, 0) / transitions).toBeLessThan(0.03);
      expect(placements.reduce((sum, placed) => sum + placed.fallbacks, 0)).toBe(0);
    },
  );

  it.each([
    ['en', () => english],
    ['ja', () => japanese],
    ['en, CallFriend (its 18 % atom at 0.00 s censored)', () => englishCallFriend],
  ])(
    '%s, 2,000 dialogues: the sampler is unbiased to KS ≤ 0.02 and rates within 5 %; shared runs only by chance',
    (language, statistics) => {
      const { timings } = generate(statistics(), 2000);
      const report = buildFidelityReport(statistics(), timings);
      for (const entry of report.directions) {
        expect(entry.generatedCount).toBeGreaterThanOrEqual(18_000);
        expect(entry.kolmogorovSmirnovDistance).toBeLessThanOrEqual(0.02);
        expect(
          Math.abs(entry.generatedBargeInFraction - entry.measuredBargeInFraction) / entry.measuredBargeInFraction,
        ).toBeLessThan(0.05);
      }
      expect(report.bargeIn.relativeDifference).toBeLessThan(0.05);
      expect(report.backchannels.relativeDifference).toBeLessThan(0.05);
      // no atoms in either default (Map Task word timings; CallFriend Japanese), so no repeated runs
      expect(report.sharedRuns.dialoguePairs).toBe(0);
    },
  );

  it.each([
    ['en', 'topiocqa-dev-en-durations.json', [579, 629], 20261130],
    ['en', 'topiocqa-dev-en-durations.json', [579, 629], 1],
    ['en', 'topiocqa-dev-en-durations.json', [579, 629], 2],
    ['en', 'topiocqa-dev-en-durations.json', [579, 629], 3],
    ['ja', 'topiocqa-dev-ja-durations.json', [383, 416], 20261130],
    ['ja', 'topiocqa-dev-ja-durations.json', [383, 416], 1],
    ['ja', 'topiocqa-dev-ja-durations.json', [383, 416], 2],
  ] as const)(
    '%s, real utterance lengths of built TopiOCQA dialogues (%s, %j speaker changes by direction), seed %i: every fidelity check passes',
    (language, file, counts, seed) => {
      // Questions of 1.2–3.2 s (English, 10th–90th percentile) and 1.6–3.9 s (Japanese): the "nothing
      // swallowed" and own-channel constraints bind, which is what the joint assignment and the
      // replacement by the closest feasible value are for.
      const statistics = language === 'en' ? english : japanese;
      const fixture = JSON.parse(readFileSync(new URL(`./fixtures/${file}`, import.meta.url), 'utf8')) as {
        dialogues: { id: string; utterances: [Channel, number][] }[];
      };
      const timings = fixture.dialogues.map(({ id, utterances: pairs }) => {
        const utterances = pairs.map(([channel, durationCs]) => ({ channel, durationCs }));
        const placed = placeDialogue({
          dialogueId: id,
          seed,
          utterances,
          statistics,
          options: { maximumGapCs: 500 },
          backchannels: { listenerChannel: 1, clipDurationsCs: [45, 53, 60] },
        });
        return generatedDialogueTiming(id, utterances, placed);
      });
      const report = buildFidelityReport(statistics, timings);
      expect(report.directions.map((entry) => entry.generatedCount)).toEqual(counts);
      expect(report.checks.filter((entry) => !entry.passed)).toEqual([]);
    },
  );

  it('reports honestly when the constraints make the target impossible (questions of 1.1–1.6 s)', () => {
    // A question shorter than 1.5 s cannot be overlapped by more than 0.5 s (the previous speaker
    // speaks at least 1 s first), so the measured overlaps beyond that cannot be generated.
    const { timings, placements } = generate(japanese, 150, [110, 160]);
    const report = buildFidelityReport(japanese, timings);
    const systemResponds = report.directions.find((entry) => entry.direction === 'channel1->channel0')!;
    expect(systemResponds.generatedBargeInFraction).toBeLessThan(systemResponds.measuredBargeInFraction);
    expect(check(report, 'ks-channel1->channel0').passed).toBe(false);
    expect(check(report, 'barge-in-rate').passed).toBe(false);
    expect(placements.reduce((sum, placed) => sum + placed.unassignableDraws, 0)).toBeGreaterThan(100);
  });
});

describe('buildFidelityReport', () => {
  const statistics = makeStatistics({
    speakerChange: { 'channel0->channel1': [-60, 10, 20, 30], 'channel1->channel0': [-50, 0, 40, 80] },
    samplerUse: 'per-direction',
    backchannels: {
      byListener: { 0: { count: 1, hostTurnCs: 6000 }, 1: { count: 3, hostTurnCs: 6000 } },
      durationsCs: [40, 40, 50, 60],
      relativePositionsThousandths: [100, 200, 300, 400],
    },
  });
  const dialogue = (
    id: string,
    toUser: number[],
    toSystem: number[],
    backchannels = 0,
    seconds = 60,
  ): GeneratedDialogueTiming => ({
    id,
    offsetsCs: { 'channel0->channel1': toUser, 'channel1->channel0': toSystem },
    backchannels,
    otherSpeakerSpeechSeconds: seconds,
  });

  it('compares per direction, rates, and counts dialogue pairs that share five consecutive offsets', () => {
    const report = buildFidelityReport(statistics, [
      dialogue('a', [-60, 10, 20, 30, 10, 20], [-50, 0, 40, 80], 3),
      dialogue('b', [1, 2, 3, 4, 5, 6], [0, 40, 80, -50, 0], 2),
      dialogue('c', [0, 1, 2, 3, 4, 5], [7, 8, 9, 10, 11], 1),
    ]);
    const toUser = report.directions[0]!;
    expect(toUser).toMatchObject({
      direction: 'channel0->channel1',
      target: 'per-direction',
      measuredCount: 4,
      generatedCount: 18,
    });
    expect(toUser.measuredBargeInFraction).toBe(0.25);
    expect(toUser.generatedBargeInFraction).toBe(0.0556);
    expect(report.backchannels).toMatchObject({
      listenerChannel: 1,
      measuredPerMinute: 3,
      generatedPerMinute: 2,
      generatedCount: 6,
      otherSpeakerSpeechSeconds: 180,
    });
    expect(report.backchannels.relativeDifference).toBe(0.3333);
    // b and c share 1,2,3,4,5 (channel0->channel1)
    expect(report.sharedRuns.dialoguePairs).toBe(1);
    expect(report.sharedRuns.examples).toEqual([
      { first: 'b', second: 'c', direction: 'channel0->channel1', offsetsSeconds: [0.01, 0.02, 0.03, 0.04, 0.05] },
    ]);
    expect(report.checks.map((entry) => [entry.name, entry.passed])).toEqual([
      ['ks-channel0->channel1', false],
      ['ks-channel1->channel0', false],
      ['barge-in-rate', false],
      ['backchannel-rate', false],
      ['no-offset-atoms', true],
      ['no-shared-runs', false],
    ]);
  });

  it('writes deterministic JSON and Markdown', () => {
    const dialogues = [dialogue('a', [-60, 10], [0, 40], 1), dialogue('b', [20, 30], [-50, 80], 2)];
    const report = buildFidelityReport(statistics, dialogues);
    expect(formatFidelityJson(buildFidelityReport(statistics, dialogues))).toBe(formatFidelityJson(report));
    expect(JSON.parse(formatFidelityJson(report))).toEqual(report);
    const markdown = formatFidelityMarkdown(report);
    expect(markdown).toBe(formatFidelityMarkdown(buildFidelityReport(statistics, dialogues)));
    expect(markdown).toContain('| channel0->channel1 | whole distribution | 4 | 4 | 0 |');
    expect(markdown).toContain('## Value atoms');
    expect(markdown).toContain('## Checks');
  });

  it('does not fail the backchannel check when the build placed none on purpose', () => {
    const dialogues = [dialogue('a', [-60, 10], [0, 40]), dialogue('b', [20, 30], [-50, 80])];
    expect(check(buildFidelityReport(statistics, dialogues), 'backchannel-rate').passed).toBe(false);
    const off = check(buildFidelityReport(statistics, dialogues, { backchannelsGenerated: false }), 'backchannel-rate');
    expect(off).toMatchObject({
      passed: true,
      detail: expect.stringMatching(/^backchannels not generated; generated 0 vs measured 3/),
    });
  });

  it('rejects repeated dialogue ids and non-integer offsets', () => {
    expect(() => buildFidelityReport(statistics, [dialogue('a', [1], [1]), dialogue('a', [2], [2])])).toThrow(
      /appears twice/,
    );
    expect(() => buildFidelityReport(statistics, [dialogue('a', [1.5], [1])])).toThrow(/integer centiseconds/);
  });

  it('generatedDialogueTiming takes the offsets by direction, the backchannels and the host speech from a placement', () => {
    const utterances: UtteranceToPlace[] = [
      { channel: 1, durationCs: 300 },
      { channel: 0, durationCs: 500 },
      { channel: 0, durationCs: 400 },
      { channel: 1, durationCs: 200 },
    ];
    const placed = placeDialogue({
      dialogueId: 'x',
      seed: 1,
      utterances,
      statistics,
      backchannels: { listenerChannel: 1, clipDurationsCs: [40] },
    });
    const timing = generatedDialogueTiming('x', utterances, placed);
    expect(timing.offsetsCs['channel1->channel0']).toEqual([placed.offsets[0]]);
    expect(timing.offsetsCs['channel0->channel1']).toEqual([placed.offsets[2]]);
    expect(timing.backchannels).toBe(placed.backchannels.length);
    expect(timing.otherSpeakerSpeechSeconds).toBe(9);
  });
});
