import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['pipeline/**/*.test.ts', 'stages/**/*.test.ts', 'corpora/**/*.test.ts', 'scripts/**/*.test.ts'],
    // A test or hook that runs longer than this is hung. The slowest ordinary tests (a CLI build of a
    // few dialogues, the kill -9 trial, a real-corpus build) take under 20 s alone and up to about a
    // minute on a loaded machine. The few longer ones (cold demo builds with quality scoring,
    // pipeline/orchestration/build.test.ts) give their own timeout next to the test, with the reason.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
  },
});
