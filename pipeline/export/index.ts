/**
 * `duplexsynth export DATASET --to FORMAT`: a written dataset in the layout another tool reads. One
 * module per format, chosen from a registry; each writes into an {@link ExportWriter} (nothing
 * half-written; `duplexsynth-export.json` records the source dataset and every file's sha256).
 */
import path from 'node:path';
import { bytesHash } from '../storage/content-cache.ts';
import { readInputFile } from '../storage/read-input-file.ts';
import { writeAudacityExport } from './audacity.ts';
import { readExportDataset, type ExportDataset } from './export-dataset.ts';
import { ExportWriter } from './export-writer.ts';
import { writeHuggingFaceExport, type HuggingFaceLayout } from './huggingface.ts';
import { writeLhotseExport } from './lhotse.ts';
import { writeLhotseSharExport } from './lhotse-shar.ts';
import { writeMoshiFinetuneExport } from './moshi-finetune.ts';
import { writeRttmExport } from './rttm.ts';
import { writeTextGridExport } from './textgrid.ts';
import { EXPORT_FORMAT_DESCRIPTIONS, EXPORT_FORMAT_NAMES, type ExportFormatName } from './export-formats.ts';

/** Options every format accepts. */
export interface ExportOptions {
  /** moshi-finetune, lhotse: absolute paths (default: relative to the export folder). */
  absolutePaths?: boolean;
  /** lhotse: copy the WAVs into the export (`audio/{id}.wav`). */
  copyAudio?: boolean;
  /** lhotse-shar: dialogues per shard (default 1000, lhotse's). */
  shardSize?: number;
  /** huggingface: `parquet` (default: the Hub's layout, audio embedded) or `audiofolder` (WAV files + metadata.jsonl). */
  huggingFaceLayout?: HuggingFaceLayout;
  /** Stops the export (Ctrl-C): it ends with BuildStoppedError at its next file and writes nothing. */
  signal?: AbortSignal;
}

/** One export format. */
export interface ExportFormat {
  description: string;
  write(dataset: ExportDataset, writer: ExportWriter, options: ExportOptions): Promise<Record<string, unknown>>;
}

/** The export formats by name (their descriptions: ./export-formats.ts). */
export const EXPORT_FORMATS = {
  lhotse: {
    description: EXPORT_FORMAT_DESCRIPTIONS.lhotse,
    write: (dataset, writer, options) =>
      writeLhotseExport(dataset, writer, {
        copyAudio: options.copyAudio ?? false,
        absolutePaths: options.absolutePaths ?? false,
      }),
  },
  'lhotse-shar': {
    description: EXPORT_FORMAT_DESCRIPTIONS['lhotse-shar'],
    write: (dataset, writer, options) =>
      writeLhotseSharExport(dataset, writer, options.shardSize === undefined ? {} : { shardSize: options.shardSize }),
  },
  'moshi-finetune': {
    description: EXPORT_FORMAT_DESCRIPTIONS['moshi-finetune'],
    write: (dataset, writer, options) =>
      writeMoshiFinetuneExport(dataset, writer, { absolutePaths: options.absolutePaths ?? false }),
  },
  huggingface: {
    description: EXPORT_FORMAT_DESCRIPTIONS.huggingface,
    write: (dataset, writer, options) =>
      writeHuggingFaceExport(dataset, writer, { layout: options.huggingFaceLayout ?? 'parquet' }),
  },
  rttm: { description: EXPORT_FORMAT_DESCRIPTIONS.rttm, write: writeRttmExport },
  textgrid: { description: EXPORT_FORMAT_DESCRIPTIONS.textgrid, write: writeTextGridExport },
  audacity: { description: EXPORT_FORMAT_DESCRIPTIONS.audacity, write: writeAudacityExport },
} as const satisfies Record<ExportFormatName, ExportFormat>;

export { EXPORT_FORMAT_NAMES, type ExportFormatName };

/**
 * Where an export goes without `--out`: `{build}/exports/{format}/{lang}/{dataset}` when the dataset
 * sits in the build layout `{build}/data/{lang}/{domain}/{dataset}`, else `{dataset folder}.{format}`.
 */
export function defaultExportDirectory(datasetDirectory: string, format: ExportFormatName): string {
  const absolute = path.resolve(datasetDirectory);
  const parts = absolute.split(path.sep);
  if (parts.length >= 5 && parts.at(-4) === 'data') {
    const build = parts.slice(0, -4).join(path.sep);
    return path.join(build, 'exports', format, parts.at(-3)!, parts.at(-1)!);
  }
  return `${absolute}.${format}`;
}

/** What an export wrote. */
export interface ExportResult {
  format: ExportFormatName;
  directory: string;
  dialogues: number;
  details: Record<string, unknown>;
}

/**
 * Exports the dataset folder `datasetDirectory` as `format` into `outDirectory`.
 * @throws DatasetReadError when the dataset cannot be read (file and field named); Error when
 *   `outDirectory` holds someone else's files or an export of another format; the format's own errors, and
 *   BuildStoppedError when `options.signal` stops it (the output is then not written: its `.partial` folder is removed)
 */
export async function exportDataset(
  datasetDirectory: string,
  format: ExportFormatName,
  outDirectory: string,
  options: ExportOptions = {},
): Promise<ExportResult> {
  const dataset = await readExportDataset(datasetDirectory);
  const writer = await ExportWriter.open(outDirectory, format, options.signal);
  try {
    const details = await EXPORT_FORMATS[format].write(dataset, writer, options);
    const manifestSha256 = bytesHash(await readInputFile(path.join(dataset.directory, 'manifest.json')));
    await writer.commit(format, { language: dataset.language, dataset: dataset.dataset, manifestSha256 }, details);
    return { format, directory: writer.finalDirectory, dialogues: dataset.dialogues.length, details };
  } catch (error) {
    await writer.abandon();
    throw error;
  }
}
