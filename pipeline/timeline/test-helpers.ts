/**
 * Helpers for the timeline tests: small hand-made statistics and the shared folder's location.
 * Not used by the pipeline itself.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Centiseconds, Language } from '../model/types.ts';
import { buildTimingStatistics, type ChannelDirection, type TimingStatistics } from './timing-statistics.ts';

/** The shared folder: `DUPLEXSYNTH_SHARED`, else `shared` beside the project root. */
export const SHARED_FOLDER =
  process.env.DUPLEXSYNTH_SHARED ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared');

/**
 * Statistics built from hand-picked values in integer centiseconds, with placeholder provenance.
 * @param speakerChange offsets per direction (or one list for both directions)
 */
export function makeStatistics(input: {
  speakerChange: Centiseconds[] | Record<ChannelDirection, Centiseconds[]>;
  turnHoldGaps?: Centiseconds[];
  shortPauses?: Centiseconds[];
  samplerUse?: 'pooled' | 'per-direction';
  language?: Language;
}): TimingStatistics {
  const speakerChangeOffsets = Array.isArray(input.speakerChange)
    ? { 'channel0->channel1': input.speakerChange, 'channel1->channel0': [] }
    : input.speakerChange;
  return buildTimingStatistics({
    language: input.language ?? 'en',
    samplerUse: input.samplerUse ?? 'pooled',
    measurements: {
      speakerChangeOffsets,
      turnHoldGaps: input.turnHoldGaps ?? [60, 80, 120],
      shortPauses: input.shortPauses ?? [10, 20],
    },
    provenance: {
      corpus: 'hand-made test values',
      licence: 'none',
      origin: 'pipeline/timeline/test-helpers.ts',
      pathsRelativeTo: 'nothing',
      sourcePaths: ['(none)'],
      recordingCount: 0,
      recordingsUsed: 0,
      duplicateRecordings: [],
      totalDurationSeconds: 0,
      channelMapping: 'none',
      droppedSpeakers: [],
      discardedNearDroppedSpeakers: { speakerChanges: 0, turnHolds: 0, shortPauses: 0 },
      thresholds: {
        ipuMaximumPauseSeconds: 0.5,
        backchannelMaximumSeconds: 0.8,
        bargeInMinimumOverlapSeconds: 0.4,
        source: 'docs/events.md',
      },
      command: 'test',
      notes: [],
    },
  });
}
