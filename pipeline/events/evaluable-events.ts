/**
 * Which events of a dataset the benchmark's evaluation turns into samples, and why the others are
 * dropped: our own implementation of the public M3-DuplexBench loader rules
 * (nttcslab-sp/m3-duplexbench, `m3_duplexbench/inference/events.py` `build_event_samples`,
 * `get_input_times`, `event_filter`; called by `scripts/pipe.sh` with `--ignore-short-pause`,
 * `--channels 1` for task data and `0,1` for chat data, `--ignored-events TURN_SHIFT,TURN_HOLD,BC` for
 * the `*_bargein` datasets, and `--use-context` when context is wanted).
 *
 * For every event of a line, in the loader's order of checks:
 * 1. `TURN` is not an evaluation event (it only anchors the others): not counted here at all.
 * 2. `SHORTPAUSE` is dropped when short pauses are ignored (`short-pause-ignored`); an event type in
 *    the ignored list is dropped (`event-type-ignored`); `BC` and `BARGE_IN` need the dialogue history
 *    and are dropped without context (`needs-context`).
 * 3. The evaluated ("user") channel of an event is its own channel, except for `TURN_SHIFT`, which is
 *    listed on the new speaker's channel and evaluates the *other* channel's speaker as the user (the
 *    model must take the turn in the listed channel's place): `TURN_SHIFT` on channel 0 evaluates
 *    channel 1. An event whose evaluated channel is not in the evaluated set is dropped
 *    (`channel-not-evaluated`).
 * 4. Anchors, compared float for float (here: integer centiseconds, the same thing for 2-decimal
 *    times): a `BARGE_IN` needs a TURN on its own channel starting at its start
 *    (`no-turn-starts-there`); `TURN_SHIFT` and `TURN_HOLD` need a TURN on the evaluated channel ending
 *    at the event start (`no-turn-ends-there`); `SHORTPAUSE` needs a TURN of its channel containing it
 *    (`no-turn-contains-it`).
 * 5. The filter at the trigger time (the event start), on the other ("system") channel, with closed
 *    intervals `start ≤ t ≤ end`: `BC` and `BARGE_IN` are kept only while the system is inside a TURN
 *    (`system-not-speaking`); `SHORTPAUSE`, `TURN_HOLD` and `TURN_SHIFT` only while the system is
 *    inside neither a TURN nor a TURN_HOLD (`system-speaking`). A system answer that starts at the very
 *    centisecond the user stops is therefore dropped.
 *
 * Times are integer centiseconds; the lines come from `parseEventsLine` (pipeline/events/jsonl.ts).
 */
import type { BenchmarkEvent, BenchmarkEventType, Centiseconds, Channel, ChannelEvents } from '../model/types.ts';
import { DROP_REASONS, type DropReason } from '../model/dataset-summary.ts';

/** How the benchmark's loader is called (`run_inference.py` options). */
export interface LoaderSettings {
  /** `--channels`: the evaluated ("user") channels. Task data: [1]; chat data: [0, 1]. */
  channels: readonly Channel[];
  /** `--ignore-short-pause` (always set by scripts/pipe.sh). */
  ignoreShortPause: boolean;
  /** `--ignored-events` (scripts/pipe.sh: `TURN_SHIFT,TURN_HOLD,BC` for `*_bargein` datasets). */
  ignoredEvents: readonly BenchmarkEventType[];
  /** `--use-context`. */
  useContext: boolean;
}

/** Why the loader drops an event (module comment, steps 2–5), and all of them in the loader's order of checks. */
export { DROP_REASONS, type DropReason };

/** One sentence per reason, for reports. */
export const DROP_REASON_DESCRIPTIONS: Readonly<Record<DropReason, string>> = Object.freeze({
  'short-pause-ignored': 'SHORTPAUSE, ignored (--ignore-short-pause)',
  'event-type-ignored': 'event type in --ignored-events',
  'needs-context': 'BC/BARGE_IN need the dialogue history (--use-context)',
  'channel-not-evaluated': "the event's evaluated channel is not in --channels",
  'no-turn-starts-there': 'no TURN of its channel starts at the BARGE_IN start',
  'no-turn-ends-there': "no TURN of the evaluated channel ends at the event's start",
  'no-turn-contains-it': 'no TURN of its channel contains the SHORTPAUSE',
  'system-speaking': 'the other channel is inside a TURN or TURN_HOLD at the trigger time',
  'system-not-speaking': 'the other channel is not inside a TURN at the trigger time',
});

/** The event types the evaluation samples (TURN is not one). */
export const EVALUATION_EVENT_TYPES = [
  'TURN_SHIFT',
  'TURN_HOLD',
  'SHORTPAUSE',
  'BC',
  'BARGE_IN',
] as const satisfies readonly BenchmarkEventType[];
export type EvaluationEventType = (typeof EVALUATION_EVENT_TYPES)[number];

/** The loader's decision on one event. */
export interface EventDecision {
  /** Channel the event is listed on. */
  channel: Channel;
  event: EvaluationEventType;
  start: Centiseconds;
  end: Centiseconds;
  /** The channel evaluated as the user (`TURN_SHIFT`: the other channel). */
  userChannel: Channel;
  /** `null` when the event becomes a sample. */
  dropped: DropReason | null;
}

const other = (channel: Channel): Channel => (channel === 0 ? 1 : 0);

function insideAny(
  events: readonly BenchmarkEvent[],
  types: readonly BenchmarkEventType[],
  time: Centiseconds,
): boolean {
  return events.some((event) => types.includes(event.event) && event.start <= time && time <= event.end);
}

/**
 * The loader's decision on every evaluation event of one dialogue (module comment).
 * @param events one dialogue's events per channel, integer centiseconds (as parsed from its JSONL line)
 * @returns one decision per non-TURN event, channel 0's events first, each channel in file order
 */
export function classifyEvents(events: ChannelEvents, settings: LoaderSettings): EventDecision[] {
  const turns = (channel: Channel) =>
    events[channel].filter((event) => event.event === 'TURN' && event.start <= event.end);
  const decisions: EventDecision[] = [];
  for (const channel of [0, 1] as const) {
    for (const event of events[channel]) {
      if (event.event === 'TURN') continue;
      const type = event.event as EvaluationEventType;
      const userChannel = type === 'TURN_SHIFT' ? other(channel) : channel;
      const systemChannel = other(userChannel);
      const decide = (): DropReason | null => {
        if (type === 'SHORTPAUSE' && settings.ignoreShortPause) return 'short-pause-ignored';
        if (settings.ignoredEvents.includes(type)) return 'event-type-ignored';
        if ((type === 'BC' || type === 'BARGE_IN') && !settings.useContext) return 'needs-context';
        if (!settings.channels.includes(userChannel)) return 'channel-not-evaluated';
        if (type === 'BARGE_IN' && !turns(userChannel).some((turn) => turn.start === event.start))
          return 'no-turn-starts-there';
        if (
          (type === 'TURN_SHIFT' || type === 'TURN_HOLD') &&
          !turns(userChannel).some((turn) => turn.end === event.start)
        )
          return 'no-turn-ends-there';
        if (
          type === 'SHORTPAUSE' &&
          !turns(userChannel).some((turn) => turn.start <= event.start && event.end <= turn.end)
        )
          return 'no-turn-contains-it';
        const systemEvents = events[systemChannel];
        if (type === 'BC' || type === 'BARGE_IN')
          return insideAny(systemEvents, ['TURN'], event.start) ? null : 'system-not-speaking';
        return insideAny(systemEvents, ['TURN', 'TURN_HOLD'], event.start) ? 'system-speaking' : null;
      };
      decisions.push({ channel, event: type, start: event.start, end: event.end, userChannel, dropped: decide() });
    }
  }
  return decisions;
}

/** Counts of one event type: in the file, kept as samples, dropped per reason. */
export interface EventTypeCounts {
  inFile: number;
  samples: number;
  dropped: Partial<Record<DropReason, number>>;
}

/** The evaluable-events report of one dataset under one loader setting. */
export interface EvaluableEventsReport {
  /** Short name of the setting, e.g. `task, with context`. */
  setting: string;
  settings: LoaderSettings;
  dialogues: number;
  byType: Record<EvaluationEventType, EventTypeCounts>;
  /** Dialogues with at least one dropped event of a type the setting evaluates (not for ignored types or channels). */
  dialoguesWithDrops: { id: string; event: EvaluationEventType; start: Centiseconds; reason: DropReason }[];
}

/**
 * The loader settings `scripts/pipe.sh` uses for a dataset: `--channels 1` for task data and `0,1`
 * for chat data (`channels` overrides, for another channel mapping), `--ignore-short-pause`, and for a
 * barge-in dataset `--ignored-events TURN_SHIFT,TURN_HOLD,BC`; once without and once with context.
 * @returns the settings with their names, without context first
 */
export function benchmarkLoaderSettings(
  domain: 'task' | 'chat',
  options: { bargeInVariant?: boolean; channels?: readonly Channel[] } = {},
): { name: string; settings: LoaderSettings }[] {
  const channels = options.channels ?? (domain === 'chat' ? [0, 1] : [1]);
  const ignoredEvents: BenchmarkEventType[] = options.bargeInVariant ? ['TURN_SHIFT', 'TURN_HOLD', 'BC'] : [];
  const label = `${domain}${options.bargeInVariant ? ' barge-in' : ''}, channels ${channels.join(',')}`;
  return [false, true].map((useContext) => ({
    name: `${label}, ${useContext ? 'with' : 'without'} context`,
    settings: { channels, ignoreShortPause: true, ignoredEvents, useContext },
  }));
}

/**
 * Counts the loader's decisions over the dialogues of a dataset.
 * @param dialogues each dialogue's id and events (integer centiseconds)
 */
export function evaluableEventsReport(
  setting: string,
  settings: LoaderSettings,
  dialogues: readonly { id: string; events: ChannelEvents }[],
): EvaluableEventsReport {
  const byType = Object.fromEntries(
    EVALUATION_EVENT_TYPES.map((type) => [type, { inFile: 0, samples: 0, dropped: {} }]),
  ) as Record<EvaluationEventType, EventTypeCounts>;
  const dialoguesWithDrops: EvaluableEventsReport['dialoguesWithDrops'] = [];
  for (const dialogue of dialogues) {
    for (const decision of classifyEvents(dialogue.events, settings)) {
      const counts = byType[decision.event];
      counts.inFile += 1;
      if (decision.dropped === null) counts.samples += 1;
      else {
        counts.dropped[decision.dropped] = (counts.dropped[decision.dropped] ?? 0) + 1;
        const structural = [
          'short-pause-ignored',
          'event-type-ignored',
          'needs-context',
          'channel-not-evaluated',
        ].includes(decision.dropped);
        if (!structural)
          dialoguesWithDrops.push({
            id: dialogue.id,
            event: decision.event,
            start: decision.start,
            reason: decision.dropped,
          });
      }
    }
  }
  return { setting, settings, dialogues: dialogues.length, byType, dialoguesWithDrops };
}

/**
 * Events on a given channel of a given type that the setting would evaluate, and how many of them
 * become samples (e.g. the system-channel TURN_SHIFTs of MT-QA: listed on channel 0, evaluated as
 * the user's channel 1).
 */
export function evaluableShare(
  report: EvaluableEventsReport,
  type: EvaluationEventType,
): { candidates: number; samples: number } {
  const counts = report.byType[type];
  const structural = (
    ['short-pause-ignored', 'event-type-ignored', 'needs-context', 'channel-not-evaluated'] as const
  ).reduce((sum, reason) => sum + (counts.dropped[reason] ?? 0), 0);
  return { candidates: counts.inFile - structural, samples: counts.samples };
}

/**
 * Markdown tables of several reports (one table per setting): per event type the count in the file,
 * the samples, and the drops by reason; then the dialogues with unexpected drops (up to 20 lines).
 */
export function formatEvaluableEventsMarkdown(title: string, reports: readonly EvaluableEventsReport[]): string {
  const lines: string[] = [`## ${title}`, ''];
  lines.push(
    'What the benchmark evaluation (M3-DuplexBench `build_event_samples`, called as `scripts/pipe.sh` calls it) turns into samples; ' +
      "reasons for drops in the loader's order of checks.",
    '',
  );
  for (const report of reports) {
    const used = DROP_REASONS.filter((reason) =>
      EVALUATION_EVENT_TYPES.some((type) => (report.byType[type].dropped[reason] ?? 0) > 0),
    );
    lines.push(`### ${report.setting} (${report.dialogues} dialogues)`, '');
    lines.push(
      `| event | in file | samples | ${used.map((reason) => `dropped: ${reason}`).join(' | ')}${used.length ? ' |' : ''}`,
    );
    lines.push(`|---|---:|---:|${used.map(() => '---:|').join('')}`);
    for (const type of EVALUATION_EVENT_TYPES) {
      const counts = report.byType[type];
      lines.push(
        `| ${type} | ${counts.inFile} | ${counts.samples} | ${used.map((reason) => String(counts.dropped[reason] ?? 0)).join(' | ')}${used.length ? ' |' : ''}`,
      );
    }
    lines.push('');
    if (report.dialoguesWithDrops.length > 0) {
      lines.push(`Dropped although the setting evaluates them: ${report.dialoguesWithDrops.length}`);
      for (const drop of report.dialoguesWithDrops.slice(0, 20))
        lines.push(`- ${drop.id}: ${drop.event} at ${(drop.start / 100).toFixed(2)} s: ${drop.reason}`);
      lines.push('');
    }
  }
  const usedAnywhere = DROP_REASONS.filter((reason) =>
    reports.some((report) => EVALUATION_EVENT_TYPES.some((type) => (report.byType[type].dropped[reason] ?? 0) > 0)),
  );
  if (usedAnywhere.length > 0) {
    lines.push('Reasons:');
    for (const reason of usedAnywhere) lines.push(`- ${reason}: ${DROP_REASON_DESCRIPTIONS[reason]}`);
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}
