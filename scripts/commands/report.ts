/**
 * `duplexsynth report OUT`: writes the static HTML report of the build in OUT (`OUT/report/index.html`,
 * pipeline/report/build-report.ts) and prints its path; with `--serve`, then serves OUT on
 * 127.0.0.1 and prints the report's URL until interrupted (mute and solo need a served page:
 * pipeline/report/serve-report.ts). Errors propagate to scripts/cli.ts.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { runStoppable } from '../../pipeline/run/stop-signals.ts';
import { restoreReportSync } from '../../pipeline/run/stopped-build.ts';
import { nonNegativeInteger, positiveInteger } from './option-parsers.ts';
import { addOutputOptions, commandOutput, type OutputOptions } from './output-options.ts';
import { requireBuildOutputFolder } from '../../pipeline/run/command-paths.ts';

/** Adds the `report` command to `program`. */
export function registerReportCommand(program: Command): void {
  const command = program
    .command('report')
    .description(
      'write the HTML report of a build: tables, turn-taking plots, evaluable events, a listening page per dialogue',
    )
    .argument('<out>', 'the build output folder (holds data/ and summary.json)')
    .option('--dialogue-pages <n>', 'at most N dialogue pages per dataset (default: all)', positiveInteger)
    .option(
      '--serve',
      "then serve the build folder on 127.0.0.1 and print the report's URL (mute and solo per channel work only on a served page)",
    )
    .option('--port <n>', 'port for --serve (default: a free one)', nonNegativeInteger);
  addOutputOptions(
    command,
    "the report's index path, datasets and dialogue pages (and with --serve its URL) as JSON on standard output",
  ).action(async (out: string, options: { dialoguePages?: number; serve?: boolean; port?: number } & OutputOptions) => {
    // a missing folder, a file, a dataset folder (the report would change a committed dataset): exit 2, nothing created
    await requireBuildOutputFolder(out, 'report', { needsDatasets: true });
    // the report code loads when the command runs: the CLI starts fast
    const [{ writeBuildReport }, { serveBuildReport }] = await Promise.all([
      import('../../pipeline/report/build-report.ts'),
      import('../../pipeline/report/serve-report.ts'),
    ]);
    // a signal while the report is written (pipeline/run/stop-signals.ts) removes `report.partial`: the
    // report that was there before stays
    const result = await runStoppable(
      'report',
      existsSync(path.join(out, 'report', 'index.html'))
        ? `the previous report in ${path.join(out, 'report')} is kept`
        : `no report written in ${out}`,
      (scope) => {
        // its `report.partial` removed; stopped between the report's two renames, the old one goes back
        scope.onStop(() => restoreReportSync(path.resolve(out)));
        return writeBuildReport(
          out,
          options.dialoguePages === undefined ? {} : { dialoguePagesPerDataset: options.dialoguePages },
        );
      },
    );
    const output = commandOutput(options);
    output.log(`report: ${result.datasets} datasets, ${result.dialoguePages} dialogue pages`);
    if (!options.serve) {
      output.result(result, `${result.indexPath}\n`);
      return;
    }
    const server = await serveBuildReport(out, options.port === undefined ? {} : { port: options.port });
    output.result({ ...result, url: server.url }, `${server.url}\n`);
    output.log('report: serving until interrupted (Ctrl-C)');
    // serving ends at a signal like any other command (pipeline/run/stop-signals.ts): the report stays
    await runStoppable(
      'report --serve',
      `the report in ${path.dirname(result.indexPath)} is kept`,
      (scope) => new Promise<void>((resolve) => scope.signal.addEventListener('abort', () => resolve())),
      { cooperative: true },
    ).finally(() => server.close());
  });
}
