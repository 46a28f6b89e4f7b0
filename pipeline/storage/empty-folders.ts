/**
 * Folders a command made and then leaves empty after a refusal are removed again (a refused build or
 * export must not leave `out/data/en/task/` behind). Only empty folders are ever removed (rmdir, never
 * recursive), so nothing written by anyone is lost, and never a lock folder (`*.lock`, proper-lockfile's
 * lock is an empty folder): a refused command must not take another process's lock.
 */
import { readdir, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * The outermost folder of `folder`'s path that does not exist yet (what a recursive mkdir would
 * create first), or null when `folder` exists.
 */
export async function outermostMissingFolder(folder: string): Promise<string | null> {
  let current = path.resolve(folder);
  let missing: string | null = null;
  for (;;) {
    const exists = await stat(current).then(
      () => true,
      () => false,
    );
    if (exists) return missing;
    missing = current;
    const parent = path.dirname(current);
    if (parent === current) return missing;
    current = parent;
  }
}

/** Whether `name` is a lock folder (proper-lockfile makes `{name}.lock`), which is never removed here. */
function isLockFolder(name: string): boolean {
  return name.endsWith('.lock');
}

/**
 * Remove `folder` and every folder below it that holds nothing but empty folders (deepest first).
 * @returns whether `folder` itself was removed
 */
export async function removeEmptyFolders(folder: string): Promise<boolean> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => null);
  if (entries === null || isLockFolder(path.basename(folder))) return false;
  let empty = true;
  for (const entry of entries) {
    if (entry.isDirectory() && !isLockFolder(entry.name) && (await removeEmptyFolders(path.join(folder, entry.name))))
      continue;
    empty = false;
  }
  if (!empty) return false;
  return rmdir(folder).then(
    () => true,
    () => false,
  );
}

/**
 * After a refusal: remove `folder` (and the folders below it) when empty, then its parents up to and
 * including `createdFrom` (the outermost folder the command made) while they are empty.
 * @param folder the folder the command worked in
 * @param createdFrom {@link outermostMissingFolder} taken before the command made anything; null when the
 *   folder existed (then only the empty folders below it are removed)
 */
export async function removeFoldersLeftEmpty(folder: string, createdFrom: string | null): Promise<void> {
  const resolved = path.resolve(folder);
  if (createdFrom === null) {
    for (const entry of await readdir(resolved, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) await removeEmptyFolders(path.join(resolved, entry.name));
    }
    return;
  }
  if (!(await removeEmptyFolders(resolved))) return;
  let current = path.dirname(resolved);
  const stop = path.resolve(createdFrom);
  while (current.startsWith(stop) && current !== path.dirname(stop)) {
    if (
      !(await rmdir(current).then(
        () => true,
        () => false,
      ))
    )
      return;
    if (current === stop) return;
    current = path.dirname(current);
  }
}

/**
 * After a refusal before the command owned `folder` (another process may be working in it): remove
 * only the folders of the chain the command made itself, `folder` and its parents up to and including
 * `createdFrom`, each when empty; nothing below `folder` is looked at.
 * @param createdFrom {@link outermostMissingFolder} taken before the command made anything; null when
 *   the folder existed (then nothing is removed)
 */
export async function removeCreatedFolders(folder: string, createdFrom: string | null): Promise<void> {
  if (createdFrom === null) return;
  const stop = path.resolve(createdFrom);
  let current = path.resolve(folder);
  while (current === stop || current.startsWith(stop + path.sep)) {
    const removed = await rmdir(current).then(
      () => true,
      () => false,
    );
    if (!removed || current === stop) return;
    current = path.dirname(current);
  }
}
