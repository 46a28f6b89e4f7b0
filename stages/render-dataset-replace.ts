/**
 * Replacing a committed dataset folder without losing it: how many dialogues the folder there holds
 * (a commit refuses to shrink it unless asked), the rename of the finished work folder over it with
 * the old one kept aside until the new one is in place, and the recovery of a commit interrupted
 * between its two renames.
 */
import { existsSync } from 'node:fs';
import { readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BACKUP_MARKER, isOwnBackup } from '../pipeline/storage/commit-backup-marker.ts';
import { readRecord } from '../pipeline/storage/json-records.ts';
import { datasetManifestSchema } from '../pipeline/model/dataset-manifest.ts';

/** Dialogues listed by the manifest of a committed dataset at `directory`, or undefined when there is none. */
export async function existingDialogueCount(directory: string): Promise<number | undefined> {
  try {
    return (await readRecord(path.join(directory, 'manifest.json'), datasetManifestSchema, { optional: true }))
      ?.dialogues?.length;
  } catch {
    return undefined; // an unreadable manifest: no dataset to compare with
  }
}

/** `; 2 of 2 failed with: ENOSPC …` — the most frequent failure reason, or '' without failures. */
export function describeCommonCause(failures: readonly { reason: string }[]): string {
  if (failures.length === 0) return '';
  const counts = new Map<string, number>();
  for (const failure of failures) counts.set(failure.reason, (counts.get(failure.reason) ?? 0) + 1);
  const [reason, count] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
  return `; ${count} of ${failures.length} dialogues failed with: ${reason}`;
}

/** Where `commit` keeps the old dataset while the new one is renamed into place. */
function previousDirectoryOf(directory: string): string {
  return `${directory}.previous`;
}

export { BACKUP_MARKER };

/** Thrown when `{dataset}.previous` exists but is not a commit's backup: the build stops, that folder is left as it is. */
export class ForeignPreviousFolderError extends Error {
  constructor(previous: string) {
    super(
      `${previous}: not a backup left by a duplexsynth commit (no ${BACKUP_MARKER} in it), and a commit keeps the old dataset under that name; it was left as it is: rename or move it, or choose another --out`,
    );
    this.name = 'ForeignPreviousFolderError';
  }
}

/**
 * After a commit that was interrupted between its two renames: `{dataset}.previous` (marked as the
 * commit's backup) holds the last complete dataset. It goes back into place when the folder itself is
 * missing (or empty); when the folder is complete again (the new one arrived), the leftover is removed.
 * A marker left in the dataset folder itself is removed.
 * @throws ForeignPreviousFolderError when `{dataset}.previous` exists without the marker (nothing is touched)
 */
export async function restorePreviousDataset(directory: string): Promise<void> {
  const previous = previousDirectoryOf(directory);
  const previousEntries = await readdir(previous).catch(() => null);
  if (previousEntries === null) {
    await rm(path.join(directory, BACKUP_MARKER), { force: true }).catch(() => {});
    return;
  }
  if (!(await isOwnBackup(previous, directory))) throw new ForeignPreviousFolderError(previous);
  const current = await readdir(directory).catch(() => null);
  if (current !== null && current.includes('manifest.json')) {
    await rm(previous, { recursive: true, force: true });
    await rm(path.join(directory, BACKUP_MARKER), { force: true });
    return;
  }
  if (current !== null) await rm(directory, { recursive: true, force: true });
  if (previousEntries.includes('manifest.json')) {
    await rename(previous, directory);
    await rm(path.join(directory, BACKUP_MARKER), { force: true });
  } else await rm(previous, { recursive: true, force: true });
}

/**
 * Renames the finished `workDirectory` over `finalDirectory`. The complete old dataset is marked as
 * the commit's backup ({@link BACKUP_MARKER}) and moved aside, not deleted, until the new one is in
 * place: a kill or an error between the two renames leaves `{dataset}.previous`, which
 * {@link restorePreviousDataset} puts back.
 * @throws ForeignPreviousFolderError when an unmarked `{dataset}.previous` appeared since `open`
 *   (nothing is renamed); the rename's error (the old dataset is renamed back first)
 */
export async function replaceFinalFolder(finalDirectory: string, workDirectory: string): Promise<void> {
  const aside = previousDirectoryOf(finalDirectory);
  if (existsSync(aside)) {
    if (!(await isOwnBackup(aside, finalDirectory))) throw new ForeignPreviousFolderError(aside);
    await rm(aside, { recursive: true, force: true });
  }
  const marker = path.join(finalDirectory, BACKUP_MARKER);
  // the marker goes in before the rename, so a backup is never without it
  const hadOld = await writeFile(marker, `${path.basename(finalDirectory)}\n`).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false;
      throw error;
    },
  );
  if (hadOld) {
    try {
      await rename(finalDirectory, aside);
    } catch (error) {
      await rm(marker, { force: true }).catch(() => {});
      throw error;
    }
  }
  try {
    await rename(workDirectory, finalDirectory);
  } catch (error) {
    if (hadOld) {
      await rename(aside, finalDirectory).catch(() => {});
      await rm(marker, { force: true }).catch(() => {});
    }
    throw error;
  }
  // the new dataset is in place; an old one that cannot be removed (a read-only subfolder) is left
  // as `{dataset}.previous` (marked) and removed by the next build's `open`
  await rm(aside, { recursive: true, force: true }).catch(() => {});
}
