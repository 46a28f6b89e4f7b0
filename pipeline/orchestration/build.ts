/**
 * The MT-QA build: the list of stages and the lock. Per language, every dialogue goes through
 *
 *   prepare-text (rewrite-spoken, then translate) → synthesize-speech → place-timeline →
 *   annotate-events → render-dataset
 *
 * (and, for the barge-in variant, place-timeline → annotate-events → render-dataset again from the
 * same speech; the lists are ./stage-list.ts), run by the stage runner (pipeline/run/stage-runner.ts);
 * then the datasets are committed, scored and split, and the build summary and HTML report are written.
 *
 * - Each stage's result is cached by a content hash of its inputs and parameters
 *   (`ContentCache`), so a second identical build reuses everything and synthesizes nothing.
 * - One bad dialogue never sinks the run: its failure (stage and reason) is recorded in the summary
 *   and the build goes on.
 * - Outputs are deterministic: the same config and seed give byte-identical files (run timings and
 *   cache use go to `{cacheDirectory}/runs/{name}-{hash of the output folder}.json`, outside the output folder).
 * - The output folder is locked while the build runs (pipeline/run/build-guards.ts).
 */
import type { BuildConfig } from '../config.ts';
import { PreRenderedDialoguePages } from '../report/pre-rendered-pages.ts';
import { beginGuardedBuild, refuseForeignBackupFolders, runLocked } from '../run/build-guards.ts';
import type { ProgressListener } from '../run/progress.ts';
import { StageRunner } from '../run/stage-runner.ts';
import { ContentCache } from '../storage/content-cache.ts';
import { ingestCorpusStage, type IngestedCorpus } from '../../stages/ingest-corpus.ts';
import type { BuildContext, BuildLog, BuildQueueHook, BuildReport, BuildWithPagesContext } from './build-context.ts';
import { checkBuildIsPossible, checkOfflineVoices } from './build-checks.ts';
import { checkCorpusNumbersCanBeSpoken } from '../../stages/rewrite-spoken-numbers.ts';
import { writeBuildOutputs } from './build-outputs.ts';
import { buildLanguageDatasets, committedDatasetFolders, QueueWaits, type BuildTotals } from './language-datasets.ts';
import { scoreAndSplit } from './score-and-split.ts';
import { createSharedBuildServices } from './shared-build-services.ts';
import { checkSpeakerPromptClips } from './speaker-roster.ts';
import { STAGES } from './stage-list.ts';

export type { BuildContext, BuildLog, BuildQueueHook, BuildReport } from './build-context.ts';
export { checkBuildIsPossible, checkOfflineVoices } from './build-checks.ts';
export { describeCorruptEntries } from './build-outputs.ts';
export { languageWork } from './language-work.ts';
export { createSharedBuildServices, type SharedBuildServices } from './shared-build-services.ts';
export { STAGES } from './stage-list.ts';

/**
 * Run a whole build.
 * @param options `log` for progress lines (API keys redacted); `allowShrink` to let a dataset replace
 *   one with more dialogues; `queue` when the build is queued (./queued-build.ts): its dialogues wait for
 *   the workers' jobs and are written from the records they stored under keys made with
 *   `queueConfigHash`, and a stop of that wait discards the uncommitted datasets; `kept` is told each
 *   output as soon as it is written to stay (a committed dataset folder, `summary.md`, `summary.json`,
 *   the report's `index.html`), so a caller can name what a build that fails later left behind;
 *   `corpus` is `config.corpus` as the caller already ingested it (a queued build ingests it to queue
 *   its jobs: the corpus is not read and checked twice, a cost that grows with the corpus)
 * @throws ConfigError when the configuration cannot build what it asks for; corpus-level errors
 *   (unreadable, invalid UTF-8, not JSON, malformed) from the ingest stage; BuildInputError for a bad
 *   setting or output/cache folder; BuildStoppedError subclasses (pipeline/model/build-errors.ts, exit
 *   code 4) when the build stops before committing: no dialogue built, a smaller dataset, disk full,
 *   the lock held or lost. Other dialogue-level failures do not throw: they are counted and listed in
 *   the summary.
 */
export async function runBuild(
  config: BuildConfig,
  options: {
    log?: BuildLog;
    allowShrink?: boolean;
    progress?: ProgressListener;
    queue?: BuildQueueHook;
    queueConfigHash?: string;
    kept?: (output: string) => void;
    corpus?: IngestedCorpus;
  } = {},
): Promise<BuildReport> {
  checkBuildIsPossible(config);
  await checkOfflineVoices(config);
  const log = beginGuardedBuild(config, options.log ?? (() => {})); // keys redacted; settings checked (pipeline/run/build-guards.ts)
  // someone else's report.previous or {dataset}.previous stops the build here, not at its swap
  await refuseForeignBackupFolders(config.output.directory, committedDatasetFolders(config));
  // a damaged cache entry (its content hash differs) is recomputed; each is named, the count closes the build
  const cache = new ContentCache(config.output.cacheDirectory, {
    onCorrupt: (file, reason) => log(`cache: corrupt entry redone: ${file}: ${reason}`, 'warn'),
  });
  const runner = new StageRunner(STAGES, { cache });
  const corpus =
    options.corpus ??
    (await runner.runStage(ingestCorpusStage, { corpus: config.corpus }, { languages: config.languages }));
  log(
    `ingest: ${corpus.conversations.length} conversations from ${config.corpus.path}${corpus.rejected.length ? `, ${corpus.rejected.length} rejected` : ''}`,
  );
  for (const rejected of corpus.rejected) log(`ingest: rejected ${rejected.id}: ${rejected.reason}`, 'warn');
  for (const note of corpus.notes) log(`ingest: note: ${note}`);
  // what the corpus loader did to the text (empty answers, dropped turns, removed control characters): printed, never silent
  for (const warning of corpus.warnings) log(`ingest: warning: ${warning}`, 'warn');
  checkCorpusNumbersCanBeSpoken(config, corpus.conversations); // digits a rules rewrite cannot speak
  // voice prompts that cannot be what their manifest says stop the build before any request (a truncated clip)
  for (const language of config.languages) await checkSpeakerPromptClips(language, config);
  // folder checks, the output folder's lock, cleanup after killed builds (pipeline/run/build-guards.ts)
  return runLocked(config, corpus, log, () =>
    buildLocked({
      config,
      corpus,
      runner,
      log,
      allowShrink: options.allowShrink === true,
      progress: options.progress ?? (() => {}),
      queueHook: options.queue ?? null,
      queueConfigHash: options.queueConfigHash ?? null,
      kept: options.kept ?? (() => {}),
    }),
  );
}

/**
 * {@link buildWithPages} with the report's dialogue pages made as each dialogue is written
 * (pipeline/report/pre-rendered-pages.ts), so that after the last answer the report mostly moves
 * files. Not in a scored build: its split, which every page shows, is assigned after the last
 * dialogue, so its pages are made by the report. The pages' folder is removed when the build ends
 * (a killed build's by the next build, scored or not: pipeline/run/build-guards.ts).
 */
async function buildLocked(context: BuildContext): Promise<BuildReport> {
  const { config } = context;
  const preRendered = config.quality.enabled
    ? null
    : await PreRenderedDialoguePages.open(config.output.directory, context.runner.context.cache);
  try {
    return await buildWithPages({ ...context, preRendered });
  } finally {
    await preRendered?.discard();
  }
}

/** The build proper: every language's datasets, then scoring and splitting, then the summary files and the report. */
async function buildWithPages(context: BuildWithPagesContext): Promise<BuildReport> {
  const { config, runner, log, progress } = context;
  const shared = await createSharedBuildServices(config, log);
  const totals: BuildTotals = { summaries: [], audioSeconds: 0, failedCount: 0, timingPriorWarnings: [] };
  const queueWaits = new QueueWaits();
  for (const language of config.languages)
    await buildLanguageDatasets({ context, language, shared, totals, queueWaits });

  await shared.resamplePool?.close();
  await shared.renderPool?.close();
  const splits = config.quality.enabled
    ? await scoreAndSplit(config, totals.summaries, log, runner.context, progress)
    : [];
  return writeBuildOutputs(context, totals, splits);
}
