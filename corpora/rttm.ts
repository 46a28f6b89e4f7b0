/**
 * RTTM (NIST Rich Transcription Time Marked) speaker timings -> two-channel speech segments.
 *
 * Used for the real reference timings in `../shared/corpora/reference-timing/rttm/{en,ja}/*.rttm`
 * (CallFriend calls from TalkBank CABank, utterance-level bullets, CC BY-NC-SA 3.0). One file holds
 * one recording; every line is
 *
 *     SPEAKER <file> <channel> <onset> <duration> <NA> <NA> <speaker> <NA> <NA>
 *
 * with onset and duration in seconds. Blank lines and `;;` comment lines are skipped. Lines of the
 * other NIST RTTM types (`SPKR-INFO`, `LEXEME`, ...) carry no speaker turns and are skipped too
 * (counted in `skippedLineCount`).
 *
 * Corpus quirks handled here so downstream code sees plain `ChannelSegments`:
 * - calls with more than two speakers (someone else comes to the phone): the two speakers with the
 *   most talk time are kept, the others are reported with their talk time and segments;
 * - a speaker's own bullets abut or overlap (utterance-level bullets): merged per speaker so each
 *   channel is sorted and non-overlapping, as `docs/events.md` requires of its input;
 * - bullets shorter than 0.005 s vanish when rounded to centiseconds: dropped and counted.
 */
import { readInputText } from '../pipeline/storage/read-input-file.ts';
import path from 'node:path';
import type { Centiseconds, Channel, ChannelSegments, SpeechSegment } from '../pipeline/model/types.ts';
import type { SkippedRecord } from './skipped-records.ts';

/** One `SPEAKER` line of an RTTM file. */
export interface RttmTurn {
  speaker: string;
  /** Onset in seconds, exactly as written in the file (parsed). */
  onsetSeconds: number;
  /** Duration in seconds, exactly as written in the file (parsed). */
  durationSeconds: number;
  /** Onset rounded once to integer centiseconds (round half up on the exact decimal). */
  start: Centiseconds;
  /** Onset + duration, summed exactly, then rounded once to integer centiseconds. */
  end: Centiseconds;
  /** The RTTM channel column (1 for these telephone calls; not the benchmark channel). */
  rttmChannel: string;
  /** 1-based line number in the file, for error messages and tracing. */
  line: number;
}

/** The content of one RTTM file: one recording. */
export interface RttmRecording {
  /** Path the recording was read from (as given to `readRttm`, or the `source` of `parseRttm`). */
  path: string;
  /** The `<file>` column, e.g. `4175.cha`. */
  fileId: string;
  /** Recording id: the file name without its extension, e.g. `4175`. */
  id: string;
  /** Turns in file order. */
  turns: RttmTurn[];
  /** Speakers in order of first appearance. */
  speakers: string[];
  /** Lines skipped because their type is not `SPEAKER` (comments and blank lines not counted). */
  skippedLineCount: number;
  /** Malformed `SPEAKER` lines skipped (`strict: false`), in file order; empty when strict. */
  skippedRecords: SkippedRecord[];
}

/** Options of {@link parseRttm} and {@link readRttm}. */
export interface RttmParseOptions {
  /**
   * Stop at the first malformed `SPEAKER` line (RttmFormatError). Default true; with false such a
   * line is skipped and listed in `skippedRecords` (a file with no good line still fails).
   */
  strict?: boolean;
}

/** A speaker left out of the two-channel view, with how much they said. */
export interface DroppedSpeaker {
  speaker: string;
  /** Talk time after merging the speaker's own overlapping bullets, in centiseconds. */
  talkTime: Centiseconds;
  /** The speaker's merged segments, so callers can discard measurements they touch. */
  segments: SpeechSegment[];
}

/** A recording as two benchmark channels. */
export interface TwoChannelRecording {
  id: string;
  path: string;
  /** Sorted, non-overlapping segments per channel (integer centiseconds). */
  segments: ChannelSegments;
  /**
   * Speaker label per channel. Channel 0 is the speaker with more talk time, channel 1 the other
   * (ties broken by label order), so `channel0->channel1` means "from the main speaker to the
   * second speaker". The calls are symmetric conversations; the mapping carries no role.
   */
  channelSpeakers: Record<Channel, string>;
  /** Talk time per channel in centiseconds (length of the merged segments). */
  talkTime: Record<Channel, Centiseconds>;
  /** Speakers beyond the two kept ones, most talk time first. Empty for two-speaker calls. */
  droppedSpeakers: DroppedSpeaker[];
  /** Number of the kept speakers' bullets merged into a preceding overlapping or abutting one. */
  mergedSegmentCount: number;
  /** Number of bullets (any speaker) whose start and end round to the same centisecond. */
  emptySegmentCount: number;
  /** End of the last bullet of any speaker, in centiseconds. */
  duration: Centiseconds;
}

/** A malformed RTTM file or line. The message names the file and (when known) the line. */
export class RttmFormatError extends Error {
  override readonly name = 'RttmFormatError';
  constructor(
    readonly path: string,
    readonly line: number | null,
    readonly reason: string,
  ) {
    super(`${path}${line === null ? '' : `:${line}`}: ${reason}`);
  }
}

const MICROSECONDS_PER_SECOND = 1_000_000;
const MICROSECONDS_PER_CENTISECOND = 10_000;
const DECIMAL_SECONDS = /^\d+(?:\.\d+)?$/;

/**
 * Parses a non-negative decimal number of seconds exactly into integer microseconds.
 * Digits beyond the sixth decimal are rounded half up. Returns null when the text is not a plain
 * non-negative decimal (no sign, no exponent).
 */
export function parseMicroseconds(text: string): number | null {
  if (!DECIMAL_SECONDS.test(text)) return null;
  const [whole = '0', fraction = ''] = text.split('.');
  const padded = (fraction + '000000').slice(0, 6);
  let micro = Number(whole) * MICROSECONDS_PER_SECOND + Number(padded);
  if (fraction.length > 6 && Number(fraction[6]) >= 5) micro += 1;
  return Number.isSafeInteger(micro) ? micro : null;
}

/**
 * Integer microseconds -> integer centiseconds, round half up (docs/events.md "Input: speech segments
 * per channel": rounded once, where times enter).
 */
export function microsecondsToCentiseconds(micro: number): Centiseconds {
  return Math.floor((micro + MICROSECONDS_PER_CENTISECOND / 2) / MICROSECONDS_PER_CENTISECOND);
}

/**
 * Parses the text of one RTTM file.
 *
 * @param text file content
 * @param source path or name used in error messages and stored as `path`
 * @param options `strict: false` skips malformed `SPEAKER` lines instead of throwing.
 * @returns the recording; times kept both as parsed seconds and as integer centiseconds
 * @throws RttmFormatError (naming `source` and the 1-based line) when a `SPEAKER` line does not have
 *   10 fields, its onset or duration is not a non-negative decimal, its duration is 0, its file id
 *   differs from the first line's (one recording per file) (these only when strict), or the file has
 *   no good `SPEAKER` line.
 */
export function parseRttm(text: string, source: string, options: RttmParseOptions = {}): RttmRecording {
  const strict = options.strict ?? true;
  const skippedRecords: SkippedRecord[] = [];
  const turns: RttmTurn[] = [];
  const speakers: string[] = [];
  let fileId: string | null = null;
  let skippedLineCount = 0;
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index += 1) {
    try {
      readLine(index);
    } catch (error) {
      if (strict || !(error instanceof RttmFormatError) || error.line === null) throw error;
      skippedRecords.push({ source, line: error.line, reason: error.reason });
    }
  }
  if (fileId === null) {
    const first = skippedRecords[0];
    throw new RttmFormatError(
      source,
      null,
      first === undefined ? 'no SPEAKER line' : `no good SPEAKER line (line ${first.line}: ${first.reason})`,
    );
  }
  const id = path.basename(source).replace(/\.[^.]*$/, '');
  return { path: source, fileId, id, turns, speakers, skippedLineCount, skippedRecords };

  /** Reads line `index` (0-based) into the turns; throws RttmFormatError for a malformed SPEAKER line. */
  function readLine(index: number): void {
    const lineNumber = index + 1;
    const trimmed = (lines[index] ?? '').trim();
    if (trimmed === '' || trimmed.startsWith(';;')) return;
    const fields = trimmed.split(/\s+/);
    if (fields[0] !== 'SPEAKER') {
      skippedLineCount += 1;
      return;
    }
    if (fields.length !== 10) {
      throw new RttmFormatError(source, lineNumber, `SPEAKER line has ${fields.length} fields, expected 10`);
    }
    const [, lineFileId, rttmChannel, onsetText, durationText, , , speaker] = fields as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    if (fileId !== null && lineFileId !== fileId) {
      throw new RttmFormatError(
        source,
        lineNumber,
        `file id "${lineFileId}" differs from "${fileId}" of the first line (one recording per file expected)`,
      );
    }
    const onsetMicro = parseMicroseconds(onsetText);
    if (onsetMicro === null) {
      throw new RttmFormatError(
        source,
        lineNumber,
        `onset "${onsetText}" is not a non-negative decimal number of seconds`,
      );
    }
    const durationMicro = parseMicroseconds(durationText);
    if (durationMicro === null) {
      throw new RttmFormatError(
        source,
        lineNumber,
        `duration "${durationText}" is not a non-negative decimal number of seconds`,
      );
    }
    if (durationMicro === 0) {
      throw new RttmFormatError(source, lineNumber, 'duration is 0');
    }
    fileId ??= lineFileId;
    if (!speakers.includes(speaker)) speakers.push(speaker);
    turns.push({
      speaker,
      onsetSeconds: onsetMicro / MICROSECONDS_PER_SECOND,
      durationSeconds: durationMicro / MICROSECONDS_PER_SECOND,
      start: microsecondsToCentiseconds(onsetMicro),
      end: microsecondsToCentiseconds(onsetMicro + durationMicro),
      rttmChannel,
      line: lineNumber,
    });
  }
}

/**
 * Reads one RTTM file.
 *
 * @param filePath path of a `.rttm` file holding one recording
 * @param options as `parseRttm`.
 * @throws RttmFormatError as `parseRttm`; the file-system error when the file cannot be read;
 *   InputFileError when it is not a regular file or is too large to read
 */
export async function readRttm(filePath: string, options: RttmParseOptions = {}): Promise<RttmRecording> {
  return parseRttm(await readInputText(filePath), filePath, options);
}

/**
 * Sorts segments and merges those that overlap or abut (next.start <= current.end), in
 * centiseconds. Does not mutate its input. Exported for reuse and tests.
 *
 * @returns the merged segments and how many input segments were merged into a preceding one
 */
export function mergeOverlappingSegments(segments: readonly SpeechSegment[]): {
  segments: SpeechSegment[];
  mergedCount: number;
} {
  const sorted = [...segments].sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: SpeechSegment[] = [];
  let mergedCount = 0;
  for (const segment of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && segment.start <= last.end) {
      last.end = Math.max(last.end, segment.end);
      mergedCount += 1;
    } else {
      merged.push({ start: segment.start, end: segment.end });
    }
  }
  return { segments: merged, mergedCount };
}

function totalLength(segments: readonly SpeechSegment[]): Centiseconds {
  return segments.reduce((sum, segment) => sum + segment.end - segment.start, 0);
}

/**
 * Turns a recording into the two-channel input of the event rules (`docs/events.md`).
 *
 * Keeps the two speakers with the most talk time (after merging each speaker's own overlapping
 * bullets; ties broken by speaker label); channel 0 gets the one with more talk time. Every other
 * speaker is listed in `droppedSpeakers` with talk time and segments. Each speaker's bullets are
 * merged when they overlap or abut in centiseconds, so each channel is sorted and non-overlapping.
 * Bullets whose start and end round to the same centisecond are dropped (`emptySegmentCount`).
 *
 * @throws RttmFormatError when fewer than two speakers have any speech left
 */
export function toTwoChannelSegments(recording: RttmRecording): TwoChannelRecording {
  const bySpeaker = new Map<string, SpeechSegment[]>();
  let emptySegmentCount = 0;
  let duration = 0;
  for (const turn of recording.turns) {
    duration = Math.max(duration, turn.end);
    if (turn.end <= turn.start) {
      emptySegmentCount += 1;
      continue;
    }
    const list = bySpeaker.get(turn.speaker) ?? [];
    list.push({ start: turn.start, end: turn.end });
    bySpeaker.set(turn.speaker, list);
  }
  const ranked = [...bySpeaker.entries()]
    .map(([speaker, segments]) => {
      const { segments: merged, mergedCount } = mergeOverlappingSegments(segments);
      return { speaker, segments: merged, mergedCount, talkTime: totalLength(merged) };
    })
    .sort((a, b) => b.talkTime - a.talkTime || (a.speaker < b.speaker ? -1 : a.speaker > b.speaker ? 1 : 0));
  const [main, second, ...others] = ranked;
  if (main === undefined || second === undefined) {
    throw new RttmFormatError(
      recording.path,
      null,
      `needs two speakers with speech, found ${ranked.length} (${ranked.map((entry) => entry.speaker).join(', ') || 'none'})`,
    );
  }
  return {
    id: recording.id,
    path: recording.path,
    segments: { 0: main.segments, 1: second.segments },
    channelSpeakers: { 0: main.speaker, 1: second.speaker },
    talkTime: { 0: main.talkTime, 1: second.talkTime },
    droppedSpeakers: others.map(({ speaker, talkTime, segments }) => ({ speaker, talkTime, segments })),
    mergedSegmentCount: main.mergedCount + second.mergedCount,
    emptySegmentCount,
    duration,
  };
}

/**
 * A key identifying a recording's timing content regardless of its file name and `<file>` column:
 * every turn as `speaker onset duration` (centisecond-exact), in file order. Two RTTM files with the
 * same key are the same call published twice (the Japanese set has one such pair, 4222 and 4261).
 */
export function recordingContentKey(recording: RttmRecording): string {
  return recording.turns.map((turn) => `${turn.speaker} ${turn.start} ${turn.end}`).join('\n');
}
