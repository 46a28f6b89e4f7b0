/**
 * One line of a benchmark `{split}.jsonl` file (docs/events.md, "Writing the line"), written
 * byte for byte as the reference does (Python `json.dumps` defaults: `", "` and `": "` separators,
 * non-ASCII escaped as `\uXXXX`, floats always with a decimal point).
 */
import { z } from 'zod';
import { issuePath } from '../model/validation.ts';
import type { BenchmarkEvent, BenchmarkEventType, Centiseconds, Channel, ChannelEvents } from '../model/types.ts';
import { CHANNELS } from './rules.ts';

/** The event types the benchmark loader knows (docs/events.md). */
export const BENCHMARK_EVENT_TYPES = [
  'TURN',
  'SHORTPAUSE',
  'BC',
  'TURN_HOLD',
  'TURN_SHIFT',
  'BARGE_IN',
] as const satisfies readonly BenchmarkEventType[];

/**
 * Writes centiseconds as seconds the way Python writes a float: shortest round-trip digits, always
 * with a decimal point (`3300` -> `33.0`, `2770` -> `27.7`, `345` -> `3.45`).
 * @throws RangeError unless `centiseconds` is a safe integer.
 */
export function formatSeconds(centiseconds: Centiseconds): string {
  if (!Number.isSafeInteger(centiseconds)) {
    throw new RangeError(`time must be integer centiseconds, got ${centiseconds}`);
  }
  const text = String(centiseconds / 100 + 0); // `+ 0` turns -0 into 0
  return /[.e]/.test(text) ? text : `${text}.0`;
}

/** A JSON string literal as Python's `json.dumps` writes it (ensure_ascii: everything outside ' '..'~' escaped). */
function pythonJsonString(value: string): string {
  const short: Record<string, string> = {
    '"': '\\"',
    '\\': '\\\\',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\b': '\\b',
    '\f': '\\f',
  };
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const char = value[i] as string;
    const code = value.charCodeAt(i);
    out += short[char] ?? (code < 0x20 || code > 0x7e ? `\\u${code.toString(16).padStart(4, '0')}` : char);
  }
  return `${out}"`;
}

/**
 * Formats one dialogue's events as one JSONL line (no trailing newline), identical to the reference:
 * `{"id": "x", "events": {"0": [{"event": "TURN", "time": [3.45, 6.22]}, ...], "1": [...]}}`.
 * Times are centiseconds / 100 written as floats (`33.0`); events are written in the given order.
 * @param id dialogue id (the WAV file name without `.wav`), JSON-escaped as Python does.
 * @param events per channel, integer centiseconds.
 * @throws RangeError for an empty id or a non-integer time (naming channel and event index).
 */
export function formatEventsLine(id: string, events: ChannelEvents): string {
  if (id.length === 0) throw new RangeError('dialogue id must not be empty');
  const channelText = (channel: Channel): string =>
    events[channel]
      .map((event, index) => {
        if (!Number.isSafeInteger(event.start) || !Number.isSafeInteger(event.end)) {
          throw new RangeError(
            `channel ${channel}, event ${index} (${event.event}): time must be integer centiseconds, got [${event.start}, ${event.end}]`,
          );
        }
        return `{"event": "${event.event}", "time": [${formatSeconds(event.start)}, ${formatSeconds(event.end)}]}`;
      })
      .join(', ');
  return `{"id": ${pythonJsonString(id)}, "events": {${CHANNELS.map((c) => `"${c}": [${channelText(c)}]`).join(', ')}}}`;
}

/** Thrown for an events line that is not valid JSON or does not match the format; names source and field. */
export class EventsLineParseError extends Error {
  override readonly name = 'EventsLineParseError';
  constructor(
    /** Where the line came from, e.g. `data/ja/task/x/test.jsonl:3`. */
    readonly source: string,
    /** Path of the offending field, e.g. `events.1[3].time[0]`, or `line` for a JSON syntax error. */
    readonly field: string,
    detail: string,
  ) {
    super(`${source}: ${field}: ${detail}`);
  }
}

const secondsSchema = z
  .number()
  .refine((seconds) => Number.isFinite(seconds) && Math.abs(seconds * 100 - Math.round(seconds * 100)) < 1e-6, {
    message: 'time must be seconds rounded to 0.01 s',
  });

const eventSchema = z.strictObject({
  event: z.enum(BENCHMARK_EVENT_TYPES),
  time: z.tuple([secondsSchema, secondsSchema]),
});

const lineSchema = z.strictObject({
  id: z.string().min(1),
  events: z.strictObject({ '0': z.array(eventSchema), '1': z.array(eventSchema) }),
});

/**
 * Parses and validates one JSONL events line (docs/events.md "Writing the line"); times become integer centiseconds.
 * @param line the line, with or without its newline.
 * @param source where it came from (file and line number), used in error messages.
 * @returns the dialogue id and its events per channel, in file order.
 * @throws EventsLineParseError naming `source` and the offending field.
 */
export function parseEventsLine(line: string, source: string): { id: string; events: ChannelEvents } {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (error) {
    throw new EventsLineParseError(source, 'line', `not valid JSON (${(error as Error).message})`);
  }
  const result = lineSchema.safeParse(json);
  if (!result.success) {
    const [issue, ...others] = result.error.issues;
    const more = others.length > 0 ? ` (and ${others.length} more problem${others.length > 1 ? 's' : ''})` : '';
    throw new EventsLineParseError(
      source,
      issuePath(issue?.path ?? []) || 'line',
      `${issue?.message ?? 'invalid'}${more}`,
    );
  }
  const toEvents = (channel: '0' | '1'): BenchmarkEvent[] =>
    result.data.events[channel].map(({ event, time }) => ({
      event,
      start: Math.round(time[0] * 100),
      end: Math.round(time[1] * 100),
    }));
  return { id: result.data.id, events: { 0: toEvents('0'), 1: toEvents('1') } };
}
