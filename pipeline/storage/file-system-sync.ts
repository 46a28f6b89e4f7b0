/**
 * Durability of a whole work folder at once. Files written into a `.partial` folder (a dataset, a
 * report) do not need to reach the disk one by one: nothing reads them before the folder is renamed
 * into place, and a crash before that discards the folder. So they are written without an fsync each
 * ({@link writeAtomic}'s `durable: false`) and {@link syncFileSystemOf} flushes them all just before
 * the rename: one `syncfs(2)` (coreutils `sync --file-system`, one process) in place of one fsync per
 * file, which on ext4 forces a journal commit each time.
 */
import { spawn } from 'node:child_process';
import { open, readdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * Flushes every file under `folder` to the disk: `sync --file-system folder` (syncfs(2) of the file
 * system holding it); when that cannot run (no coreutils `sync`, or it fails), each regular file under
 * `folder` is opened and fsync'd in turn.
 * @param folder an existing folder (absolute or relative path).
 * @throws Error naming the file whose fsync failed (the fallback only; EIO, ENOSPC on write-back).
 */
export async function syncFileSystemOf(folder: string): Promise<void> {
  if (await runSync(folder)) return;
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const handle = await open(file, 'r');
    try {
      await handle.sync();
    } catch (error) {
      throw new Error(`${file}: cannot flush to disk (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    } finally {
      await handle.close();
    }
  }
}

/** `sync --file-system folder`; resolves whether it ran and exited 0. */
function runSync(folder: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('sync', ['--file-system', folder], { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('exit', (code) => resolve(code === 0));
  });
}
