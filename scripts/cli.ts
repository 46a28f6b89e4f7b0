/**
 * The `duplexsynth` command line (commander). Thin: parses options, calls pipeline functions,
 * prints one-line reasons and exits non-zero on bad input.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { positiveInteger, nonNegativeInteger } from './commands/option-parsers.ts';
import { Command, Option } from 'commander';
import { DEFAULT_CONFIG_FILE, PROJECT_ROOT, configJsonSchema, loadConfigFile, type BuildConfig } from '../pipeline/config.ts';
import { annotateAlignmentFile } from '../pipeline/events/index.ts';
import { runBuild } from '../pipeline/run/build.ts';
import { verifyDataset } from '../pipeline/run/verify-dataset.ts';
import path from 'node:path';
import { registerQualityCommands } from './commands/quality.ts';
import { registerMeasureCommand } from './commands/measure.ts';
import { registerExportCommand } from './commands/export.ts';
import { registerReportCommand } from './commands/report.ts';

interface BuildOptions {
  config?: string;
  corpus?: string;
  limit?: number;
  lang?: ('en' | 'ja')[];
  out?: string;
  seed?: number;
  quiet?: boolean;
}

/** Apply command-line overrides to a resolved config (paths relative to the working directory). */
function applyOverrides(config: BuildConfig, options: BuildOptions): BuildConfig {
  const next: BuildConfig = structuredClone(config);
  if (options.corpus) next.corpus.path = path.resolve(options.corpus);
  if (options.limit !== undefined) next.corpus.limit = options.limit;
  if (options.lang) next.languages = options.lang as BuildConfig['languages'];
  if (options.out) next.output.directory = path.resolve(options.out);
  if (options.seed !== undefined) next.seed = options.seed;
  // A real corpus given on the command line is not the demo corpus: the demo's recorded responses
  // cannot answer for it, so the English rewrite falls back to the offline rules backend.
  if (options.corpus && !options.config) {
    next.llm = { rewrite: { backend: 'rules' }, translate: { backend: 'none' } };
    if (!options.lang) next.languages = ['en'];
    // scoring a real corpus takes long (DNSMOS): run `duplexsynth score` and `split` when wanted
    next.quality = { ...next.quality, enabled: false, testHours: 1 };
    next.name = path.basename(options.corpus).replace(/\.json$/, '');
    next.datasets = { en: 'topiocqa', ja: 'topiocqa_ja' };
    if (!options.out) next.output.directory = path.resolve('outputs', next.name);
  }
  return next;
}

async function build(options: BuildOptions): Promise<void> {
  const config = applyOverrides(await loadConfigFile(options.config ?? DEFAULT_CONFIG_FILE), options);
  const report = await runBuild(config, { log: options.quiet ? () => {} : (line) => console.error(line) });
  console.log(report.summaryMarkdownPath);
  if (report.failedDialogues > 0) process.exitCode = 3;
}

/** The `version` field of the project's package.json. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Build the program (exported for tests). */
export function createProgram(): Command {
  const program = new Command('duplexsynth')
    .description('Build full-duplex spoken dialogue benchmark data (M3-DuplexBench layout) from TopiOCQA.')
    .version(packageVersion(), '-V, --version', 'print the duplexsynth version')
    .showHelpAfterError('(run with --help for usage)');

  const addBuildOptions = (command: Command) =>
    command
      .option('-c, --config <file>', 'YAML build configuration (default: the built-in offline demo config)')
      .option('--corpus <path>', 'TopiOCQA raw-release JSON to read instead of the configured corpus')
      .option('--limit <n>', 'only the first N conversations', positiveInteger)
      .addOption(new Option('--lang <language...>', 'languages to build').choices(['en', 'ja']))
      .option('--out <dir>', 'output folder')
      .option('--seed <n>', 'random seed', nonNegativeInteger)
      .option('-q, --quiet', 'no progress lines');

  addBuildOptions(program.command('build').description('run the whole pipeline and write the datasets')).action(build);

  addBuildOptions(
    program.command('demo').description('build the English and Japanese demo datasets offline (the built-in default config)'),
  ).action(build);

  program
    .command('annotate')
    .description('print the benchmark events JSONL line for a word-alignment (txt_align) file')
    .requiredOption('--alignment <file>', 'txt_align file: channel<TAB>start<TAB>end<TAB>word')
    .requiredOption('--id <id>', 'dialogue id to write in the line')
    .action(async (options: { alignment: string; id: string }) => {
      console.log(await annotateAlignmentFile(options.alignment, options.id));
    });

  program
    .command('verify')
    .description('re-derive the events of a written dataset from its txt_align files and its audio, and compare')
    .argument('<dataset-dir>', 'folder data/{lang}/task/{dataset}')
    .action(async (directory: string) => {
      const result = await verifyDataset(directory);
      for (const problem of result.problems) console.error(problem);
      console.log(`${result.dialogues} dialogues checked, ${result.problems.length} problems`);
      if (result.problems.length > 0) process.exitCode = 1;
    });

  program
    .command('schema')
    .description('write the JSON Schema of the build configuration')
    .option('--out <file>', 'output file', path.join(PROJECT_ROOT, 'pipeline', 'config.schema.json'))
    .action(async (options: { out: string }) => {
      await writeFile(options.out, `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
      console.log(options.out);
    });

  program
    .command('bench')
    .description('time each stage of a 20-dialogue English build of the real corpus (see README)')
    .option('--corpus <path>', 'TopiOCQA JSON (default: ../shared/corpora/topiocqa/topiocqa_dev.json)')
    .option('--limit <n>', 'dialogues', positiveInteger, 20)
    .action(async (options: { corpus?: string; limit: number }) => {
      const { runBenchmarks } = await import('./bench.ts');
      await runBenchmarks(options);
    });

  registerQualityCommands(program);
  registerMeasureCommand(program);
  registerExportCommand(program);
  registerReportCommand(program);
  return program;
}

/** Run the CLI; bad input ends with a one-line reason and a non-zero exit code. */
export async function main(argv: string[]): Promise<void> {
  try {
    await createProgram().parseAsync(argv);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`duplexsynth: ${message.split('\n')[0]}`);
    if (process.env.DUPLEXSYNTH_DEBUG && error instanceof Error) console.error(error.stack);
    process.exitCode = 2;
  }
}
