/**
 * Stage `measure-conversations`: real two-party recordings (`ReferenceRecording[]` from any reference
 * corpus loader in corpora/) -> timing statistics (pipeline/timeline/timing-statistics.ts, version 2)
 * plus one SVG histogram per distribution (pipeline/timeline/plots.ts).
 *
 * Steps: sort the recordings by id, skip any whose speech segments repeat an earlier recording's
 * exactly (the same call shipped twice), measure each with the event rules
 * (pipeline/timeline/measure-turn-taking.ts), combine, and build the statistics with provenance.
 * Deterministic: the same recordings give the same bytes (no dates, sorted lists, relative paths).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Language, ReferenceRecording, SpeechSegment } from '../pipeline/model/types.ts';
import { combineMeasurements, measureTurnTaking } from '../pipeline/timeline/measure-turn-taking.ts';
import { timingStatisticsPlots } from '../pipeline/timeline/plots.ts';
import type { Stage } from '../pipeline/run/stage.ts';
import {
  ATOM_LIMIT_FRACTION,
  buildTimingStatistics,
  CHANNEL_DIRECTIONS,
  formatTimingStatistics,
  type TimingStatistics,
} from '../pipeline/timeline/timing-statistics.ts';

/**
 * A reference recording, optionally with the speech of people not on its two channels (a third
 * speaker on a call); measurements containing such speech are discarded (measure-turn-taking.ts).
 */
export type MeasurableReferenceRecording = ReferenceRecording & { excludedSpeech?: readonly SpeechSegment[] };

/** Provenance the caller knows (the rest is computed). */
export interface MeasurementProvenance {
  /** What the recordings are, e.g. `CallFriend Japanese (TalkBank CABank), two-party telephone calls`. */
  corpus: string;
  licence: string;
  /** Where the files come from (repository and commit, download page). */
  origin: string;
  /** Source paths are written relative to `directory`; `name` says what that directory is, in the file. */
  pathsRelativeTo: { directory: string; name: string };
  /** How speakers were put on channels 0 and 1. */
  channelMapping: string;
  /** `silero` / `webrtc` when the segments come from voice activity detection, else null. */
  voiceActivityDetection: string | null;
  /** The command that writes the file (paths relative to `pathsRelativeTo`). */
  command: string;
  /** Free notes, written after the automatic ones. */
  notes: readonly string[];
}

/** Input of `measureReferenceRecordings`. */
export interface MeasureTurnTakingInput {
  recordings: readonly MeasurableReferenceRecording[];
  language: Language;
  /** Reference corpus format the recordings were read from (`rttm`, `stereo-wav`, ...). */
  format: string;
  /** `pooled` (default; symmetric conversations) or `per-direction` (channels carry roles). */
  samplerUse?: 'pooled' | 'per-direction';
  /** Timing resolution of the source times, seconds (atom guard; default 0.1, timing-statistics.ts). */
  timingResolutionSeconds?: number;
  provenance: MeasurementProvenance;
}

/** Input that cannot be measured; the message says why. */
export class MeasureTurnTakingError extends Error {
  override readonly name = 'MeasureTurnTakingError';
}

/** `file` relative to `directory`, `/`-separated; kept as given when it lies outside. */
function relativeSourcePath(file: string, directory: string): string {
  const relative = path.relative(path.resolve(directory), path.resolve(file));
  const inside = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
  return (inside ? relative : file).split(path.sep).join('/');
}

/**
 * Measures reference recordings into timing statistics (module comment).
 * @returns validated statistics (seconds), deterministic for the same input
 * @throws MeasureTurnTakingError when there are no recordings or two recordings share an id;
 *   SegmentValidationError (pipeline/events) naming the channel and segment for invalid segments
 *   (the message is prefixed with the recording id); TimingStatisticsError when the result is invalid
 */
export function measureReferenceRecordings(input: MeasureTurnTakingInput): TimingStatistics {
  if (input.recordings.length === 0) throw new MeasureTurnTakingError('no recordings to measure');
  const recordings = [...input.recordings].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const seenIds = new Set<string>();
  const seenContent = new Map<string, string>();
  const duplicateRecordings: { recording: string; sameAs: string }[] = [];
  const loaderNotes: string[] = [];
  const parts = [];
  const sourcePaths = new Set<string>();
  let totalDurationCs = 0;
  let skippedRecordCount = 0;
  for (const recording of recordings) {
    if (seenIds.has(recording.id)) throw new MeasureTurnTakingError(`recording id ${recording.id} appears twice`);
    seenIds.add(recording.id);
    for (const source of recording.sources)
      sourcePaths.add(relativeSourcePath(source, input.provenance.pathsRelativeTo.directory));
    const key = JSON.stringify([recording.segments[0], recording.segments[1]]);
    const earlier = seenContent.get(key);
    if (earlier !== undefined) {
      duplicateRecordings.push({ recording: recording.id, sameAs: earlier });
      continue;
    }
    seenContent.set(key, recording.id);
    for (const note of recording.notes) loaderNotes.push(`${recording.id}: ${note}`);
    for (const skipped of recording.skippedRecords ?? []) loaderNotes.push(`${recording.id}: skipped ${skipped}`);
    skippedRecordCount += recording.skippedRecords?.length ?? 0;
    totalDurationCs += recording.durationCs;
    try {
      parts.push(measureTurnTaking(recording));
    } catch (error) {
      if (error instanceof Error) error.message = `recording ${recording.id}: ${error.message}`;
      throw error;
    }
  }
  const measured = combineMeasurements(parts);
  const transfers = CHANNEL_DIRECTIONS.flatMap((direction) => measured.floorTransferOffsets[direction]);
  const zeroOffsets = transfers.filter((offset) => offset === 0).length;
  const automaticNotes = [
    `${zeroOffsets} of ${transfers.length} floor-transfer offsets are exactly 0.00 s` +
      (transfers.length > 0 && zeroOffsets / transfers.length > ATOM_LIMIT_FRACTION
        ? ' (an atom typical of utterance-level transcript times where the two speakers\u2019 segments abut; see atomGuard: the sampler spreads it over the timing resolution)'
        : ''),
    ...(skippedRecordCount > 0
      ? [`${skippedRecordCount} malformed corpus records skipped by the reader (each in loaderNotes)`]
      : []),
  ];
  const { provenance } = input;
  return buildTimingStatistics({
    language: input.language,
    samplerUse: input.samplerUse ?? 'pooled',
    measurements: measured,
    ...(input.timingResolutionSeconds !== undefined
      ? { atomGuard: { timingResolutionSeconds: input.timingResolutionSeconds } }
      : {}),
    provenance: {
      corpus: provenance.corpus,
      format: input.format,
      licence: provenance.licence,
      origin: provenance.origin,
      pathsRelativeTo: provenance.pathsRelativeTo.name,
      sourcePaths: [...sourcePaths].sort(),
      recordingCount: recordings.length,
      recordingsUsed: parts.length,
      duplicateRecordings,
      totalDurationSeconds: totalDurationCs / 100,
      channelMapping: provenance.channelMapping,
      voiceActivityDetection: provenance.voiceActivityDetection,
      loaderNotes,
      discardedNearExcludedSpeech: measured.discarded,
      command: provenance.command,
      notes: [...automaticNotes, ...provenance.notes],
      unitCounts: measured.unitCounts,
    },
  });
}

/** The plot folder of a statistics file: `STATS.json` -> `STATS.plots` (any other name gets `.plots` appended). */
export function plotsDirectoryFor(statisticsPath: string): string {
  return statisticsPath.endsWith('.json')
    ? `${statisticsPath.slice(0, -'.json'.length)}.plots`
    : `${statisticsPath}.plots`;
}

/** The text of every file `writeTimingStatisticsFiles` writes, keyed by path (for checks without writing). */
export async function renderTimingStatisticsFiles(
  statistics: TimingStatistics,
  statisticsPath: string,
): Promise<Map<string, string>> {
  const files = new Map<string, string>([[statisticsPath, formatTimingStatistics(statistics)]]);
  const plotsDirectory = plotsDirectoryFor(statisticsPath);
  for (const plot of await timingStatisticsPlots(statistics))
    files.set(path.join(plotsDirectory, plot.fileName), plot.svg);
  return files;
}

/**
 * Writes the statistics JSON and its SVG histograms (`STATS.plots/*.svg`, creating the folder).
 * @returns the paths written, statistics file first
 * @throws the file system's error when a file cannot be written
 */
export async function writeTimingStatisticsFiles(
  statistics: TimingStatistics,
  statisticsPath: string,
): Promise<string[]> {
  const files = await renderTimingStatisticsFiles(statistics, statisticsPath);
  await mkdir(path.dirname(statisticsPath), { recursive: true });
  await mkdir(plotsDirectoryFor(statisticsPath), { recursive: true });
  for (const [file, text] of files) await writeFile(file, text);
  return [...files.keys()];
}

/**
 * Stage `measure-conversations`: {@link measureReferenceRecordings}. The input is the recordings, the
 * parameters what is recorded about them and how they are pooled. Not cached (`duplexsynth measure`
 * writes the statistics file it returns).
 * @throws as {@link measureReferenceRecordings}
 */
export const measureConversationsStage: Stage<
  Pick<MeasureTurnTakingInput, 'recordings'>,
  Omit<MeasureTurnTakingInput, 'recordings'>,
  TimingStatistics
> = {
  name: 'measure-conversations',
  inputs: ['recordings'],
  parameters: ['language', 'format', 'samplerUse', 'timingResolutionSeconds', 'provenance'],
  cacheStages: [],
  cacheKeys: async () => [],
  run: async (input, parameters) => measureReferenceRecordings({ ...parameters, recordings: input.recordings }),
};
