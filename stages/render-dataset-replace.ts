/**
 * Replacing a committed dataset folder without losing it: how many dialogues the folder there holds
 * (a commit refuses to shrink it unless asked), the rename of the finished work folder over it with
 * the old one kept aside until the new one is in place, the recovery of a commit interrupted
 * between its two renames, and the removal of a barge-in variant an earlier build committed when
 * this build commits none.
 */
import { existsSync } from 'node:fs';
import { readdir, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { BACKUP_MARKER, isOwnBackup } from '../pipeline/storage/commit-backup-marker.ts';
import { renameInMarked } from '../pipeline/storage/folder-swap.ts';
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
  await renameInMarked(workDirectory, finalDirectory, aside);
  // the new dataset is in place; an old one that cannot be removed (a read-only subfolder) is left
  // as `{dataset}.previous` (marked) and removed by the next build's `open`
  await rm(aside, { recursive: true, force: true }).catch(() => {});
}

/** What {@link removeStaleVariantDataset} did with a variant folder it found. */
export interface StaleVariantOutcome {
  /** True when the folder was removed; false when it was left (not provably a commit's variant). */
  removed: boolean;
  /** One line naming the folder and what was done, for the build log (removed) or a warning (left). */
  message: string;
}

/** Every file below `directory`, as paths relative to it with `/` separators. */
async function filesBelow(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => !entry.isDirectory())
    .map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}

/**
 * Why `directory` is not provably the barge-in variant of `dataset` that a commit wrote, or null when
 * it is: its `manifest.json` is duplexsynth's (`format: m3-duplexbench`), names the folder as its
 * dataset and `{kind: barge-in, of: dataset}` as its variant, and lists every other file in it (a
 * commit checks that no other file is there, stages/render-dataset-writer.ts).
 */
async function notOwnVariantReason(directory: string, dataset: string): Promise<string | null> {
  let manifest;
  try {
    manifest = await readRecord(path.join(directory, 'manifest.json'), datasetManifestSchema, { optional: true });
  } catch {
    return 'its manifest.json cannot be read';
  }
  if (manifest === undefined) return 'it has no manifest.json';
  if (manifest.format !== 'm3-duplexbench' || manifest.dataset !== path.basename(directory))
    return `its manifest.json is not a duplexsynth manifest of ${path.basename(directory)}`;
  if (manifest.variant?.kind !== 'barge-in' || manifest.variant.of !== dataset)
    return `its manifest.json does not name it the barge-in variant of ${dataset}`;
  const listed = new Set(Object.keys(manifest.files ?? {}));
  const unlisted = (await filesBelow(directory)).filter((file) => file !== 'manifest.json' && !listed.has(file));
  if (unlisted.length > 0)
    return `it holds files its manifest.json does not list (${unlisted.slice(0, 3).join(', ')}${unlisted.length > 3 ? ', …' : ''})`;
  return null;
}

/**
 * Removes the barge-in variant folder `directory` (`{dataset}_bargein`) an earlier build committed,
 * for a build that commits no barge-in dataset (the variant is off, or its dialogues hold no
 * BARGE_IN event): left in place, it would be read as this build's. Only a folder that is provably a
 * commit's variant of `dataset` ({@link notOwnVariantReason}) is removed: its other files first and
 * its manifest last, so a removal cut short leaves a folder the next build still recognises. Its
 * commit's backup (`{dataset}_bargein.previous` with the marker) goes with it.
 * @param directory the variant's dataset folder.
 * @param dataset the base dataset's name (the variant's manifest names it in `variant.of`).
 * @returns null when there is no such folder; else whether it was removed, and a line saying so
 * @throws the file system's error when a removal fails
 */
export async function removeStaleVariantDataset(
  directory: string,
  dataset: string,
): Promise<StaleVariantOutcome | null> {
  const previous = previousDirectoryOf(directory);
  if (existsSync(previous) && (await isOwnBackup(previous, directory)))
    await rm(previous, { recursive: true, force: true });
  if (!existsSync(directory)) return null;
  const reason = await notOwnVariantReason(directory, dataset);
  if (reason !== null)
    return {
      removed: false,
      message: `${directory}: left as it is: this build writes no barge-in dataset, and the folder is not provably one a build wrote (${reason}); remove it if it is stale`,
    };
  for (const entry of await readdir(directory))
    if (entry !== 'manifest.json') await rm(path.join(directory, entry), { recursive: true, force: true });
  await rm(path.join(directory, 'manifest.json'), { force: true });
  await rmdir(directory);
  return {
    removed: true,
    message: `${directory}: removed: the barge-in dataset of an earlier build (this build writes none)`,
  };
}
