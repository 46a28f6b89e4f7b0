/**
 * The `duplexsynth` commands that read or describe a single file or dataset: `annotate` (the events
 * line of a word alignment), `verify` (a written dataset against its manifest and its events),
 * `schema` (the JSON Schemas of the config and of a language pack) and `bench` (stage timings). Each
 * loads its code when it runs, so the CLI starts fast.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Command, Option } from 'commander';
import { PACKAGE_ROOT } from '../../pipeline/storage/package-files.ts';
import { positiveInteger } from './option-parsers.ts';
import { addOutputOptions, commandOutput, type OutputOptions } from './output-options.ts';
import { runStoppable } from '../../pipeline/run/stop-signals.ts';

/** The sections of `duplexsynth bench`, in the order they run (scripts/bench.ts). */
const BENCH_SECTIONS = [
  'queue',
  'machines',
  'build',
  'saturation',
  'memory',
  'dryrun',
  'vad',
  'dnsmos',
  'chat-scoring',
  'llm',
  'tts',
  'cli',
  'tests',
];

/** Adds `annotate`, `verify`, `schema` and `bench` to a commander program. */
export function registerDatasetCommands(program: Command): void {
  program
    .command('annotate')
    .description('print the benchmark events JSONL line for a word-alignment (txt_align) file')
    .requiredOption('--alignment <file>', 'txt_align file: channel<TAB>start<TAB>end<TAB>word')
    .requiredOption('--id <id>', 'dialogue id to write in the line')
    .action(async (options: { alignment: string; id: string }) => {
      const { annotateAlignmentFile } = await import('../../pipeline/events/index.ts');
      console.log(await annotateAlignmentFile(options.alignment, options.id));
    });

  const verify = program
    .command('verify')
    .description(
      'check a written dataset: every file against the sha256 in its manifest.json, then re-derive the events from its txt_align files and its audio, and compare; exit code 1 when a problem is found',
    )
    .argument('<dataset-dir>', 'folder data/{lang}/task/{dataset}')
    .option('--quick', 'check the files against manifest.json only (no event re-derivation)');
  addOutputOptions(
    verify,
    'the files and dialogues checked, the problems and the evaluable events as JSON on standard output',
  ).action((directory: string, options: { quick?: boolean } & OutputOptions) =>
    // a signal: one line, exit 128 + its number (pipeline/run/stop-signals.ts); verify writes nothing
    runStoppable('verify', `${directory} was not changed`, () => verifyCommand(directory, options)),
  );

  program
    .command('schema')
    .description('write the JSON Schema of the build configuration (and, beside it, of a language pack file)')
    .option('--out <file>', 'output file', path.join(PACKAGE_ROOT, 'pipeline', 'config.schema.json'))
    .action(async (options: { out: string }) => {
      const [{ configJsonSchema }, { languagePackJsonSchema }] = await Promise.all([
        import('../../pipeline/config.ts'),
        import('../../pipeline/model/language-pack.ts'),
      ]);
      await writeFile(options.out, `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
      console.log(options.out);
      const packSchema = path.join(path.dirname(options.out), 'language-pack.schema.json');
      await writeFile(packSchema, `${JSON.stringify(languagePackJsonSchema(), null, 2)}\n`);
      console.log(packSchema);
    });

  program
    .command('bench')
    .description(
      'time each stage of a 20-dialogue English build of the real corpus (CONTRIBUTING.md; figures in docs/performance.md)',
    )
    .option('--corpus <path>', 'TopiOCQA JSON (default: ../shared/corpora/topiocqa/topiocqa_dev.json)')
    .option('--limit <n>', 'dialogues', positiveInteger, 20)
    .addOption(
      new Option('--sections <name...>', 'only these sections (default: all, in this order)').choices(BENCH_SECTIONS),
    )
    .option(
      '--scale-dialogues <n...>',
      "section machines: the two build sizes of the coordinator's flat-at-scale builds (default: 100 1000)",
      (value: string, previous: number[] | undefined) => [...(previous ?? []), positiveInteger(value)],
    )
    .action(async (options: { corpus?: string; limit: number; sections?: string[]; scaleDialogues?: number[] }) => {
      const { runBenchmarks } = await import('../bench.ts');
      await runBenchmarks(options);
    });
}

/**
 * `duplexsynth verify DATASET_DIR`: the integrity check (pipeline/run/dataset-integrity.ts), then,
 * without `--quick`, the events re-derived and compared (pipeline/run/verify-dataset.ts). Problems go
 * to standard error (into the JSON with `--json`); sets exit code 1 when there is one.
 */
async function verifyCommand(directory: string, options: { quick?: boolean } & OutputOptions): Promise<void> {
  const [{ verifyDatasetIntegrity }, { verifyDataset }, { formatEvaluableEventsMarkdown }] = await Promise.all([
    import('../../pipeline/run/dataset-integrity.ts'),
    import('../../pipeline/run/verify-dataset.ts'),
    import('../../pipeline/events/evaluable-events.ts'),
  ]);
  const output = commandOutput(options);
  const problem = (line: string) => void (options.json ? undefined : console.error(line));
  // integrity first (pipeline/run/dataset-integrity.ts): missing, changed and unlisted files
  const integrity = await verifyDatasetIntegrity(directory);
  for (const note of integrity.notes) output.log(`note: ${note}`);
  integrity.problems.forEach(problem);
  if (options.quick) {
    output.result(
      { filesChecked: integrity.filesChecked, problems: integrity.problems, notes: integrity.notes },
      `${integrity.filesChecked} files checked against manifest.json, ${integrity.problems.length} problems\n`,
    );
    if (integrity.problems.length > 0) process.exitCode = 1;
    return;
  }
  const result = await verifyDataset(directory);
  result.problems.forEach(problem);
  const problems = integrity.problems.length + result.problems.length;
  const summary = `${integrity.filesChecked} files checked against manifest.json, ${result.dialogues} dialogues checked, ${problems} problems\n`;
  output.result(
    {
      filesChecked: integrity.filesChecked,
      dialogues: result.dialogues,
      problems: [...integrity.problems, ...result.problems],
      notes: integrity.notes,
      evaluableEvents: result.evaluableEvents,
    },
    options.quiet
      ? summary
      : `${formatEvaluableEventsMarkdown(`Evaluable events: ${directory}`, result.evaluableEvents)}\n${summary}`,
  );
  if (problems > 0) process.exitCode = 1;
}
