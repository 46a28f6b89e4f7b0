/**
 * After every dataset of a build is written: quality scoring of each base dataset (DNSMOS, COMETKiwi
 * for translations, signal checks; stage `score-quality`) and the dev/test split of all languages
 * together (stage `split-dev-test`), which a barge-in variant takes from its base dataset.
 */
import path from 'node:path';
import type { BuildConfig } from '../config.ts';
import type { DatasetSummary } from '../model/dataset-summary.ts';
import type { SplitReport } from '../model/split-report.ts';
import { firstLine } from '../run/stage-runner.ts';
import { restoreScoringOutputsOnStop } from '../run/stopped-build.ts';
import { datasetRelativePath } from '../../stages/render-dataset.ts';
import { scoreQualityStage } from '../../stages/score-quality.ts';
import { applySplitToVariant, splitDevTestStage } from '../../stages/split-dev-test.ts';
import { BARGE_IN_SUFFIX } from './dataset-output.ts';
import type { StageContext } from '../run/stage.ts';
import type { LogLevel, ProgressListener } from '../run/progress.ts';

/** A dataset's split report, or why no split was made (then `directory` is the output folder). */
export type SplitOutcome = { directory: string; report?: SplitReport; error?: string };

/**
 * Score every written dataset and split the base datasets; a barge-in variant holds the same dialogues
 * as its base dataset, so it takes the base's split (applySplitToVariant) rather than being ranked on
 * its own; it is scored all the same, for its quality table. A failure here is reported, not thrown: the datasets stay valid without a split.
 * @param summaries the summaries of the datasets written (datasets without dialogues are skipped)
 * @param log progress lines (`quality: …`)
 * @param progress the scoring's progress events (channel-seconds per dataset)
 * @returns one outcome per split dataset, or one outcome with the error
 */
export async function scoreAndSplit(
  config: BuildConfig,
  summaries: readonly DatasetSummary[],
  log: (line: string, level?: LogLevel) => void,
  context: StageContext,
  progress: ProgressListener = () => {},
): Promise<SplitOutcome[]> {
  const directoryOf = (summary: DatasetSummary) =>
    path.join(config.output.directory, datasetRelativePath(summary.language, summary.dataset));
  const built = summaries.filter((summary) => summary.dialogues > 0);
  const directories = built.filter((summary) => summary.variant === 'default').map(directoryOf);
  const { cometKiwi } = config.quality;
  // a signal before every dataset is scored and split puts their scoring files back as the commit left them
  const withdrawRestore = restoreScoringOutputsOnStop(built.map(directoryOf), 'run the build again to score them');
  try {
    // every dataset is scored (a barge-in variant's recordings differ from its base's: cut answers,
    // overlaps), so each has its quality table; only the base datasets are ranked into splits
    for (const directory of built.map(directoryOf)) {
      log(`quality: scoring ${directory}`);
      await scoreQualityStage.run(
        { directory },
        {
          cacheDirectory: config.output.cacheDirectory,
          ...(config.quality.dnsmosModelDirectory
            ? { dnsmosModels: { modelDirectory: config.quality.dnsmosModelDirectory } }
            : {}),
          cometKiwi: {
            httpUrl: cometKiwi.httpUrl,
            command: cometKiwi.command,
            gpus: cometKiwi.gpus,
            batchSize: cometKiwi.batchSize,
          },
          dnsmos: config.quality.dnsmos,
          log,
          progress,
        },
        context,
      );
    }
    const results = await splitDevTestStage.run(
      { directories },
      {
        testHours: config.quality.testHours,
        testSmall: config.quality.testSmall,
        unit: config.quality.splitUnit,
        devAlias: config.quality.devAlias,
        log,
        // the datasets were committed and scored just now, from the files this build listed
        checkAudio: false,
      },
      context,
    );
    const outcomes: SplitOutcome[] = results.map((result) => ({ directory: result.directory, report: result.report }));
    for (const summary of built.filter((entry) => entry.variant === 'barge-in')) {
      const baseName = summary.dataset.slice(0, -BARGE_IN_SUFFIX.length);
      const base = results.find(
        (result) => result.report.language === summary.language && result.report.dataset === baseName,
      );
      if (!base) continue;
      const report = await applySplitToVariant(base.report, directoryOf(summary), {
        devAlias: config.quality.devAlias,
        log,
      });
      outcomes.push({ directory: directoryOf(summary), report });
    }
    return outcomes;
  } catch (error) {
    const reason = firstLine(error);
    log(`quality: not done: ${reason}`, 'warn');
    return [{ directory: config.output.directory, error: reason }];
  } finally {
    withdrawRestore();
  }
}
