/**
 * Timing statistics: the "fit" half of the timeline (lhotse meeting_simulation's fit/simulate
 * split). A versioned JSON file holding the measured turn-taking timing of real
 * conversations (pipeline/timeline/measure-turn-taking.ts), which `place-dialogue.ts` samples from.
 * Its format (version 2; version 1 files are refused with a message saying how to regenerate them),
 * schema and types: pipeline/model/timing-statistics.ts. This module builds a statistics value from
 * measurements, checks it against its values (`timingStatisticsFileSchema`), writes it
 * (`formatTimingStatistics`) and reads it (`loadTimingStatistics`); the parts it re-exports:
 * - build-timing-statistics.ts: the value built from measurements (`buildTimingStatistics`);
 * - timing-statistics-check.ts: the file's checks (`timingStatisticsFileSchema`, `parseTimingStatistics`);
 * - timing-summaries.ts: grid conversions, summaries and bandwidths of the lists;
 * - timing-atoms.ts: the atom guard (`findAtoms`, `censorAtoms`, `atomGuardOf`);
 * - timing-model.ts: what the sampler draws from (`samplingDistributions`, `fitTimingModel`);
 * - pipeline/storage/readable-json.ts: `formatJson`, the file's JSON text.
 *
 * Directions are named by benchmark channel: `channel1->channel0` is a change from channel 1 to
 * channel 0. In MT-QA data channel 1 is the user and channel 0 the system (docs/dataset-format.md,
 * "audio/{id}.wav"), so `channel1->channel0` is "user->system" (the system responds) and
 * `channel0->channel1` is "system->user". `speakerChange.samplerUse` says how the sampler uses the measurements: `pooled`
 * (both directions as one distribution, and the pooled backchannel rate, for symmetric conversations
 * such as telephone calls where the channel carries no role) or `per-direction`.
 *
 * Thresholds come from docs/events.md, "The thresholds" (IPU pause ≤ 0.50 s, BC ≤ 0.80 s, barge-in
 * overlap > 0.40 s), as implemented in pipeline/events (`DEFAULT_EVENT_THRESHOLDS`).
 */
import type { Channel, Language } from '../model/types.ts';
import type { ChannelDirection, TimingStatistics } from '../model/timing-statistics.ts';
import { formatJson } from '../storage/readable-json.ts';
import { readRecord } from '../storage/json-records.ts';
import { packageFile } from '../storage/package-files.ts';
import { languagePackOf } from '../model/language-pack.ts';
import { parseTimingStatistics, TimingStatisticsError, timingStatisticsFileSchema } from './timing-statistics-check.ts';

export {
  CHANNEL_DIRECTIONS,
  TIMING_STATISTICS_VERSION,
  timingStatisticsSchema,
  type BackchannelRate,
  type ChannelDirection,
  type DurationSummary,
  type ListenerKey,
  type OffsetSummary,
  type TimingAtom,
  type TimingProvenance,
  type TimingStatistics,
} from '../model/timing-statistics.ts';
export { formatJson } from '../storage/readable-json.ts';
export {
  ATOM_LIMIT_FRACTION,
  ATOM_TREATMENT,
  DEFAULT_TIMING_RESOLUTION_SECONDS,
  MINIMUM_ATOM_COUNT,
  atomGuardOf,
  censorAtoms,
  findAtoms,
} from './timing-atoms.ts';
export { fitTimingModel, samplingDistributions, type SamplingDistributions, type TimingModel } from './timing-model.ts';
export { summarizeDurations, summarizeOffsets, summarizePositions } from './timing-summaries.ts';
export { parseTimingStatistics, TimingStatisticsError, timingStatisticsFileSchema } from './timing-statistics-check.ts';
export {
  buildTimingStatistics,
  SMOOTHING_DESCRIPTION,
  type TimingMeasurements,
  type TimingProvenanceInput,
} from './build-timing-statistics.ts';

/**
 * The direction of a speaker change from channel `from` to channel `to`.
 * @throws RangeError when `from === to` (not a speaker change)
 */
export function channelDirection(from: Channel, to: Channel): ChannelDirection {
  if (from === to) throw new RangeError(`channel ${from} -> ${to} is not a speaker change`);
  return from === 0 ? 'channel0->channel1' : 'channel1->channel0';
}

/**
 * Reads and validates a timing-statistics JSON file (pipeline/storage/json-records.ts `readRecord`
 * with `timingStatisticsFileSchema`).
 * @throws TimingStatisticsError naming the file when it cannot be read, is not JSON, or is invalid
 */
export async function loadTimingStatistics(filePath: string): Promise<TimingStatistics> {
  return readRecord(filePath, timingStatisticsFileSchema, {
    makeError: (message, file) =>
      new TimingStatisticsError(file, message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message),
  });
}

/** Path of the shipped default statistics for a language (`pipeline/timeline/defaults/{language}.timing.json`). */
export function defaultTimingStatisticsPath(language: Language): string {
  return packageFile('pipeline', 'timeline', 'defaults', `${language}.timing.json`);
}

/** Name of the cross-language prior among the shipped statistics (`prior.timing.json`, scripts/derive-default-timing.ts). */
export const TIMING_PRIOR_NAME = 'prior';

/**
 * The shipped statistics a language builds with when the config names none: its language pack's
 * measured file (`timing.statistics`), or the cross-language prior when the pack has none (Stivers et
 * al. 2009, PNAS 106:10587: turn-transition offsets share one distribution across 10 languages, so the
 * pooled telephone calls of en, ja, zh and de stand in; the build warns and says so in the summary).
 * @returns the file, and whether it is the prior
 * @throws LanguagePackError for a language without a pack
 */
export function shippedTimingStatisticsOf(language: Language): { file: string; prior: boolean } {
  const name = languagePackOf(language).timing.statistics;
  return name === null
    ? { file: defaultTimingStatisticsPath(TIMING_PRIOR_NAME), prior: true }
    : { file: defaultTimingStatisticsPath(name), prior: false };
}

/**
 * Loads the shipped default statistics of a language (measured on real CallFriend calls by
 * `scripts/derive-default-timing.ts`, which runs `duplexsynth measure`).
 * @throws TimingStatisticsError as `loadTimingStatistics`
 */
export async function loadDefaultTimingStatistics(language: Language): Promise<TimingStatistics> {
  return loadTimingStatistics(defaultTimingStatisticsPath(language));
}

/**
 * Serializes statistics deterministically: validated first (so keys come out in schema order),
 * 2-space indentation, number lists wrapped at about 100 characters, trailing newline.
 * @throws TimingStatisticsError when the value is invalid
 */
export function formatTimingStatistics(statistics: TimingStatistics): string {
  const canonical = parseTimingStatistics(statistics, 'formatTimingStatistics');
  return `${formatJson(canonical, '')}\n`;
}
