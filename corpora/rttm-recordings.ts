/**
 * RTTM speaker timings as `ReferenceRecording`s: an adapter over corpora/rttm.ts (`readRttm` +
 * `toTwoChannelSegments`), which it uses unchanged.
 *
 * What the adapter adds: folders are expanded to their `*.rttm` files, everything rttm.ts reports
 * (dropped third speakers, merged bullets, empty bullets, skipped non-SPEAKER lines) becomes one
 * `notes` line each, and the same call published twice under two names (the Japanese CallFriend set
 * has 4222 and 4261; found with `recordingContentKey`) is loaded once by default.
 *
 * RTTM has timing only: no transcripts (no supervisions) and no audio. Channel 0 is the speaker with
 * more talk time (rttm.ts convention); the calls are symmetric, the mapping carries no role.
 */
import path from 'node:path';
import type { ReferenceRecording } from '../pipeline/model/types.ts';
import { isDirectory, listFiles, ReferenceCorpusError } from './reference-recording.ts';
import { readRttm, recordingContentKey, toTwoChannelSegments, type RttmRecording } from './rttm.ts';
import { describeSkippedRecord } from './skipped-records.ts';

/** Options of {@link prepareRttm}. */
export interface RttmRecordingOptions {
  /**
   * Load a call whose timing content equals an earlier file's (same speakers, same centisecond
   * times) only once; the kept recording's notes name the skipped file. Default true: a duplicate
   * would count the same turn-taking twice in the timing statistics.
   */
  skipDuplicates?: boolean;
  /**
   * The two speakers to keep, in channel order (`--speakers A,B`): the others' turns are left out
   * (noted), and a file without both is an error. Default: the two with most talk time, channel 0
   * the one with more.
   */
  speakers?: readonly [string, string];
  /**
   * What to do with a file that has more than two speakers when `speakers` is not given: `drop` the
   * others (noted; the measure command then discards measurements touching their speech) or `refuse`
   * it (ReferenceCorpusError naming the file and the speakers: the chat and prompts commands, whose
   * audio would hold a third voice). Default `drop`.
   */
  extraSpeakers?: 'drop' | 'refuse';
  /** How the refusal says to choose (default `--speakers A,B (channel order)`; the measure command adds `most-talk`). */
  extraSpeakersHint?: string;
  /**
   * Stop at the first malformed `SPEAKER` line (RttmFormatError naming file and line). Default true;
   * false skips such lines: each is listed in the recording's `skippedRecords` and counted in a note.
   */
  strict?: boolean;
}

/** Defaults of {@link RttmRecordingOptions}. */
export const DEFAULT_RTTM_RECORDING_OPTIONS: Readonly<Required<Omit<RttmRecordingOptions, 'speakers'>>> = Object.freeze(
  {
    skipDuplicates: true,
    strict: true,
    extraSpeakers: 'drop' as const,
    extraSpeakersHint: '--speakers A,B (channel order)',
  },
);

/**
 * The recording with only the turns of `speakers`, which then go on channels 0 and 1 in that order.
 * @throws ReferenceCorpusError naming the file when a speaker is not in it.
 */
function withChosenSpeakers(
  parsed: RttmRecording,
  speakers: readonly [string, string],
): { recording: ReferenceRecording; notes: string[] } {
  for (const speaker of speakers) {
    if (!parsed.speakers.includes(speaker))
      throw new ReferenceCorpusError(
        parsed.path,
        {},
        `no speaker ${JSON.stringify(speaker)} (--speakers); the file's speakers: ${parsed.speakers.join(', ')}`,
      );
  }
  const left = parsed.speakers.filter((speaker) => !speakers.includes(speaker));
  const recording = rttmToReferenceRecording({
    ...parsed,
    turns: parsed.turns.filter((turn) => speakers.includes(turn.speaker)),
    speakers: [...speakers],
  });
  if (recording.channelSpeakers[0] !== speakers[0]) {
    recording.segments = { 0: recording.segments[1], 1: recording.segments[0] };
    recording.channelSpeakers = { 0: speakers[0], 1: speakers[1] };
  }
  recording.notes[0] = `channel 0 = ${speakers[0]}, channel 1 = ${speakers[1]} (chosen by --speakers)`;
  const notes = left.length > 0 ? [`speakers ${left.join(', ')} left out (--speakers ${speakers.join(',')})`] : [];
  recording.notes.push(...notes);
  return { recording, notes };
}

/**
 * Converts one parsed RTTM file into a `ReferenceRecording` (`format: 'rttm'`): the two speakers
 * with most talk time on channels 0 and 1, segments in integer centiseconds, `durationCs` = end of
 * the last bullet of any speaker (the audio is not known), no audio, no supervisions.
 *
 * @throws RttmFormatError (rttm.ts) when fewer than two speakers have speech.
 */
export function rttmToReferenceRecording(recording: RttmRecording): ReferenceRecording {
  const twoChannel = toTwoChannelSegments(recording);
  const notes: string[] = [
    `channel 0 = ${twoChannel.channelSpeakers[0]} (more talk time), channel 1 = ${twoChannel.channelSpeakers[1]}`,
  ];
  for (const dropped of twoChannel.droppedSpeakers) {
    notes.push(
      `dropped speaker ${dropped.speaker}: ${(dropped.talkTime / 100).toFixed(2)} s of talk in ${dropped.segments.length} segments (only two speakers are kept)`,
    );
  }
  if (twoChannel.mergedSegmentCount > 0) {
    notes.push(`merged ${twoChannel.mergedSegmentCount} overlapping or abutting bullets of the same speaker`);
  }
  if (twoChannel.emptySegmentCount > 0) {
    notes.push(`dropped ${twoChannel.emptySegmentCount} bullets shorter than 0.005 s (empty in centiseconds)`);
  }
  if (recording.skippedLineCount > 0) {
    notes.push(`skipped ${recording.skippedLineCount} lines that are not SPEAKER lines`);
  }
  notes.push('duration is the end of the last bullet (no audio)');
  return {
    id: recording.id,
    format: 'rttm',
    sources: [recording.path],
    durationCs: twoChannel.duration,
    segments: twoChannel.segments,
    channelSpeakers: twoChannel.channelSpeakers,
    notes,
  };
}

/**
 * Loads RTTM files, one recording per file.
 *
 * @param paths `.rttm` files and/or folders (a folder contributes its `*.rttm` files, sorted by name);
 *   recordings come out in the order of `paths`, then file name.
 * @param options see {@link RttmRecordingOptions}.
 * @returns one `ReferenceRecording` per file (duplicates skipped, see `skipDuplicates`).
 * @throws RttmFormatError (file and line) for a malformed file; ReferenceCorpusError when a path does
 *   not exist or two files give the same recording id.
 */
export async function prepareRttm(
  paths: readonly string[],
  options: RttmRecordingOptions = {},
): Promise<ReferenceRecording[]> {
  const resolved = { ...DEFAULT_RTTM_RECORDING_OPTIONS, ...options };
  const files: string[] = [];
  for (const entry of paths) {
    if (await isDirectory(entry)) files.push(...(await listFiles(entry, ['.rttm'])));
    else files.push(entry);
  }
  const recordings: ReferenceRecording[] = [];
  const byContent = new Map<string, ReferenceRecording>();
  const ids = new Map<string, string>();
  for (const file of files) {
    let parsed: RttmRecording;
    try {
      parsed = await readRttm(file, { strict: resolved.strict });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        throw new ReferenceCorpusError(file, {}, 'RTTM file not found', { cause: error });
      throw error;
    }
    const previousFile = ids.get(parsed.id);
    if (previousFile !== undefined)
      throw new ReferenceCorpusError(
        file,
        {},
        `recording id ${JSON.stringify(parsed.id)} is also the id of ${previousFile}`,
      );
    ids.set(parsed.id, file);
    const key = recordingContentKey(parsed);
    const earlier = byContent.get(key);
    if (resolved.skipDuplicates && earlier !== undefined) {
      earlier.notes.push(`the same call is also published as ${path.basename(file)} (skipped)`);
      continue;
    }
    if (resolved.speakers === undefined && resolved.extraSpeakers === 'refuse' && parsed.speakers.length > 2) {
      throw new ReferenceCorpusError(
        file,
        {},
        `has ${parsed.speakers.length} speakers (${parsed.speakers.join(', ')}), a two-party recording has 2: pick the two with ${resolved.extraSpeakersHint}`,
      );
    }
    const recording =
      resolved.speakers === undefined
        ? rttmToReferenceRecording(parsed)
        : withChosenSpeakers(parsed, resolved.speakers).recording;
    if (parsed.skippedRecords.length > 0) {
      recording.skippedRecords = parsed.skippedRecords.map(describeSkippedRecord);
      recording.notes.push(`skipped ${parsed.skippedRecords.length} malformed SPEAKER lines (not strict)`);
    }
    byContent.set(key, recording);
    recordings.push(recording);
  }
  return recordings;
}
