/**
 * What a build undoes when a signal stops it (./stop-signals.ts), registered from the build's own
 * steps:
 *
 * - under the output folder's lock (./build-guards.ts): the `.partial` folders the build makes
 *   (`data/{lang}/{domain}/{dataset}.partial`, `report.partial`, `report-pages.partial`) are removed,
 *   and a report stopped between its two renames is put back;
 * - before scoring (../orchestration/score-and-split.ts): the files scoring and splitting write into a
 *   committed dataset (`quality.json`, the tables, the split files) are read, and put back as they
 *   were (or removed when there were none) when the stop comes before the split is done, so a dataset
 *   is never left half-scored: it is as the commit left it, or scored and split.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { restoreSwappedFolderSync } from '../storage/folder-swap.ts';
import { currentStopScope } from './stop-signals.ts';

/** The files of a dataset folder that `score` and `split` write (stages/score-quality.ts, stages/split-dev-test.ts). */
export const SCORING_OUTPUT_FILES = [
  'quality.json',
  'tables.md',
  'tables.json',
  'split.json',
  'test.jsonl',
  'test_small.jsonl',
  'test_other.jsonl',
  'dev.jsonl',
] as const;

/** The `.partial` folders of a build's output folder beside the datasets' ones (the report, its pre-rendered pages). */
const OUTPUT_PARTIALS = ['report.partial', 'report-pages.partial'];

/**
 * Removes, synchronously, every `.partial` folder a build makes in `outputDirectory` (see the file
 * header). Only for the build holding the output folder's lock: no other build writes them then.
 * @returns the paths removed
 */
export function removeUnfinishedBuildOutputsSync(outputDirectory: string): string[] {
  const removed: string[] = [];
  const remove = (target: string) => {
    rmSync(target, { recursive: true, force: true });
    removed.push(target);
  };
  const list = (folder: string) => {
    try {
      return readdirSync(folder);
    } catch {
      return [];
    }
  };
  const data = path.join(outputDirectory, 'data');
  for (const language of list(data))
    for (const domain of list(path.join(data, language)))
      for (const name of list(path.join(data, language, domain)))
        if (name.endsWith('.partial')) remove(path.join(data, language, domain, name));
  for (const name of list(outputDirectory))
    if (OUTPUT_PARTIALS.includes(name)) remove(path.join(outputDirectory, name));
  restoreReportSync(outputDirectory);
  return removed;
}

/**
 * Undoes a report write stopped part-way (../report/build-report.ts): removes `report.partial/`, and
 * puts the report's marked backup `report.previous/` back as `report/` when the new report was not in
 * place yet (else removes it); a `report.previous/` without the marker is not the report's and is
 * left as it is (../storage/folder-swap.ts).
 */
export function restoreReportSync(outputDirectory: string): void {
  const report = path.join(outputDirectory, 'report');
  rmSync(`${report}.partial`, { recursive: true, force: true });
  restoreSwappedFolderSync(report);
}

/**
 * Registers with the running command's stop scope the removal of the build's `.partial` folders in
 * `outputDirectory`; does nothing without a scope (the pipeline called from a test).
 * @returns the withdrawal (call it when the build has released its lock without a stop)
 */
export function removeUnfinishedOutputsOnStop(outputDirectory: string): () => void {
  return currentStopScope()?.onStop(() => void removeUnfinishedBuildOutputsSync(outputDirectory)) ?? (() => {});
}

/**
 * Reads the scoring outputs of each dataset folder now and registers their restoration at a stop (see
 * the file header), with the removal of this process's temporary files there.
 * @param directories the dataset folders about to be scored and split
 * @param rerun what to do next, for the stop's line (`run the build again to score them`)
 * @returns the withdrawal: call it once every folder is scored and split
 */
export function restoreScoringOutputsOnStop(directories: readonly string[], rerun: string): () => void {
  const scope = currentStopScope();
  if (scope === null) return () => {};
  const before = directories.map((directory) => ({
    directory,
    files: SCORING_OUTPUT_FILES.map((name) => {
      const file = path.join(directory, name);
      try {
        return { file, content: readFileSync(file) as Buffer | null };
      } catch {
        return { file, content: null };
      }
    }),
  }));
  const keptBefore = scope.keep(
    `${directories.join(', ')} kept as ${directories.length === 1 ? 'it was' : 'they were'} before scoring; ${rerun}`,
  );
  const withdraw = scope.onStop(() => {
    for (const { directory, files } of before) {
      for (const { file, content } of files) {
        if (content === null) rmSync(file, { force: true });
        else if (existsSync(directory)) writeFileSync(file, content);
      }
      const ours = new RegExp(`-${process.pid}-[0-9a-f]{8}\\.tmp$`);
      let names: string[] = [];
      try {
        names = readdirSync(directory);
      } catch {
        // no such folder: nothing of this process in it
      }
      for (const name of names) if (ours.test(name)) rmSync(path.join(directory, name), { force: true });
    }
  });
  return () => {
    withdraw();
    keptBefore();
  };
}
