/**
 * How a build tells a dataset folder it may replace from someone else's folder at the same path: a
 * folder that holds files but no `manifest.json` was not written by duplexsynth and is never replaced.
 * Checked twice with the same wording and error: before any work, for every dataset folder the build
 * commits (pipeline/run/build-guards.ts), and when the dataset writer opens a dataset, for a folder
 * made while the build runs (stages/render-dataset-writer.ts).
 */
import { readdir } from 'node:fs/promises';
import { BuildInputError } from '../model/build-errors.ts';
import { isOwnBackup } from './commit-backup-marker.ts';
import { backupFolderOf } from './folder-swap.ts';

/** A dataset folder the build would replace that duplexsynth did not write (files, no manifest.json): exit code 2. */
export class ForeignDatasetFolderError extends BuildInputError {
  override name = 'ForeignDatasetFolderError';

  /** @param folder the dataset folder, named first in the line */
  constructor(folder: string) {
    super(
      `${folder}: exists, holds files and was not written by duplexsynth (no manifest.json); it was left as it is: remove it or choose another --out`,
    );
  }
}

/**
 * Refuses a dataset folder that holds files and no `manifest.json`, unless a commit's own backup
 * (`{dataset}.previous` holding the marker that names this folder, ./commit-backup-marker.ts) is
 * beside it: then the folder is what an interrupted commit left, and opening the dataset puts the
 * backup back (stages/render-dataset-replace.ts `restorePreviousDataset`). A missing or empty
 * folder, or one that is not a folder, passes.
 * @param folder the dataset folder (need not exist)
 * @throws ForeignDatasetFolderError naming `folder`; nothing is touched
 */
export async function refuseForeignDatasetFolder(folder: string): Promise<void> {
  const entries = await readdir(folder).catch(() => null);
  if (entries === null || entries.length === 0 || entries.includes('manifest.json')) return;
  if (await isOwnBackup(backupFolderOf(folder), folder)) return;
  throw new ForeignDatasetFolderError(folder);
}
