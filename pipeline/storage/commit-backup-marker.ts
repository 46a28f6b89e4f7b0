/**
 * How a dataset commit recognises its own backup. Just before it moves the old dataset aside as
 * `{dataset}.previous`, the commit (stages/render-dataset-replace.ts) writes {@link BACKUP_MARKER}
 * into it, holding the dataset's folder name: a `{dataset}.previous` without it (or naming another
 * dataset) is not a commit's backup and is never removed or restored, by the build or by `verify`'s
 * advice. It is not in the manifest; a dataset folder that still holds it (a kill between writing it
 * and the rename) has it removed by the next build's `open`. The report's commit keeps its old
 * report the same way (`report.previous`, ./folder-swap.ts).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** Name of the marker file inside a commit's backup folder. */
export const BACKUP_MARKER = '.duplexsynth-backup';

/**
 * Whether `previous` is the backup a commit of the dataset folder `directory` left.
 * @param previous the `{dataset}.previous` folder.
 * @param directory the dataset folder it would be the backup of.
 * @returns true when `previous/.duplexsynth-backup` exists and names `directory`'s folder; never throws.
 */
export async function isOwnBackup(previous: string, directory: string): Promise<boolean> {
  const marker = await readFile(path.join(previous, BACKUP_MARKER), 'utf8').catch(() => null);
  return marker !== null && marker.trim() === path.basename(directory);
}

/**
 * {@link isOwnBackup} for a caller that cannot wait (a stop's undo, run in the signal's handler).
 * @returns true when `previous/.duplexsynth-backup` exists and names `directory`'s folder; never throws.
 */
export function isOwnBackupSync(previous: string, directory: string): boolean {
  try {
    return readFileSync(path.join(previous, BACKUP_MARKER), 'utf8').trim() === path.basename(directory);
  } catch {
    return false;
  }
}
