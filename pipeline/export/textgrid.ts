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
 * 3. one IntervalTier per channel and event type, `{role} - {TYPE}` (`system - TURN`, ...,
 *    `user - BARGE_IN`; channel 0's six first, in the order TURN, SHORTPAUSE, BC, TURN_HOLD,
 *    TURN_SHIFT, BARGE_IN), each event a span labelled with its type: events of different types
 *    overlap (a TURN holds its SHORTPAUSEs, a BARGE_IN starts with its TURN), those of one type on one
 *    channel do not, so each is a span of its own in Praat. A TURN_SHIFT with start > end (the new
 *    turn overlaps the floor) is the span [end, start] labelled `TURN_SHIFT (overlap)`; spans of one
 *    tier that would overlap all the same (not made by the docs/events.md rules) are joined, labels
 *    separated by " | ".
 * 4. only when there are any: TextTier `zero-length events`, a point per event whose start equals its
 *    end (a TURN_SHIFT whose turn starts the centisecond the floor ends: an interval tier cannot hold
 *    an empty span), marked `TYPE channel C`.
 * Strings are written as Praat writes them: in double quotes, a quote inside doubled.
 */
import type { AlignedWord, BenchmarkEventType, Centiseconds, Channel, ChannelEvents } from '../model/types.ts';
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
export type TextGridTier =
  | { kind: 'interval'; name: string; intervals: TextGridInterval[] }
  | { kind: 'point'; name: string; points: TextGridPoint[] };

/** A TextGrid with its time domain [0, end], centiseconds. */
export interface TextGrid {
  end: Centiseconds;
  tiers: TextGridTier[];
}

/** Separator between events joined into one interval or point. */
export const EVENT_SEPARATOR = ' | ';

/** The event types in tier order. */
export const EVENT_TYPES: readonly BenchmarkEventType[] = [
  'TURN',
  'SHORTPAUSE',
  'BC',
  'TURN_HOLD',
  'TURN_SHIFT',
  'BARGE_IN',
];

/** Label suffix of a TURN_SHIFT written as [end, start] because it overlaps. */
const OVERLAP_SUFFIX = ' (overlap)';

/** Name of the point tier of zero-length events. */
export const ZERO_LENGTH_TIER = 'zero-length events';

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
    if (span.start < cursor)
      throw new RangeError(
        `interval [${span.start}, ${span.end}] "${span.text}" overlaps the one before it (ends ${cursor})`,
      );
    if (span.end > end || span.end <= span.start)
      throw new RangeError(`interval [${span.start}, ${span.end}] "${span.text}" is empty or outside [0, ${end}]`);
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
export function wordIntervals(
  words: readonly { start: Centiseconds; end: Centiseconds; word: string }[],
): TextGridInterval[] {
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

/**
 * Spans of one tier, sorted, with spans that overlap the one before joined (labels separated by
 * {@link EVENT_SEPARATOR}), so the tier's intervals never overlap.
 */
function joinOverlapping(spans: readonly TextGridInterval[]): TextGridInterval[] {
  const joined: TextGridInterval[] = [];
  for (const span of [...spans].sort((a, b) => a.start - b.start || a.end - b.end)) {
    const last = joined.at(-1);
    if (last !== undefined && span.start < last.end) {
      last.end = Math.max(last.end, span.end);
      last.text = `${last.text}${EVENT_SEPARATOR}${span.text}`;
    } else joined.push({ ...span });
  }
  return joined;
}

/** The TextGrid of one dialogue (module comment). */
export function dialogueTextGrid(dataset: Pick<ExportDataset, 'roles'>, dialogue: ExportDialogue): TextGrid {
  const end = Math.round(dialogue.durationSeconds * 100);
  const wordTier = (channel: Channel): TextGridTier => {
    const role = dataset.roles[channel];
    const words = dialogue.words.filter((word: AlignedWord) => word.channel === channel);
    return { kind: 'interval', name: `${role} - words`, intervals: coverDomain(wordIntervals(words), end) };
  };
  const eventTiers: TextGridTier[] = [];
  const zeroLength: TextGridPoint[] = [];
  for (const channel of [0, 1] as Channel[]) {
    for (const type of EVENT_TYPES) {
      const spans: TextGridInterval[] = [];
      for (const event of dialogue.events[channel]) {
        if (event.event !== type) continue;
        if (event.start === event.end) zeroLength.push({ time: event.start, mark: `${type} channel ${channel}` });
        else if (event.start < event.end) spans.push({ start: event.start, end: event.end, text: type });
        else spans.push({ start: event.end, end: event.start, text: `${type}${OVERLAP_SUFFIX}` });
      }
      eventTiers.push({
        kind: 'interval',
        name: `${dataset.roles[channel]} - ${type}`,
        intervals: coverDomain(joinOverlapping(spans), end),
      });
    }
  }
  // Praat keeps one point per time: zero-length events at the same time share one
  const points = new Map<Centiseconds, string[]>();
  for (const point of zeroLength) points.set(point.time, [...(points.get(point.time) ?? []), point.mark]);
  const zeroTier: TextGridTier[] =
    points.size > 0
      ? [
          {
            kind: 'point',
            name: ZERO_LENGTH_TIER,
            points: [...points.entries()]
              .sort(([a], [b]) => a - b)
              .map(([time, marks]) => ({ time, mark: marks.join(EVENT_SEPARATOR) })),
          },
        ]
      : [];
  return { end, tiers: [wordTier(0), wordTier(1), ...eventTiers, ...zeroTier] };
}

/**
 * Reads the events back from a TextGrid's tiers (the inverse of {@link dialogueTextGrid}), each
 * channel's sorted by (start, end, type order): event interval tiers are those named
 * `{role} - {TYPE}` for a role of `roles`; their non-empty intervals are events.
 * @param tiers name, and intervals or points, in seconds or centiseconds as `toCentiseconds` converts
 * @throws RangeError naming the tier and label that is not an event of that tier
 */
export function eventsFromTiers(
  tiers: readonly {
    name: string;
    intervals?: readonly { start: number; end: number; text: string }[];
    points?: readonly { time: number; mark: string }[];
  }[],
  roles: Record<Channel, string>,
  toCentiseconds: (time: number) => Centiseconds = (time) => time,
): ChannelEvents {
  const events: ChannelEvents = { 0: [], 1: [] };
  for (const tier of tiers) {
    if (tier.name === ZERO_LENGTH_TIER) {
      for (const point of tier.points ?? []) {
        for (const mark of point.mark.split(EVENT_SEPARATOR)) {
          const match = /^(TURN|SHORTPAUSE|BC|TURN_HOLD|TURN_SHIFT|BARGE_IN) channel ([01])$/.exec(mark);
          if (match === null)
            throw new RangeError(
              `tier ${JSON.stringify(tier.name)}: mark ${JSON.stringify(mark)} is not "TYPE channel C"`,
            );
          const time = toCentiseconds(point.time);
          events[Number(match[2]) as Channel].push({ event: match[1] as BenchmarkEventType, start: time, end: time });
        }
      }
      continue;
    }
    const channel = ([0, 1] as Channel[]).find((candidate) => tier.name.startsWith(`${roles[candidate]} - `));
    const type =
      channel === undefined
        ? undefined
        : EVENT_TYPES.find((candidate) => tier.name === `${roles[channel]} - ${candidate}`);
    if (channel === undefined || type === undefined) continue;
    for (const interval of tier.intervals ?? []) {
      if (interval.text === '') continue;
      const [start, end] = [toCentiseconds(interval.start), toCentiseconds(interval.end)];
      for (const label of interval.text.split(EVENT_SEPARATOR)) {
        if (label === type) events[channel].push({ event: type, start, end });
        else if (label === `${type}${OVERLAP_SUFFIX}`) events[channel].push({ event: type, start: end, end: start });
        else throw new RangeError(`tier ${JSON.stringify(tier.name)}: label ${JSON.stringify(label)} is not ${type}`);
      }
    }
  }
  for (const channel of [0, 1] as Channel[]) {
    events[channel].sort(
      (a, b) => a.start - b.start || a.end - b.end || EVENT_TYPES.indexOf(a.event) - EVENT_TYPES.indexOf(b.event),
    );
  }
  return events;
}

/** The long text format of a TextGrid, laid out as Praat writes it (4-space indents, a space after each value). */
export function formatTextGrid(grid: TextGrid): string {
  const lines = [
    'File type = "ooTextFile"',
    'Object class = "TextGrid"',
    '',
    'xmin = 0 ',
    `xmax = ${praatNumber(grid.end)} `,
    'tiers? <exists> ',
    `size = ${grid.tiers.length} `,
    'item []: ',
  ];
  grid.tiers.forEach((tier, index) => {
    lines.push(`    item [${index + 1}]:`);
    lines.push(
      `        class = ${praatString(tier.kind === 'interval' ? 'IntervalTier' : 'TextTier')} `,
      `        name = ${praatString(tier.name)} `,
    );
    lines.push('        xmin = 0 ', `        xmax = ${praatNumber(grid.end)} `);
    if (tier.kind === 'interval') {
      lines.push(`        intervals: size = ${tier.intervals.length} `);
      tier.intervals.forEach((interval, position) => {
        lines.push(
          `        intervals [${position + 1}]:`,
          `            xmin = ${praatNumber(interval.start)} `,
          `            xmax = ${praatNumber(interval.end)} `,
          `            text = ${praatString(interval.text)} `,
        );
      });
    } else {
      lines.push(`        points: size = ${tier.points.length} `);
      tier.points.forEach((point, position) => {
        lines.push(
          `        points [${position + 1}]:`,
          `            number = ${praatNumber(point.time)} `,
          `            mark = ${praatString(point.mark)} `,
        );
      });
    }
  });
  return `${lines.join('\n')}\n`;
}

/** Writes `{id}.TextGrid` per dialogue. */
export async function writeTextGridExport(
  dataset: ExportDataset,
  writer: ExportWriter,
): Promise<Record<string, unknown>> {
  for (const dialogue of dataset.dialogues)
    await writer.write(`${dialogue.id}.TextGrid`, formatTextGrid(dialogueTextGrid(dataset, dialogue)));
  return {
    files: dataset.dialogues.length,
    tiers: [
      '{role} - words per channel',
      '{role} - {TYPE} per channel and event type (intervals)',
      `${ZERO_LENGTH_TIER} (points, when any)`,
    ],
  };
}
