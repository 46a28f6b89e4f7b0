/**
 * The quality commands of the `duplexsynth` command line:
 * - `duplexsynth score DATASET_DIR...`: DNSMOS, COMETKiwi (translated datasets), signal and content
 *   checks -> `quality.json`, `tables.md`, `tables.json` in each dataset folder;
 * - `duplexsynth split DATASET_DIR... [--test-hours 1] [--test-small N]`: test / test_small / dev
 *   -> `test.jsonl`, `dev.jsonl`, `test_small.jsonl`, `split.json`, refreshed tables.
 * Both print the tables of all given datasets as Markdown on standard output; progress and warnings
 * go to standard error.
 */
import { positiveNumber, positiveInteger, nonNegativeInteger } from './option-parsers.ts';
import { Command, Option } from 'commander';
import { DEFAULT_SPLIT_UNIT, SPLIT_UNITS, type SplitUnit } from '../../pipeline/model/split-report.ts';
import { stat } from 'node:fs/promises';
import { createProgressDisplay, failureOutcome, progressModeFor } from '../../pipeline/run/progress.ts';
import { EXIT_CODES, exitCodeOf } from '../../pipeline/model/build-errors.ts';
import path from 'node:path';
import { addOutputOptions, commandOutput, type OutputOptions } from './output-options.ts';
import { runStoppable } from '../../pipeline/run/stop-signals.ts';
import { restoreScoringOutputsOnStop } from '../../pipeline/run/stopped-build.ts';

/** Environment variable naming a COMETKiwi HTTP scorer URL (used when --comet-url is not given). */
export const COMETKIWI_URL_ENVIRONMENT_VARIABLE = 'DUPLEXSYNTH_COMETKIWI_URL';

interface ScoreCommandOptions extends OutputOptions {
  dnsmosDir?: string;
  cacheDir?: string;
  cometUrl?: string;
  cometCommand?: string;
  cometGpus?: number;
  cometBatchSize?: number;
  comet: boolean;
  requireComet?: boolean;
  loudness: boolean;
}

interface SplitCommandOptions extends OutputOptions {
  devAlias: boolean;
  testHours: number;
  testSmall?: number;
  allowSpeakerOverlap?: boolean;
  bySpeakerGroup?: boolean;
  splitUnit: SplitUnit;
}

/**
 * Adds the `score` and `split` commands to `program`. Exit codes: 0 on success; `split` sets 1 when a
 * dev set came out empty because of speaker overlap (the split files are still written); errors
 * propagate to the caller (scripts/cli.ts prints them and exits 2). The scoring and split code loads
 * when a command runs, so the CLI starts fast.
 */
export function registerQualityCommands(program: Command): void {
  const score = program
    .command('score')
    .description(
      'measure DNSMOS, COMETKiwi (translated datasets), loudness, clipping, silence and speech rate; write quality.json and tables',
    )
    .argument('<dataset-dir...>', 'dataset folders data/{lang}/task/{dataset}')
    .option(
      '--dnsmos-dir <dir>',
      'folder with the DNSMOS ONNX files (default: DUPLEXSYNTH_DNSMOS_DIR, else models/dnsmos of the shared folder (DUPLEXSYNTH_SHARED, ../shared), the user cache, or a download)',
    )
    .option('--cache-dir <dir>', 'content cache for per-dialogue DNSMOS results (e.g. outputs/.cache)')
    .option(
      '--comet-url <url>',
      `COMETKiwi HTTP scorer, POST {model, data:[{src, mt}]} -> {scores} (default: $${COMETKIWI_URL_ENVIRONMENT_VARIABLE})`,
    )
    .option('--comet-command <command>', 'the comet-score command (default: comet-score on PATH)')
    .option('--comet-gpus <n>', "comet-score --gpus (0 = CPU; default: the command's own default)", nonNegativeInteger)
    .option('--comet-batch-size <n>', 'comet-score --batch_size', positiveInteger)
    .option('--no-comet', 'do not run COMETKiwi (recorded as not computed)')
    .option('--require-comet', 'fail when COMETKiwi cannot be computed for a translated dataset')
    .option('--no-loudness', 'skip the ffmpeg EBU R 128 measurement');
  addOutputOptions(
    score,
    'the tables as JSON on standard output; progress as JSON lines on standard error, each with a level, the last a summary',
  ).action(async (directories: string[], options: ScoreCommandOptions) => {
    const [{ scoreDatasetQuality }, { buildDatasetTables, formatTablesMarkdown }] = await Promise.all([
      import('../../stages/score-quality.ts'),
      import('../../pipeline/quality/tables.ts'),
    ]);
    // a bar in channel-seconds per dataset on a terminal (pipeline/run/progress.ts)
    const display = createProgressDisplay(progressModeFor(options, process.stderr));
    const log = display.log;
    const httpUrl = options.cometUrl ?? process.env[COMETKIWI_URL_ENVIRONMENT_VARIABLE] ?? null;
    // each dataset's quality.json once written: a later dataset's failure leaves it in place
    const written: string[] = [];
    try {
      // a signal (pipeline/run/stop-signals.ts) puts back the scoring files of the dataset being scored
      await runStoppable('score', 'no dataset scored', async () => {
        for (const directory of directories) {
          const rerun =
            written.length === 0
              ? 'run score again to score it'
              : `scored: ${written.join(', ')}; run score again for the rest`;
          const withdraw = restoreScoringOutputsOnStop([directory], rerun);
          await scoreOne(directory);
          withdraw();
          written.push(path.join(directory, 'quality.json'));
        }
      });
    } catch (error) {
      display.stop();
      display.finish(failureOutcome(error, exitCodeOf(error), written));
      throw error;
    }
    display.stop();
    display.finish({ level: 'info', exitCode: EXIT_CODES.done, outputs: written });
    printTables(
      await Promise.all(directories.map((directory) => buildDatasetTables(directory))),
      options,
      formatTablesMarkdown,
    );

    async function scoreOne(directory: string): Promise<void> {
      await scoreDatasetQuality(directory, {
        ...(options.dnsmosDir ? { dnsmosModels: { modelDirectory: options.dnsmosDir } } : {}),
        ...(options.cacheDir ? { cacheDirectory: options.cacheDir } : {}),
        cometKiwi: {
          httpUrl,
          ...(options.cometCommand ? { command: options.cometCommand } : {}),
          ...(options.cometGpus !== undefined ? { gpus: options.cometGpus } : {}),
          ...(options.cometBatchSize !== undefined ? { batchSize: options.cometBatchSize } : {}),
        },
        cometKiwiEnabled: options.comet,
        cometKiwiRequired: options.requireComet ?? false,
        measureLoudness: options.loudness,
        log,
        progress: display.progress,
      });
    }
  });

  const split = program
    .command('split')
    .description(
      'choose test (best dialogue-level DNSMOS up to the target hours), optional test_small, and a speaker-disjoint dev; write the split files',
    )
    .argument('<dataset-dir...>', 'scored dataset folders data/{lang}/task/{dataset} (one per language)')
    .option('--test-hours <hours>', 'target duration of test', positiveNumber, 1)
    .option('--test-small <n>', 'also write test_small.jsonl with the N best test dialogues', positiveInteger)
    .option('--allow-speaker-overlap', 'keep dev dialogues that share a speaker with test (recorded in split.json)')
    .addOption(
      new Option(
        '--split-unit <unit>',
        "fill test with whole groups of dialogues connected by shared speakers (best mean DNSMOS first), or dialogue by dialogue (dev then drops those sharing a speaker with test); the config's default",
      )
        .choices(SPLIT_UNITS)
        .default(DEFAULT_SPLIT_UNIT),
    )
    .option('--by-speaker-group', 'the same as --split-unit speaker-group (the default)')
    .option('--no-dev-alias', 'write the rest as test_other.jsonl only (default: also as dev.jsonl)');
  addOutputOptions(
    split,
    'the tables as JSON on standard output; progress as JSON lines (each with a level) on standard error',
  ).action(async (directories: string[], options: SplitCommandOptions) => {
    const { BARGE_IN_SUFFIX } = await import('../../pipeline/orchestration/dataset-output.ts');
    // a signal (pipeline/run/stop-signals.ts) puts back the split files of every dataset named and of
    // the barge-in siblings kept in line: each is as it was, or split
    const siblings = directories.map((directory) => `${path.resolve(directory)}${BARGE_IN_SUFFIX}`);
    await runStoppable('split', 'no dataset split', async () => {
      const withdraw = restoreScoringOutputsOnStop([...directories, ...siblings], 'run split again');
      await splitCommand(directories, options);
      withdraw();
    });
  });
}

/** `duplexsynth split` (see {@link registerQualityCommands}). */
async function splitCommand(directories: string[], options: SplitCommandOptions): Promise<void> {
  const [
    { applySplitToVariant, splitDatasets },
    { splitReportSchema },
    { readRecord },
    { BARGE_IN_SUFFIX },
    { buildDatasetTables, formatTablesMarkdown },
  ] = await Promise.all([
    import('../../stages/split-dev-test.ts'),
    import('../../pipeline/model/split-report.ts'),
    import('../../pipeline/storage/json-records.ts'),
    import('../../pipeline/orchestration/dataset-output.ts'),
    import('../../pipeline/quality/tables.ts'),
  ]);
  const log = commandOutput(options).log;
  // A barge-in variant (`{dataset}_bargein`) takes the split of its base dataset, the sibling folder.
  const isVariant = (directory: string) => path.basename(path.resolve(directory)).endsWith(BARGE_IN_SUFFIX);
  const baseOf = (directory: string) => path.resolve(directory).slice(0, -BARGE_IN_SUFFIX.length);
  const results = await splitDatasets(
    directories.filter((directory) => !isVariant(directory)),
    {
      testHours: options.testHours,
      testSmall: options.testSmall ?? null,
      speakerDisjoint: !options.allowSpeakerOverlap,
      unit: options.bySpeakerGroup ? 'speaker-group' : options.splitUnit,
      devAlias: options.devAlias,
      log,
    },
  );
  // a base dataset's barge-in sibling is kept in line even when not named
  const variants = [...directories.filter(isVariant)];
  for (const result of results) {
    const sibling = `${path.resolve(result.directory)}${BARGE_IN_SUFFIX}`;
    if (
      !variants.some((variant) => path.resolve(variant) === sibling) &&
      (await stat(path.join(sibling, 'manifest.json')).then(
        () => true,
        () => false,
      ))
    )
      variants.push(sibling);
  }
  for (const variant of variants) {
    const base = results.find((result) => path.resolve(result.directory) === baseOf(variant));
    const baseReport =
      base?.report ??
      (await readRecord(path.join(baseOf(variant), 'split.json'), splitReportSchema, { optional: true })) ??
      failNoBaseSplit(variant, baseOf(variant));
    await applySplitToVariant(baseReport, variant, { devAlias: options.devAlias, log });
  }
  printTables(
    await Promise.all(directories.map((directory) => buildDatasetTables(directory))),
    options,
    formatTablesMarkdown,
  );
  if (results.some((result) => result.report.devEmptyBecauseOfSpeakerOverlap)) {
    console.error(
      'duplexsynth split: a dev set is empty because every remaining dialogue shares a speaker with test (see split.json warnings)',
    );
    process.exitCode = 1;
  }
}

/** The tables of the datasets on standard output: Markdown, or JSON with `--json`. */
function printTables<Tables>(tables: Tables[], options: OutputOptions, markdown: (tables: Tables[]) => string): void {
  console.log(options.json ? JSON.stringify(tables, null, 2) : markdown(tables));
}

/** A barge-in variant whose base folder has no split.json yet. */
function failNoBaseSplit(variant: string, base: string): never {
  throw new Error(`${variant}: a barge-in variant takes the split of ${base}; split that folder first (or give both)`);
}
