/**
 * One language of a local build: its datasets opened, every dialogue of the corpus run through the
 * language's stage lists (the barge-in variant's placement started beside the base's; in a queued
 * build, each dialogue after its job on the workers), then the datasets committed.
 */
import path from 'node:path';
import { datasetNameOf, type BuildConfig } from '../config.ts';
import { endsTheBuild } from '../model/build-errors.ts';
import type { DatasetSummary } from '../model/dataset-summary.ts';
import type { Language, SourceConversation } from '../model/types.ts';
import { failureText, firstLine, itemLogLine, type StageStep, type StepsOutcome } from '../run/stage-runner.ts';
import { placeTimelineStage } from '../../stages/place-timeline.ts';
import { datasetRelativePath } from '../../stages/render-dataset.ts';
import type { BuildWithPagesContext } from './build-context.ts';
import { commitLanguageDatasets } from './commit-datasets.ts';
import { BARGE_IN_SUFFIX, DatasetOutput } from './dataset-output.ts';
import { made, type DialogueWork } from './dialogue-steps.ts';
import { buildConfigHash } from './build-queue.ts';
import { languageWork } from './language-work.ts';
import { addRecognitionCounts, speechRecognitionSummaryOf } from './speech-recognition-check.ts';
import { noRecognitionCounts } from '../services/tts/recognition-tally.ts';
import { queuedDialogueSteps, type QueueWaits } from './queued-dialogue-steps.ts';

export { QueueWaits } from './queued-dialogue-steps.ts';
import { recordedDatasets } from './worker-jobs.ts';
import type { SharedBuildServices } from './shared-build-services.ts';

/** What the languages of a build add up to, in the order they are built. */
export interface BuildTotals {
  summaries: DatasetSummary[];
  audioSeconds: number;
  failedCount: number;
  /** Languages built with the cross-language timing prior: a warning each, repeated in summary.md. */
  timingPriorWarnings: string[];
  /** Datasets not written and benchmark dimensions without samples (./commit-datasets.ts): summary.json `warnings` and summary.md. */
  datasetWarnings?: string[];
}

/**
 * The dataset folders a build commits: each language's base dataset, and its barge-in variant when
 * `datasets.bargeIn` is on (as {@link buildLanguageDatasets} opens them), as absolute paths.
 */
export function committedDatasetFolders(config: BuildConfig): string[] {
  return config.languages.flatMap((language) => {
    const dataset = datasetNameOf(config, language);
    const names = config.datasets.bargeIn ? [dataset, `${dataset}${BARGE_IN_SUFFIX}`] : [dataset];
    return names.map((name) => path.resolve(config.output.directory, datasetRelativePath(language, name)));
  });
}

/**
 * Build one language's datasets into `context.config.output.directory`, adding to `totals`.
 * @throws BuildStoppedError subclasses (the queue's wait stopped: this language's datasets are
 *   discarded; a dataset refused or not written), errors that end the build
 */
export async function buildLanguageDatasets(run: {
  context: BuildWithPagesContext;
  language: Language;
  shared: SharedBuildServices;
  /** Added to as the datasets are committed. */
  totals: BuildTotals;
  /** The build's waits on the queue's workers (all languages share one). */
  queueWaits: QueueWaits;
}): Promise<void> {
  const { context, language, shared, totals, queueWaits } = run;
  const { config, corpus, runner, log, progress, queueHook, preRendered } = context;
  const dataset = datasetNameOf(config, language);
  const { stepsInto, initial, statistics, placement, turnHoldShare, backchannelPhrases, timingPriorWarning } =
    await languageWork(config, language, shared, progress);
  if (timingPriorWarning !== null) {
    log(`warning: ${timingPriorWarning}`);
    totals.timingPriorWarnings.push(timingPriorWarning);
  }
  const linking = {
    linkToStored: config.output.linkAudioToCache ?? true,
    ...(preRendered
      ? {
          pages: {
            preRendered,
            outputDirectory: config.output.directory,
            channels: { user: config.channels.user, system: config.channels.system },
            sampleRate: config.audio.sampleRate,
          },
        }
      : {}),
  };
  const base = await DatasetOutput.open(
    language,
    dataset,
    path.join(config.output.directory, datasetRelativePath(language, dataset)),
    corpus,
    config.output.cacheDirectory,
    linking,
  );
  const variantDataset = `${dataset}${BARGE_IN_SUFFIX}`;
  const variant = config.datasets.bargeIn
    ? await DatasetOutput.open(
        language,
        variantDataset,
        path.join(config.output.directory, datasetRelativePath(language, variantDataset)),
        corpus,
        config.output.cacheDirectory,
        linking,
      )
    : null;
  const { steps: baseSteps, variantSteps } = stepsInto({ base, variant });
  // The variant's placement needs only the speech: it starts beside the base's placement (the one
  // computes while the other waits on the disk; after the last answer that is the build's time), and
  // the variant's steps after it run once the base dialogue is written (afterCompleted), in order.
  const [variantPlacementStep, ...variantLaterSteps] = variantSteps;
  const earlyVariantPlacements = new Map<string, Promise<StepsOutcome<DialogueWork>>>();
  const abandonedVariantPlacements: Promise<void>[] = [];
  const languageSteps: StageStep<DialogueWork>[] = variantPlacementStep
    ? baseSteps.flatMap((step) =>
        step.name !== placeTimelineStage.name
          ? [step]
          : [
              {
                name: 'start-barge-in-placement',
                cacheStages: [],
                startAhead: 0,
                progress: null,
                run: async (work: DialogueWork) => {
                  const placing = runner.runSteps([variantPlacementStep], work);
                  placing.catch(() => {}); // runSteps reports failures in its outcome
                  earlyVariantPlacements.set(work.conversation.id, placing);
                  return work;
                },
              },
              step,
            ],
      )
    : baseSteps;
  // queued: each dialogue waits for its job on the workers, then is written from the record they
  // stored (./queued-dialogue-steps.ts); the stages run here only for a dialogue whose job failed
  const steps: StageStep<DialogueWork>[] = queueHook
    ? queuedDialogueSteps({
        language,
        queueHook,
        queueWaits,
        cache: runner.context.cache,
        configHash: context.queueConfigHash ?? buildConfigHash(config),
        base,
        variant,
        variantDataset,
        log,
        languageSteps,
        ids: corpus.conversations.map((conversation) => conversation.id),
      })
    : languageSteps;

  const total = corpus.conversations.length;
  // the speech recognition check's counts of the dialogues written: from each one's record (queued
  // builds, ./dialogue-record.ts) or its speech (built here), both summed from the clips' cache entries
  let recognition = noRecognitionCounts();
  try {
    try {
      await runner.runDataset<SourceConversation, DialogueWork>({
        language,
        items: corpus.conversations,
        id: (conversation) => conversation.id,
        initial,
        steps,
        completed: (_conversation, work) => {
          if (work.record) {
            if (work.record.speechRecognition)
              recognition = addRecognitionCounts(recognition, work.record.speechRecognition);
            totals.audioSeconds += recordedDatasets(work.record).reduce((sum, entry) => sum + entry.durationSeconds, 0);
            return `${work.record.base.durationSeconds.toFixed(1)} s, ${work.record.base.utterances} utterances`;
          }
          const timeline = made(work.timeline, 'timeline', work);
          const speechRecognition = made(work.speech, 'speech', work).speechRecognition;
          if (speechRecognition) recognition = addRecognitionCounts(recognition, speechRecognition);
          totals.audioSeconds += timeline.totalDurationCs / 100;
          return `${(timeline.totalDurationCs / 100).toFixed(1)} s, ${made(work.speech, 'speech', work).spoken.length} utterances`;
        },
        afterCompleted: async (conversation, work, position) => {
          if (variant === null || work.record) return; // a record holds its variant
          const early = earlyVariantPlacements.get(conversation.id);
          earlyVariantPlacements.delete(conversation.id);
          const placed = early ? await early : await runner.runSteps(variantSteps.slice(0, 1), work);
          const outcome = placed.ok ? await runner.runSteps(variantLaterSteps, placed.state) : placed;
          if (outcome.ok) {
            totals.audioSeconds += made(outcome.state.bargeInTimeline, 'barge-in timeline', work).totalDurationCs / 100;
            return;
          }
          if (endsTheBuild(outcome.error)) throw outcome.error;
          const failure = { stage: outcome.stage, reason: firstLine(outcome.error) };
          variant.failed.push({ id: conversation.id, ...failure });
          log(
            itemLogLine(language, position + 1, total, `${conversation.id} (${variantDataset})`, failureText(failure)),
            'warn',
          );
        },
        failed: (conversation, failure) => {
          // its variant's placement, if started, is not used: only its end is awaited (not its state, which holds the audio)
          const early = earlyVariantPlacements.get(conversation.id);
          earlyVariantPlacements.delete(conversation.id);
          if (early) abandonedVariantPlacements.push(early.then(() => undefined));
          base.failed.push({ id: conversation.id, ...failure });
          variant?.failed.push({ id: conversation.id, ...failure });
        },
        log,
        progress,
      });
    } finally {
      // variant placements started beside bases that then failed, or were not reached, end before the build goes on
      await Promise.allSettled([...earlyVariantPlacements.values(), ...abandonedVariantPlacements]);
    }
    if (queueHook) await queueWaits.wait(queueHook.beforeCommit());
  } catch (error) {
    // a queued build stopped waiting: nothing of this language is committed (earlier languages were not either: beforeCommit comes first)
    if (error === queueWaits.stop) for (const output of [base, variant]) await output?.discard();
    throw error;
  }

  const committed = await commitLanguageDatasets({
    config,
    language,
    dataset,
    base,
    variant,
    statistics,
    detector: shared.detector,
    turnHoldShare,
    backchannelPhrases,
    placement,
    allowShrink: context.allowShrink,
    log,
    kept: context.kept,
    speechRecognition: speechRecognitionSummaryOf(config, language, recognition),
    warn: (warning) => (totals.datasetWarnings ??= []).push(warning),
  });
  for (const summary of committed) {
    totals.failedCount += summary.failed.length;
    totals.summaries.push(summary);
  }
}
