/**
 * The HTML report of a build: `{build}/report/index.html` plus one page per dialogue, static files
 * that work from `file://` and offline (no CDN, no web fonts; charts are SVG files compiled at report
 * time with vega-lite; the audio is the datasets' own WAV files, referenced by relative paths).
 *
 * ```
 * report/index.html                             per dataset: statistics (like the paper's Table 3),
 *                                               quality (Table 2), turn-taking fidelity (offset
 *                                               histograms and CDFs per direction, barge-in and
 *                                               backchannel rates), evaluable events, dialogues
 * report/dialogues/{lang}/{dataset}/{id}.html   two-lane waveform, events, words, audio (dialogue-page.ts)
 * report/events/{lang}/{dataset}.html           every event of the dataset, filterable, playable (event-list-page.ts)
 * report/plots/*.svg, report/assets/*           charts; style sheet and the dialogue page's script
 * ```
 *
 * Sources, per dataset folder: `all.jsonl`, `metadata/`, `txt_align/`, `audio/` (export-dataset.ts),
 * `tables.json`'s content (rebuilt with quality/tables.ts `buildDatasetTables`, so an unscored
 * dataset still gets its statistics), `fidelity.json`, `summary.json` (failed dialogues); the
 * measured offsets come from the timing statistics named in the metadata (`timing.statistics`) when
 * that file is one of the shipped defaults (pipeline/timeline/defaults/); the evaluable events are
 * computed with pipeline/events/evaluable-events.ts under the loader settings scripts/pipe.sh uses.
 * Deterministic: the same build gives the same bytes (no timestamps). Nothing half-written: the
 * report is written into `report.partial/` and renamed over `report/`.
 */
import { copyFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import PQueue from 'p-queue';
import { readDatasetFolder, type DatasetFolder } from '../quality/dataset-files.ts';
import { packageFile } from '../storage/package-files.ts';
import { syncFileSystemOf } from '../storage/file-system-sync.ts';
import { refuseForeignBackupFolder, swapInFolder } from '../storage/folder-swap.ts';
import { writeAtomic } from '../storage/write-atomic.ts';
import { escapeHtml, htmlPage } from './html.ts';
import { datasetSection, type BuildReportOptions } from './dataset-section.ts';
import { allSettledInOrder, buildDatasetDirectories, readJson } from './report-inputs.ts';

export type { BuildReportOptions } from './dataset-section.ts';
export { buildDatasetDirectories } from './report-inputs.ts';

/** Folder of the report inside the build output. */
export const REPORT_DIRECTORY = 'report';
const ASSETS_SOURCE = packageFile('pipeline', 'report', 'assets');

/** What {@link writeBuildReport} wrote. */
export interface BuildReportResult {
  /** Absolute path of `report/index.html`. */
  indexPath: string;
  datasets: number;
  dialoguePages: number;
}

/**
 * Writes the report of the build in `outputDirectory` (module comment) and returns where.
 * @throws Error naming the file when a dataset folder cannot be read (DatasetReadError), a JSON file
 *   is malformed, or a WAV cannot be decoded; the previous report (if any) is then left as it was;
 *   ForeignBackupFolderError when a `report.previous` without the swap's marker is there (nothing written)
 */
export async function writeBuildReport(
  outputDirectory: string,
  options: BuildReportOptions = {},
): Promise<BuildReportResult> {
  const output = path.resolve(outputDirectory);
  const finalDirectory = path.join(output, REPORT_DIRECTORY);
  const work = `${finalDirectory}.partial`;
  await refuseForeignBackupFolder(finalDirectory, 'the report'); // a user's report.previous: before any work
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    const result = await writeReportInto(output, work, options);
    // its files are written without an fsync each (../storage/file-system-sync.ts): flushed together here
    await syncFileSystemOf(work);
    // the old report is marked and moved aside as report.previous, not removed, until the new one is
    // in place: a process stopped between the two renames (../run/stop-signals.ts) puts it back
    await swapInFolder(work, finalDirectory, 'the report');
    return { ...result, indexPath: path.join(finalDirectory, 'index.html') };
  } catch (error) {
    await rm(work, { recursive: true, force: true });
    throw error;
  }
}

async function writeReportInto(
  output: string,
  work: string,
  options: BuildReportOptions,
): Promise<Omit<BuildReportResult, 'indexPath'>> {
  for (const asset of ['report.css', 'dialogue.js']) {
    await mkdir(path.join(work, 'assets'), { recursive: true });
    await copyFile(path.join(ASSETS_SOURCE, asset), path.join(work, 'assets', asset));
  }
  const build = await readJson<{ name?: string; seed?: number }>(path.join(output, 'summary.json'));
  const directories = await buildDatasetDirectories(output);
  const folders = await allSettledInOrder(directories.map((directory) => readDatasetFolder(directory)));
  refuseSharedPageNames(folders);
  // every dataset at once, its dialogue pages REPORT_PAGE_CONCURRENCY at a time across datasets: one
  // page's file reads and writes wait while another's HTML is built (pages in order: 2.2-2.5 s for a
  // 20-dialogue build's report, a fifth of it waiting on the file system)
  const pages = new PQueue({ concurrency: REPORT_PAGE_CONCURRENCY });
  const parts = await allSettledInOrder(
    folders.map((folder) => datasetSection({ output, work, folder, options, pages })),
  );
  const sections = parts.map((part) => part.section);
  const contents = parts.map((part) => part.content);
  const dialoguePages = parts.reduce((sum, part) => sum + part.dialoguePages, 0);
  const title = `duplexsynth build ${build?.name ? `"${build.name}"` : path.basename(output)}`;
  const body = `<h1>${escapeHtml(title)}</h1>
<p class="note">${build?.seed !== undefined ? `seed ${build.seed} · ` : ''}${directories.length} datasets · ${dialoguePages} dialogue pages · static report: open this file in a browser (works offline)</p>
<ul>${contents.join('')}</ul>
${sections.join('\n')}`;
  await writeAtomic(path.join(work, 'index.html'), htmlPage(title, 'assets', body), { durable: false });
  return { datasets: directories.length, dialoguePages };
}

/**
 * The report names a dataset's pages, charts and section by its language and dataset name
 * (`dialogues/{lang}/{dataset}/`, `events/{lang}/{dataset}.html`): two folders that share both (the
 * same name in two domains, `data/en/task/X` and `data/en/chat/X`) would write over each other's.
 * @throws Error naming both folders
 */
function refuseSharedPageNames(folders: readonly DatasetFolder[]): void {
  const seen = new Map<string, string>();
  for (const { directory, language, dataset } of folders) {
    const name = `${language}/${dataset}`;
    const other = seen.get(name);
    if (other !== undefined) {
      throw new Error(
        `${other} and ${directory}: two datasets named ${dataset} in ${language}; the report names pages by language and dataset, so rename one (e.g. duplexsynth chat --dataset)`,
      );
    }
    seen.set(name, directory);
  }
}

/** Dialogue pages {@link writeBuildReport} builds at once (reading their WAV files, writing their HTML). */
const REPORT_PAGE_CONCURRENCY = 4;
