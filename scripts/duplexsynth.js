#!/usr/bin/env node
// Entry point of the `duplexsynth` command: runs the compiled code in dist/ (`npm run build`; `npm run
// demo` and `npm test` build it when it is missing or stale), so nothing is compiled at start and the
// types were checked when it was built. A dist/ that is not a build of the sources as they are now is
// refused (exit code 2) instead of run. From the sources through tsx: scripts/duplexsynth-dev.js.
import { stopWhileStarting } from './starting-signals.js';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

// a signal while the modules load ends the command with one line (./starting-signals.js)
const started = stopWhileStarting(process.argv);

// loaded after the handler above (static imports would load first)
const { PROJECT_ROOT, distState } = await import('./build-dist.js');
const state = distState();
if (!state.fresh) {
  console.error(
    `duplexsynth: ${state.reason}: run \`npm run build\` first (or \`npm run dev -- ...\` to run the sources through tsx)`,
  );
  process.exit(2);
}
const { main } = await import(pathToFileURL(path.join(PROJECT_ROOT, 'dist', 'scripts', 'cli.js')).href);
// main installs its own stop path before its first await
started();
await main(process.argv);
