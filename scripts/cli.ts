/**
 * The `duplexsynth` command line (commander). Thin: parses options, calls pipeline functions,
 * prints one-line reasons and exits non-zero on bad input.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import {
  dnsmosHop,
  languageCodes,
  positiveInteger,
  nonNegativeInteger,
  positiveNumber,
} from './commands/option-parsers.ts';
import { Command, CommanderError, Option } from 'commander';
import type { BuildConfig } from '../pipeline/config.ts';
import { DEFAULT_SPLIT_UNIT, SPLIT_UNITS } from '../pipeline/model/split-report.ts';
import { BuildInputError, EXIT_CODES, LockLostError, exitCodeOf } from '../pipeline/model/build-errors.ts';
import { describeFileSystemError, isRawFileSystemMessage } from '../pipeline/storage/file-system-errors.ts';
import { redactSecrets } from '../pipeline/storage/redact.ts';
import { PACKAGE_ROOT } from '../pipeline/storage/package-files.ts';
import path from 'node:path';
import { registerQualityCommands } from './commands/quality.ts';
import { registerMeasureCommand } from './commands/measure-command.ts';
import { registerExportCommand } from './commands/export.ts';
import { registerReportCommand } from './commands/report.ts';
import { registerStatusCommand } from './commands/status.ts';
import {
  causeReportedAsJson,
  createProgressDisplay,
  failureOutcome,
  progressModeFor,
} from '../pipeline/run/progress.ts';
import { registerPromptsCommand } from './commands/prompts-command.ts';
import { registerChatCommand } from './commands/chat-command.ts';
import { widenHeapGrowth } from '../pipeline/run/heap-growth.ts';
import { raiseOptimizationBudget } from '../pipeline/run/optimization-budget.ts';

// Only commander, the progress display and the commands' option definitions load at start: each
// command imports the pipeline when it runs (`--help` and `--version` in well under 0.5 s; `npm run
// bench`, section cli).

/** The config and language-pack modules, loaded when a build runs. */
interface ConfigModules {
  config: typeof import('../pipeline/config.ts');
  languagePack: typeof import('../pipeline/model/language-pack.ts');
}

async function configModules(): Promise<ConfigModules> {
  const [config, languagePack] = await Promise.all([
    import('../pipeline/config.ts'),
    import('../pipeline/model/language-pack.ts'),
  ]);
  return { config, languagePack };
}

interface BuildOptions {
  config?: string;
  corpus?: string;
  limit?: number;
  lang?: string[];
  languagePack?: string[];
  out?: string;
  seed?: number;
  quiet?: boolean;
  allowShrink?: boolean;
  json?: boolean;
  plain?: boolean;
  dryRun?: boolean;
  /** `--no-score`: false skips quality scoring and the split. */
  score?: boolean;
  testHours?: number;
  testSmall?: number;
  splitUnit?: 'dialogue' | 'speaker-group';
  /** `--dnsmos-hop`: quality.dnsmos.hopSeconds. */
  dnsmosHop?: number;
  queue?: string;
  giveUpSeconds?: number;
}

/**
 * The build config: the `--config` file (or the built-in default) read and checked first, so a bad file
 * is named by its reader, then the command-line overrides applied.
 */
async function loadBuildConfig(options: BuildOptions, modules: ConfigModules): Promise<BuildConfig> {
  const { DEFAULT_CONFIG_FILE, loadConfigFile, configFileSetsCacheDirectory } = modules.config;
  const loaded = await loadConfigFile(options.config ?? DEFAULT_CONFIG_FILE);
  const configSetsCache = options.config !== undefined && (await configFileSetsCacheDirectory(options.config));
  return applyOverrides(loaded, options, modules, configSetsCache);
}

/**
 * Apply command-line overrides to a resolved config (paths relative to the working directory).
 * A real corpus given without `--config` is built as the benchmark reads it: rules rewrite, English,
 * scored and split (test, test_small with `--test-small`, test_other and its `dev` alias) with the
 * config's split defaults. The cache goes beside the output folder (`{out}/../.cache`) unless a
 * `--config` file sets `output.cacheDirectory`.
 * @param modules the config and language-pack modules (loaded when a command runs: the CLI starts fast)
 * @param configSetsCache whether the `--config` file sets `output.cacheDirectory` itself
 */
function applyOverrides(
  config: BuildConfig,
  options: BuildOptions,
  modules: ConfigModules,
  configSetsCache = false,
): BuildConfig {
  const { defaultDatasetName, withLanguageDefaults } = modules.config;
  const { LanguagePackError, readLanguagePackFile, registerLanguagePacks } = modules.languagePack;
  const next: BuildConfig = structuredClone(config);
  next.languagePacks = [...config.languagePacks]; // the same pack records: messages name the file each was read from
  if (options.corpus) next.corpus.path = path.resolve(options.corpus);
  if (options.limit !== undefined) next.corpus.limit = options.limit;
  if (options.languagePack) {
    // language packs from files (pipeline/model/language-pack.ts): validated here, before any work
    try {
      next.languagePacks = [
        ...next.languagePacks,
        ...options.languagePack.map((file) => readLanguagePackFile(path.resolve(file))),
      ];
    } catch (error) {
      if (error instanceof LanguagePackError) throw new BuildInputError(`--language-pack ${error.message}`);
      throw error;
    }
    registerLanguagePacks(next.languagePacks);
  }
  if (options.lang) next.languages = options.lang as BuildConfig['languages'];
  else if (options.config) modules.config.keepConfigSource(config, next); // messages about languages name the file
  if (options.out) next.output.directory = path.resolve(options.out);
  if (options.seed !== undefined) next.seed = options.seed;
  // A real corpus given on the command line is not the demo corpus: the demo's recorded responses
  // cannot answer for it, so the English rewrite falls back to the offline rules backend.
  if (options.corpus && !options.config) {
    next.llm = { rewrite: { backend: 'rules' }, translate: { backend: 'none' } };
    if (!options.lang) next.languages = ['en'];
    // scored and split by default, so pipe.sh's --split test|test_small|test_other finds its files
    next.quality = {
      ...next.quality,
      enabled: true,
      testHours: 1,
      testSmall: null,
      splitUnit: DEFAULT_SPLIT_UNIT,
      devAlias: true,
    };
    next.name = buildNameOfCorpus(options.corpus, modules.config.SAFE_FOLDER_NAME);
    next.datasets = {
      ...next.datasets,
      en: defaultDatasetName('en'),
      ja: defaultDatasetName('ja'),
      ...Object.fromEntries(next.languages.map((language) => [language, defaultDatasetName(language)])),
    };
    if (!options.out) next.output.directory = path.resolve('outputs', next.name);
  }
  if (options.score === false) next.quality = { ...next.quality, enabled: false };
  if (options.testHours !== undefined) next.quality = { ...next.quality, testHours: options.testHours };
  if (options.testSmall !== undefined) next.quality = { ...next.quality, testSmall: options.testSmall };
  if (options.splitUnit !== undefined) next.quality = { ...next.quality, splitUnit: options.splitUnit };
  if (options.dnsmosHop !== undefined)
    next.quality = { ...next.quality, dnsmos: { ...next.quality.dnsmos, hopSeconds: options.dnsmosHop } };
  // the cache beside the output folder, unless the user's config names it
  if (next.output.directory !== config.output.directory && !configSetsCache) {
    next.output.cacheDirectory = path.join(path.dirname(next.output.directory), '.cache');
  }
  return withLanguageDefaults(next);
}

/**
 * The build name (and default output folder `outputs/{name}`) of a corpus file: its name without
 * `.json`. @throws BuildInputError when that is not a safe folder name (`..json` would make `outputs/` itself the output)
 */
function buildNameOfCorpus(corpus: string, safeFolderName: RegExp): string {
  const name = path.basename(corpus).replace(/\.json$/, '');
  if (!safeFolderName.test(name)) {
    throw new BuildInputError(
      `--corpus ${corpus}: the file name gives no safe build name ("${name}"); rename the file or pass --out`,
    );
  }
  return name;
}

async function build(options: BuildOptions): Promise<void> {
  const modules = await configModules();
  if (options.dryRun) {
    const config = await loadBuildConfig(options, modules);
    // what the build would do; no service is called and nothing is written (pipeline/orchestration/plan-build.ts)
    const { formatBuildPlan, planBuild } = await import('../pipeline/orchestration/plan-build.ts');
    const plan = await planBuild(config);
    process.stdout.write(options.json ? `${JSON.stringify(plan, null, 2)}\n` : formatBuildPlan(plan));
    return;
  }
  // live bars on a terminal, plain lines otherwise or with --plain, JSON lines with --json (pipeline/run/progress.ts)
  const display = createProgressDisplay(progressModeFor(options, process.stderr));
  let report;
  // what the build has written to stay so far: the summary event names it, also when the build fails later
  const kept: string[] = [];
  const keep = (output: string) => void kept.push(output);
  // Ctrl-C while a queued build waits for its workers: the jobs stay queued, `build` again continues them
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  // `on`, not `once`: proper-lockfile's signal-exit re-raises a SIGINT when it finds itself the only listener,
  // and a `once` listener is removed before the listeners run
  let queue: string | null = null;
  try {
    const config = await loadBuildConfig(options, modules);
    // --queue, else the config's `queue:`
    queue = options.queue ?? config.queue ?? null;
    if (queue) {
      process.on('SIGINT', onInterrupt);
      const { runQueuedBuild } = await import('../pipeline/orchestration/queued-build.ts');
      report = await runQueuedBuild(config, {
        queue,
        log: display.log,
        progress: display.progress,
        allowShrink: options.allowShrink === true,
        signal: stop.signal,
        kept: keep,
        ...(options.giveUpSeconds !== undefined ? { giveUpSeconds: options.giveUpSeconds } : {}),
      });
    } else {
      const { runBuild } = await import('../pipeline/orchestration/build.ts');
      report = await runBuild(config, {
        log: display.log,
        progress: display.progress,
        allowShrink: options.allowShrink === true,
        kept: keep,
      });
    }
  } catch (error) {
    display.stop();
    // --json ends with a summary event naming the cause, also when the build stops: it is then the last line
    display.finish(failureOutcome(error, exitCodeOf(error), kept));
    throw error;
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    // BullMQ's reconnect timers outlive a build that stopped because Redis went away: end within 5 s
    if (queue) setTimeout(() => process.exit(), 5000).unref();
  }
  display.stop();
  const failed = report.failedDialogues > 0;
  display.finish({
    level: failed ? 'warn' : 'info',
    exitCode: failed ? EXIT_CODES.someDialoguesFailed : EXIT_CODES.done,
    outputs: kept,
    failedDialogues: report.failedDialogues,
  });
  console.log(report.summaryMarkdownPath);
  if (report.reportPath) console.log(report.reportPath);
  if (failed) process.exitCode = EXIT_CODES.someDialoguesFailed;
}

interface WorkerOptions {
  queue?: string;
  config?: string;
  corpus?: string;
  seed?: number;
  concurrency: number;
  stalledSeconds: number;
  rateLimit?: string;
  name?: string;
  maxJobs?: number;
  quiet?: boolean;
}

/** `duplexsynth worker`: serve a queued build until Ctrl-C (pipeline/orchestration/queue-worker.ts). */
async function worker(options: WorkerOptions): Promise<void> {
  const modules = await configModules();
  const overrides = {
    ...(options.config ? { config: options.config } : {}),
    ...(options.corpus ? { corpus: options.corpus } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
  };
  const config = await loadBuildConfig(overrides, modules);
  const queue = options.queue ?? config.queue;
  if (!queue)
    throw new BuildInputError(
      `worker: no queue to serve: pass --queue redis://HOST:PORT/DB or set queue: in ${options.config ?? 'the config'}`,
    );
  const { runQueueWorker } = await import('../pipeline/orchestration/queue-worker.ts');
  let rateLimit: { jobs: number; seconds: number } | null = null;
  if (options.rateLimit) {
    const match = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(options.rateLimit);
    if (!match || Number(match[1]) === 0 || Number(match[2]) === 0)
      throw new BuildInputError(`--rate-limit ${options.rateLimit}: give JOBS/SECONDS, e.g. 60/60`);
    rateLimit = { jobs: Number(match[1]), seconds: Number(match[2]) };
  }
  const stop = new AbortController();
  // `on`, not `once`, as in build(): a signal-exit listener alone would re-raise the signal
  process.on('SIGINT', () => stop.abort());
  process.on('SIGTERM', () => stop.abort());
  // ioredis reconnect timers may outlive the worker (a server that is not Redis, Redis away): end within 2 s of its end
  const exitSoon = () => setTimeout(() => process.exit(), 2000).unref();
  await runQueueWorker(config, {
    queue,
    concurrency: options.concurrency,
    stalledSeconds: options.stalledSeconds,
    rateLimit,
    ...(options.name ? { name: options.name } : {}),
    ...(options.maxJobs ? { maximumJobs: options.maxJobs } : {}),
    log: options.quiet ? () => {} : (line) => console.error(line),
    signal: stop.signal,
  }).finally(exitSoon);
}

/** The `version` field of the project's package.json. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Build the program (exported for tests). */
export function createProgram(): Command {
  const program = new Command('duplexsynth')
    .description('Build full-duplex spoken dialogue benchmark data (M3-DuplexBench layout) from TopiOCQA.')
    .version(packageVersion(), '-V, --version', 'print the duplexsynth version')
    .showHelpAfterError('(run with --help for usage)')
    // usage errors reach main's handler (exit code 2) instead of commander's process.exit(1)
    .exitOverride();

  const addBuildOptions = (command: Command) =>
    command
      .option('-c, --config <file>', 'YAML build configuration (default: the built-in offline demo config)')
      .option('--corpus <path>', 'TopiOCQA raw-release JSON to read instead of the configured corpus')
      .option('--limit <n>', 'only the first N conversations', positiveInteger)
      .addOption(
        new Option('--lang <language...>', 'languages to build (BCP-47 codes such as en, ja, zh, de)').argParser(
          languageCodes,
        ),
      )
      .option('--language-pack <file...>', 'language pack YAML files adding languages (README "Adding a language")')
      .option(
        '--out <dir>',
        'output folder (the cache goes beside it, {out}/../.cache, unless the --config file sets output.cacheDirectory)',
      )
      .option(
        '--no-score',
        'skip quality scoring and the test/test_other split (on by default for --corpus without --config)',
      )
      .option(
        '--test-hours <hours>',
        "target duration of test (default: the config's quality.testHours; 1 for --corpus without --config)",
        positiveNumber,
      )
      .option('--test-small <n>', 'also write test_small.jsonl with the N best test dialogues', positiveInteger)
      .addOption(
        new Option(
          '--split-unit <unit>',
          `fill test by whole speaker groups or dialogue by dialogue (default: the config's quality.splitUnit, ${DEFAULT_SPLIT_UNIT})`,
        ).choices(SPLIT_UNITS),
      )
      .option(
        '--dnsmos-hop <seconds>',
        "seconds between DNSMOS's 9.01 s windows (default: the config's quality.dnsmos.hopSeconds, 1 as the reference; 9.01 runs about 1/8 of the model runs, with scores that are not the published ones)",
        dnsmosHop,
      )
      .option('--seed <n>', 'random seed (an integer from 0 to 2^53 - 1)', nonNegativeInteger)
      .option(
        '--allow-shrink',
        'replace a dataset even when the new one has fewer dialogues (else the build stops, exit code 4)',
      )
      .option('-q, --quiet', 'no progress lines')
      .option('--plain', 'progress as plain lines even on a terminal (no live bars)')
      .option(
        '--json',
        'progress as JSON lines on standard error, each with a level, the last a summary (with --dry-run: the plan as JSON on standard output)',
      )
      .option(
        '--dry-run',
        'print what the build would do (dialogues, utterances, service requests, cache hits) without calling any service or writing anything',
      );

  addBuildOptions(program.command('build').description('run the whole pipeline and write the datasets'))
    .option(
      '--queue <url>',
      'spread the build over `duplexsynth worker` processes through BullMQ on this Redis (redis://HOST:PORT/DB; or queue: in the config); see README "Running on many machines"',
    )
    .option(
      '--give-up-seconds <n>',
      'with --queue: how long Redis may be away before the build stops (exit code 4)',
      positiveInteger,
    )
    .action(build);

  program
    .command('worker')
    .description(
      "take the jobs of a queued build (build --queue) and run them; the same config as the build, with this machine's endpoints and cache mount",
    )
    .option('--queue <url>', "the Redis of the build (redis://HOST:PORT/DB; default: the config's queue:)")
    .option('-c, --config <file>', 'YAML build configuration (default: the built-in offline demo config)')
    .option('--corpus <path>', 'as for build')
    .option('--seed <n>', 'as for build', nonNegativeInteger)
    .option('--concurrency <n>', 'jobs at once (more keep remote speech servers busy)', positiveInteger, 1)
    .option(
      '--stalled-seconds <n>',
      "a killed worker's job goes back to the queue after this long (BullMQ lock duration)",
      positiveInteger,
      30,
    )
    .option(
      '--rate-limit <jobs/seconds>',
      'at most this many dialogue jobs started per interval over all workers (BullMQ rate limiter), e.g. 60/60',
    )
    .option('--name <name>', "this worker's name in progress and status (default HOST:PID)")
    .option('--max-jobs <n>', 'stop after this many jobs', positiveInteger)
    .option('-q, --quiet', 'no progress lines')
    .action(worker);

  addBuildOptions(
    program
      .command('demo')
      .description('build the English and Japanese demo datasets offline (the built-in default config)'),
  ).action(build);

  program
    .command('annotate')
    .description('print the benchmark events JSONL line for a word-alignment (txt_align) file')
    .requiredOption('--alignment <file>', 'txt_align file: channel<TAB>start<TAB>end<TAB>word')
    .requiredOption('--id <id>', 'dialogue id to write in the line')
    .action(async (options: { alignment: string; id: string }) => {
      const { annotateAlignmentFile } = await import('../pipeline/events/index.ts');
      console.log(await annotateAlignmentFile(options.alignment, options.id));
    });

  program
    .command('verify')
    .description(
      'check a written dataset: every file against the sha256 in its manifest.json, then re-derive the events from its txt_align files and its audio, and compare',
    )
    .argument('<dataset-dir>', 'folder data/{lang}/task/{dataset}')
    .option('--quick', 'check the files against manifest.json only (no event re-derivation)')
    .action(async (directory: string, options: { quick?: boolean }) => {
      const [{ verifyDatasetIntegrity }, { verifyDataset }, { formatEvaluableEventsMarkdown }] = await Promise.all([
        import('../pipeline/run/dataset-integrity.ts'),
        import('../pipeline/run/verify-dataset.ts'),
        import('../pipeline/events/evaluable-events.ts'),
      ]);
      // integrity first (pipeline/run/dataset-integrity.ts): missing, changed and unlisted files
      const integrity = await verifyDatasetIntegrity(directory);
      for (const note of integrity.notes) console.error(`note: ${note}`);
      for (const problem of integrity.problems) console.error(problem);
      if (options.quick) {
        console.log(
          `${integrity.filesChecked} files checked against manifest.json, ${integrity.problems.length} problems`,
        );
        if (integrity.problems.length > 0) process.exitCode = 1;
        return;
      }
      const result = await verifyDataset(directory);
      for (const problem of result.problems) console.error(problem);
      const problems = integrity.problems.length + result.problems.length;
      console.log(formatEvaluableEventsMarkdown(`Evaluable events: ${directory}`, result.evaluableEvents));
      console.log(
        `${integrity.filesChecked} files checked against manifest.json, ${result.dialogues} dialogues checked, ${problems} problems`,
      );
      if (problems > 0) process.exitCode = 1;
    });

  program
    .command('schema')
    .description('write the JSON Schema of the build configuration (and, beside it, of a language pack file)')
    .option('--out <file>', 'output file', path.join(PACKAGE_ROOT, 'pipeline', 'config.schema.json'))
    .action(async (options: { out: string }) => {
      const [{ configJsonSchema }, { languagePackJsonSchema }] = await Promise.all([
        import('../pipeline/config.ts'),
        import('../pipeline/model/language-pack.ts'),
      ]);
      await writeFile(options.out, `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
      console.log(options.out);
      const packSchema = path.join(path.dirname(options.out), 'language-pack.schema.json');
      await writeFile(packSchema, `${JSON.stringify(languagePackJsonSchema(), null, 2)}\n`);
      console.log(packSchema);
    });

  program
    .command('bench')
    .description('time each stage of a 20-dialogue English build of the real corpus (see README)')
    .option('--corpus <path>', 'TopiOCQA JSON (default: ../shared/corpora/topiocqa/topiocqa_dev.json)')
    .option('--limit <n>', 'dialogues', positiveInteger, 20)
    .addOption(
      new Option('--sections <name...>', 'only these sections (default: all, in this order)').choices([
        'queue',
        'build',
        'saturation',
        'memory',
        'dryrun',
        'vad',
        'dnsmos',
        'chat-scoring',
        'llm',
        'tts',
        'cli',
        'tests',
      ]),
    )
    .action(async (options: { corpus?: string; limit: number; sections?: string[] }) => {
      const { runBenchmarks } = await import('./bench.ts');
      await runBenchmarks(options);
    });

  registerQualityCommands(program);
  registerMeasureCommand(program);
  registerExportCommand(program);
  registerReportCommand(program);
  registerStatusCommand(program);
  registerPromptsCommand(program);
  registerChatCommand(program);
  return program;
}

/**
 * Run the CLI. Every failure, of any command, ends in this one handler: a one-line reason on stderr
 * (API keys redacted), no stack trace unless `DUPLEXSYNTH_DEBUG` is set, and the exit code the error
 * asks for (pipeline/model/build-errors.ts `EXIT_CODES`: 2 bad input, 4 build stopped before committing,
 * 5 an error that escaped, i.e. a bug). Errors escaping from timers or callbacks (uncaught exceptions,
 * unhandled rejections) are caught the same way and end the process at once.
 */
export async function main(argv: string[]): Promise<void> {
  const escaped = (error: unknown) => {
    report(error, EXIT_CODES.internalError, 'internal error (please report it): ');
    process.exit(EXIT_CODES.internalError);
  };
  process.on('uncaughtException', escaped);
  process.on('unhandledRejection', escaped);
  // fewer full garbage collections started by audio buffers (pipeline/run/heap-growth.ts)
  widenHeapGrowth();
  // fewer optimizing compilations of code a build runs anew for each dialogue (pipeline/run/optimization-budget.ts)
  raiseOptimizationBudget();
  try {
    await createProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander printed the usage problem already; --help and --version end here too
      process.exitCode = error.exitCode === 0 ? EXIT_CODES.done : EXIT_CODES.badInput;
      return;
    }
    report(error, exitCodeOf(error));
    // a build whose lock was lost must not keep writing in the background
    if (error instanceof LockLostError) process.exit(exitCodeOf(error));
  }
}

/**
 * Node's raw file-system error (`EISDIR: illegal operation on a directory, open '…'`) that reached
 * the handler, in words naming its path and what to do (pipeline/storage/file-system-errors.ts), or
 * undefined for any other error.
 */
function fileSystemErrorInWords(error: unknown): string | undefined {
  const file = (error as { path?: unknown } | null)?.path;
  if (!(error instanceof Error) || typeof file !== 'string' || !isRawFileSystemMessage(error.message)) return undefined;
  return describeFileSystemError(error, file);
}

/** Print `duplexsynth: <first line>` (redacted), the stack with DUPLEXSYNTH_DEBUG, and set the exit code. */
function report(error: unknown, exitCode: number, prefix = ''): void {
  const message = fileSystemErrorInWords(error) ?? (error instanceof Error ? error.message : String(error));
  // with --json the summary event named the cause already, as the last line
  if (!causeReportedAsJson(error)) console.error(redactSecrets(`duplexsynth: ${prefix}${message.split('\n')[0]}`));
  if (process.env.DUPLEXSYNTH_DEBUG && error instanceof Error && error.stack) console.error(redactSecrets(error.stack));
  process.exitCode = exitCode;
}
