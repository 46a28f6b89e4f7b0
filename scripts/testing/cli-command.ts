/**
 * The `duplexsynth` command as the tests run it in a child process, started the cheapest way that runs
 * the current sources.
 *
 * `npm test` compiles the sources to dist/ before vitest starts (its pretest step,
 * scripts/ensure-node-modules.js), so the tests spawn the compiled command, scripts/duplexsynth.js, as
 * users run it: it starts without a TypeScript loader, about 1.4 CPU s less per process than the
 * sources through tsx (a worker start: 1.6 against 3.0 CPU s), and a run of
 * the suite starts it 67 times. Where dist/ is missing or is not a build of the sources as they are
 * now (`npx vitest run FILE` after an edit), the tests run the sources through tsx
 * (scripts/duplexsynth-dev.js) instead, so a test never runs code older than the sources.
 *
 * Chosen once, when this module loads (scripts/build-dist.js `distState`: a SHA-256 over the sources,
 * a few tens of milliseconds). A source edited while the tests run makes the compiled command refuse
 * to start (exit code 2, one line saying dist/ is stale), never run old code.
 */
import path from 'node:path';
import { distState, PROJECT_ROOT } from '../build-dist.js';

/** Whether the tests run the compiled command (dist/ is a build of the sources as they are now). */
export const TEST_CLI_COMPILED: boolean = distState().fresh;

/**
 * Absolute path of the script to run with `node` (process.execPath): scripts/duplexsynth.js (the
 * compiled command) when {@link TEST_CLI_COMPILED}, else scripts/duplexsynth-dev.js (the sources
 * through tsx). Arguments follow it as on the command line.
 */
export const TEST_CLI: string = path.join(
  PROJECT_ROOT,
  'scripts',
  TEST_CLI_COMPILED ? 'duplexsynth.js' : 'duplexsynth-dev.js',
);
