/**
 * `duplexsynth report OUT`: writes the static HTML report of the build in OUT (`OUT/report/index.html`,
 * pipeline/report/build-report.ts) and prints its path. Errors propagate to scripts/cli.ts.
 */
import { Command } from 'commander';
import { writeBuildReport } from '../../pipeline/report/build-report.ts';
import { positiveInteger } from './option-parsers.ts';
import { requireBuildOutputFolder } from '../../pipeline/run/command-paths.ts';

/** Adds the `report` command to `program`. */
export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description('write the HTML report of a build: tables, turn-taking plots, evaluable events, a listening page per dialogue')
    .argument('<out>', 'the build output folder (holds data/ and summary.json)')
    .option('--dialogue-pages <n>', 'at most N dialogue pages per dataset (default: all)', positiveInteger)
    .action(async (out: string, options: { dialoguePages?: number }) => {
      // a missing folder, a file, a dataset folder (the report would change a committed dataset): exit 2, nothing created
      await requireBuildOutputFolder(out, 'report', { needsDatasets: true });
      const result = await writeBuildReport(out, options.dialoguePages === undefined ? {} : { dialoguePagesPerDataset: options.dialoguePages });
      console.error(`report: ${result.datasets} datasets, ${result.dialoguePages} dialogue pages`);
      console.log(result.indexPath);
    });
}
