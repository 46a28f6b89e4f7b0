/**
 * The output folder's lock (proper-lockfile), so two builds never write into one folder at once.
 *
 * - The lock is the folder `{output}/.duplexsynth.lock`; its holder (host, PID, process start time)
 *   is recorded beside it in `.duplexsynth.lock.owner.json`. A build writes its record as a candidate
 *   (`.duplexsynth.lock.candidate.{pid}.json`) before it takes the lock and renames it to the owner
 *   record after, so a build killed between the two is still known by its candidate record (without
 *   it, the lock would have no holder to check and would wait for the stale time).
 * - A lock whose holder on this host no longer runs (the build was killed) is taken over at once; one
 *   whose holder still runs is never taken, however long it has been paused. A holder on another host
 *   cannot be checked: its lock counts as stale `staleMilliseconds` after its last update (the holder
 *   touches it every `updateMilliseconds`), as proper-lockfile decides.
 * - A build whose lock is taken away (it was paused past the stale time while a build on another host
 *   took over, or someone removed the lock) learns it at the next update: {@link OutputLock.lost}
 *   rejects with a one-line {@link LockLostError}, and {@link assertOutputLockHeld} (called before a
 *   dataset is committed) refuses, so it never replaces what the other build wrote.
 */
import { readdir, readFile, rename, rm } from 'node:fs/promises';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { LockLostError, OutputLockedError } from '../model/build-errors.ts';
import { writeAtomic } from '../storage/write-atomic.ts';
import { currentProcess, isProcessRunning, type ProcessIdentity } from '../storage/process-liveness.ts';

/** Name of the lock folder inside the output folder. */
export const LOCK_NAME = '.duplexsynth.lock';
/** Name of the holder record beside it. */
export const LOCK_OWNER_NAME = '.duplexsynth.lock.owner.json';

/** Prefix and suffix of a candidate record (`{prefix}{pid}{suffix}`), written before the lock is taken. */
const CANDIDATE_PREFIX = '.duplexsynth.lock.candidate.';
const CANDIDATE_SUFFIX = '.json';

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
  /** {@link release} done synchronously, for a signal's stop path (./stop-signals.ts), where nothing may wait. */
  releaseSync(): void;
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
    if (lock.lostError && (resolved === lock.directory || resolved.startsWith(`${lock.directory}${path.sep}`)))
      throw lock.lostError;
  }
}

async function readOwner(directory: string, name: string = LOCK_OWNER_NAME): Promise<LockOwner | undefined> {
  try {
    const value = JSON.parse(await readFile(path.join(directory, name), 'utf8')) as Partial<LockOwner>;
    return typeof value.pid === 'number' && typeof value.host === 'string' ? (value as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

/** The candidate records in the folder (file name and record), other than this process's. */
async function readCandidates(directory: string): Promise<{ name: string; owner: LockOwner }[]> {
  const names = (await readdir(directory).catch(() => [] as string[])).filter(
    (name) => name.startsWith(CANDIDATE_PREFIX) && name.endsWith(CANDIDATE_SUFFIX),
  );
  const found: { name: string; owner: LockOwner }[] = [];
  for (const name of names.sort()) {
    const owner = await readOwner(directory, name);
    if (owner !== undefined && !(owner.pid === process.pid && isProcessRunning(owner) === true))
      found.push({ name, owner });
  }
  return found;
}

async function lockExists(directory: string): Promise<boolean> {
  return lockfile.check(directory, {
    lockfilePath: path.join(directory, LOCK_NAME),
    realpath: false,
    stale: Number.MAX_SAFE_INTEGER,
  });
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
  if (await lockExists(resolved)) {
    // who may hold it: the owner record, or a build killed after taking the lock and before renaming
    // its candidate record (a live build in that moment is a candidate too)
    const claimants = [
      ...(owner === undefined ? [] : [owner]),
      ...(await readCandidates(resolved)).map((candidate) => candidate.owner),
    ];
    const running = claimants.find((claimant) => isProcessRunning(claimant) === true);
    if (running !== undefined) throw lockedError(resolved, running, staleMilliseconds);
    if (claimants.length > 0 && claimants.every((claimant) => isProcessRunning(claimant) === false)) {
      const pids = [...new Set(claimants.map((claimant) => claimant.pid))].join(', ');
      options.log?.(`lock: ${resolved}: the build that held it (PID ${pids}) no longer runs; taking it over`);
      await rm(lockfilePath, { recursive: true, force: true });
    }
  }
  const record: LockOwner = { ...currentProcess(), since: new Date().toISOString() };
  const candidatePath = path.join(resolved, `${CANDIDATE_PREFIX}${record.pid}${CANDIDATE_SUFFIX}`);
  await writeAtomic(candidatePath, `${JSON.stringify(record)}\n`);

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
    await rm(candidatePath, { force: true });
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED')
      throw lockedError(resolved, await readOwner(resolved), staleMilliseconds);
    throw error;
  }
  try {
    await rename(candidatePath, ownerPath);
    // candidates of builds that died before or while taking the lock are left over: gone now
    for (const candidate of await readCandidates(resolved)) {
      if (isProcessRunning(candidate.owner) === false) await rm(path.join(resolved, candidate.name), { force: true });
    }
  } catch (error) {
    await rm(candidatePath, { force: true }).catch(() => {});
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
    releaseSync: () => {
      heldLocks.delete(entry);
      if (entry.lostError) return;
      try {
        lockfile.unlockSync(resolved, { lockfilePath, realpath: false });
        if ((JSON.parse(readFileSync(ownerPath, 'utf8')) as { pid?: unknown }).pid === record.pid)
          rmSync(ownerPath, { force: true });
      } catch {
        // already released, or the record is another holder's or unreadable: left as it is
      }
    },
  };
}

function lockedError(directory: string, owner: LockOwner | undefined, staleMilliseconds: number): OutputLockedError {
  const holder =
    owner === undefined
      ? 'another duplexsynth build'
      : `another duplexsynth build (PID ${owner.pid}${isProcessRunning(owner) === undefined ? ' on another host' : ''}, since ${owner.since})`;
  const stale =
    owner !== undefined && isProcessRunning(owner) === true
      ? 'it is running on this host'
      : `if it was killed, its lock counts as stale ${staleMilliseconds / 1000} s after its last update`;
  return new OutputLockedError(
    `${directory}: ${holder} is writing into this folder; wait for it or choose another --out (${stale})`,
  );
}
