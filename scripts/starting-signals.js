// The stop of a command while its modules load, before the command's own stop path
// (pipeline/run/stop-signals.ts) is set: one line and the shells' exit code, 128 + the signal's
// number. Imported first by both entry points (scripts/duplexsynth.js, scripts/duplexsynth-dev.js),
// which load everything else after it; it has no imports of its own besides node:os.
import os from 'node:os';

const STARTING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Sets the handler for SIGINT, SIGTERM and SIGHUP while the command starts.
 * @param {string[]} argv the process's arguments (the command is the first that is not an option)
 * @returns {() => void} removes the handler; call it just before the command's main sets its own
 */
export function stopWhileStarting(argv) {
  const command = argv.slice(2).find((argument) => !argument.startsWith('-')) ?? 'duplexsynth';
  const listener = (signal) => {
    process.stderr.write(`duplexsynth: ${command} stopped by ${signal}; nothing was written: it was still starting\n`);
    process.exit(128 + os.constants.signals[signal]);
  };
  for (const signal of STARTING_SIGNALS) process.on(signal, listener);
  return () => {
    for (const signal of STARTING_SIGNALS) process.removeListener(signal, listener);
  };
}
