/**
 * Export as Praat TextGrids (Praat manual, "TextGrid file formats"; the long text format, laid out as
 * Praat's own "Save as text file" writes it, in UTF-8, which Praat reads), one `{id}.TextGrid` per
 * dialogue, time domain [0, dialogue duration]:
 *
 * 1. and 2. one IntervalTier per channel, channel 0 first, named as Montreal Forced Aligner names
 *    speaker tiers (`<speaker> - words`): `system - words` and `user - words` with the words
 *    (Japanese: morphemes; chat data: `channel0 - words`, `channel1 - words`), the gaps as empty
 *    intervals (an interval tier covers its whole domain); corpora/textgrid.ts reads them back as
 *    channels 0 and 1 with speakers `system` and `user`;
 * 3. TextTier `events`: the benchmark events as points at their start time. Events overlap each other
 *    (a TURN holds its SHORTPAUSEs; a BARGE_IN starts with its TURN), so they cannot share one
 *    interval tier, and Praat keeps only one point per time (it drops a second point at the same
 *    time when reading): events starting at the same time share one point, their texts joined with
 *    " | ". Each event reads `TYPE channel C [start, end]` (seconds; a TURN_SHIFT with start > end is
 *    an overlapping shift).
 * Strings are written as Praat writes them: in double quotes, a quote inside doubled.
 */
import type { AlignedWord, BenchmarkEvent, BenchmarkEventType, Centiseconds, Channel, ChannelEvents } from '../model/types.ts';
import type { ExportDataset, ExportDialogue } from './export-dataset.ts';
import type { ExportWriter } from './export-writer.ts';

/** One interval of an interval tier, centiseconds. */
export interface TextGridInterval {
  start: Centiseconds;
  end: Centiseconds;
  text: string;
}

/** One point of a point (text) tier, centiseconds. */
export interface TextGridPoint {
  time: Centiseconds;
  mark: string;
}

/** A tier: intervals that cover the domain, or points at distinct times. */
export type TextGridTier = { kind: 'interval'; name: string; intervals: TextGridInterval[] } | { kind: 'point'; name: string; points: TextGridPoint[] };

/** A TextGrid with its time domain [0, end], centiseconds. */
export interface TextGrid {
  end: Centiseconds;
  tiers: TextGridTier[];
}

/** Separator between events that share one point of the events tier. */
export const EVENT_SEPARATOR = ' | ';

/** Seconds as Praat reads them: shortest decimal of centiseconds / 100 (`3300` -> `33`, `345` -> `3.45`). */
function praatNumber(centiseconds: Centiseconds): string {
  return String(centiseconds / 100 + 0);
}

function praatString(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}

/**
 * Intervals that cover [0, end]: the given labelled spans (sorted, non-overlapping) with empty
 * intervals in the gaps.
 * @throws RangeError naming the spans when two overlap or one lies outside [0, end]
 */
export function coverDomain(spans: readonly TextGridInterval[], end: Centiseconds): TextGridInterval[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || a.end - b.end);
  const intervals: TextGridInterval[] = [];
  let cursor = 0;
  for (const span of sorted) {
    if (span.start < cursor) throw new RangeError(`interval [${span.start}, ${span.end}] "${span.text}" overlaps the one before it (ends ${cursor})`);
    if (span.end > end || span.end <= span.start) throw new RangeError(`interval [${span.start}, ${span.end}] "${span.text}" is empty or outside [0, ${end}]`);
    if (span.start > cursor) intervals.push({ start: cursor, end: span.start, text: '' });
    intervals.push({ ...span });
    cursor = span.end;
  }
  if (cursor < end) intervals.push({ start: cursor, end, text: '' });
  return intervals;
}

/**
 * Word intervals for one tier: sorted, and a word that starts before the previous one ends (possible in
 * transcripts of real speech, never in our synthetic alignments) joined into it, text separated by a
 * space, since intervals of one tier cannot overlap.
 */
export function wordIntervals(words: readonly { start: Centiseconds; end: Centiseconds; word: string }[]): TextGridInterval[] {
  const intervals: TextGridInterval[] = [];
  for (const word of [...words].sort((a, b) => a.start - b.start || a.end - b.end)) {
    const last = intervals.at(-1);
    if (last !== undefined && word.start < last.end) {
      last.end = Math.max(last.end, word.end);
      last.text = `${last.text} ${word.word}`;
    } else intervals.push({ start: word.start, end: word.end, text: word.word });
  }
  return intervals;
}

/** The text of one event inside an events-tier mark: `TYPE channel C [start, end]`. */
export function formatEventMark(event: BenchmarkEvent, channel: Channel): string {
  return `${event.event} channel ${channel} [${praatNumber(event.start)}, ${praatNumber(event.end)}]`;
}

const EVENT_MARK = /^(TURN|SHORTPAUSE|BC|TURN_HOLD|TURN_SHIFT|BARGE_IN) channel ([01]) \[(\d+(?:\.\d{1,2})?), (\d+(?:\.\d{1,2})?)\]$/;

/**
 * Reads the events back from the marks of an events tier (the inverse of the writer), in mark order.
 * @throws RangeError naming the mark that is not `TYPE channel C [start, end]`
 */
export function parseEventMarks(marks: readonly string[]): ChannelEvents {
  const events: ChannelEvents = { 0: [], 1: [] };
  const centiseconds = (text: string) => {
    const [whole = '0', fraction = ''] = text.split('.');
    return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
  };
  for (const mark of marks) {
    for (const part of mark.split(EVENT_SEPARATOR)) {
      const match = EVENT_MARK.exec(part);
      if (match === null) throw new RangeError(`events tier mark ${JSON.stringify(part)} is not "TYPE channel C [start, end]"`);
      events[Number(match[2]) as Channel].push({ event: match[1] as BenchmarkEventType, start: centiseconds(match[3]!), end: centiseconds(match[4]!) });
    }
  }
  return events;
}

/** The TextGrid of one dialogue (module comment). */
export function dialogueTextGrid(dataset: Pick<ExportDataset, 'roles'>, dialogue: ExportDialogue): TextGrid {
  const end = Math.round(dialogue.durationSeconds * 100);
  const wordTier = (channel: Channel): TextGridTier => {
    const role = dataset.roles[channel];
    const words = dialogue.words.filter((word: AlignedWord) => word.channel === channel);
    return { kind: 'interval', name: `${role} - words`, intervals: coverDomain(wordIntervals(words), end) };
  };
  const byTime = new Map<Centiseconds, string[]>();
  for (const channel of [0, 1] as Channel[]) {
    for (const event of dialogue.events[channel]) byTime.set(event.start, [...(byTime.get(event.start) ?? []), formatEventMark(event, channel)]);
  }
  const points = [...byTime.entries()].sort(([a], [b]) => a - b).map(([time, marks]) => ({ time, mark: marks.join(EVENT_SEPARATOR) }));
  return { end, tiers: [wordTier(0), wordTier(1), { kind: 'point', name: 'events', points }] };
}

/** The long text format of a TextGrid, laid out as Praat writes it (4-space indents, a space after each value). */
export function formatTextGrid(grid: TextGrid): string {
  const lines = ['File type = "ooTextFile"', 'Object class = "TextGrid"', '', 'xmin = 0 ', `xmax = ${praatNumber(grid.end)} `, 'tiers? <exists> ', `size = ${grid.tiers.length} `, 'item []: '];
  grid.tiers.forEach((tier, index) => {
    lines.push(`    item [${index + 1}]:`);
    lines.push(`        class = ${praatString(tier.kind === 'interval' ? 'IntervalTier' : 'TextTier')} `, `        name = ${praatString(tier.name)} `);
    lines.push('        xmin = 0 ', `        xmax = ${praatNumber(grid.end)} `);
    if (tier.kind === 'interval') {
      lines.push(`        intervals: size = ${tier.intervals.length} `);
      tier.intervals.forEach((interval, position) => {
        lines.push(`        intervals [${position + 1}]:`, `            xmin = ${praatNumber(interval.start)} `, `            xmax = ${praatNumber(interval.end)} `, `            text = ${praatString(interval.text)} `);
      });
    } else {
      lines.push(`        points: size = ${tier.points.length} `);
      tier.points.forEach((point, position) => {
        lines.push(`        points [${position + 1}]:`, `            number = ${praatNumber(point.time)} `, `            mark = ${praatString(point.mark)} `);
      });
    }
  });
  return `${lines.join('\n')}\n`;
}

/** Writes `{id}.TextGrid` per dialogue. */
export async function writeTextGridExport(dataset: ExportDataset, writer: ExportWriter): Promise<Record<string, unknown>> {
  for (const dialogue of dataset.dialogues) await writer.write(`${dialogue.id}.TextGrid`, formatTextGrid(dialogueTextGrid(dataset, dialogue)));
  return { files: dataset.dialogues.length, tiers: ['channel 0 words', 'channel 1 words', 'events (points)'] };
}
