/**
 * `duplexsynth export DATASET_DIR --to FORMAT [--out DIR]`: writes a dataset in the layout of another
 * tool (lhotse, moshi-finetune, Hugging Face AudioFolder, RTTM, Praat TextGrid, Audacity labels) and
 * prints the export folder. Errors propagate to scripts/cli.ts (one line, exit code 2).
 */
import { Command, Option } from 'commander';
import { defaultExportDirectory, EXPORT_FORMAT_NAMES, EXPORT_FORMATS, exportDataset, type ExportFormatName } from '../../pipeline/export/index.ts';
import { checkFolder } from '../../pipeline/run/output-checks.ts';
import { requireDatasetFolder } from '../../pipeline/run/dataset-integrity.ts';
import { outermostMissingFolder, removeFoldersLeftEmpty } from '../../pipeline/storage/empty-folders.ts';

/** Adds the `export` command to `program`. */
export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description('write a dataset for another tool: ' + EXPORT_FORMAT_NAMES.map((name) => `${name} (${EXPORT_FORMATS[name].description})`).join('; '))
    .argument('<dataset-dir>', 'dataset folder data/{lang}/{domain}/{dataset}')
    .addOption(new Option('--to <format>', 'export format').choices(EXPORT_FORMAT_NAMES).makeOptionMandatory())
    .option('--out <dir>', 'export folder (default: {build}/exports/{format}/{lang}/{dataset})')
    .option('--absolute-paths', 'moshi-finetune: absolute WAV paths in the JSONL (default: relative to the export folder)')
    .action(async (directory: string, options: { to: ExportFormatName; out?: string; absolutePaths?: boolean }) => {
      await requireDatasetFolder(directory); // before any folder is made: a missing or wrong path creates nothing (exit 2)
      const out = options.out ?? defaultExportDirectory(directory, options.to);
      const created = await outermostMissingFolder(out);
      let result;
      try {
        await checkFolder(out, 'export folder'); // a file there, /proc, a read-only disk: one line, nothing removed
        result = await exportDataset(directory, options.to, out, { absolutePaths: options.absolutePaths ?? false });
      } catch (error) {
        await removeFoldersLeftEmpty(out, created); // a refused export leaves no empty folder
        throw error;
      }
      console.error(`export: ${result.dialogues} dialogues as ${result.format}`);
      console.log(result.directory);
    });
}
