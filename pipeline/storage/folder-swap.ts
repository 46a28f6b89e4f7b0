/**
 * Swapping a finished work folder in for a folder that is read as a whole (the build's `report/`)
 * without ever losing both: the old folder is marked as the swap's backup (./commit-backup-marker.ts,
 * as a dataset commit marks its own) and moved aside as `{folder}.previous` until the new one is in
 * place. A `{folder}.previous` without the marker is someone else's folder: it is never removed,
 * replaced or moved into place, and the swap refuses to start while it is there.
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BuildInputError } from '../model/build-errors.ts';
import { BACKUP_MARKER, isOwnBackup, isOwnBackupSync } from './commit-backup-marker.ts';

/** A `{folder}.previous` that no swap left (no marker, or one naming another folder): exit code 2. */
export class ForeignBackupFolderError extends BuildInputError {
  override name = 'ForeignBackupFolderError';

  /**
   * @param previous the `{folder}.previous` path, named first in the line
   * @param what what the folder is, for the line (`the report`)
   */
  constructor(previous: string, what: string) {
    super(
      `${previous}: not a backup left by duplexsynth (no ${BACKUP_MARKER} in it), and ${what} is kept under that name while its new version is swapped in; it was left as it is: rename or move it`,
    );
  }
}

/** Where {@link swapInFolder} keeps the old `directory` while the new one is renamed into place. */
export function backupFolderOf(directory: string): string {
  return `${path.resolve(directory)}.previous`;
}

/**
 * Refuses to swap `directory` while a `{directory}.previous` that is not a swap's backup is there.
 * @param what what the folder is, for the line (`the report`)
 * @throws ForeignBackupFolderError naming `{directory}.previous`
 */
export async function refuseForeignBackupFolder(directory: string, what: string): Promise<void> {
  const previous = backupFolderOf(directory);
  if (existsSync(previous) && !(await isOwnBackup(previous, directory)))
    throw new ForeignBackupFolderError(previous, what);
}

/**
 * Renames the finished `workDirectory` over `directory`: an old `directory` gets the marker, is moved
 * to `{directory}.previous`, and is removed once the new one is in place. A stop between the two
 * renames leaves the marked backup, which {@link restoreSwappedFolderSync} puts back.
 * @param what what the folder is, for the refusal (`the report`)
 * @throws ForeignBackupFolderError when an unmarked `{directory}.previous` is there (nothing is
 *   renamed); the rename's error (the old folder is renamed back first)
 */
export async function swapInFolder(workDirectory: string, directory: string, what: string): Promise<void> {
  const final = path.resolve(directory);
  const previous = backupFolderOf(final);
  await refuseForeignBackupFolder(final, what);
  await rm(previous, { recursive: true, force: true }); // a swap's own leftover
  await renameInMarked(workDirectory, final, previous);
  await rm(previous, { recursive: true, force: true }).catch(() => {}); // marked: the next swap removes it
}

/**
 * Undoes, synchronously, a {@link swapInFolder} stopped part-way (a signal's handler): a marked
 * `{directory}.previous` goes back into place when `directory` is missing, and is removed when the
 * new one is there; a marker left in `directory` itself (a stop between writing it and the first
 * rename) is removed. An unmarked `{directory}.previous` is left as it is. Never throws.
 */
export function restoreSwappedFolderSync(directory: string): void {
  const final = path.resolve(directory);
  const previous = backupFolderOf(final);
  try {
    if (existsSync(previous) && isOwnBackupSync(previous, final)) {
      if (!existsSync(final)) renameSync(previous, final);
      else rmSync(previous, { recursive: true, force: true });
    }
    rmSync(path.join(final, BACKUP_MARKER), { force: true });
  } catch {
    // a folder that cannot be renamed or removed: the next swap sees the marked backup
  }
}

/**
 * The two renames of a swap: an old `directory` gets the marker and is renamed to `previous`, then
 * `workDirectory` is renamed to `directory`. Shared by the report's swap and the dataset commit
 * (stages/render-dataset-replace.ts), so a backup is never without its marker.
 * @throws the rename's error, after the old folder is renamed back and its marker removed
 */
export async function renameInMarked(workDirectory: string, directory: string, previous: string): Promise<void> {
  const marker = path.join(directory, BACKUP_MARKER);
  // the marker goes in before the rename, so a backup is never without it
  const hadOld = await writeFile(marker, `${path.basename(directory)}\n`).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false;
      throw error;
    },
  );
  if (hadOld) {
    try {
      await rename(directory, previous);
    } catch (error) {
      await rm(marker, { force: true }).catch(() => {});
      throw error;
    }
  }
  try {
    await rename(workDirectory, directory);
  } catch (error) {
    if (hadOld) {
      await rename(previous, directory).catch(() => {});
      await rm(marker, { force: true }).catch(() => {});
    }
    throw error;
  }
}
