/**
 * The one stop path of every long command: SIGINT (Ctrl-C), SIGTERM (kill, systemd, docker stop,
 * Slurm) and SIGHUP (a closed terminal) end `build`, `worker`, `export`, `report`, `score`, `split`,
 * `verify`, `measure` and `prompts` the same way:
 *
 * - what the command registered to undo is undone, synchronously, in the signal's handler: the
 *   `.partial` files and folders it made are removed, the files it was replacing are put back, the
 *   folders it created are removed when they are left empty;
 * - one line on standard error: `duplexsynth: {command} stopped by {signal}; {what is kept}`;
 * - exit code 128 + the signal's number (130 SIGINT, 143 SIGTERM, 129 SIGHUP), as a shell reports a
 *   process the signal ended.
 *
 * A command whose work watches an AbortSignal (`cooperative`: the queued coordinator, the worker)
 * is asked to stop first and ends the same way once its work has settled; a second signal ends it
 * at once. Every other command ends at once: its undo runs before any more of its code can.
 *
 * Code deep in a command registers what a stop must undo through {@link currentStopScope}, so the
 * command's own file does not need to know every `.partial` its pipeline makes.
 */
import { readdirSync, rmdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { redactSecrets } from '../storage/redact.ts';

/** The signals that stop a long command. */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** The signals {@link runStoppable} handles. */
export const STOP_SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Exit code per signal: 128 + the signal's number (SIGHUP 1, SIGINT 2, SIGTERM 15), the shells' convention. */
export const STOP_EXIT_CODES: Readonly<Record<StopSignal, number>> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

/** What a stopped command undoes and says; filled by the command and by the code it runs. */
export class StopScope {
  /** Aborted at the first signal (its `reason` is the signal's name). */
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly undo = new Map<number, () => void>();
  private nextAction = 0;
  private keptText: () => string;
  /** The work watches {@link signal}: a first signal waits for it to settle (set by the work once it knows). */
  cooperative = false;

  /**
   * @param command the command's name, first in the line (`export`, `build`)
   * @param kept what a stop keeps, for the line (`nothing was written`); {@link keep} replaces it
   */
  constructor(
    readonly command: string,
    kept: string,
  ) {
    this.signal = this.controller.signal;
    this.keptText = () => kept;
  }

  /** The signal that stopped the command, or null while it runs. */
  get stoppedBy(): StopSignal | null {
    return this.signal.aborted ? (this.signal.reason as StopSignal) : null;
  }

  /**
   * Sets what the line says is kept (evaluated when the stop happens).
   * @returns a function that sets it back to what it was
   */
  keep(text: string | (() => string)): () => void {
    const previous = this.keptText;
    this.keptText = typeof text === 'string' ? () => text : text;
    return () => {
      if (!this.signal.aborted) this.keptText = previous;
    };
  }

  /**
   * Registers a synchronous undo action, run at a stop, latest first.
   * @returns a function that withdraws it (once the work it undoes is committed); after a signal it
   *   does nothing, so a cooperative command's undo still runs when its work has unwound
   */
  onStop(action: () => void): () => void {
    const key = this.nextAction++;
    this.undo.set(key, action);
    return () => {
      if (!this.signal.aborted) this.undo.delete(key);
    };
  }

  /** Registers `target` (a `.partial` file or folder this run made) for removal at a stop; returns the withdrawal. */
  removeOnStop(target: string): () => void {
    return this.onStop(() => rmSync(target, { recursive: true, force: true }));
  }

  /**
   * Registers the folders this run created for removal at a stop when they hold nothing but empty
   * folders: `folder` and its parents up to `createdFrom` (an outermostMissingFolder taken before
   * anything was made; null when `folder` existed: then nothing is removed).
   */
  removeCreatedFoldersOnStop(folder: string, createdFrom: string | null): () => void {
    return this.onStop(() => {
      if (createdFrom !== null) removeEmptyChain(path.resolve(folder), path.resolve(createdFrom));
    });
  }

  /** Starts the stop: aborts {@link signal} with the signal's name. */
  request(signal: StopSignal): void {
    this.controller.abort(signal);
  }

  /** Runs every undo action (latest first; one that throws does not keep the others from running). */
  undoAll(): void {
    for (const key of [...this.undo.keys()].reverse()) {
      try {
        this.undo.get(key)!();
      } catch {
        // a file already gone or not removable: the line still comes, the others still run
      }
    }
    this.undo.clear();
  }

  /** The line of a stop by `signal`. */
  line(signal: StopSignal): string {
    return redactSecrets(`duplexsynth: ${this.command} stopped by ${signal}; ${this.keptText()}`);
  }
}

let current: StopScope | null = null;

/** The scope of the command running in this process, or null (a test calling the pipeline directly). */
export function currentStopScope(): StopScope | null {
  return current;
}

/**
 * Runs a command's work with the stop path installed (see the file header), then removes it.
 * @param command the command's name for the line
 * @param kept what a stop keeps, for the line (the work may change it: {@link StopScope.keep})
 * @param work the command's work; given the scope (its `signal` for cooperative work)
 * @param options `cooperative`: the work watches `scope.signal`; a stop waits for it to settle
 * @returns what `work` returns when no signal came; after a signal the process exits with
 *   {@link STOP_EXIT_CODES} and this never settles
 * @throws whatever `work` throws when no signal came
 */
export async function runStoppable<T>(
  command: string,
  kept: string,
  work: (scope: StopScope) => Promise<T>,
  options: { cooperative?: boolean } = {},
): Promise<T> {
  const scope = new StopScope(command, kept);
  scope.cooperative = options.cooperative === true;
  const outer = current;
  current = scope;
  const stopNow = (signal: StopSignal): never => {
    scope.undoAll();
    process.stderr.write(`${scope.line(signal)}\n`);
    process.exit(STOP_EXIT_CODES[signal]);
  };
  // `on`, not `once`: proper-lockfile's signal-exit re-raises a signal when it finds itself the only
  // listener (then the process would die before the line), and a `once` listener is removed first
  const listener = (signal: NodeJS.Signals) => {
    const stop = signal as StopSignal;
    if (!scope.cooperative || scope.stoppedBy !== null) stopNow(scope.stoppedBy ?? stop);
    scope.request(stop);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, listener);
  try {
    const result = await work(scope);
    if (scope.stoppedBy !== null) stopNow(scope.stoppedBy);
    return result;
  } catch (error) {
    if (scope.stoppedBy !== null) stopNow(scope.stoppedBy);
    throw error;
  } finally {
    for (const signal of STOP_SIGNALS) process.removeListener(signal, listener);
    current = outer;
  }
}

/**
 * Installs, for the whole process, the stop of a command outside {@link runStoppable}: a signal while
 * the command starts (its code loading) or after its work (printing its result) ends it with the same
 * kind of line and exit code, `duplexsynth: {command} stopped by {signal}; what it had finished is
 * kept`. Inside runStoppable the scope's own handler answers instead. It stays installed until the
 * process exits, and a natural end exits at once (see {@link endAtOnce}), so no signal finds the
 * process without it.
 * @param command the command's name (the first argument), or null without one
 */
export function installStopFallback(command: string | null): void {
  const listener = (signal: NodeJS.Signals) => {
    if (current !== null) return;
    process.stderr.write(
      `duplexsynth: ${command ?? 'duplexsynth'} stopped by ${signal}; what it had finished is kept\n`,
    );
    process.exit(STOP_EXIT_CODES[signal as StopSignal]);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, listener);
  process.once('beforeExit', endAtOnce);
}

/**
 * Ends the process with its exit code as soon as its event loop is empty. Left to end by itself, Node
 * closes its signal handles after the 'exit' listeners and spends some milliseconds more tearing down,
 * and a signal in that window meets the default disposition: the process dies by the signal with no
 * line. `process.exit` runs the 'exit' listeners and exits without that teardown, so a signal after
 * this point leaves the command's own ending (its output, its exit code) and one before it meets the
 * listener of {@link installStopFallback}.
 */
function endAtOnce(): void {
  process.exit(process.exitCode);
}

/** Removes `folder` when it holds only empty folders, then its parents up to `createdFrom` while empty. */
function removeEmptyChain(folder: string, createdFrom: string): void {
  if (folder !== createdFrom && !folder.startsWith(`${createdFrom}${path.sep}`)) return;
  if (!removeIfEmptySync(folder)) return;
  for (let parent = path.dirname(folder); parent !== folder; folder = parent, parent = path.dirname(parent)) {
    if (folder === createdFrom || !removeIfEmptySync(parent)) return;
  }
}

/** Removes `folder` and the empty folders below it when nothing else is inside; returns whether it is gone. */
function removeIfEmptySync(folder: string): boolean {
  let entries;
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch {
    return true; // already gone
  }
  for (const entry of entries) {
    if (!entry.isDirectory() || !removeIfEmptySync(path.join(folder, entry.name))) return false;
  }
  try {
    rmdirSync(folder);
    return true;
  } catch {
    return false;
  }
}
