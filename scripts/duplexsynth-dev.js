#!/usr/bin/env node
// The `duplexsynth` command from the TypeScript sources through tsx's loader, for development and
// tests (`npm run dev -- ARGS`, the tests' CLI): no build step, every source change seen at once.
// The installed command (scripts/duplexsynth.js) runs the compiled dist/ instead.
import os from 'node:os';

// a signal while the modules load (before the command's own stop path is set) ends it with one
// line and the shells' exit code, 128 + the signal's number (pipeline/run/stop-signals.ts)
const STARTING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const startingCommand = process.argv.slice(2).find((argument) => !argument.startsWith('-')) ?? 'duplexsynth';
const stoppedWhileStarting = (signal) => {
  process.stderr.write(
    `duplexsynth: ${startingCommand} stopped by ${signal}; nothing was written: it was still starting\n`,
  );
  process.exit(128 + os.constants.signals[signal]);
};
for (const signal of STARTING_SIGNALS) process.on(signal, stoppedWhileStarting);

// loaded after the handler above (static imports would load first)
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('./cli.ts');
// main installs its own stop path before its first await
for (const signal of STARTING_SIGNALS) process.removeListener(signal, stoppedWhileStarting);
await main(process.argv);
