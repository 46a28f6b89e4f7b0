/**
 * What every reference corpus loader shares (corpora/stereo-wav.ts, candor.ts, magicdata.ts,
 * rttm-recordings.ts, m3-events.ts): the error type, exact seconds -> centiseconds parsing, turning
 * supervisions into per-channel segments, a check of the `ReferenceRecording` contract, transcript
 * joining, and audio reading.
 *
 * Corpus quirks do not belong here (lhotse style: one corpus, one file); only the parts that would
 * otherwise be written five times.
 *
 * Audio convention of `ReferenceRecording.audio` (../pipeline/model/types.ts), used by every loader
 * and by the speaker prompt pool: an entry `{ path, channel }` says that recording channel `channel`
 * is in `path`. When the file has two channels, recording channel c is file channel c (loaders map
 * speakers so that this holds); when the file is mono, its one channel is used (a mono mix, or one
 * file per speaker).
 */
import { readdir, stat } from 'node:fs/promises';
import { InputFileError, readInputText } from '../pipeline/storage/read-input-file.ts';
import path from 'node:path';
import type { RawAudio } from '../pipeline/audio/raw-audio.ts';
import { readAudioFile } from '../pipeline/audio/read-audio-file.ts';
import { readWavFileLayout } from '../pipeline/audio/wav.ts';
import { validateSegments } from '../pipeline/events/index.ts';
import type {
  Centiseconds,
  Channel,
  ChannelSegments,
  ReferenceRecording,
  ReferenceSupervision,
  SpeechSegment,
} from '../pipeline/model/types.ts';
import { mergeOverlappingSegments } from './rttm.ts';

/** Both benchmark channels, in order. */
export const REFERENCE_CHANNELS: readonly Channel[] = [0, 1] as const;

/** Where in a file a problem is. Every field is optional; give what is known. */
export interface FileLocation {
  /** 1-based line number in the file. */
  line?: number;
  /** 1-based data row of a CSV file (the header row is not counted). */
  row?: number;
  /** Column (CSV header name) or field name. */
  column?: string;
}

/**
 * A reference corpus file is missing or malformed. The message names the file and, when known, the
 * line, the CSV row and the column: `transcript_backbiter.csv:4: row 3, column "start": ...`.
 */
export class ReferenceCorpusError extends Error {
  override readonly name = 'ReferenceCorpusError';
  constructor(
    /** The file (or folder) the problem is in. */
    readonly file: string,
    readonly location: FileLocation,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    const where = [
      location.row === undefined ? '' : `row ${location.row}`,
      location.column === undefined ? '' : `column ${JSON.stringify(location.column)}`,
    ]
      .filter((part) => part !== '')
      .join(', ');
    super(
      `${file}${location.line === undefined ? '' : `:${location.line}`}: ${where === '' ? '' : `${where}: `}${reason}`,
      options,
    );
  }
}

const DECIMAL_SECONDS = /^\d+(?:\.\d*)?$|^\.\d+$/;

/**
 * Parses a non-negative decimal number of seconds (`"12.004"`, `"3"`, `"4.805"`) exactly into integer
 * centiseconds, rounding half up on the written decimal (so `"4.805"` -> 481, where floating point
 * would give 480). Surrounding whitespace is ignored. No sign, no exponent.
 *
 * @returns centiseconds, or undefined when the text is not such a number (or too large).
 */
export function parseSecondsToCentiseconds(text: string): Centiseconds | undefined {
  const trimmed = text.trim();
  if (!DECIMAL_SECONDS.test(trimmed)) return undefined;
  const [whole = '', fraction = ''] = trimmed.split('.');
  const hundredths = Number((fraction + '00').slice(0, 2));
  const roundUp = fraction.length > 2 && Number(fraction[2]) >= 5 ? 1 : 0;
  const value = Number(whole === '' ? '0' : whole) * 100 + hundredths + roundUp;
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Centiseconds -> `"12.34"`-style text with exactly two decimals (for notes and messages). */
export function formatCentiseconds(centiseconds: Centiseconds): string {
  const sign = centiseconds < 0 ? '-' : '';
  const absolute = Math.abs(centiseconds);
  return `${sign}${Math.floor(absolute / 100)}.${String(absolute % 100).padStart(2, '0')}`;
}

/**
 * Per channel, the speech segments covered by spans (supervisions or any `{channel, start, end}`),
 * in integer centiseconds: sorted, and a speaker's own overlapping or abutting spans merged
 * (`mergeOverlappingSegments` of corpora/rttm.ts). Empty spans (start >= end) are left out.
 *
 * @returns the segments and how many spans were merged into a preceding one (both channels together).
 */
export function segmentsFromSpans(spans: readonly { channel: Channel; start: Centiseconds; end: Centiseconds }[]): {
  segments: ChannelSegments;
  mergedCount: number;
} {
  let mergedCount = 0;
  const channelSegments = (channel: Channel): SpeechSegment[] => {
    const merged = mergeOverlappingSegments(
      spans
        .filter((span) => span.channel === channel && span.end > span.start)
        .map(({ start, end }) => ({ start, end })),
    );
    mergedCount += merged.mergedCount;
    return merged.segments;
  };
  const segments = { 0: channelSegments(0), 1: channelSegments(1) };
  return { segments, mergedCount };
}

/** Orders supervisions by start, then channel, then end (the order loaders store them in). */
export function compareSupervisions(a: ReferenceSupervision, b: ReferenceSupervision): number {
  return a.start - b.start || a.channel - b.channel || a.end - b.end;
}

/**
 * Checks the `ReferenceRecording` contract: non-empty id, a known channel speaker for each channel,
 * segments valid per channel (integer centiseconds, sorted, non-overlapping; `validateSegments`),
 * supervisions with integer times, start < end, on channel 0 or 1, sorted by
 * {@link compareSupervisions}, and speakers equal to their channel's speaker; audio entries on
 * channels 0 and 1.
 *
 * @throws Error naming the recording and the offending item.
 */
export function validateReferenceRecording(recording: ReferenceRecording): void {
  const fail = (detail: string): never => {
    throw new Error(`reference recording ${JSON.stringify(recording.id)} (${recording.format}): ${detail}`);
  };
  if (recording.id === '') fail('empty id');
  if (!Number.isSafeInteger(recording.durationCs) || recording.durationCs < 0)
    fail(`durationCs ${recording.durationCs} is not a non-negative integer`);
  for (const channel of REFERENCE_CHANNELS) {
    if (typeof recording.channelSpeakers[channel] !== 'string' || recording.channelSpeakers[channel] === '')
      fail(`channel ${channel} has no speaker`);
    try {
      validateSegments(recording.segments[channel], channel);
    } catch (error) {
      fail((error as Error).message);
    }
  }
  (recording.supervisions ?? []).forEach((supervision, index, all) => {
    const { channel, start, end } = supervision;
    if (channel !== 0 && channel !== 1) fail(`supervision ${index}: channel ${String(channel)} is not 0 or 1`);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end <= start) {
      fail(`supervision ${index}: [${start}, ${end}] is not a non-empty span of integer centiseconds`);
    }
    if (supervision.speaker !== recording.channelSpeakers[channel]) {
      fail(`supervision ${index}: speaker ${JSON.stringify(supervision.speaker)} is not channel ${channel}'s speaker`);
    }
    const previous = all[index - 1];
    if (previous !== undefined && compareSupervisions(previous, supervision) > 0)
      fail(`supervision ${index} is out of order`);
  });
  for (const entry of recording.audio ?? []) {
    if (entry.channel !== 0 && entry.channel !== 1)
      fail(`audio ${entry.path}: channel ${String(entry.channel)} is not 0 or 1`);
  }
}

/** Characters after or before which transcript pieces are joined without a space (Japanese, Chinese). */
const NO_SPACE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303F\u30FC\uFF00-\uFFEF]/u;

/**
 * Joins transcript pieces (words or utterances) in order: with no space where either neighbour side is
 * Japanese or Chinese script (kana, kanji, CJK punctuation, full-width forms), with one space
 * otherwise. Pieces are trimmed; empty pieces are skipped. `["今日は", "晴れ"]` -> `今日は晴れ`,
 * `["so", "where"]` -> `so where`, `["GPS", "を"]` -> `GPSを`.
 */
export function joinTranscript(pieces: readonly string[]): string {
  let text = '';
  for (const raw of pieces) {
    const piece = raw.trim();
    if (piece === '') continue;
    if (text === '') {
      text = piece;
      continue;
    }
    const before = [...text].at(-1) ?? '';
    const after = [...piece][0] ?? '';
    text += NO_SPACE_SCRIPT.test(before) || NO_SPACE_SCRIPT.test(after) ? piece : ` ${piece}`;
  }
  return text;
}

/** Reads an audio file into RawAudio (samples in [-1, 1], one array per channel). */
export type AudioFileReader = (file: string) => Promise<RawAudio>;

/**
 * The default {@link AudioFileReader}: `readAudioFile` of pipeline/audio/read-audio-file.ts (WAV
 * decoded in process, MP3, FLAC and other formats through ffmpeg).
 *
 * @throws AudioFileError naming the file when it is missing or cannot be decoded.
 */
export function readReferenceAudio(file: string): Promise<RawAudio> {
  return readAudioFile(file);
}

/** What a WAV header says about its audio. */
export interface WavHeaderInfo {
  channelCount: number;
  /** Samples per second per channel, in Hz. */
  sampleRate: number;
  /** Samples per channel (from the data chunk size; a streamed file's size is clipped to the bytes present). */
  frameCount: number;
}

/**
 * Reads only the header of a RIFF/WAVE file (not its samples) to learn channel count, sample rate and
 * length (the chunk walker of pipeline/audio/wav.ts); used for durations of recordings whose audio is
 * not otherwise read.
 *
 * @returns undefined when the file is not a WAV file this function understands (caller falls back).
 * @throws the file-system error when the file cannot be opened.
 */
export async function readWavHeader(file: string): Promise<WavHeaderInfo | undefined> {
  const layout = readWavFileLayout(file);
  if (layout === undefined || layout.format.blockAlign === 0 || layout.format.sampleRate === 0) return undefined;
  return {
    channelCount: layout.format.channels,
    sampleRate: layout.format.sampleRate,
    frameCount: Math.floor(layout.dataBytes / layout.format.blockAlign),
  };
}

/** Length in centiseconds of `frameCount` samples at `sampleRate` Hz, rounded up (every sample covered). */
export function framesToCentiseconds(frameCount: number, sampleRate: number): Centiseconds {
  return Math.ceil((frameCount * 100) / sampleRate - 1e-9);
}

/** True when `file` exists and is a regular file. */
export async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/** True when `folder` exists and is a folder. */
export async function isDirectory(folder: string): Promise<boolean> {
  try {
    return (await stat(folder)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Files directly inside `folder` whose name ends with one of `extensions` (case-insensitive, with the
 * dot, e.g. `.wav`), sorted by name (code-unit order, so the result does not depend on the locale).
 *
 * @throws ReferenceCorpusError naming the folder when it cannot be listed.
 */
export async function listFiles(folder: string, extensions: readonly string[]): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (error) {
    throw new ReferenceCorpusError(
      folder,
      {},
      `cannot list folder (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      { cause: error },
    );
  }
  return names
    .filter((name) => extensions.some((extension) => name.toLowerCase().endsWith(extension)))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => path.join(folder, name));
}

/**
 * Reads a text file as UTF-8 (a leading byte-order mark removed).
 *
 * @param what what the file is, for the error message (`transcript`, `channel map`).
 * @throws ReferenceCorpusError naming the file when it is missing or unreadable.
 */
export async function readTextFile(file: string, what: string): Promise<string> {
  try {
    return (await readInputText(file)).replace(/^\uFEFF/, '');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ReferenceCorpusError(
      file,
      {},
      code === 'ENOENT'
        ? `${what} file not found`
        : error instanceof InputFileError
          ? `cannot read ${what} file: it ${error.reason}`
          : `cannot read ${what} file (${code ?? (error as Error).message})`,
      {
        cause: error,
      },
    );
  }
}
