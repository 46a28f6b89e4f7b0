import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The end-to-end files: whole builds (offline engines, loopback services, DNSMOS scoring), the CLI as
 * a child process, headless Chromium. They wait on child processes, fsync and loopback servers as much
 * as they compute, so they run in their own project (forked processes) beside the unit project
 * (worker threads): vitest runs each pool at once, so the unit files fill the time the end-to-end
 * files spend waiting instead of queueing behind them in one worker (vitest's default on 2 cores).
 * Each pool sorts its files slowest first by the durations of the previous run (by size without one),
 * except {@link START_FIRST}.
 */
export const END_TO_END_FILES = [
  'pipeline/orchestration/build.test.ts',
  'pipeline/orchestration/build-fresh-cache.test.ts',
  'pipeline/orchestration/build-input.test.ts',
  'pipeline/orchestration/build-failures.test.ts',
  'pipeline/orchestration/build-saturation.test.ts',
  'pipeline/orchestration/demo-data-digest.test.ts',
  'pipeline/orchestration/plan-build.test.ts',
  'pipeline/orchestration/queue-refusals.test.ts',
  'pipeline/run/build-services.test.ts',
  'pipeline/orchestration/build-speech-recognition.test.ts',
  'pipeline/orchestration/build-speech-length.test.ts',
  'pipeline/orchestration/queued-build-speech-recognition.test.ts',
  'pipeline/run/build-redaction.test.ts',
  'pipeline/run/output-checks.test.ts',
  'pipeline/run/build-space-estimate.test.ts',
  'pipeline/report/report.test.ts',
  'stages/score-quality.test.ts',
  'stages/synthesize-speech.test.ts',
  'scripts/commands/chat.test.ts',
  'scripts/commands/prompts.test.ts',
  'scripts/commands/prompts-untranscribed.test.ts',
  'scripts/commands/chat-real.test.ts',
  'scripts/cli.test.ts',
  'scripts/built-in-packs.test.ts',
  'scripts/newcomer-languages.test.ts',
  'scripts/cli-schema-version.test.ts',
  'scripts/examples.test.ts',
  'corpora/demo/demo-recordings.test.ts',
  'pipeline/export/export-consumers.test.ts',
  'pipeline/export/contained-paths.test.ts',
  'pipeline/export/hostile-audio.test.ts',
  'pipeline/export/export-stop.test.ts',
  'scripts/stop-signals.test.ts',
  'scripts/stop-signals-queued.test.ts',
  'scripts/stop-signals-ending.test.ts',
  'pipeline/run/foreign-backup-build.test.ts',
  'pipeline/orchestration/benchmark-dimensions-build.test.ts',
];

/**
 * Files started before all others, whatever vitest's order: pipeline/orchestration/build.test.ts makes
 * the run's shared demo build (pipeline/orchestration/testing/shared-build.ts, about 380 CPU s: the
 * longest chain of the suite), which build-fresh-cache.test.ts then compares with. By size, the order
 * without durations of an earlier run (a fresh checkout), it came fourth, after files of a minute or two.
 */
export const START_FIRST = ['pipeline/orchestration/build.test.ts'];

/** vitest's order ({@link BaseSequencer}: failed, then slowest, then largest first) with {@link START_FIRST} ahead. */
class StartFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const first = (file: TestSpecification) =>
      START_FIRST.includes(path.relative(file.project.config.root, file.moduleId).split(path.sep).join('/'));
    return [...sorted.filter(first), ...sorted.filter((file) => !first(file))];
  }
}

/**
 * `DUPLEXSYNTH_TEST_SERIAL=1`: every file in one worker process, one after another (vitest's default
 * on a 2-core machine, and the set-up before the two projects): the baseline of `npm run bench`'s
 * `tests` section.
 */
const serial = process.env.DUPLEXSYNTH_TEST_SERIAL === '1';

/**
 * `DUPLEXSYNTH_TEST_ISOLATE=1`: each unit file gets a fresh module graph again (vitest's default), to
 * tell whether a failure comes from state another file left behind.
 */
const isolated = serial || process.env.DUPLEXSYNTH_TEST_ISOLATE === '1';

export default defineConfig({
  test: {
    // A test or hook that runs longer than this is hung. The slowest ordinary tests (a CLI build of a
    // few dialogues, the kill -9 trial, a real-corpus build) take under 20 s alone and up to about a
    // minute on a loaded machine, and about twice that while another end-to-end file runs beside them
    // (the real-corpus build took 180 s at load 35, 2 December). The few longer ones (cold demo builds
    // with quality scoring: pipeline/orchestration/build.test.ts, build-fresh-cache.test.ts) give their
    // own timeout next to the test, with the reason.
    sequence: { sequencer: StartFirstSequencer },
    testTimeout: 360_000,
    hookTimeout: 360_000,
    // two end-to-end processes and two unit threads at once on 2 cores: the end-to-end files wait more than they compute.
    // The minimum is the maximum: each file gets a new worker (isolation), and tinypool (vitest 3.2's
    // pool) replaces a finished one only up to the minimum, or while more files wait than workers run;
    // with a minimum of 1, the last file waiting stayed queued behind a long one still running instead of
    // taking the free slot (seen 2 December: build-fresh-cache.test.ts waited for build.test.ts after
    // build-input.test.ts ended; tinypool/dist/index.js _ensureEnoughWorkersForTaskQueue).
    poolOptions: serial
      ? { forks: { maxForks: 1, minForks: 1 } }
      : { forks: { maxForks: 2, minForks: 2 }, threads: { maxThreads: 2, minThreads: 2, isolate: isolated } },
    projects: [
      {
        extends: true,
        // one folder per run for the builds several files share (pipeline/orchestration/testing/shared-build.ts)
        test: {
          name: 'end-to-end',
          include: END_TO_END_FILES,
          pool: 'forks',
          globalSetup: ['pipeline/orchestration/testing/shared-build-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['pipeline/**/*.test.ts', 'stages/**/*.test.ts', 'corpora/**/*.test.ts', 'scripts/**/*.test.ts'],
          exclude: END_TO_END_FILES,
          pool: serial ? 'forks' : 'threads',
          // The unit files share each worker thread's loaded modules (poolOptions.threads.isolate: false)
          // instead of loading the graph again for each of some 110 files: the unit project alone took
          // 201 s wall and 356 CPU s, against 310 s and 462 CPU s isolated (3 December, the latter with
          // other work beside it); this setup file resets what a file can leave behind in a module
          // (language packs, redaction keys, stubbed environment, fake timers) before each file. Passed
          // in vitest's order and with the files shuffled (--sequence.shuffle.files --sequence.seed=11).
          setupFiles: isolated ? [] : ['pipeline/testing/between-files.ts'],
        },
      },
    ],
  },
});
