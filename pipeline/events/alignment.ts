/**
 * Word-alignment files (`txt_align/{id}.txt`, docs/dataset-format.md) and the two ways of deriving
 * speech segments from them (docs/events.md "Speech segments from words and from events"): from words
 * and from events.
 */
import type {
  AlignedWord,
  BenchmarkEvent,
  Centiseconds,
  Channel,
  ChannelEvents,
  ChannelSegments,
  SpeechSegment,
} from '../model/types.ts';
import { SegmentValidationError } from './rules.ts';

/** Thrown for a malformed alignment line; the message names file, 1-based line number and field. */
export class AlignmentParseError extends Error {
  override readonly name = 'AlignmentParseError';
  constructor(
    readonly file: string,
    /** 1-based line number. */
    readonly line: number,
    /** `channel`, `start`, `end`, `word`, or `line` when the line as a whole is malformed. */
    readonly field: string,
    detail: string,
  ) {
    super(`${file}:${line}: ${field}: ${detail}`);
  }
}

/** Seconds with 0-2 decimals, as in the reference files (`3.45`, `10.2`, `33`). */
const SECONDS_PATTERN = /^(\d+)(?:\.(\d{1,2}))?$/;

/** Exact decimal -> centiseconds conversion (no floating point): `"10.2"` -> 1020. */
function parseCentiseconds(text: string): Centiseconds | undefined {
  const match = SECONDS_PATTERN.exec(text);
  if (match === null) return undefined;
  const value = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * Parses a `txt_align` file: one word per line, `channel<TAB>start<TAB>end<TAB>word`, times in seconds
 * with at most 2 decimals (the reference chat file writes `10.2` and `33`), converted exactly to
 * centiseconds. A final newline, CRLF line ends and a leading byte-order mark are tolerated; blank
 * lines, a field count other than 4, a channel other than 0/1, a malformed time, `end <= start` and an
 * empty word are errors.
 * @param text file content.
 * @param file file name, used in error messages.
 * @returns the words in file order.
 * @throws AlignmentParseError naming file, line number and field.
 */
export function parseAlignment(text: string, file: string): AlignedWord[] {
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((rawLine, index) => {
    const lineNumber = index + 1;
    const fail = (field: string, detail: string): never => {
      throw new AlignmentParseError(file, lineNumber, field, detail);
    };
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line.trim() === '') fail('line', 'blank line');
    const fields = line.split('\t');
    if (fields.length !== 4) {
      fail('line', `expected 4 tab-separated fields (channel, start, end, word), found ${fields.length}`);
    }
    const [channelText, startText, endText, word] = fields as [string, string, string, string];
    if (channelText !== '0' && channelText !== '1')
      fail('channel', `must be 0 or 1, got ${JSON.stringify(channelText)}`);
    const start =
      parseCentiseconds(startText) ??
      fail('start', `not seconds with at most 2 decimals: ${JSON.stringify(startText)}`);
    const end =
      parseCentiseconds(endText) ?? fail('end', `not seconds with at most 2 decimals: ${JSON.stringify(endText)}`);
    if (end <= start) fail('end', `${endText} is not after start ${startText}`);
    if (word.trim() === '') fail('word', 'empty');
    return { channel: Number(channelText) as Channel, start, end, word };
  });
}

/** Centiseconds -> seconds with exactly 2 decimals (`1020` -> `10.20`). */
function formatTwoDecimals(centiseconds: Centiseconds): string {
  return `${Math.floor(centiseconds / 100)}.${String(centiseconds % 100).padStart(2, '0')}`;
}

/**
 * Writes a `txt_align` file: `channel<TAB>start<TAB>end<TAB>word\n` per word, seconds with exactly
 * 2 decimals (docs/dataset-format.md "txt_align/{id}.txt"). Lines are sorted by time as in the
 * synthetic reference file (`task/topiocqa_ja_toy`): by (start, channel, end), stable. (The
 * real-chat reference instead lists channel 1 then channel 0 with shortest decimals; that is
 * MagicData's own layout, not the format.)
 * @param words times in integer centiseconds.
 * @returns the file content, each line ending in `\n` (empty string for no words).
 * @throws RangeError for a negative or non-integer time, or a word that is empty or contains a tab or line break.
 */
export function formatAlignment(words: readonly AlignedWord[]): string {
  words.forEach((word, index) => {
    if (![word.start, word.end].every((time) => Number.isSafeInteger(time) && time >= 0)) {
      throw new RangeError(
        `word ${index}: times must be non-negative integer centiseconds, got [${word.start}, ${word.end}]`,
      );
    }
    if (word.word.trim() === '' || /[\t\r\n]/.test(word.word)) {
      throw new RangeError(`word ${index}: ${JSON.stringify(word.word)} is empty or contains a tab or line break`);
    }
  });
  return [...words]
    .sort((a, b) => a.start - b.start || a.channel - b.channel || a.end - b.end)
    .map((word) => `${word.channel}\t${formatTwoDecimals(word.start)}\t${formatTwoDecimals(word.end)}\t${word.word}\n`)
    .join('');
}

/**
 * Speech segments from words (docs/events.md, "Speech segments from words and from events"): per
 * channel, words sorted by (start, end) are merged while they touch or overlap (next start ≤ current end).
 * @param words times in integer centiseconds, any order, both channels.
 * @returns per channel, sorted non-overlapping segments in centiseconds.
 */
export function segmentsFromWords(words: readonly AlignedWord[]): ChannelSegments {
  const segmentsOf = (channel: Channel): SpeechSegment[] => {
    const segments: SpeechSegment[] = [];
    const sorted = words.filter((word) => word.channel === channel).sort((a, b) => a.start - b.start || a.end - b.end);
    for (const { start, end } of sorted) {
      const last = segments.at(-1);
      if (last !== undefined && start <= last.end) last.end = Math.max(last.end, end);
      else segments.push({ start, end });
    }
    return segments;
  };
  return { 0: segmentsOf(0), 1: segmentsOf(1) };
}

/**
 * Speech segments from events (docs/events.md, "Speech segments from words and from events"): each
 * TURN or BC span minus the SHORTPAUSE spans inside it. Relation events (TURN_HOLD, TURN_SHIFT,
 * BARGE_IN) are ignored.
 * @param events per channel, integer centiseconds.
 * @returns per channel, segments sorted by start, centiseconds.
 * @throws SegmentValidationError (channel, event index) for a SHORTPAUSE that is empty, lies inside
 *   no TURN/BC of its channel, or overlaps another SHORTPAUSE.
 */
export function segmentsFromEvents(events: ChannelEvents): ChannelSegments {
  const segmentsOf = (channel: Channel): SpeechSegment[] => {
    const indexed = events[channel].map((event, index) => ({ event, index }));
    const units = indexed.filter(({ event }) => event.event === 'TURN' || event.event === 'BC');
    const pauses = indexed.filter(({ event }) => event.event === 'SHORTPAUSE');
    const inside = (pause: BenchmarkEvent, unit: BenchmarkEvent): boolean =>
      pause.start > unit.start && pause.end < unit.end;
    for (const { event, index } of pauses) {
      if (event.end <= event.start) throw new SegmentValidationError(channel, index, 'SHORTPAUSE is empty', 'event');
      if (!units.some((unit) => inside(event, unit.event))) {
        throw new SegmentValidationError(
          channel,
          index,
          `SHORTPAUSE [${event.start}, ${event.end}] lies inside no TURN or BC`,
          'event',
        );
      }
    }
    const segments: SpeechSegment[] = [];
    for (const unit of units) {
      let start = unit.event.start;
      const unitPauses = pauses
        .filter((pause) => inside(pause.event, unit.event))
        .sort((a, b) => a.event.start - b.event.start);
      for (const { event, index } of unitPauses) {
        if (event.start <= start)
          throw new SegmentValidationError(channel, index, 'SHORTPAUSE overlaps or touches the previous one', 'event');
        segments.push({ start, end: event.start });
        start = event.end;
      }
      segments.push({ start, end: unit.event.end });
    }
    return segments.sort((a, b) => a.start - b.start);
  };
  return { 0: segmentsOf(0), 1: segmentsOf(1) };
}
