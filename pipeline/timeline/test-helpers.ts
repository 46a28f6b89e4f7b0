/**
 * Helpers for the timeline tests: small hand-made statistics and the shared folder's location.
 * Not used by the pipeline itself.
 */
import { sharedDirectory } from '../config.ts';
import type { Centiseconds, Language } from '../model/types.ts';
import { buildTimingStatistics, type ChannelDirection, type TimingStatistics } from './timing-statistics.ts';

/** The shared folder (pipeline/config.ts `sharedDirectory`: `DUPLEXSYNTH_SHARED`, else `../shared`). */
export const SHARED_FOLDER = sharedDirectory();

/**
 * Statistics built from hand-picked values in integer centiseconds, with placeholder provenance.
 * @param speakerChange floor-transfer offsets per direction (or one list, put on channel0->channel1)
 * @param backchannels optional: BCs per listener with host TURN centiseconds, durations, positions (thousandths)
 */
export function makeStatistics(input: {
  speakerChange: Centiseconds[] | Record<ChannelDirection, Centiseconds[]>;
  turnHoldGaps?: Centiseconds[];
  shortPauses?: Centiseconds[];
  samplerUse?: 'pooled' | 'per-direction';
  language?: Language;
  backchannels?: {
    byListener: Record<0 | 1, { count: number; hostTurnCs: Centiseconds }>;
    durationsCs: Centiseconds[];
    relativePositionsThousandths: number[];
  };
}): TimingStatistics {
  const floorTransferOffsets = Array.isArray(input.speakerChange)
    ? { 'channel0->channel1': input.speakerChange, 'channel1->channel0': [] }
    : input.speakerChange;
  return buildTimingStatistics({
    language: input.language ?? 'en',
    samplerUse: input.samplerUse ?? 'pooled',
    measurements: {
      floorTransferOffsets,
      withinTurnOverlapOffsets: { 'channel0->channel1': [], 'channel1->channel0': [] },
      turnHoldGaps: input.turnHoldGaps ?? [60, 80, 120],
      shortPauses: input.shortPauses ?? [10, 20],
      backchannels: {
        byListener: input.backchannels?.byListener ?? {
          0: { count: 0, hostTurnCs: 6000 },
          1: { count: 0, hostTurnCs: 6000 },
        },
        outsideOtherTurns: 0,
        durationsCs: input.backchannels?.durationsCs ?? [],
        relativePositionsThousandths: input.backchannels?.relativePositionsThousandths ?? [],
      },
    },
    provenance: {
      corpus: 'hand-made test values',
      format: 'test',
      licence: 'none',
      origin: 'pipeline/timeline/test-helpers.ts',
      pathsRelativeTo: 'nothing',
      sourcePaths: ['(none)'],
      recordingCount: 0,
      recordingsUsed: 0,
      duplicateRecordings: [],
      totalDurationSeconds: 0,
      channelMapping: 'none',
      voiceActivityDetection: null,
      loaderNotes: [],
      discardedNearExcludedSpeech: { speakerChanges: 0, turnHolds: 0, shortPauses: 0 },
      command: 'test',
      notes: [],
      unitCounts: { turns: 0, backchannels: 0 },
    },
  });
}
