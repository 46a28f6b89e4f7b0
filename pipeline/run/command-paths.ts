/**
 * The paths the side commands (`report`, `status`, `export`, `verify`, `measure`) are given, checked
 * before they read or write anything, each refusal one line naming the path and what to give instead
 * (BuildInputError, exit code 2). Nothing here creates a folder.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { BuildInputError } from '../model/build-errors.ts';
import { describeFileSystemError } from '../storage/file-system-errors.ts';

/** Whether `directory` holds a `manifest.json` file (a dataset folder). */
async function holdsManifest(directory: string): Promise<boolean> {
  return stat(path.join(directory, 'manifest.json')).then(
    (entry) => entry.isFile(),
    () => false,
  );
}

/**
 * The dataset folder (one holding `manifest.json`) that `target` is, or is inside, or null.
 * @param target an absolute path
 */
export async function enclosingDatasetFolder(target: string): Promise<string | null> {
  let current = path.resolve(target);
  for (;;) {
    if (await holdsManifest(current)) return current;
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

/**
 * A build output folder a command reads (and `report` writes into): it must exist, be a folder, and
 * not be a dataset folder or lie inside one (a report written there would change a committed dataset).
 * @param out the path as given
 * @param command the command's name for the message
 * @param options `needsDatasets`: refuse a folder without `data/` (nothing to report)
 * @returns the absolute path
 * @throws BuildInputError naming the path and what to give instead
 */
export async function requireBuildOutputFolder(
  out: string,
  command: string,
  options: { needsDatasets?: boolean } = {},
): Promise<string> {
  const absolute = path.resolve(out);
  const stats = await stat(absolute).catch((error: unknown) => error as Error);
  if (stats instanceof Error)
    throw new BuildInputError(
      `${describeFileSystemError(stats, absolute, 'build output folder')}; give the folder a build wrote (it holds data/ and summary.json)`,
    );
  if (!stats.isDirectory())
    throw new BuildInputError(
      `${absolute}: a file, not a build output folder; give the folder a build wrote (it holds data/ and summary.json)`,
    );
  const dataset = await enclosingDatasetFolder(absolute);
  if (dataset !== null) {
    const build = path.resolve(dataset, '..', '..', '..', '..'); // {build}/data/{lang}/{domain}/{dataset}
    throw new BuildInputError(
      `${absolute}: ${dataset === absolute ? 'a dataset folder' : `inside the dataset folder ${dataset}`}, not a build output folder; ${command} takes the build's folder (${build})`,
    );
  }
  if (
    options.needsDatasets &&
    !(await stat(path.join(absolute, 'data')).then(
      (entry) => entry.isDirectory(),
      () => false,
    ))
  ) {
    throw new BuildInputError(
      `${absolute}: holds no data/ folder, so no dataset to ${command}; give the folder a build wrote (duplexsynth build --out DIR)`,
    );
  }
  return absolute;
}

/**
 * Input paths of a command that reads recordings (`measure`, `prompts`, `chat`): each must exist.
 * @throws BuildInputError naming the first path that cannot be used
 */
export async function requireInputPaths(paths: readonly string[], what: string): Promise<void> {
  for (const input of paths) {
    const absolute = path.resolve(input);
    const stats = await stat(absolute).catch((error: unknown) => error as Error);
    if (stats instanceof Error) throw new BuildInputError(describeFileSystemError(stats, absolute, what));
  }
}
