/**
 * The options of `duplexsynth build`, `demo` and `worker` (their code: ./build.ts, loaded when a
 * command runs, so the CLI starts fast).
 */
import { Command, Option } from 'commander';
import { DEFAULT_SPLIT_UNIT, SPLIT_UNITS } from '../../pipeline/model/split-report.ts';
import { dnsmosHop, languageCode, nonNegativeInteger, positiveInteger, positiveNumber } from './option-parsers.ts';
import { addLanguageOption } from './language-option.ts';
import { addOutputOptions } from './output-options.ts';
import type { BuildOptions } from './build-config.ts';
import type { WorkerOptions } from './build.ts';

/** The options `build` and `demo` share. @returns the command, for chaining */
function addBuildOptions(command: Command): Command {
  command
    .option('-c, --config <file>', 'YAML build configuration (default: the built-in offline demo config)')
    .option('--corpus <path>', 'TopiOCQA raw-release JSON to read instead of the configured corpus')
    .option(
      '--corpus-language <code>',
      "the language the corpus is written in (corpus.language; default en): it is built without translation, its numbers spelled by its language pack's number library",
      languageCode,
    )
    .option('--limit <n>', 'only the first N conversations', positiveInteger);
  addLanguageOption(command, 'languages to build (BCP-47 codes such as en, ja, zh, de)', { variadic: true });
  command
    .option('--language-pack <file...>', 'language pack YAML files adding languages (docs/languages.md)')
    .option(
      '--out <dir>',
      'output folder (the cache goes beside it, {out}/../.cache, unless the --config file sets output.cacheDirectory)',
    )
    .option(
      '--no-score',
      'skip quality scoring and the test/test_other split (scoring is on unless the --config file sets quality.enabled: false)',
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
    );
  addOutputOptions(
    command,
    'progress as JSON lines on standard error, each with a level, the last a summary (with --dry-run: the plan as JSON on standard output)',
  );
  return command.option(
    '--dry-run',
    'print what the build would do (dialogues, utterances, service requests, cache hits) without calling any service or writing anything',
  );
}

/**
 * Adds `build`, `worker` and `demo` to a commander program. `build` and `demo` print the paths of
 * `summary.md` and the report; exit code 3 when some dialogues failed.
 */
export function registerBuildCommands(program: Command): void {
  addBuildOptions(program.command('build').description('run the whole pipeline and write the datasets'))
    .option(
      '--queue <url>',
      'spread the build over `duplexsynth worker` processes through BullMQ on this Redis (redis://HOST:PORT/DB; or queue: in the config); see docs/scale-out.md',
    )
    .option(
      '--give-up-seconds <n>',
      'with --queue: how long Redis may be away, or jobs wait past --idle-seconds with no worker taking one, before the build stops (exit code 4)',
      positiveInteger,
    )
    .option(
      '--idle-seconds <n>',
      'with --queue: how long jobs may wait with no worker taking one before the build says so, once a minute (default 300)',
      positiveInteger,
    )
    .action(async (options: BuildOptions) => (await import('./build.ts')).build(options));

  const worker = program
    .command('worker')
    .description(
      "take the jobs of a queued build (build --queue) and run them; the same config as the build, with this machine's endpoints and cache mount",
    )
    .option('--queue <url>', "the Redis of the build (redis://HOST:PORT/DB; default: the config's queue:)")
    .option('-c, --config <file>', 'YAML build configuration (default: the built-in offline demo config)')
    .option('--corpus <path>', 'as for build')
    .option('--corpus-language <code>', 'as for build', languageCode)
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
    .option('--max-jobs <n>', 'stop after this many jobs', positiveInteger);
  addOutputOptions(worker, 'progress as JSON lines (each with a level) on standard error').action(
    async (options: WorkerOptions) => (await import('./build.ts')).worker(options),
  );

  addBuildOptions(
    program
      .command('demo')
      .description('build the English and Japanese demo datasets offline (the built-in default config)'),
  ).action(async (options: BuildOptions) => (await import('./build.ts')).build(options));
}
