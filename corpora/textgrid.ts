/**
 * Praat TextGrid word timings as `ReferenceRecording`s: one interval tier per speaker, as Montreal
 * Forced Aligner (MFA) writes them, for a stereo WAV or a pair of files.
 *
 * The file format (Praat manual, "TextGrid file formats"): after the header strings `"ooTextFile"`
 * and `"TextGrid"`, a TextGrid text file is a flat sequence of three kinds of token: numbers, texts in
 * double quotes (a `"` inside a text is written `""`; texts may span lines) and flags (`<exists>`).
 * Everything else is a comment: the labels of the long form (`xmin =`, `item [1]:`,
 * `intervals: size =`), and text after `!` to the end of the line. So one reader handles the long
 * ("text file") and the short ("short text file") form:
 *
 *     xmin xmax <exists> tierCount
 *     per tier:  "IntervalTier" name xmin xmax intervalCount  (xmin xmax "text") × intervalCount
 *                "TextTier"     name xmin xmax pointCount     (time "mark") × pointCount
 *
 * Encodings: UTF-8 (MFA, praatio), UTF-16 with a byte-order mark (Praat writes UTF-16 when a text is
 * not ASCII). Binary TextGrids (`ooBinaryFile`) are not read. No npm TextGrid parser is kept well
 * enough (the `textgrid` package strips every `"` from texts and reads only the long form), so this
 * reader is our own; every error names the file and line.
 *
 * Speaker tiers (in this order of preference, unless `speakerTiers` names them):
 * 1. interval tiers named `<speaker> - words` (MFA for files with several speakers; the
 *    `<speaker> - phones` tiers are ignored): speaker id `<speaker>`;
 * 2. an interval tier named `words` (MFA for a single-speaker file);
 * 3. every interval tier except `phones` / `<speaker> - phones`: speaker id = tier name.
 * Point tiers are ignored (noted). Times are rounded once, half up on the written decimal, to integer
 * centiseconds. Empty intervals are MFA's silences; noise and silence labels are not speech
 * (word-timings.ts, `nonSpeechTokens`). MFA's `<unk>` (a word missing from the dictionary) is speech.
 *
 * Recordings (paths are `.TextGrid` files or folders of them):
 * - `<id>.TextGrid` with two speaker tiers: channel 0 = first tier, channel 1 = second;
 * - `<id>_0.TextGrid` + `<id>_1.TextGrid` with one speaker tier each (one file per speaker);
 *   a tier named just `words` then gets the speaker id `<id>:<channel>`.
 * Audio (`corpora/word-timings.ts` `findRecordingAudio`): `<id>.wav` (stereo, or a mono mix) or
 * `<id>_0.wav` + `<id>_1.wav`, beside the TextGrid or in `audioDirectory`.
 *
 * The file reader (tokens, encodings, tiers): textgrid-format.ts (re-exported).
 */
import path from 'node:path';
import type { Centiseconds, Channel, ReferenceRecording } from '../pipeline/model/types.ts';
import {
  formatCentiseconds,
  isDirectory,
  isFile,
  listFiles,
  REFERENCE_CHANNELS,
  ReferenceCorpusError,
} from './reference-recording.ts';
import { readTextGrid, type TextGrid, type TextGridTier } from './textgrid-format.ts';
import { describeSkippedRecord, skippedRecordOf, type SkippedRecord } from './skipped-records.ts';
import {
  findRecordingAudio,
  recordingFromTimedTokens,
  speechTokenPredicate,
  type NonSpeechTokenOptions,
  type TimedToken,
} from './word-timings.ts';

export {
  decodeTextGrid,
  parseTextGrid,
  readTextGrid,
  type TextGrid,
  type TextGridInterval,
  type TextGridTier,
} from './textgrid-format.ts';

/** Options of {@link prepareTextGrid}. */
export interface TextGridOptions extends NonSpeechTokenOptions {
  /** Names of the speaker tiers, in channel order (two for a file with both speakers, one per file of a pair); default: found as in the module comment. */
  speakerTiers?: readonly string[];
  /** Look for the audio here instead of beside each TextGrid. */
  audioDirectory?: string;
  /**
   * Stop at the first bad interval or point (ReferenceCorpusError naming file, line and tier).
   * Default true; false skips an interval or point with a bad time (textgrid-format.ts) and an
   * interval overlapping the one before it in its tier: each is listed in the recording's
   * `skippedRecords` and counted in a note.
   */
  strict?: boolean;
}

/** A speaker tier chosen from a TextGrid, with the speaker id it gives (undefined for a bare `words` tier). */
export interface SpeakerTier {
  tier: TextGridTier;
  speaker: string | undefined;
}

const WORDS_SUFFIX = / - words$/i;
const PHONES_TIER = /^(?:phones|.+ - phones)$/i;

/**
 * Chooses the speaker tiers of a TextGrid (module comment).
 * @param names explicit tier names (channel order), or undefined to find them.
 * @throws ReferenceCorpusError naming the file when a named tier is missing or is not an interval tier.
 */
export function speakerTiersOf(grid: TextGrid, names?: readonly string[]): SpeakerTier[] {
  const intervalTiers = grid.tiers.filter((tier) => tier.kind === 'IntervalTier');
  if (names !== undefined) {
    return names.map((name) => {
      const tier = grid.tiers.find((candidate) => candidate.name === name);
      if (tier === undefined)
        throw new ReferenceCorpusError(
          grid.file,
          {},
          `no tier named ${JSON.stringify(name)} (tiers: ${grid.tiers.map((candidate) => JSON.stringify(candidate.name)).join(', ')})`,
        );
      if (tier.kind !== 'IntervalTier')
        throw new ReferenceCorpusError(
          grid.file,
          { line: tier.line },
          `tier ${JSON.stringify(name)} is a point tier, not an interval tier`,
        );
      return { tier, speaker: name.replace(WORDS_SUFFIX, '') };
    });
  }
  const mfaSpeakers = intervalTiers.filter((tier) => WORDS_SUFFIX.test(tier.name));
  if (mfaSpeakers.length > 0)
    return mfaSpeakers.map((tier) => ({ tier, speaker: tier.name.replace(WORDS_SUFFIX, '') }));
  const words = intervalTiers.find((tier) => tier.name.toLowerCase() === 'words');
  if (words !== undefined) return [{ tier: words, speaker: undefined }];
  return intervalTiers.filter((tier) => !PHONES_TIER.test(tier.name)).map((tier) => ({ tier, speaker: tier.name }));
}

const PAIR_NAME = /^(.+)_([01])$/;

/** One recording to build: one TextGrid with both speakers, or a pair. */
type PlannedRecording = { id: string; files: string[] };

/**
 * Builds the recording from its TextGrid(s).
 * @param id recording id.
 * @param grids one TextGrid with two speaker tiers, or two with one each (channel order).
 * @throws ReferenceCorpusError naming the file when the speaker tiers are not two (one per file of a pair).
 */
export function textGridToReferenceRecording(
  id: string,
  grids: readonly TextGrid[],
  options: TextGridOptions = {},
  audio?: { audio: { path: string; channel: Channel }[]; durationCs: Centiseconds; note: string },
): ReferenceRecording {
  const isSpeech = speechTokenPredicate(options.nonSpeechTokens);
  const chosen: { tier: TextGridTier; speaker: string; grid: TextGrid }[] = [];
  if (grids.length === 1) {
    const grid = grids[0] as TextGrid;
    const tiers = speakerTiersOf(grid, options.speakerTiers);
    if (tiers.length !== 2) {
      throw new ReferenceCorpusError(
        grid.file,
        {},
        `found ${tiers.length} speaker tiers (${tiers.map((entry) => JSON.stringify(entry.tier.name)).join(', ') || 'none'}), expected 2: name them with speakerTiers (--tiers), or give one file per speaker as ${id}_0.TextGrid and ${id}_1.TextGrid`,
      );
    }
    tiers.forEach((entry, channel) =>
      chosen.push({ tier: entry.tier, speaker: entry.speaker ?? `${id}:${channel}`, grid }),
    );
  } else {
    grids.forEach((grid, channel) => {
      const tiers = speakerTiersOf(
        grid,
        options.speakerTiers === undefined
          ? undefined
          : [options.speakerTiers[channel] ?? (options.speakerTiers[0] as string)],
      );
      if (tiers.length !== 1) {
        throw new ReferenceCorpusError(
          grid.file,
          {},
          `found ${tiers.length} speaker tiers (${tiers.map((entry) => JSON.stringify(entry.tier.name)).join(', ') || 'none'}) in one file of a pair, expected 1`,
        );
      }
      const entry = tiers[0] as SpeakerTier;
      chosen.push({ tier: entry.tier, speaker: entry.speaker ?? `${id}:${channel}`, grid });
    });
  }
  if (chosen[0]?.speaker === chosen[1]?.speaker) {
    throw new ReferenceCorpusError(
      grids[0]?.file ?? id,
      {},
      `both channels have the speaker ${JSON.stringify(chosen[0]?.speaker)}`,
    );
  }
  const tokens: TimedToken[] = [];
  const notes: string[] = [];
  const skipped: SkippedRecord[] = grids.flatMap((grid) => grid.skippedRecords ?? []);
  chosen.forEach(({ tier, speaker, grid }, channel) => {
    notes.push(
      `channel ${channel} = ${speaker} (tier ${JSON.stringify(tier.name)} of ${path.basename(grid.file)}, ${grid.form} text form)`,
    );
    let previous: (typeof tier.intervals)[number] | undefined;
    for (const interval of tier.intervals) {
      // An interval tier tiles time (Praat): an overlap is a hand edit or a merge gone wrong, never merged silently.
      if (previous !== undefined && interval.start < previous.end) {
        const error = new ReferenceCorpusError(
          grid.file,
          { line: interval.line },
          `tier ${JSON.stringify(tier.name)}: the interval ${formatCentiseconds(interval.start)}-${formatCentiseconds(interval.end)} s overlaps the interval ${formatCentiseconds(previous.start)}-${formatCentiseconds(previous.end)} s (line ${previous.line}); the intervals of one tier must not overlap`,
        );
        if (options.strict ?? true) throw error;
        skipped.push(skippedRecordOf(error));
        continue;
      }
      if (previous === undefined || interval.end > previous.end) previous = interval;
      const text = interval.text.replace(/\s+/g, ' ').trim();
      tokens.push({
        channel: channel as Channel,
        start: interval.start,
        end: interval.end,
        text,
        speech: isSpeech(text),
      });
    }
  });
  for (const grid of grids) {
    const points = grid.tiers.filter((tier) => tier.kind === 'TextTier');
    if (points.length > 0)
      notes.push(
        `${path.basename(grid.file)}: point tiers ignored (${points.map((tier) => JSON.stringify(tier.name)).join(', ')})`,
      );
  }
  const gridEnd = Math.max(...grids.map((grid) => grid.end));
  if (audio !== undefined) {
    notes.push(audio.note);
    if (Math.abs(audio.durationCs - gridEnd) > 10)
      notes.push(`the audio lasts ${audio.durationCs / 100} s, the TextGrid ${gridEnd / 100} s`);
  }
  if (skipped.length > 0) notes.push(`skipped ${skipped.length} malformed TextGrid intervals (not strict)`);
  const recording = recordingFromTimedTokens({
    id,
    format: 'textgrid',
    sources: grids.map((grid) => grid.file),
    tokens,
    channelSpeakers: { 0: chosen[0]?.speaker as string, 1: chosen[1]?.speaker as string },
    durationCs: audio?.durationCs ?? gridEnd,
    ...(audio === undefined ? {} : { audio: audio.audio }),
    notes,
  });
  if (skipped.length > 0) recording.skippedRecords = skipped.map(describeSkippedRecord);
  return recording;
}

/**
 * Loads TextGrid recordings (module comment).
 *
 * @param paths `.TextGrid` files or folders of them (a pair half given alone brings its partner from
 *   the same folder).
 * @returns one recording per id, sorted by id; `format: 'textgrid'`, supervisions with word timings,
 *   audio when found.
 * @throws ReferenceCorpusError naming the file (and line) when a path is missing, a pair half has no
 *   partner, a recording id appears twice, a file is malformed, or the speaker tiers do not fit.
 */
export async function prepareTextGrid(
  paths: readonly string[],
  options: TextGridOptions = {},
): Promise<ReferenceRecording[]> {
  const files = new Set<string>();
  for (const given of paths) {
    if (await isDirectory(given)) {
      const found = await listFiles(given, ['.textgrid']);
      if (found.length === 0) throw new ReferenceCorpusError(given, {}, 'no *.TextGrid files in the folder');
      for (const file of found) files.add(file);
    } else if (await isFile(given)) files.add(given);
    else throw new ReferenceCorpusError(given, {}, 'no such file or folder');
  }
  const planned = new Map<string, PlannedRecording>();
  for (const file of [...files].sort()) {
    const stem = path.basename(file).replace(/\.textgrid$/i, '');
    const pair = PAIR_NAME.exec(stem);
    let id = stem;
    let recordingFiles = [file];
    if (pair !== null) {
      id = pair[1] as string;
      const extension = path.extname(file);
      recordingFiles = REFERENCE_CHANNELS.map((channel) =>
        path.join(path.dirname(file), `${id}_${channel}${extension}`),
      );
      const partner = recordingFiles.find((candidate) => candidate !== file) as string;
      if (!(await isFile(partner))) {
        // A lone `<x>_0.TextGrid` may be a whole recording named with an underscore: read it alone.
        id = stem;
        recordingFiles = [file];
      }
    }
    const earlier = planned.get(id);
    if (earlier !== undefined) {
      if (earlier.files.join('\n') === recordingFiles.join('\n')) continue;
      throw new ReferenceCorpusError(file, {}, `recording ${id} is also read from ${earlier.files.join(' + ')}`);
    }
    planned.set(id, { id, files: recordingFiles });
  }
  const recordings: ReferenceRecording[] = [];
  for (const recording of [...planned.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    const grids = [];
    for (const file of recording.files) grids.push(await readTextGrid(file, { strict: options.strict ?? true }));
    const audio = await findRecordingAudio(
      options.audioDirectory ?? path.dirname(recording.files[0] as string),
      recording.id,
    );
    recordings.push(textGridToReferenceRecording(recording.id, grids, options, audio));
  }
  return recordings;
}
