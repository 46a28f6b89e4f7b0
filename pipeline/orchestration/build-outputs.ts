/**
 * What a build writes once its datasets are committed (and scored and split): `summary.md`,
 * `summary.json`, the HTML report, and the run record of timings and cache use (kept outside the
 * output folder, since they differ from run to run).
 */
import path from 'node:path';
import { endsTheBuild } from '../model/build-errors.ts';
import { buildSummarySchema } from '../model/dataset-summary.ts';
import { writeBuildReport } from '../report/build-report.ts';
import { writeRecord } from '../storage/json-records.ts';
import { writeAtomic } from '../storage/write-atomic.ts';
import type { BuildReport, BuildWithPagesContext } from './build-context.ts';
import { runRecordFile } from './build-status.ts';
import type { BuildTotals } from './language-datasets.ts';
import type { SplitOutcome } from './score-and-split.ts';
import { formatBuildSummaryMarkdown, formatWarningsMarkdown, newLanguageNote } from './summary-markdown.ts';

/**
 * Write the summary files, the report and the run record.
 * @returns what the build returns
 * @throws as writeAtomic and writeRecord; an error that ends the build from the report (any other
 *   report error is logged and the report left out)
 */
export async function writeBuildOutputs(
  context: BuildWithPagesContext,
  totals: BuildTotals,
  splits: readonly SplitOutcome[],
): Promise<BuildReport> {
  const { config, runner, log, kept, preRendered } = context;
  const { cache } = runner.context;
  const { summaries, timingPriorWarnings, audioSeconds } = totals;
  const summaryMarkdownPath = path.join(config.output.directory, 'summary.md');
  const timingNote =
    timingPriorWarnings.length > 0
      ? `\n## Timing statistics assumed, not measured\n\n${timingPriorWarnings.map((warning) => `- ${warning}`).join('\n')}\n`
      : '';
  const languageNote = newLanguageNote(config.languages);
  if (languageNote !== null) log(`note: ${languageNote}`);
  const warnings = [...(totals.datasetWarnings ?? []), ...(languageNote === null ? [] : [languageNote])];
  await writeAtomic(
    summaryMarkdownPath,
    (await formatBuildSummaryMarkdown(config, summaries, splits)) + timingNote + formatWarningsMarkdown(warnings),
  );
  kept(summaryMarkdownPath);
  await writeRecord(path.join(config.output.directory, 'summary.json'), buildSummarySchema, {
    name: config.name,
    seed: config.seed,
    datasets: summaries,
    ...(warnings.length > 0 ? { warnings } : {}),
  });
  kept(path.join(config.output.directory, 'summary.json'));
  // The HTML report (pipeline/report): tables, offset plots, a listening page per dialogue.
  let reportPath: string | null = null;
  try {
    const written = await writeBuildReport(config.output.directory, {
      ...(preRendered ? { preRendered } : {}),
      cache: context.runner.context.cache,
    });
    reportPath = written.indexPath;
    kept(reportPath);
    const unmade =
      preRendered && preRendered.failures > 0
        ? `; ${preRendered.failures} could not be made then and were made by the report`
        : '';
    log(
      `report: ${reportPath}${preRendered ? ` (${preRendered.taken} of ${written.dialoguePages} dialogue pages made during the build${unmade})` : ''}`,
    );
  } catch (error) {
    if (endsTheBuild(error)) throw error;
    log(`report: not written: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`, 'warn');
  }
  const { stageSeconds } = runner;
  // Timings and cache use differ from run to run, so they stay out of the (deterministic) output folder.
  const outputDirectory = path.resolve(config.output.directory);
  await writeAtomic(
    runRecordFile(config.output.cacheDirectory, config.name, outputDirectory),
    `${JSON.stringify({ outputDirectory, stageSeconds, audioSeconds, cache: cache.statistics }, null, 2)}\n`,
  );
  if (cache.corruptEntries > 0) log(`cache: ${describeCorruptEntries(cache.corruptEntries)}`, 'warn');
  return {
    outputDirectory: config.output.directory,
    summaryMarkdownPath,
    reportPath,
    datasets: summaries,
    failedDialogues: totals.failedCount,
    stageSeconds,
    audioSeconds,
    cache: cache.statistics,
  };
}

/** `3 corrupt cache entries redone` (the build's closing line about damaged cache entries). */
export function describeCorruptEntries(count: number): string {
  return `${count} corrupt cache ${count === 1 ? 'entry' : 'entries'} redone`;
}
