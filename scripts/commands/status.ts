/**
 * `duplexsynth status OUT [--cache-dir DIR]`: what a build output folder holds (built, failed with
 * reasons, splits, an interrupted build's leftovers, the report) and the cache use of the last run
 * with the build's name. Reads files only (pipeline/orchestration/build-status.ts).
 */
import path from 'node:path';
import { Command } from 'commander';
import { PACKAGE_ROOT } from '../../pipeline/storage/package-files.ts';
import { requireBuildOutputFolder } from '../../pipeline/run/command-paths.ts';

/** Adds the `status` command to `program` (its reader loads when it runs: the CLI starts fast). */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description(
      'show what a build output folder holds: dialogues built, failed (with reasons), splits, cache use of the last run, report',
    )
    .argument('<out>', 'the build output folder')
    .option(
      '--cache-dir <dir>',
      'the build cache (default: {out}/../.cache, where build --out puts it, else outputs/.cache of this project, as in the default config)',
    )
    .option('--json', 'print the status as JSON')
    .option(
      '--queue <url>',
      'also the jobs of a queued build on this Redis: waiting, active, done, failed, in total and per worker',
    )
    .action(async (out: string, options: { cacheDir?: string; json?: boolean; queue?: string }) => {
      await requireBuildOutputFolder(out, 'status'); // a missing folder, a file, a dataset folder: exit 2
      const [{ formatBuildStatus, readBuildStatus }, { describeQueueUrl }, { formatQueueCounts, readQueueStatus }] =
        await Promise.all([
          import('../../pipeline/orchestration/build-status.ts'),
          import('../../pipeline/orchestration/build-queue.ts'),
          import('../../pipeline/orchestration/queued-build.ts'),
        ]);
      // without --cache-dir: where `build --out OUT` / `demo --out OUT` put it ({OUT}/../.cache), then
      // the default config's outputs/.cache; the first holding this folder's own run record
      const candidates = options.cacheDir
        ? [path.resolve(options.cacheDir)]
        : [path.join(path.dirname(path.resolve(out)), '.cache'), path.join(PACKAGE_ROOT, 'outputs', '.cache')];
      let status = await readBuildStatus(out, candidates[0]!);
      for (const cacheDirectory of candidates.slice(1)) {
        if (status.lastRun !== null) break;
        const other = await readBuildStatus(out, cacheDirectory);
        if (other.lastRun !== null) status = other;
      }
      const queue = options.queue ? await readQueueStatus(options.queue) : undefined;
      process.stdout.write(
        options.json
          ? `${JSON.stringify(queue ? { ...status, queue } : status, null, 2)}\n`
          : `${formatBuildStatus(status)}${queue ? `queue ${describeQueueUrl(options.queue!)}: ${formatQueueCounts(queue)}\n` : ''}`,
      );
    });
}
