/**
 * `duplexsynth export DATASET_DIR --to FORMAT [--out DIR]`: writes a dataset in the layout of another
 * tool (lhotse, moshi-finetune, Hugging Face Parquet or AudioFolder, RTTM, Praat TextGrid, Audacity labels) and
 * prints the export folder. Errors propagate to scripts/cli.ts (one line, exit code 2).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  EXPORT_FORMAT_DESCRIPTIONS,
  EXPORT_FORMAT_NAMES,
  type ExportFormatName,
} from '../../pipeline/export/export-formats.ts';
import { addOutputOptions, commandOutput, type OutputOptions } from './output-options.ts';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { outermostMissingFolder, removeFoldersLeftEmpty } from '../../pipeline/storage/empty-folders.ts';
import { runStoppable } from '../../pipeline/run/stop-signals.ts';
import { restoreSwappedFolderSync } from '../../pipeline/storage/folder-swap.ts';

/** Adds the `export` command to `program` (the writers load when it runs: the CLI starts fast). */
export function registerExportCommand(program: Command): void {
  const command = program
    .command('export')
    .description(
      'write a dataset for another tool: ' +
        EXPORT_FORMAT_NAMES.map((name) => `${name} (${EXPORT_FORMAT_DESCRIPTIONS[name]})`).join('; '),
    )
    .argument('<dataset-dir>', 'dataset folder data/{lang}/{domain}/{dataset}')
    .addOption(new Option('--to <format>', 'export format').choices(EXPORT_FORMAT_NAMES).makeOptionMandatory())
    .option('--out <dir>', 'export folder (default: {build}/exports/{format}/{lang}/{dataset})')
    .option('--absolute-paths', 'moshi-finetune, lhotse: absolute WAV paths (default: relative to the export folder)')
    .option('--copy-audio', 'lhotse: copy the WAVs into the export (audio/{id}.wav), so it stands alone')
    .option('--shard-size <n>', 'lhotse-shar: dialogues per shard (default 1000, as lhotse)', parseShardSize)
    .addOption(
      new Option(
        '--layout <layout>',
        'huggingface: parquet (the Hub layout, audio embedded) or audiofolder (WAV files beside metadata.jsonl)',
      )
        .choices(['parquet', 'audiofolder'])
        .default('parquet'),
    );
  addOutputOptions(command, 'the export folder, format and dialogue count as JSON on standard output').action(
    async (
      directory: string,
      options: {
        to: ExportFormatName;
        out?: string;
        absolutePaths?: boolean;
        copyAudio?: boolean;
        shardSize?: number;
        layout: 'parquet' | 'audiofolder';
      } & OutputOptions,
      command: Command,
    ) => {
      refuseOptionsOfOtherFormats(options.to, command);
      const { requireDatasetFolder } = await import('../../pipeline/run/dataset-integrity.ts');
      await requireDatasetFolder(directory); // before any folder is made: a missing or wrong path creates nothing (exit 2)
      const [{ defaultExportDirectory, exportDataset }, { checkFolder }] = await Promise.all([
        import('../../pipeline/export/index.ts'),
        import('../../pipeline/run/output-checks.ts'),
      ]);
      const out = options.out ?? defaultExportDirectory(directory, options.to);
      const created = await outermostMissingFolder(out);
      // a signal (pipeline/run/stop-signals.ts) removes the unfinished `{out}.partial` and the folders the
      // export created, and ends with one line; a refusal or an error removes the folders it left empty
      const earlier = existsSync(path.join(out, 'duplexsynth-export.json'));
      const kept = earlier ? `the earlier export in ${out} is kept` : `nothing written to ${out}`;
      const result = await runStoppable('export', kept, async (scope) => {
        // latest first at a stop: the `.partial` goes, then the old export comes back when the stop
        // fell between the commit's two renames (or its backup goes when the new one is in place),
        // then the folders it leaves empty go
        scope.removeCreatedFoldersOnStop(out, created);
        scope.onStop(() => restoreSwappedFolderSync(out));
        scope.removeOnStop(`${path.resolve(out)}.partial`);
        try {
          await checkFolder(out, 'export folder'); // a file there, /proc, a read-only disk: one line, nothing removed
          const exported = await exportDataset(directory, options.to, out, {
            absolutePaths: options.absolutePaths ?? false,
            copyAudio: options.copyAudio ?? false,
            ...(options.shardSize === undefined ? {} : { shardSize: options.shardSize }),
            huggingFaceLayout: options.layout,
            signal: scope.signal,
          });
          scope.keep(`the export in ${out} is written`); // a stop from here on keeps the new export
          return exported;
        } catch (error) {
          await removeFoldersLeftEmpty(out, created); // a refused export leaves no empty folder
          throw error;
        }
      });
      const output = commandOutput(options);
      output.log(`export: ${result.dialogues} dialogues as ${result.format}`);
      output.result(result, `${result.directory}\n`);
    },
  );
}

/** The formats each format-specific option of `export` applies to. */
const FORMATS_OF_OPTION: Record<string, readonly ExportFormatName[]> = {
  absolutePaths: ['moshi-finetune', 'lhotse'],
  copyAudio: ['lhotse'],
  shardSize: ['lhotse-shar'],
  layout: ['huggingface'],
};

/**
 * Refuses an option given on the command line for a format it does not apply to (`--layout` with
 * rttm, `--shard-size` with huggingface), which would otherwise be ignored without a word.
 * @throws CommanderError (one line, exit code 2) naming the option and the formats it applies to
 */
function refuseOptionsOfOtherFormats(format: ExportFormatName, command: Command): void {
  for (const [key, formats] of Object.entries(FORMATS_OF_OPTION)) {
    if (command.getOptionValueSource(key) !== 'cli' || formats.includes(format)) continue;
    const flag = command.options.find((option) => option.attributeName() === key)!.long!;
    command.error(`error: option '${flag}' applies to ${formats.join(' and ')}, not to --to ${format}`, {
      exitCode: 2,
      code: 'duplexsynth.optionNotForFormat',
    });
  }
}

/** `--shard-size`: a positive whole number. */
function parseShardSize(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < 1)
    throw new InvalidArgumentError('a positive whole number of dialogues');
  return number;
}
