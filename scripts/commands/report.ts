/**
 * `duplexsynth report OUT`: writes the static HTML report of the build in OUT (`OUT/report/index.html`,
 * pipeline/report/build-report.ts) and prints its path. Errors propagate to scripts/cli.ts.
 */
import { Command } from 'commander';
import { positiveInteger } from './option-parsers.ts';

/** Adds the `report` command to `program` (the report code loads when it runs: the CLI starts fast). */
export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description('write the HTML report of a build: tables, turn-taking plots, evaluable events, a listening page per dialogue')
    .argument('<out>', 'the build output folder (holds data/ and summary.json)')
    .option('--dialogue-pages <n>', 'at most N dialogue pages per dataset (default: all)', positiveInteger)
    .action(async (out: string, options: { dialoguePages?: number }) => {
      const { writeBuildReport } = await import('../../pipeline/report/build-report.ts');
      const result = await writeBuildReport(out, options.dialoguePages === undefined ? {} : { dialoguePagesPerDataset: options.dialoguePages });
      console.error(`report: ${result.datasets} datasets, ${result.dialoguePages} dialogue pages`);
      console.log(result.indexPath);
    });
}
