/**
 * Replacing a speaker-prompt pool folder without a moment where none exists: the old pool is set
 * aside, the new one renamed in, then the old one deleted.
 */
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';

/** The folder the old pool is moved to while the new one is renamed into place. */
function previousPoolFolder(out: string): string {
  return `${out}.previous`;
}

/**
 * Moves the finished pool in `partial` to `out`: the old pool is renamed to `{out}.previous`, the new
 * one renamed in, then the old one deleted, so at every moment one whole pool exists on disk (a
 * crash between the renames is undone by {@link restoreInterruptedSwap} on the next run).
 * @throws the file-system error of a rename (the old pool is put back first)
 */
export async function swapPoolIntoPlace(partial: string, out: string): Promise<void> {
  const previous = previousPoolFolder(out);
  await rm(previous, { recursive: true, force: true });
  const hadPool = existsSync(out);
  if (hadPool) await rename(out, previous);
  try {
    await rename(partial, out);
  } catch (error) {
    if (hadPool) await rename(previous, out);
    throw error;
  }
  await rm(previous, { recursive: true, force: true });
}

/** Puts back the old pool a run killed between the two renames of {@link swapPoolIntoPlace} left aside. */
export async function restoreInterruptedSwap(out: string): Promise<void> {
  const previous = previousPoolFolder(out);
  if (!existsSync(previous)) return;
  if (existsSync(out)) await rm(previous, { recursive: true, force: true });
  else await rename(previous, out);
}
