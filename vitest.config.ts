import { defineConfig } from 'vitest/config';

/**
 * The end-to-end files: whole builds (offline engines, loopback services, DNSMOS scoring), the CLI as
 * a child process, headless Chromium. They wait on child processes, fsync and loopback servers as much
 * as they compute, so they run in their own project (forked processes) beside the unit project
 * (worker threads): vitest runs each pool at once, so the unit files fill the time the end-to-end
 * files spend waiting instead of queueing behind them in one worker (vitest's default on 2 cores).
 * Each pool sorts its files slowest first by the durations of the previous run.
 */
export const END_TO_END_FILES = [
  'pipeline/orchestration/build.test.ts',
  'pipeline/orchestration/build-failures.test.ts',
  'pipeline/orchestration/build-saturation.test.ts',
  'pipeline/orchestration/plan-build.test.ts',
  'pipeline/run/build-services.test.ts',
  'pipeline/run/build-redaction.test.ts',
  'pipeline/run/output-checks.test.ts',
  'pipeline/report/report.test.ts',
  'stages/score-quality.test.ts',
  'stages/synthesize-speech.test.ts',
  'scripts/commands/chat.test.ts',
  'scripts/commands/prompts.test.ts',
  'scripts/commands/prompts-untranscribed.test.ts',
  'scripts/commands/chat-real.test.ts',
  'scripts/cli.test.ts',
  'scripts/cli-schema-version.test.ts',
  'corpora/demo/demo-recordings.test.ts',
  'pipeline/export/export-consumers.test.ts',
];

/**
 * `DUPLEXSYNTH_TEST_SERIAL=1`: every file in one worker process, one after another (vitest's default
 * on a 2-core machine, and the set-up before the two projects): the baseline of `npm run bench`'s
 * `tests` section.
 */
const serial = process.env.DUPLEXSYNTH_TEST_SERIAL === '1';

export default defineConfig({
  test: {
    // A test or hook that runs longer than this is hung. The slowest ordinary tests (a CLI build of a
    // few dialogues, the kill -9 trial, a real-corpus build) take under 20 s alone and up to about a
    // minute on a loaded machine, and about twice that while another end-to-end file runs beside them
    // (the real-corpus build took 180 s at load 35, 2 December). The few longer ones (cold demo builds
    // with quality scoring, pipeline/orchestration/build.test.ts) give their own timeout next to the
    // test, with the reason.
    testTimeout: 360_000,
    hookTimeout: 360_000,
    // two end-to-end processes and two unit threads at once on 2 cores: the end-to-end files wait more than they compute
    poolOptions: serial ? { forks: { maxForks: 1, minForks: 1 } } : { forks: { maxForks: 2, minForks: 1 }, threads: { maxThreads: 2, minThreads: 1 } },
    projects: [
      {
        extends: true,
        // one folder per run for the builds several files share (pipeline/orchestration/testing/shared-build.ts)
        test: { name: 'end-to-end', include: END_TO_END_FILES, pool: 'forks', globalSetup: ['pipeline/orchestration/testing/shared-build-setup.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['pipeline/**/*.test.ts', 'stages/**/*.test.ts', 'corpora/**/*.test.ts', 'scripts/**/*.test.ts'],
          exclude: END_TO_END_FILES,
          pool: serial ? 'forks' : 'threads',
        },
      },
    ],
  },
});
