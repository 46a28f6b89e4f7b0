/**
 * `duplexsynth status OUT [--cache-dir DIR]`: what a build output folder holds (built, failed with
 * reasons, splits, an interrupted build's leftovers, the report) and the cache use of the last run
 * with the build's name. Reads files only (pipeline/orchestration/build-status.ts).
 */
import path from 'node:path';
import { Command } from 'commander';
import { PROJECT_ROOT } from '../../pipeline/config.ts';
import { formatBuildStatus, readBuildStatus } from '../../pipeline/orchestration/build-status.ts';
import { requireBuildOutputFolder } from '../../pipeline/run/command-paths.ts';

/** Adds the `status` command to `program`. */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('show what a build output folder holds: dialogues built, failed (with reasons), splits, cache use of the last run, report')
    .argument('<out>', 'the build output folder')
    .option('--cache-dir <dir>', 'the build cache (default: outputs/.cache of this project, as in the default config)')
    .option('--json', 'print the status as JSON')
    .action(async (out: string, options: { cacheDir?: string; json?: boolean }) => {
      await requireBuildOutputFolder(out, 'status'); // a missing folder, a file, a dataset folder: exit 2
      const status = await readBuildStatus(out, options.cacheDir ? path.resolve(options.cacheDir) : path.join(PROJECT_ROOT, 'outputs', '.cache'));
      process.stdout.write(options.json ? `${JSON.stringify(status, null, 2)}\n` : formatBuildStatus(status));
    });
}
