/**
 * `duplexsynth export DATASET --to FORMAT`: a written dataset in the layout another tool reads. One
 * module per format, chosen from a registry; each writes into an {@link ExportWriter} (nothing
 * half-written; `duplexsynth-export.json` records the source dataset and every file's sha256).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { bytesHash } from '../storage/content-cache.ts';
import { writeAudacityExport } from './audacity.ts';
import { readExportDataset, type ExportDataset } from './export-dataset.ts';
import { ExportWriter } from './export-writer.ts';
import { writeHuggingFaceExport } from './huggingface.ts';
import { writeLhotseExport } from './lhotse.ts';
import { writeMoshiFinetuneExport } from './moshi-finetune.ts';
import { writeRttmExport } from './rttm.ts';
import { writeTextGridExport } from './textgrid.ts';

/** Options every format accepts. */
export interface ExportOptions {
  /** moshi-finetune: absolute paths in the JSONL. */
  absolutePaths?: boolean;
}

/** One export format. */
export interface ExportFormat {
  description: string;
  write(dataset: ExportDataset, writer: ExportWriter, options: ExportOptions): Promise<Record<string, unknown>>;
}

/** The export formats by name. */
export const EXPORT_FORMATS = {
  lhotse: { description: 'lhotse recordings.jsonl.gz + supervisions.jsonl.gz (RecordingSet/SupervisionSet.from_jsonl)', write: writeLhotseExport },
  'moshi-finetune': {
    description: 'kyutai moshi-finetune: stereo 24 kHz WAV (left system, right user), {dataset}.jsonl of {path, duration}, per-file word alignments',
    write: (dataset, writer, options) => writeMoshiFinetuneExport(dataset, writer, { absolutePaths: options.absolutePaths ?? false }),
  },
  huggingface: { description: 'Hugging Face datasets AudioFolder (metadata.jsonl with file_name; test/validation splits)', write: writeHuggingFaceExport },
  rttm: { description: 'RTTM speaker segments, one {id}.rttm per dialogue', write: writeRttmExport },
  textgrid: { description: 'Praat TextGrid per dialogue: word tier per channel, events point tier', write: writeTextGridExport },
  audacity: { description: 'Audacity label tracks per dialogue: system words, user words, events', write: writeAudacityExport },
} as const satisfies Record<string, ExportFormat>;

/** A format name. */
export type ExportFormatName = keyof typeof EXPORT_FORMATS;

/** Format names, in the order the help lists them. */
export const EXPORT_FORMAT_NAMES = Object.keys(EXPORT_FORMATS) as ExportFormatName[];

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
 *   `outDirectory` holds someone else's files or an export of another format; the format's own errors (the output is then not
 *   written: its `.partial` folder is removed)
 */
export async function exportDataset(datasetDirectory: string, format: ExportFormatName, outDirectory: string, options: ExportOptions = {}): Promise<ExportResult> {
  const dataset = await readExportDataset(datasetDirectory);
  const writer = await ExportWriter.open(outDirectory, format);
  try {
    const details = await EXPORT_FORMATS[format].write(dataset, writer, options);
    const manifestSha256 = bytesHash(await readFile(path.join(dataset.directory, 'manifest.json')));
    await writer.commit(format, { language: dataset.language, dataset: dataset.dataset, manifestSha256 }, details);
    return { format, directory: writer.finalDirectory, dialogues: dataset.dialogues.length, details };
  } catch (error) {
    await writer.abandon();
    throw error;
  }
}
