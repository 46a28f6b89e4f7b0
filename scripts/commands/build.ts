/**
 * What `duplexsynth build`, `demo` and `worker` do when they run: load the build config with the
 * command-line overrides (./build-config.ts), then run the build in this process, spread it over
 * queue workers, or serve a queued build's jobs. The pipeline loads when a command runs, so the CLI
 * starts fast.
 */
import { EXIT_CODES, BuildInputError, exitCodeOf } from '../../pipeline/model/build-errors.ts';
import { createProgressDisplay, failureOutcome, progressModeFor } from '../../pipeline/run/progress.ts';
import { runStoppable, type StopScope } from '../../pipeline/run/stop-signals.ts';
import { configModules, loadBuildConfig, type BuildOptions } from './build-config.ts';

/**
 * `duplexsynth build` and `demo`: with `--dry-run` the plan (text, or JSON with `--json`) on standard
 * output; else the build, progress on standard error, then the paths of `summary.md` and the report on
 * standard output. Sets exit code 3 when some dialogues failed.
 * @throws the build's errors (scripts/cli.ts reports them with their exit code)
 */
export async function build(options: BuildOptions): Promise<void> {
  await runStoppable('build', 'nothing committed; run the build again to continue from the cache', (scope) =>
    buildStoppable(options, scope),
  );
}

/** {@link build} under the stop path (pipeline/run/stop-signals.ts). */
async function buildStoppable(options: BuildOptions, scope: StopScope): Promise<void> {
  const modules = await configModules();
  if (options.dryRun) {
    const config = await loadBuildConfig(options, modules);
    // what the build would do; no service is called and nothing is written (pipeline/orchestration/plan-build.ts)
    const { formatBuildPlan, planBuild } = await import('../../pipeline/orchestration/plan-build.ts');
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
  const committed = (rest: string) =>
    kept.length === 0 ? `nothing committed; ${rest}` : `kept ${kept.join(', ')}; ${rest}`;
  scope.keep(() => committed('run the build again to continue from the cache'));
  scope.onStop(display.stop);
  let queue: string | null = null;
  try {
    const config = await loadBuildConfig(options, modules);
    // --queue, else the config's `queue:`
    queue = options.queue ?? config.queue ?? null;
    if (queue) {
      // a signal while a queued build waits for its workers stops the wait: the jobs stay queued, `build` again continues them
      scope.cooperative = true;
      const queueName = queue;
      scope.keep(() => committed(`the jobs stay queued on ${queueName}; run the same build again to continue`));
      const { runQueuedBuild } = await import('../../pipeline/orchestration/queued-build.ts');
      report = await runQueuedBuild(config, {
        queue,
        log: display.log,
        progress: display.progress,
        allowShrink: options.allowShrink === true,
        signal: scope.signal,
        kept: keep,
        ...(options.giveUpSeconds !== undefined ? { giveUpSeconds: options.giveUpSeconds } : {}),
        ...(options.idleSeconds !== undefined ? { idleSeconds: options.idleSeconds } : {}),
      });
    } else {
      const { runBuild } = await import('../../pipeline/orchestration/build.ts');
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

/** The options of `worker` (commander's attribute names). */
export interface WorkerOptions {
  queue?: string;
  config?: string;
  corpus?: string;
  corpusLanguage?: string;
  seed?: number;
  concurrency: number;
  stalledSeconds: number;
  rateLimit?: string;
  name?: string;
  maxJobs?: number;
  quiet?: boolean;
  plain?: boolean;
  json?: boolean;
}

/**
 * `duplexsynth worker`: serve a queued build until Ctrl-C (pipeline/orchestration/queue-worker.ts).
 * @throws BuildInputError when no queue is given or configured, or `--rate-limit` is not JOBS/SECONDS
 */
export async function worker(options: WorkerOptions): Promise<void> {
  const modules = await configModules();
  const overrides = {
    ...(options.config ? { config: options.config } : {}),
    ...(options.corpus ? { corpus: options.corpus } : {}),
    ...(options.corpusLanguage ? { corpusLanguage: options.corpusLanguage } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
  };
  const config = await loadBuildConfig(overrides, modules);
  const queue = options.queue ?? config.queue;
  if (!queue)
    throw new BuildInputError(
      `worker: no queue to serve: pass --queue redis://HOST:PORT/DB or set queue: in ${options.config ?? 'the config'}`,
    );
  const { runQueueWorker } = await import('../../pipeline/orchestration/queue-worker.ts');
  let rateLimit: { jobs: number; seconds: number } | null = null;
  if (options.rateLimit) {
    const match = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(options.rateLimit);
    if (!match || Number(match[1]) === 0 || Number(match[2]) === 0)
      throw new BuildInputError(`--rate-limit ${options.rateLimit}: give JOBS/SECONDS, e.g. 60/60`);
    rateLimit = { jobs: Number(match[1]), seconds: Number(match[2]) };
  }
  // ioredis reconnect timers may outlive the worker (a server that is not Redis, Redis away): end within 2 s of its end
  const exitSoon = () => setTimeout(() => process.exit(), 2000).unref();
  // the worker's lines: none with -q, JSON log events with --json, plain lines otherwise (it draws no bars)
  const display = createProgressDisplay(progressModeFor({ ...options, plain: true }, process.stderr));
  // a signal stops the worker at its next step (pipeline/run/stop-signals.ts): the jobs it had not finished stay on the queue
  await runStoppable(
    'worker',
    `the jobs it had not finished stay queued on ${queue} for another worker`,
    (scope) =>
      runQueueWorker(config, {
        queue,
        concurrency: options.concurrency,
        stalledSeconds: options.stalledSeconds,
        rateLimit,
        ...(options.name ? { name: options.name } : {}),
        ...(options.maxJobs ? { maximumJobs: options.maxJobs } : {}),
        log: (line) => display.log(line),
        signal: scope.signal,
      }),
    { cooperative: true },
  ).finally(exitSoon);
}
