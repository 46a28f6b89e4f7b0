/**
 * Replacing a committed dataset folder without losing it: how many dialogues the folder there holds
 * (a commit refuses to shrink it unless asked), the rename of the finished work folder over it with
 * the old one kept aside until the new one is in place, and the recovery of a commit interrupted
 * between its two renames.
 */
import { readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
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

/**
 * After a commit that was interrupted between its two renames: `{dataset}.previous` holds the last
 * complete dataset. It goes back into place when the folder itself is missing (or empty); when the
 * folder is complete again (the new one arrived), the leftover is removed.
 */
export async function restorePreviousDataset(directory: string): Promise<void> {
  const previous = previousDirectoryOf(directory);
  const previousEntries = await readdir(previous).catch(() => null);
  if (previousEntries === null) return;
  const current = await readdir(directory).catch(() => null);
  if (current !== null && current.includes('manifest.json')) {
    await rm(previous, { recursive: true, force: true });
    return;
  }
  if (current !== null) await rm(directory, { recursive: true, force: true });
  if (previousEntries.includes('manifest.json')) await rename(previous, directory);
  else await rm(previous, { recursive: true, force: true });
}

/**
 * Renames the finished `workDirectory` over `finalDirectory`. The complete old dataset is moved aside,
 * not deleted, until the new one is in place: a kill or an error between the two renames leaves
 * `{dataset}.previous`, which {@link restorePreviousDataset} puts back.
 * @throws the rename's error (the old dataset is renamed back first)
 */
export async function replaceFinalFolder(finalDirectory: string, workDirectory: string): Promise<void> {
  const aside = previousDirectoryOf(finalDirectory);
  await rm(aside, { recursive: true, force: true });
  const hadOld = await rename(finalDirectory, aside).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false;
      throw error;
    },
  );
  try {
    await rename(workDirectory, finalDirectory);
  } catch (error) {
    if (hadOld) await rename(aside, finalDirectory).catch(() => {});
    throw error;
  }
  // the new dataset is in place; an old one that cannot be removed (a read-only subfolder) is left
  // as `{dataset}.previous` and removed by the next build's `open`
  await rm(aside, { recursive: true, force: true }).catch(() => {});
}
