/**
 * The build's `summary.md`: the dataset summaries (pipeline/quality/summarize-dataset.ts), the
 * dev/test split of each dataset, and the paper's Table 3 rows per split.
 */
import path from 'node:path';
import type { BuildConfig } from '../config.ts';
import type { DatasetSummary } from '../model/dataset-summary.ts';
import { formatSummaryMarkdown } from '../quality/summarize-dataset.ts';
import { buildDatasetTables, formatStatisticsTableMarkdown } from '../quality/tables.ts';
import { datasetRelativePath } from '../../stages/render-dataset.ts';
import type { SplitOutcome } from './score-and-split.ts';

/** The languages M3-DuplexBench's evaluation takes as `--lang` (its ASR and text normalisation). */
export const BENCHMARK_EVALUATION_LANGUAGES: readonly string[] = Object.freeze(['en', 'ja']);

/**
 * One line pointing to docs/new-language-benchmark.md when the build makes a language the
 * benchmark's evaluation does not take ({@link BENCHMARK_EVALUATION_LANGUAGES}), else null.
 */
export function newLanguageNote(languages: readonly string[]): string | null {
  const others = languages.filter((language) => !BENCHMARK_EVALUATION_LANGUAGES.includes(language));
  if (others.length === 0) return null;
  return `${others.join(', ')}: M3-DuplexBench evaluates --lang en or ja only; docs/new-language-benchmark.md says what to change on the benchmark's side to run ${others.length === 1 ? 'this language' : 'these languages'}`;
}

/** The `## Warnings` part of `summary.md`: one item per warning, nothing when there is none. */
export function formatWarningsMarkdown(warnings: readonly string[]): string {
  if (warnings.length === 0) return '';
  return `\n## Warnings\n\n${warnings.map((warning) => `- ${warning}`).join('\n')}\n`;
}

/**
 * The text of `summary.md`.
 * @param splits the split outcomes (empty when quality scoring is off)
 * @throws as buildDatasetTables (pipeline/quality/tables.ts) for a written dataset that cannot be read
 */
export async function formatBuildSummaryMarkdown(
  config: BuildConfig,
  summaries: readonly DatasetSummary[],
  splits: readonly SplitOutcome[],
): Promise<string> {
  return (
    formatSummaryMarkdown(`duplexsynth build "${config.name}" (seed ${config.seed})`, summaries) +
    formatSplitsMarkdown(splits) +
    (await formatStatisticsPerSplit(config, summaries))
  );
}

/** The paper's Table 3 rows of every written dataset, variants included, per split (pipeline/quality/tables.ts). */
async function formatStatisticsPerSplit(config: BuildConfig, summaries: readonly DatasetSummary[]): Promise<string> {
  const tables = [];
  for (const summary of summaries.filter((entry) => entry.dialogues > 0)) {
    tables.push(
      await buildDatasetTables(
        path.join(config.output.directory, datasetRelativePath(summary.language, summary.dataset)),
      ),
    );
  }
  if (tables.length === 0) return '';
  return `\n## Statistics per split (Table 3: SHIFT = TURN_SHIFT, PAUSE = TURN_HOLD)\n\n${formatStatisticsTableMarkdown(tables)}`;
}

function formatSplitsMarkdown(outcomes: readonly SplitOutcome[]): string {
  if (outcomes.length === 0) return '';
  const lines = ['', '## Dev/test split (ranked by dialogue-level DNSMOS OVRL)', ''];
  for (const outcome of outcomes) {
    if (outcome.error) {
      lines.push(`- not done: ${outcome.error}`);
      continue;
    }
    const report = outcome.report!;
    const part = (name: 'test' | 'dev' | 'test_small') => {
      const split = report.splits[name];
      const label = name === 'dev' ? 'test_other (dev)' : name;
      return split ? `${label} ${split.dialogues} dialogues / ${split.hours.toFixed(2)} h` : `${label} none`;
    };
    lines.push(
      `- ${report.dataset} (${report.language}): ${part('test')}, ${part('dev')}, ${part('test_small')}; speaker-disjoint: ${report.settings.speakerDisjoint}; quality and statistics tables in tables.md`,
    );
    for (const warning of report.warnings) lines.push(`  - warning: ${warning}`);
  }
  return `${lines.join('\n')}\n`;
}
