/**
 * `duplexsynth status OUT`: what a build output folder holds, read from its files only (nothing is
 * run): per dataset the dialogues built (`all.jsonl`), the failed ones with stage and reason
 * (`summary.json`), the split and the report when present, a dataset left half-written by an
 * interrupted build (`{dataset}.partial/`), and the cache use of this folder's last build
 * ({@link runRecordFile}, written by every build: hits and misses per stage). Builds of one name into
 * different folders share a cache but not a run record: status never shows another folder's run.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { splitJsonlLines } from '../quality/dataset-files.ts';
import { REPORT_DIRECTORY } from '../report/build-report.ts';

/** The status of one dataset folder. */
export interface DatasetStatus {
  /** Folder relative to the build output, e.g. `data/en/task/topiocqa`. */
  folder: string;
  built: number;
  failed: { id: string; stage: string; reason: string }[];
  /** Dialogues per split file present (`test`, `test_other`, `dev`, `test_small`). */
  splits: Record<string, number>;
}

/** The status of a build output folder. */
export interface BuildStatus {
  output: string;
  name: string | null;
  seed: number | null;
  /** False when `summary.json` is missing: the build has not finished (or never ran here). */
  finished: boolean;
  datasets: DatasetStatus[];
  /** Dataset folders an interrupted build left as `{dataset}.partial/`. */
  partial: string[];
  report: string | null;
  /** Cache hits and misses per stage of this folder's last build, when its record is in the cache folder. */
  lastRun: {
    file: string;
    cache: Record<string, { hits: number; misses: number; corrupt: number }>;
    audioSeconds: number | null;
  } | null;
}

/**
 * Where a build records its timings and cache use: `{cache}/runs/{name}-{hash}.json`, the hash the
 * first 12 hex digits of the sha256 of the absolute output folder (the record also holds that folder
 * as `outputDirectory`), so two folders built under one name keep a record each.
 */
export function runRecordFile(cacheDirectory: string, name: string, outputDirectory: string): string {
  const hash = createHash('sha256').update(path.resolve(outputDirectory)).digest('hex').slice(0, 12);
  return path.join(cacheDirectory, 'runs', `${name}-${hash}.json`);
}

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${file}: not valid JSON`);
  }
}

async function subfolders(directory: string): Promise<string[]> {
  return (await readdir(directory, { withFileTypes: true }).catch(() => []))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/**
 * Reads the status of the build output folder `outputDirectory`.
 * @param cacheDirectory the build's cache folder (default `outputs/.cache` beside the project, as the default config has it)
 * @throws Error naming the folder when it does not exist, or a JSON file that is malformed
 */
export async function readBuildStatus(outputDirectory: string, cacheDirectory: string): Promise<BuildStatus> {
  const output = path.resolve(outputDirectory);
  if (!existsSync(output)) throw new Error(`${output}: no such build output folder`);
  const summary = (await readJson(path.join(output, 'summary.json'))) as { name?: string; seed?: number } | null;
  const datasets: DatasetStatus[] = [];
  const partial: string[] = [];
  for (const language of await subfolders(path.join(output, 'data'))) {
    for (const domain of await subfolders(path.join(output, 'data', language))) {
      for (const name of await subfolders(path.join(output, 'data', language, domain))) {
        const folder = path.join('data', language, domain, name);
        if (name.endsWith('.partial')) {
          partial.push(folder);
          continue;
        }
        const directory = path.join(output, folder);
        const all = await readFile(path.join(directory, 'all.jsonl'), 'utf8').catch(() => '');
        const datasetSummary = (await readJson(path.join(directory, 'summary.json'))) as {
          failed?: { id: string; stage: string; reason: string }[];
        } | null;
        const splits: Record<string, number> = {};
        for (const split of ['test', 'test_other', 'dev', 'test_small']) {
          const text = await readFile(path.join(directory, `${split}.jsonl`), 'utf8').catch(() => null);
          if (text !== null) splits[split] = splitJsonlLines(text).length;
        }
        datasets.push({
          folder: folder.split(path.sep).join('/'),
          built: splitJsonlLines(all).length,
          failed: datasetSummary?.failed ?? [],
          splits,
        });
      }
    }
  }
  const name = summary?.name ?? null;
  let lastRun: BuildStatus['lastRun'] = null;
  if (name !== null) {
    const file = runRecordFile(cacheDirectory, name, output);
    const run = (await readJson(file)) as {
      outputDirectory?: string;
      cache?: Record<string, { hits: number; misses: number; corrupt: number }>;
      audioSeconds?: number;
    } | null;
    if (run?.cache && run.outputDirectory === output)
      lastRun = { file, cache: run.cache, audioSeconds: run.audioSeconds ?? null };
  }
  const reportIndex = path.join(output, REPORT_DIRECTORY, 'index.html');
  return {
    output,
    name,
    seed: summary?.seed ?? null,
    finished: summary !== null,
    datasets,
    partial,
    report: existsSync(reportIndex) ? reportIndex : null,
    lastRun,
  };
}

/** The status as lines of text. */
export function formatBuildStatus(status: BuildStatus): string {
  const lines = [
    `${status.output}: build ${status.name === null ? '(no summary.json: not finished, or not a build folder)' : `"${status.name}" (seed ${status.seed})`}`,
  ];
  for (const dataset of status.datasets) {
    const splits = Object.entries(dataset.splits).map(([split, count]) => `${split} ${count}`);
    lines.push(
      `  ${dataset.folder}: ${dataset.built} built, ${dataset.failed.length} failed${splits.length ? `; ${splits.join(', ')}` : ''}`,
    );
    for (const failure of dataset.failed)
      lines.push(`    failed: ${failure.id} at ${failure.stage}: ${failure.reason}`);
  }
  if (status.datasets.length === 0) lines.push('  no dataset folder');
  for (const folder of status.partial)
    lines.push(`  ${folder}: left by an interrupted build (removed by the next build)`);
  if (status.lastRun) {
    const stages = Object.entries(status.lastRun.cache).map(
      ([stage, counts]) =>
        `${stage} ${counts.hits} cached / ${counts.misses} computed${counts.corrupt ? ` (${counts.corrupt} corrupt)` : ''}`,
    );
    lines.push(`  cache, last build of this folder: ${stages.join('; ') || 'nothing looked up'}`);
  } else if (status.name !== null) {
    lines.push(
      `  cache: no record of a build of this folder in this cache folder (--cache-dir names the build's cache)`,
    );
  }
  lines.push(`  report: ${status.report ?? 'none (duplexsynth report OUT writes it)'}`);
  return `${lines.join('\n')}\n`;
}
