import { beforeAll, describe, expect, it } from 'vitest';
import { buildIpus, computeEvents, turnRelations } from '../events/index.ts';
import type { Channel } from '../model/types.ts';
import { BackchannelPlacementError, hostSpeechCs, placeBackchannels } from './place-backchannels.ts';
import { placeDialogue, placedUtteranceSegments, type UtteranceToPlace } from './place-dialogue.ts';
import { dialogueRandomStream } from '../model/random.ts';
import { makeStatistics } from './test-helpers.ts';
import { fitTimingModel, loadDefaultTimingStatistics, type TimingStatistics } from './timing-statistics.ts';

let english: TimingStatistics;
let japanese: TimingStatistics;
beforeAll(async () => {
  english = await loadDefaultTimingStatistics('en');
  japanese = await loadDefaultTimingStatistics('ja');
});

/** MT-QA order: the user (channel 1) asks 1.5–4 s questions, the system (channel 0) gives 2–12 s answers. */
function questionAnswerLayout(id: string, pairs = 10): UtteranceToPlace[] {
  const random = dialogueRandomStream(17, id, 'test-layout');
  return Array.from({ length: pairs }, () => [
    { channel: 1 as Channel, durationCs: random.integer(150, 400) },
    { channel: 0 as Channel, durationCs: random.integer(200, 1200) },
  ]).flat();
}

const CLIPS = [32, 45, 58]; // "uh-huh" variants, ≤ 0.80 s

describe('placeBackchannels in question/answer dialogues', () => {
  it.each([
    ['en', () => english],
    ['ja', () => japanese],
  ])('%s: inside the host, clear of the user, labelled BC, turn-taking unchanged', (_language, statistics) => {
    let placedCount = 0;
    for (let dialogue = 0; dialogue < 100; dialogue += 1) {
      const dialogueId = `bc-${dialogue}`;
      const utterances = questionAnswerLayout(dialogueId);
      const withBackchannels = placeDialogue({
        dialogueId,
        seed: 4,
        utterances,
        statistics: statistics(),
        backchannels: { listenerChannel: 1, clipDurationsCs: CLIPS },
      });
      const without = placeDialogue({ dialogueId, seed: 4, utterances, statistics: statistics() });
      // backchannels never move an utterance
      expect(withBackchannels.starts).toEqual(without.starts);
      expect(without.backchannels).toEqual([]);
      expect(without.backchannelReport).toBeNull();

      const userSpans = utterances.flatMap((utterance, index) =>
        utterance.channel === 1 ? [{ start: withBackchannels.starts[index]!, end: withBackchannels.ends[index]! }] : [],
      );
      for (const backchannel of withBackchannels.backchannels) {
        const host = backchannel.hostUtteranceIndex;
        expect(utterances[host]!.channel).toBe(0);
        expect(backchannel.start).toBeGreaterThanOrEqual(withBackchannels.starts[host]!);
        expect(backchannel.end).toBeLessThanOrEqual(withBackchannels.ends[host]!);
        expect(backchannel.end - backchannel.start).toBe(CLIPS[backchannel.clipIndex]);
        for (const span of [...userSpans, ...withBackchannels.backchannels.filter((other) => other !== backchannel)]) {
          expect(backchannel.start >= span.end + 60 || backchannel.end + 60 <= span.start).toBe(true);
        }
      }
      // the rules label every backchannel BC, keep it (its start lies inside a TURN of channel 0), and
      // give the same TURN_SHIFT / BARGE_IN / TURN_HOLD relations as without backchannels
      const events = computeEvents(placedUtteranceSegments(utterances, withBackchannels));
      const backchannelEvents = events[1].filter((event) => event.event === 'BC');
      expect(backchannelEvents.map((event) => [event.start, event.end])).toEqual(
        withBackchannels.backchannels.map((backchannel) => [backchannel.start, backchannel.end]),
      );
      const systemTurns = events[0].filter((event) => event.event === 'TURN');
      for (const event of backchannelEvents)
        expect(systemTurns.some((turn) => turn.start <= event.start && event.start < turn.end)).toBe(true);
      const relationsOf = (segments: ReturnType<typeof placedUtteranceSegments>) =>
        turnRelations({ 0: buildIpus(segments[0]), 1: buildIpus(segments[1]) }).map((relation) => [
          relation.event,
          relation.start,
          relation.end,
        ]);
      expect(relationsOf(placedUtteranceSegments(utterances, withBackchannels))).toEqual(
        relationsOf(placedUtteranceSegments(utterances, without)),
      );
      const report = withBackchannels.backchannelReport!;
      expect(report.placed).toBe(withBackchannels.backchannels.length);
      expect(report.requested).toBe(report.placed + report.unplaced);
      expect(report.hostSpeechCs).toBe(
        utterances
          .filter((utterance) => utterance.channel === 0)
          .reduce((sum, utterance) => sum + utterance.durationCs, 0),
      );
      placedCount += report.placed;
    }
    expect(placedCount).toBeGreaterThan(150);
  });
});

describe('placeBackchannels: model details', () => {
  const statistics = makeStatistics({
    speakerChange: [20, 30],
    backchannels: {
      // 60 per minute: one per second of host speech
      byListener: { 0: { count: 2, hostTurnCs: 200 }, 1: { count: 3, hostTurnCs: 300 } },
      durationsCs: [60, 62, 65, 66, 70],
      relativePositionsThousandths: [400, 450, 500, 550, 600],
    },
  });

  it('chooses the clip nearest to a measured duration, and keeps to the measured positions', () => {
    const utterances: UtteranceToPlace[] = [
      { channel: 1, durationCs: 200 },
      { channel: 0, durationCs: 3000 },
    ];
    const placed = placeDialogue({
      dialogueId: 'clips',
      seed: 1,
      utterances,
      statistics,
      backchannels: { listenerChannel: 1, clipDurationsCs: [10, 70] },
    });
    expect(placed.backchannels.length).toBeGreaterThan(0);
    expect(
      placed.backchannels.every((backchannel) => backchannel.clipIndex === 1 && backchannel.durationCs === 70),
    ).toBe(true);
    const hostStart = placed.starts[1]!;
    for (const backchannel of placed.backchannels) {
      // positions 0.40–0.60 of the 30 s answer, widened a little by the smoothing
      expect((backchannel.start - hostStart) / 3000).toBeGreaterThan(0.35);
      expect((backchannel.start - hostStart) / 3000).toBeLessThan(0.65);
    }
  });

  it('requests the expected count rounded up or down, rounding up with probability equal to its fraction', () => {
    let requested = 0;
    for (let dialogue = 0; dialogue < 400; dialogue += 1) {
      const utterances: UtteranceToPlace[] = [
        { channel: 1, durationCs: 200 },
        { channel: 0, durationCs: 250 },
      ];
      const placed = placeDialogue({
        dialogueId: `rate-${dialogue}`,
        seed: 1,
        utterances,
        statistics,
        backchannels: { listenerChannel: 1, clipDurationsCs: [50] },
      });
      expect(placed.backchannelReport!.expected).toBe(2.5); // 2.5 s of host speech at 60 per minute
      expect([2, 3]).toContain(placed.backchannelReport!.requested);
      requested += placed.backchannelReport!.requested;
    }
    // 400 fair coin flips between 2 and 3: mean 2.5, standard deviation of the total 10
    expect(Math.abs(requested - 1000)).toBeLessThan(40);
  });

  it('moves a backchannel to another host when its host has no room, keeping the rate', () => {
    const model = fitTimingModel(
      makeStatistics({
        speakerChange: [20, 30],
        backchannels: {
          // 12 per minute: one per 5 s of host speech (counts match the 5 durations and positions)
          byListener: { 0: { count: 2, hostTurnCs: 1000 }, 1: { count: 3, hostTurnCs: 1500 } },
          durationsCs: [40, 40, 40, 40, 40],
          relativePositionsThousandths: [100, 300, 500, 700, 900],
        },
      }),
    );
    let rejected = 0;
    for (let dialogue = 0; dialogue < 200; dialogue += 1) {
      // host 1 is one IPU of 0.9 s lying within 0.6 s of both user questions (no room); host 3 is a
      // 10 s answer with plenty of room
      const result = placeBackchannels({
        dialogueId: `room-${dialogue}`,
        seed: 5,
        utterances: [
          { channel: 1, durationCs: 300 },
          { channel: 0, durationCs: 90 },
          { channel: 1, durationCs: 300 },
          { channel: 0, durationCs: 1000 },
        ],
        starts: [0, 250, 400, 650],
        ends: [300, 340, 700, 1650],
        model,
        request: { listenerChannel: 1, clipDurationsCs: [40] },
      });
      expect(result.report.unplaced).toBe(0);
      expect(result.backchannels.length).toBe(result.report.requested);
      for (const backchannel of result.backchannels) expect(backchannel.hostUtteranceIndex).toBe(3);
      rejected += result.report.rejectedPositionDraws;
    }
    // host 1 (8 % of the host speech) was tried first for some backchannels, and all its draws failed
    expect(rejected).toBeGreaterThanOrEqual(100);
  });

  it('stays inside the host speech: never in a silence of more than 0.50 s inside the host utterance', () => {
    const model = fitTimingModel(statistics);
    const host = {
      channel: 0 as Channel,
      durationCs: 2000,
      speechSegments: [
        { start: 0, end: 900 },
        { start: 1100, end: 2000 },
      ],
    };
    expect(hostSpeechCs(host)).toBe(1800);
    for (let dialogue = 0; dialogue < 50; dialogue += 1) {
      const result = placeBackchannels({
        dialogueId: `gap-${dialogue}`,
        seed: 3,
        utterances: [{ channel: 1, durationCs: 100 }, host],
        starts: [0, 200],
        ends: [100, 2200],
        model,
        request: { listenerChannel: 1, clipDurationsCs: [40] },
      });
      for (const backchannel of result.backchannels) {
        const insideFirst = backchannel.start >= 200 && backchannel.end <= 1100;
        const insideSecond = backchannel.start >= 1300 && backchannel.end <= 2200;
        expect(insideFirst || insideSecond).toBe(true);
      }
    }
  });

  it('rejects clips longer than 0.80 s, no clips, and a bad listener channel', () => {
    const base = {
      dialogueId: 'bad',
      seed: 1,
      utterances: [
        { channel: 1 as Channel, durationCs: 300 },
        { channel: 0 as Channel, durationCs: 300 },
      ],
      statistics,
    };
    expect(() => placeDialogue({ ...base, backchannels: { listenerChannel: 1, clipDurationsCs: [81] } })).toThrow(
      BackchannelPlacementError,
    );
    expect(() => placeDialogue({ ...base, backchannels: { listenerChannel: 1, clipDurationsCs: [] } })).toThrow(
      /at least one/,
    );
    expect(() =>
      placeDialogue({ ...base, backchannels: { listenerChannel: 2 as Channel, clipDurationsCs: [40] } }),
    ).toThrow(/listenerChannel/);
  });
});
