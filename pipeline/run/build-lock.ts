/**
 * The output folder's lock (proper-lockfile), so two builds never write into one folder at once.
 *
 * - The lock is the folder `{output}/.duplexsynth.lock`; its holder (host, PID, process start time)
 *   is recorded beside it in `.duplexsynth.lock.owner.json`.
 * - A lock whose holder on this host no longer runs (the build was killed) is taken over at once; one
 *   whose holder still runs is never taken, however long it has been paused. A holder on another host
 *   cannot be checked: its lock counts as stale `staleMilliseconds` after its last update (the holder
 *   touches it every `updateMilliseconds`), as proper-lockfile decides.
 * - A build whose lock is taken away (it was paused past the stale time while a build on another host
 *   took over, or someone removed the lock) learns it at the next update: {@link OutputLock.lost}
 *   rejects with a one-line {@link LockLostError}, and {@link assertOutputLockHeld} (called before a
 *   dataset is committed) refuses, so it never replaces what the other build wrote.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { LockLostError, OutputLockedError } from '../model/build-errors.ts';
import { writeAtomic } from '../storage/write-atomic.ts';
import { currentProcess, isProcessRunning, type ProcessIdentity } from '../storage/process-liveness.ts';

/** Name of the lock folder inside the output folder. */
export const LOCK_NAME = '.duplexsynth.lock';
/** Name of the holder record beside it. */
export const LOCK_OWNER_NAME = '.duplexsynth.lock.owner.json';

/** Defaults: the holder touches the lock every 10 s; another host's holder is stale after 60 s without. */
export const DEFAULT_LOCK_TIMING = { staleMilliseconds: 60_000, updateMilliseconds: 10_000 } as const;

/** What the holder record says. */
interface LockOwner extends ProcessIdentity {
  /** ISO time the lock was taken (for the message only). */
  since: string;
}

/** A held output-folder lock. */
export interface OutputLock {
  readonly directory: string;
  /** Rejects with a {@link LockLostError} if the lock is taken away; never resolves. */
  readonly lost: Promise<never>;
  /** @throws LockLostError when the lock was lost */
  assertHeld(): void;
  /** Give the lock back (removes the holder record); nothing to do when it was lost. */
  release(): Promise<void>;
}

/** Locks held by this process, for {@link assertOutputLockHeld}. */
const heldLocks = new Set<{ directory: string; lostError: LockLostError | undefined }>();

/**
 * Refuse to write into `target` when it lies in an output folder whose lock this process has lost.
 * Passes when no lock of this process covers `target` (a dataset written outside a build).
 * @throws LockLostError
 */
export function assertOutputLockHeld(target: string): void {
  const resolved = path.resolve(target);
  for (const lock of heldLocks) {
    if (lock.lostError && (resolved === lock.directory || resolved.startsWith(`${lock.directory}${path.sep}`))) throw lock.lostError;
  }
}

async function readOwner(directory: string): Promise<LockOwner | undefined> {
  try {
    const value = JSON.parse(await readFile(path.join(directory, LOCK_OWNER_NAME), 'utf8')) as Partial<LockOwner>;
    return typeof value.pid === 'number' && typeof value.host === 'string' ? (value as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

async function lockExists(directory: string): Promise<boolean> {
  return lockfile.check(directory, { lockfilePath: path.join(directory, LOCK_NAME), realpath: false, stale: Number.MAX_SAFE_INTEGER });
}

/**
 * Take the output folder's lock (the folder must exist).
 * @param directory the build's output folder
 * @param options `log` hears a takeover; lock timing (tests shorten it; proper-lockfile needs
 *   stale >= 2000 ms and update between 1000 ms and stale / 2)
 * @throws OutputLockedError naming the folder and the holder when a running build holds the lock
 */
export async function lockOutputDirectory(
  directory: string,
  options: { log?: (line: string) => void; staleMilliseconds?: number; updateMilliseconds?: number } = {},
): Promise<OutputLock> {
  const resolved = path.resolve(directory);
  const lockfilePath = path.join(resolved, LOCK_NAME);
  const ownerPath = path.join(resolved, LOCK_OWNER_NAME);
  const staleMilliseconds = options.staleMilliseconds ?? DEFAULT_LOCK_TIMING.staleMilliseconds;
  const updateMilliseconds = options.updateMilliseconds ?? DEFAULT_LOCK_TIMING.updateMilliseconds;

  const owner = await readOwner(resolved);
  if (owner !== undefined && (await lockExists(resolved))) {
    const running = isProcessRunning(owner);
    if (running === true) throw lockedError(resolved, owner, staleMilliseconds);
    if (running === false) {
      options.log?.(`lock: ${resolved}: the build that held it (PID ${owner.pid}) no longer runs; taking it over`);
      await rm(lockfilePath, { recursive: true, force: true });
    }
  }

  const entry = { directory: resolved, lostError: undefined as LockLostError | undefined };
  let rejectLost: (error: LockLostError) => void = () => {};
  const lost = new Promise<never>((_, reject) => {
    rejectLost = reject;
  });
  lost.catch(() => {}); // observed by whoever races it; never an unhandled rejection
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(resolved, {
      lockfilePath,
      realpath: false,
      stale: staleMilliseconds,
      update: updateMilliseconds,
      retries: 0,
      onCompromised: (error: Error) => {
        entry.lostError = new LockLostError(
          `${resolved}: this build lost its lock on the folder (${error.message.replace(/\.$/, '')}); another build may be writing into it, ` +
            'so it stopped without committing; rerun it when no other build uses the folder',
        );
        rejectLost(entry.lostError);
      },
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') throw lockedError(resolved, await readOwner(resolved), staleMilliseconds);
    throw error;
  }
  const record: LockOwner = { ...currentProcess(), since: new Date().toISOString() };
  try {
    await writeAtomic(ownerPath, `${JSON.stringify(record)}\n`);
  } catch (error) {
    await release().catch(() => {});
    throw error;
  }
  heldLocks.add(entry);

  return {
    directory: resolved,
    lost,
    assertHeld: () => {
      if (entry.lostError) throw entry.lostError;
    },
    release: async () => {
      heldLocks.delete(entry);
      if (entry.lostError) return;
      await release();
      // the record goes last, and only when it is still ours (a new holder may have written its own)
      if ((await readOwner(resolved))?.pid === record.pid) await rm(ownerPath, { force: true });
    },
  };
}

function lockedError(directory: string, owner: LockOwner | undefined, staleMilliseconds: number): OutputLockedError {
  const holder = owner === undefined ? 'another duplexsynth build' : `another duplexsynth build (PID ${owner.pid}${isProcessRunning(owner) === undefined ? ' on another host' : ''}, since ${owner.since})`;
  const stale =
    owner !== undefined && isProcessRunning(owner) === true
      ? 'it is running on this host'
      : `if it was killed, its lock counts as stale ${staleMilliseconds / 1000} s after its last update`;
  return new OutputLockedError(`${directory}: ${holder} is writing into this folder; wait for it or choose another --out (${stale})`);
}
