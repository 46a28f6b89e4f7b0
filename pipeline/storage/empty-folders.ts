/**
 * Folders a command made and then leaves empty after a refusal are removed again (a refused build or
 * export must not leave `out/data/en/task/` behind). Only empty folders are ever removed (rmdir, never
 * recursive), so nothing written by anyone is lost.
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

/**
 * Remove `folder` and every folder below it that holds nothing but empty folders (deepest first).
 * @returns whether `folder` itself was removed
 */
export async function removeEmptyFolders(folder: string): Promise<boolean> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => null);
  if (entries === null) return false;
  let empty = true;
  for (const entry of entries) {
    if (entry.isDirectory() && (await removeEmptyFolders(path.join(folder, entry.name)))) continue;
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
