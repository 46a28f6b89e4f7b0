/**
 * What the report reads from a build's folders: the dataset folders of a build, JSON files that may
 * be absent, and the fields of `fidelity.json` it shows.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { readInputText } from '../storage/read-input-file.ts';
import path from 'node:path';
import type { ChannelDirection } from '../timeline/timing-statistics.ts';

/** The fields of `fidelity.json` the report shows. */
export interface FidelityJson {
  statistics?: { corpus?: string; command?: string };
  directions?: {
    direction: ChannelDirection;
    target?: string;
    /** `gaps`: compared with the positive part only (the benchmark profile's system answers). */
    part?: 'whole' | 'gaps';
    measuredCount?: number;
    generatedCount?: number;
    kolmogorovSmirnovDistance?: number | null;
    criticalDistance05?: number | null;
    measuredOverlapFraction?: number | null;
    generatedOverlapFraction?: number | null;
    measuredBargeInFraction?: number | null;
    generatedBargeInFraction?: number | null;
  }[];
  bargeIn?: { measuredFraction?: number | null; generatedFraction?: number | null };
  backchannels?: { measuredPerMinute?: number | null; generatedPerMinute?: number | null };
  checks?: { name: string; passed: boolean; detail: string }[];
}

/** A JSON file, or null when there is none. @throws Error naming the file when it is not valid JSON; other read errors */
export async function readJson<T>(file: string): Promise<T | null> {
  const text = await readInputText(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new Error(`${file}: not valid JSON (${(error as Error).message})`);
  }
}

/** Dataset folders of a build: every `data/{lang}/{domain}/{dataset}/manifest.json`, sorted. */
export async function buildDatasetDirectories(outputDirectory: string): Promise<string[]> {
  const data = path.join(outputDirectory, 'data');
  const found: string[] = [];
  const list = async (directory: string) =>
    (await readdir(directory, { withFileTypes: true }).catch(() => []))
      .filter((entry) => entry.isDirectory() && !entry.name.endsWith('.partial'))
      .map((entry) => entry.name)
      .sort();
  for (const language of await list(data)) {
    for (const domain of await list(path.join(data, language))) {
      for (const dataset of await list(path.join(data, language, domain))) {
        const directory = path.join(data, language, domain, dataset);
        if (existsSync(path.join(directory, 'manifest.json'))) found.push(directory);
      }
    }
  }
  return found;
}

/**
 * The results of `promises` in order, once every one has settled (so nothing still writes into the
 * report's folder when it is removed after a failure).
 * @throws the first rejection, in order
 */
export async function allSettledInOrder<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failure = settled.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<T>).value);
}
