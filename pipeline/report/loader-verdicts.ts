/**
 * Per event of a dialogue, what the benchmark's loader does with it under the settings
 * `scripts/pipe.sh` uses for the dataset (pipeline/events/evaluable-events.ts `classifyEvents`): kept
 * as a sample, or dropped and why, without and with context. And the report's one name per split.
 */
import type { BenchmarkEvent, Channel, ChannelEvents } from '../model/types.ts';
import {
  benchmarkLoaderSettings,
  classifyEvents,
  DROP_REASON_DESCRIPTIONS,
  type DropReason,
  type LoaderSettings,
} from '../events/evaluable-events.ts';
import type { ExportDataset, ExportSplit } from '../export/export-dataset.ts';

/** Folder-name suffix of a barge-in variant dataset (pipeline/orchestration/dataset-output.ts `BARGE_IN_SUFFIX`; scripts/pipe.sh matches `*_bargein`). */
const BARGE_IN_SUFFIX = '_bargein';

/** The loader settings of a dataset, as `scripts/pipe.sh` calls the loader: without context, then with. */
export function datasetLoaderSettings(
  dataset: Pick<ExportDataset, 'dataset' | 'domain' | 'channels'>,
): { name: string; settings: LoaderSettings }[] {
  const domain = dataset.domain === 'chat' ? 'chat' : 'task';
  return benchmarkLoaderSettings(domain, {
    bargeInVariant: dataset.dataset.endsWith(BARGE_IN_SUFFIX),
    ...(domain === 'task' && dataset.channels !== null ? { channels: [dataset.channels.user] } : {}),
  });
}

/** The loader's decision on one event under each setting: null = kept as a sample. */
export interface LoaderVerdict {
  /** `without context`, `with context`. */
  setting: string;
  dropped: DropReason | null;
}

/**
 * The verdicts on every event of one dialogue, by channel and by the event's index in that channel's
 * list (the order of the events JSONL line); TURN events (never samples) have none.
 */
export function loaderVerdicts(
  events: ChannelEvents,
  settings: readonly { name: string; settings: LoaderSettings }[],
): Map<string, LoaderVerdict[]> {
  const verdicts = new Map<string, LoaderVerdict[]>();
  for (const { name, settings: loader } of settings) {
    const decisions = classifyEvents(events, loader);
    // classifyEvents lists each channel's non-TURN events in file order
    for (const channel of [0, 1] as Channel[]) {
      const fromChannel = decisions.filter((decision) => decision.channel === channel);
      let next = 0;
      events[channel].forEach((event, index) => {
        if (event.event === 'TURN') return;
        const decision = fromChannel[next++]!;
        const key = verdictKey(channel, index);
        const list = verdicts.get(key) ?? [];
        list.push({ setting: name.replace(/^.*, (with(?:out)? context)$/, '$1'), dropped: decision.dropped });
        verdicts.set(key, list);
      });
    }
  }
  return verdicts;
}

/** The key of an event in {@link loaderVerdicts}. */
export function verdictKey(channel: Channel, index: number): string {
  return `${channel}:${index}`;
}

/** A verdict list as text: `kept` / `dropped: needs-context` when both settings agree, else one part per setting. */
export function formatVerdicts(verdicts: readonly LoaderVerdict[] | undefined): {
  text: string;
  title: string;
  kept: 'all' | 'some' | 'none' | 'not evaluated';
} {
  if (!verdicts || verdicts.length === 0)
    return { text: 'not an evaluation event', title: 'TURN events are not turned into samples', kept: 'not evaluated' };
  const word = (verdict: LoaderVerdict) => (verdict.dropped === null ? 'kept' : `dropped: ${verdict.dropped}`);
  const title = verdicts
    .map(
      (verdict) =>
        `${verdict.setting}: ${verdict.dropped === null ? 'kept as a sample' : DROP_REASON_DESCRIPTIONS[verdict.dropped]}`,
    )
    .join('; ');
  const keptCount = verdicts.filter((verdict) => verdict.dropped === null).length;
  const kept = keptCount === verdicts.length ? 'all' : keptCount === 0 ? 'none' : 'some';
  if (verdicts.every((verdict) => verdict.dropped === verdicts[0]!.dropped))
    return { text: word(verdicts[0]!), title, kept };
  return { text: verdicts.map((verdict) => `${verdict.setting}: ${word(verdict)}`).join('; '), title, kept };
}

/**
 * The report's name of a split: the benchmark's (`test`, `test_other`); `dev.jsonl` is only an alias
 * of `test_other.jsonl` (stages/split-dev-test.ts), so a dialogue in it is shown as `test_other`.
 */
export function benchmarkSplitName(split: ExportSplit | null): string {
  if (split === null) return 'none';
  return split === 'dev' ? 'test_other' : split;
}

/** An event's span on the timeline, seconds: from its earlier to its later time (an overlapping TURN_SHIFT has start > end). */
export function eventSpanSeconds(event: BenchmarkEvent): { from: number; to: number } {
  return { from: Math.min(event.start, event.end) / 100, to: Math.max(event.start, event.end) / 100 };
}
