/**
 * Small tmpfs mounts for tests that need a full, filling or read-only disk. Mounting needs
 * root (or CAP_SYS_ADMIN): {@link tmpfsSkipReason} says why a test is skipped where it is not allowed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A mounted tmpfs. */
export interface MountedTmpfs {
  directory: string;
  /** Unmounts and removes the mount point. */
  unmount(): void;
}

/**
 * Mount a tmpfs of `sizeBytes` at a new folder under the system temporary folder.
 * @param options `readOnly` mounts it read-only
 * @throws Error with mount's message when mounting is not permitted
 */
export function mountTmpfs(sizeBytes: number, options: { readOnly?: boolean } = {}): MountedTmpfs {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'duplexsynth-tmpfs-'));
  try {
    execFileSync(
      'mount',
      ['-t', 'tmpfs', '-o', `size=${sizeBytes}${options.readOnly ? ',ro' : ''}`, 'tmpfs', directory],
      { stdio: 'pipe' },
    );
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw new Error(
      `cannot mount a tmpfs: ${String((error as { stderr?: Buffer }).stderr ?? (error as Error).message).trim()}`,
    );
  }
  return {
    directory,
    unmount: () => {
      execFileSync('umount', ['-l', directory], { stdio: 'pipe' });
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** Why tmpfs tests cannot run here (mount not permitted), or undefined when they can. Tried once. */
let probed: string | undefined | null = null;
export function tmpfsSkipReason(): string | undefined {
  if (probed !== null) return probed;
  try {
    mountTmpfs(64 * 1024).unmount();
    probed = undefined;
  } catch (error) {
    probed = `needs permission to mount a tmpfs (run as root): ${(error as Error).message}`;
  }
  return probed;
}

/** Fill the file system holding `directory` until no byte is free, with one file `name` in it. */
export function fillFileSystem(directory: string, name = 'filler'): string {
  mkdirSync(directory, { recursive: true });
  const file = path.join(directory, name);
  // dd stops at ENOSPC; its non-zero exit is expected
  try {
    execFileSync('dd', ['if=/dev/zero', `of=${file}`, 'bs=4096'], { stdio: 'pipe' });
  } catch {
    // full
  }
  return file;
}
