import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderDefaultTiming } from '../../scripts/derive-default-timing.ts';
import { combineMeasurements, measureTurnTaking } from './measure-turn-taking.ts';
import { makeStatistics, SHARED_FOLDER } from './test-helpers.ts';
import {
  channelDirection,
  defaultTimingStatisticsPath,
  formatTimingStatistics,
  loadDefaultTimingStatistics,
  loadTimingStatistics,
  parseTimingStatistics,
  samplingDistributions,
  summarizeDurations,
  summarizeOffsets,
  TimingStatisticsError,
} from './timing-statistics.ts';
import { readFile } from 'node:fs/promises';

describe('summaries', () => {
  it('summarizeOffsets: seconds, quartiles, overlap and barge-in fractions (overlap > 0.40 s)', () => {
    // -41 is a barge-in, -40 exactly is not (events.md: overlap of exactly 0.40 s is a TURN_SHIFT).
    expect(summarizeOffsets([-41, -40, -1, 0, 20, 100])).toEqual({
      count: 6,
      median: -0.005,
      firstQuartile: -0.302, // linear interpolation (type 7): -40 + 0.25 × 39 = -30.25 cs
      thirdQuartile: 0.15,
      minimum: -0.41,
      maximum: 1,
      overlapFraction: 0.5,
      bargeInFraction: 0.1667,
    });
  });

  it('summarizeDurations of nothing has null statistics', () => {
    expect(summarizeDurations([])).toEqual({
      count: 0,
      median: null,
      firstQuartile: null,
      thirdQuartile: null,
      minimum: null,
      maximum: null,
    });
    expect(summarizeOffsets([]).overlapFraction).toBe(0);
  });

  it('channelDirection names the change and refuses a non-change', () => {
    expect(channelDirection(1, 0)).toBe('channel1->channel0');
    expect(channelDirection(0, 1)).toBe('channel0->channel1');
    expect(() => channelDirection(1, 1)).toThrow(RangeError);
  });
});

describe('the statistics file format', () => {
  const statistics = makeStatistics({
    speakerChange: { 'channel0->channel1': [30, -50, 0], 'channel1->channel0': [20, -10] },
  });

  it('stores sorted values in seconds and checks summaries against them', () => {
    expect(statistics.version).toBe(1);
    expect(statistics.speakerChange.byDirection['channel0->channel1'].offsets).toEqual([-0.5, 0, 0.3]);
    expect(statistics.speakerChange.pooledSummary.count).toBe(5);
    const tampered = structuredClone(statistics);
    tampered.speakerChange.byDirection['channel1->channel0'].summary.median = 9;
    expect(() => parseTimingStatistics(tampered, 'tampered.json')).toThrow(
      /tampered\.json: invalid timing statistics: speakerChange\.byDirection\.channel1->channel0\.summary: summary/,
    );
  });

  it('rejects unsorted values, values finer than a centisecond, and other versions', () => {
    const unsorted = structuredClone(statistics);
    unsorted.turnHoldGaps.values = [1.2, 0.6, 0.8];
    expect(() => parseTimingStatistics(unsorted, 'x.json')).toThrow(/turnHoldGaps\.values: values must be sorted/);
    const fine = structuredClone(statistics);
    fine.shortPauses.values = [0.105, 0.2];
    expect(() => parseTimingStatistics(fine, 'x.json')).toThrow(/shortPauses\.values\.0: must be a whole number of centiseconds/);
    expect(() => parseTimingStatistics({ ...statistics, version: 2 }, 'x.json')).toThrow(/x\.json: .*version/);
  });

  it('formats deterministically and reads back identically', async () => {
    const text = formatTimingStatistics(statistics);
    expect(formatTimingStatistics(parseTimingStatistics(JSON.parse(text), 'again'))).toBe(text);
    const folder = await mkdtemp(path.join(os.tmpdir(), 'timing-'));
    const file = path.join(folder, 'x.timing.json');
    await writeFile(file, text);
    expect(await loadTimingStatistics(file)).toEqual(statistics);
    await writeFile(file, '{ not json');
    await expect(loadTimingStatistics(file)).rejects.toThrow(TimingStatisticsError);
    await expect(loadTimingStatistics(path.join(folder, 'missing.json'))).rejects.toThrow(/missing\.json: cannot read/);
  });

  it('samplingDistributions pools both directions unless the file says per-direction', () => {
    const pooled = samplingDistributions(statistics);
    expect(pooled.speakerChange['channel1->channel0']).toEqual([-50, -10, 0, 20, 30]);
    expect(pooled.speakerChange['channel0->channel1']).toEqual([-50, -10, 0, 20, 30]);
    expect(pooled.sameSpeaker).toEqual([60, 80, 120]);
    const perDirection = samplingDistributions({
      ...statistics,
      speakerChange: { ...statistics.speakerChange, samplerUse: 'per-direction' },
    });
    expect(perDirection.speakerChange['channel0->channel1']).toEqual([-50, 0, 30]);
    expect(perDirection.speakerChange['channel1->channel0']).toEqual([-10, 20]);
  });
});

describe('measureTurnTaking (event rules of pipeline/events)', () => {
  it('takes TURN_SHIFT and BARGE_IN offsets by direction, TURN_HOLD gaps, SHORTPAUSEs; ignores BCs', () => {
    const measured = measureTurnTaking({
      id: 'hand-made',
      segments: {
        // channel 0: TURN [0, 300] with a pause [100, 130]; TURN [500, 800] (shift after channel 1)
        0: [
          { start: 0, end: 100 },
          { start: 130, end: 300 },
          { start: 500, end: 800 },
        ],
        // channel 1: TURN [320, 450] (shift, gap 20); BC [550, 580]; TURN [700, 1000] (barge-in, overlap 100);
        // TURN [1100, 1300] (hold, gap 100)
        1: [
          { start: 320, end: 450 },
          { start: 550, end: 580 },
          { start: 700, end: 1000 },
          { start: 1100, end: 1300 },
        ],
      },
    });
    expect(measured.speakerChangeOffsets).toEqual({ 'channel0->channel1': [20, -100], 'channel1->channel0': [50] });
    expect(measured.turnHoldGaps).toEqual([100]);
    expect(measured.shortPauses).toEqual([30]);
    expect(measured.discarded).toEqual({ speakerChanges: 0, turnHolds: 0, shortPauses: 0 });
  });

  it("discards measurements that contain a dropped speaker's speech", () => {
    const segments = {
      0: [{ start: 0, end: 200 }],
      1: [
        { start: 400, end: 600 },
        { start: 610, end: 700 },
      ],
    };
    const measured = measureTurnTaking({ id: 'third', segments, excludedSpeech: [{ start: 250, end: 300 }] });
    expect(measured.speakerChangeOffsets['channel0->channel1']).toEqual([]);
    expect(measured.discarded.speakerChanges).toBe(1);
    expect(measured.shortPauses).toEqual([10]);
    const combined = combineMeasurements([measured, measureTurnTaking({ id: 'clean', segments })]);
    expect(combined.speakerChangeOffsets['channel0->channel1']).toEqual([200]);
    expect(combined.discarded.speakerChanges).toBe(1);
  });
});

describe('shipped default statistics', () => {
  it.each(['en', 'ja'] as const)('%s regenerates byte for byte from the RTTM files', async (language) => {
    const shipped = await readFile(defaultTimingStatisticsPath(language), 'utf8');
    expect(await renderDefaultTiming(language, SHARED_FOLDER)).toBe(shipped);
  });

  it('carry provenance and the measured figures', async () => {
    const en = await loadDefaultTimingStatistics('en');
    const ja = await loadDefaultTimingStatistics('ja');
    expect(en.provenance.recordingCount).toBe(31);
    expect(en.provenance.recordingsUsed).toBe(31);
    expect(ja.provenance.recordingsUsed).toBe(30);
    expect(ja.provenance.duplicateRecordings).toEqual([
      { path: 'corpora/reference-timing/rttm/ja/4261.rttm', sameAs: 'corpora/reference-timing/rttm/ja/4222.rttm' },
    ]);
    expect(en.provenance.licence).toBe('CC BY-NC-SA 3.0');
    expect(en.speakerChange.samplerUse).toBe('pooled');
    expect(en.provenance.thresholds).toMatchObject({
      ipuMaximumPauseSeconds: 0.5,
      backchannelMaximumSeconds: 0.8,
      bargeInMinimumOverlapSeconds: 0.4,
    });
    expect(en.speakerChange.pooledSummary).toMatchObject({ count: 4582, median: 0, overlapFraction: 0.4705, bargeInFraction: 0.2532 });
    expect(ja.speakerChange.pooledSummary).toMatchObject({ count: 9401, median: 0.01, overlapFraction: 0.4828, bargeInFraction: 0.2779 });
    expect(en.turnHoldGaps.summary.minimum).toBeGreaterThan(0.5);
    expect(ja.shortPauses.summary.maximum).toBeLessThanOrEqual(0.5);
  });
});
