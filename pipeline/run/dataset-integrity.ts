/**
 * The integrity half of `duplexsynth verify` (the other half, re-deriving the events, is
 * ./verify-dataset.ts): a dataset folder holds exactly the files its `manifest.json` lists, each with
 * the sha256 the build recorded, plus only the files the score and split stages add afterwards.
 *
 * Also what an interrupted commit can leave beside a dataset: `{dataset}.previous` (the last complete
 * dataset, moved aside while the new one was renamed into place; stages/render-dataset.ts), named
 * with the command that restores it.
 */
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { isOwnBackup } from '../storage/commit-backup-marker.ts';
import { datasetManifestSchema, type DatasetManifest } from '../model/dataset-manifest.ts';
import { BuildInputError } from '../model/build-errors.ts';
import { describeFileSystemError } from '../storage/file-system-errors.ts';
import { openInputStream, readInputText } from '../storage/read-input-file.ts';

/**
 * Files the score and split stages write into a committed dataset (not in its manifest: they are
 * made after it, and `duplexsynth score`/`split` rewrite them): pipeline/quality/quality-report.ts
 * `QUALITY_FILE_NAME`, pipeline/quality/tables.ts `SPLIT_FILE_NAME`, `TABLES_*`, and the split files.
 */
export const FILES_ADDED_AFTER_COMMIT: ReadonlySet<string> = new Set([
  'quality.json',
  'split.json',
  'tables.md',
  'tables.json',
  'test.jsonl',
  'test_small.jsonl',
  'test_other.jsonl',
  'dev.jsonl',
]);

/** Result of {@link verifyDatasetIntegrity}. */
export interface DatasetIntegrity {
  /** The manifest as read. */
  manifest: DatasetManifest;
  /** Files listed in the manifest that were read and hashed. */
  filesChecked: number;
  /** One line per problem, naming the file, sorted by the file's path in the folder. */
  problems: string[];
  /** Lines about the folder that are not problems of the dataset (a `.previous` left beside it). */
  notes: string[];
}

/**
 * sha256 (hex) of a file, read as a stream (a dataset's WAVs are never all in memory) from the handle
 * ../storage/read-input-file.ts checked: a FIFO or a device put there since its stat is refused.
 */
async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  const { stream } = await openInputStream(file, { maximumBytes: Number.MAX_SAFE_INTEGER });
  for await (const chunk of stream) hash.update(chunk);
  return hash.digest('hex');
}

/**
 * The folder `verify` (and the other commands that read a dataset) is given must be a dataset folder.
 * @throws BuildInputError (exit code 2) naming the path: missing (with the command that restores a
 *   `.previous` an interrupted commit left), not a folder, no `manifest.json`
 */
export async function requireDatasetFolder(directory: string): Promise<void> {
  const absolute = path.resolve(directory);
  const stats = await stat(absolute).catch((error: NodeJS.ErrnoException) => error);
  if (stats instanceof Error) {
    const previous = `${absolute}.previous`;
    if (
      stats.code === 'ENOENT' &&
      (await isOwnBackup(previous, absolute)) &&
      (await stat(path.join(previous, 'manifest.json')).then(
        () => true,
        () => false,
      ))
    ) {
      throw new BuildInputError(
        `${absolute}: missing; an interrupted commit left the last complete dataset in ${previous}: restore it with \`mv '${previous}' '${absolute}'\` (the next build does the same)`,
      );
    }
    throw new BuildInputError(describeFileSystemError(stats, absolute, 'dataset folder'));
  }
  if (!stats.isDirectory())
    throw new BuildInputError(`${absolute}: a file, not a dataset folder (data/{lang}/{domain}/{dataset})`);
  const manifestFile = path.join(absolute, 'manifest.json');
  if (
    !(await stat(manifestFile).then(
      (entry) => entry.isFile(),
      () => false,
    ))
  ) {
    throw new BuildInputError(
      `${manifestFile}: missing; ${absolute} is not a duplexsynth dataset folder (data/{lang}/{domain}/{dataset})`,
    );
  }
}

/**
 * Read a dataset's `manifest.json`.
 * @throws BuildInputError naming the file: unreadable, not JSON, or not a manifest (the field named)
 */
export async function readDatasetManifest(directory: string): Promise<DatasetManifest> {
  const manifestFile = path.join(path.resolve(directory), 'manifest.json');
  const text = await readInputText(manifestFile).catch((error: NodeJS.ErrnoException) => {
    throw new BuildInputError(describeFileSystemError(error, manifestFile, 'dataset manifest'));
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new BuildInputError(
      `${manifestFile}: not valid JSON (${(error as Error).message}); the dataset cannot be checked: rebuild it`,
    );
  }
  const parsed = datasetManifestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new BuildInputError(
      `${manifestFile}: ${issue.path.join('.') || '(top level)'}: ${issue.message}; the dataset cannot be checked: rebuild it`,
    );
  }
  return parsed.data;
}

/**
 * Check a dataset folder against its manifest: every listed file exists with the listed sha256, and
 * no file is there that the manifest does not list (besides {@link FILES_ADDED_AFTER_COMMIT}).
 * Also notes a `{dataset}.previous` left beside it.
 * @param directory the dataset folder `data/{lang}/{domain}/{dataset}`
 * @throws BuildInputError as {@link requireDatasetFolder} and {@link readDatasetManifest}
 */
export async function verifyDatasetIntegrity(directory: string): Promise<DatasetIntegrity> {
  const absolute = path.resolve(directory);
  await requireDatasetFolder(absolute);
  const manifest = await readDatasetManifest(absolute);
  const problems = new Map<string, string>();
  const notes: string[] = [];
  const listed = manifest.files ?? {};
  if (manifest.files === undefined)
    notes.push(
      `${path.join(absolute, 'manifest.json')}: lists no file hashes (written by another tool); only the events are checked`,
    );
  let filesChecked = 0;
  for (const [relative, sha256] of Object.entries(listed)) {
    const file = path.join(absolute, ...relative.split('/'));
    if (path.relative(absolute, file).startsWith('..') || path.isAbsolute(relative)) {
      problems.set(
        relative,
        `${path.join(absolute, 'manifest.json')}: lists "${relative}", a path outside the dataset folder`,
      );
      continue;
    }
    let actual: string;
    let size: number;
    try {
      const stats = await stat(file);
      if (!stats.isFile()) {
        problems.set(relative, `${file}: listed in manifest.json as a file, but it is not one`);
        continue;
      }
      size = stats.size;
      actual = await fileSha256(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      problems.set(
        relative,
        code === 'ENOENT'
          ? `${file}: listed in manifest.json but missing`
          : describeFileSystemError(error, file, 'dataset file'),
      );
      continue;
    }
    filesChecked += 1;
    if (actual !== sha256)
      problems.set(
        relative,
        `${file}: sha256 differs from manifest.json (${size} bytes now): the file was changed after the build`,
      );
  }
  if (manifest.files !== undefined) {
    for (const entry of await readdir(absolute, { recursive: true, withFileTypes: true })) {
      if (entry.isDirectory()) continue;
      const file = path.join(entry.parentPath, entry.name);
      const relative = path.relative(absolute, file).split(path.sep).join('/');
      if (relative === 'manifest.json' || relative in listed || FILES_ADDED_AFTER_COMMIT.has(relative)) continue;
      problems.set(relative, `${file}: not listed in manifest.json (added after the build; remove it or rebuild)`);
    }
  }
  const previous = `${absolute}.previous`;
  if (await isOwnBackup(previous, absolute)) {
    notes.push(
      `${previous}: left by an interrupted commit; ${absolute} is the newer complete dataset: remove the old one with \`rm -r '${previous}'\` (the next build does the same)`,
    );
  }
  const sorted = [...problems.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, problem]) => problem);
  return { manifest, filesChecked, problems: sorted, notes };
}
