/**
 * Committing one language's datasets once all its dialogues are written: the base dataset, then the
 * barge-in variant, each with its manifest settings and summary. A dataset that is refused (empty,
 * smaller) or cannot be written stops the build, and the ones not yet committed are discarded. A
 * barge-in variant whose dialogues hold no BARGE_IN event is not written (the benchmark's barge-in
 * dimension would get nothing from it), nor is one an earlier build committed kept beside it, and
 * each benchmark dimension a committed dataset gives no sample for is a warning
 * (pipeline/events/benchmark-dimensions.ts).
 */
import { missingDimensionWarnings } from '../events/benchmark-dimensions.ts';
import type { BuildConfig } from '../config.ts';
import type { DatasetSummary } from '../model/dataset-summary.ts';
import type { Language } from '../model/types.ts';
import type { TimingStatistics } from '../timeline/timing-statistics.ts';
import type { BuildLog } from './build-context.ts';
import { removeStaleVariantDataset } from '../../stages/render-dataset-replace.ts';
import { BARGE_IN_SUFFIX, type DatasetOutput } from './dataset-output.ts';
import type { TimelinePlacement } from './dialogue-steps.ts';
import type { SharedBuildServices } from './shared-build-services.ts';

/** What {@link commitLanguageDatasets} commits, and with which settings. */
export interface LanguageCommit {
  config: BuildConfig;
  language: Language;
  /** The base dataset's name (the variant's manifest names it). */
  dataset: string;
  base: DatasetOutput;
  variant: DatasetOutput | null;
  statistics: TimingStatistics;
  detector: SharedBuildServices['detector'];
  turnHoldShare: number;
  backchannelPhrases: string[];
  placement: TimelinePlacement;
  allowShrink: boolean;
  log: BuildLog;
  /** Told each committed dataset folder. */
  kept: (output: string) => void;
  /** The speech recognition check's counts, for the base dataset's summary (absent when the check is off). */
  speechRecognition?: DatasetSummary['speechRecognition'];
  /** Told each warning for the build's summary (a variant not written, a dimension without samples); each is logged too. */
  warn?: (warning: string) => void;
}

/** How many BARGE_IN events the dialogues of a dataset hold, in their event files. */
function bargeInEvents(output: DatasetOutput): number {
  return output.results.reduce(
    (sum, dialogue) =>
      sum + dialogue.events[0].concat(dialogue.events[1]).filter((event) => event.event === 'BARGE_IN').length,
    0,
  );
}

/**
 * Commit the base dataset, then the variant.
 * @returns their summaries, in that order
 * @throws as DatasetOutput.commit (the datasets not yet committed are discarded first)
 */
export async function commitLanguageDatasets(commit: LanguageCommit): Promise<DatasetSummary[]> {
  const { config, language, dataset, base, variant, log } = commit;
  const commitSettings = {
    domain: 'task' as const,
    sampleRate: config.audio.sampleRate,
    channels: { user: config.channels.user, system: config.channels.system },
    speechDetection: commit.detector,
    build: { name: config.name, seed: config.seed },
    timeline: { profile: config.timeline.profile, turnHoldShare: commit.turnHoldShare },
  };
  const fidelityOptions = {
    backchannelListener: config.channels.user,
    backchannelsGenerated: commit.backchannelPhrases.length > 0,
    gapOnlyChannel: commit.placement.options.gapOnlyChannel,
  };
  const warn = (warning: string) => {
    log(`[${language}] warning: ${warning}`, 'warn');
    commit.warn?.(warning);
  };
  const summaries: DatasetSummary[] = [];
  const outputs = variant ? [base, variant] : [base];
  if (variant && variant.results.length > 0 && bargeInEvents(variant) === 0) {
    // nothing for the barge-in dimension: the variant is not written rather than split and verified as if usable
    await variant.discard();
    outputs.pop();
    warn(
      `${variant.dataset}: not written: ${variant.results.length === 1 ? 'its dialogue holds' : `its ${variant.results.length} dialogues hold`} no BARGE_IN event (no answer was long enough to barge in on)`,
    );
  }
  for (const [position, output] of outputs.entries()) {
    // a dataset that is refused (empty, smaller) or cannot be written stops the build: the ones not yet committed are discarded
    let summary: DatasetSummary;
    try {
      summary = await output.commit(
        commit.statistics,
        output === base ? fidelityOptions : null,
        {
          ...commitSettings,
          ...(output === variant
            ? { variant: { kind: 'barge-in', of: dataset, systemYields: config.timeline.bargeIn.systemYields } }
            : {}),
        },
        {
          allowShrink: commit.allowShrink,
          variant: output === variant ? 'barge-in' : 'default',
          ...(output === base && commit.speechRecognition ? { speechRecognition: commit.speechRecognition } : {}),
        },
      );
    } catch (error) {
      for (const later of outputs.slice(position + 1)) await later.discard();
      throw error;
    }
    commit.kept(output.directory);
    summaries.push(summary);
    log(
      `[${language}] wrote ${summary.dialogues} dialogues to ${output.directory}${summary.failed.length ? ` (${summary.failed.length} failed)` : ''}`,
    );
    for (const warning of missingDimensionWarnings(summary.dataset, summary.variant, summary.evaluableEvents))
      warn(warning);
  }
  // no barge-in dataset this build: one an earlier build committed is removed, or named when not provably ours
  const stale =
    variant && outputs.includes(variant)
      ? null
      : await removeStaleVariantDataset(`${base.directory}${BARGE_IN_SUFFIX}`, dataset);
  if (stale?.removed) log(`[${language}] ${stale.message}`);
  else if (stale) warn(stale.message);
  return summaries;
}
