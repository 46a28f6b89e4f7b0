/**
 * Writes one export folder without ever leaving it half-written: everything goes into
 * `{folder}.partial/` and is swapped in for the final folder on `commit` (the old export kept aside
 * as a marked `{folder}.previous` until the new one is in place: ../storage/folder-swap.ts), with
 * `duplexsynth-export.json` (format, source dataset, every file with its sha256) written last.
 * A final folder that holds files but no `duplexsynth-export.json` belongs to someone else and is
 * refused, and so is one holding an export of another format (replacing it would lose that export).
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { BuildStoppedError } from '../model/build-errors.ts';
import { bytesHash } from '../storage/content-cache.ts';
import { containedPath } from '../storage/contained-path.ts';
import { refuseForeignBackupFolder, restoreSwappedFolderSync, swapInFolder } from '../storage/folder-swap.ts';
import { openInputStream, readInputText } from '../storage/read-input-file.ts';
import { writeAtomic, writeAtomicChunks } from '../storage/write-atomic.ts';

/** The marker file of an export folder. */
export const EXPORT_MANIFEST_FILE = 'duplexsynth-export.json';

/** What `duplexsynth-export.json` records about the dataset an export was made from. */
export interface ExportSource {
  language: string;
  dataset: string;
  /** sha256 of the source dataset's `manifest.json` (which lists every file of the dataset with its sha256). */
  manifestSha256: string;
}

/** An export folder being written. */
export class ExportWriter {
  private readonly files = new Map<string, string>();

  private constructor(
    readonly finalDirectory: string,
    readonly workDirectory: string,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /**
   * Starts writing an export of `format` at `directory` (an export of the same format there is
   * replaced on commit); a leftover `{directory}.partial/` is removed first, and the old export a
   * commit killed between its two renames left as `{directory}.previous` is put back.
   * @param signal stops the export (Ctrl-C): once aborted, the next write, copy or commit throws
   *   BuildStoppedError and nothing is committed (the caller then calls {@link abandon})
   * @throws Error naming the folder when it exists with files but without `duplexsynth-export.json`,
   *   or holds an export of another format (or an unreadable marker); ForeignBackupFolderError when
   *   a `{directory}.previous` that no commit left is there
   */
  static async open(directory: string, format: string, signal?: AbortSignal): Promise<ExportWriter> {
    const absolute = path.resolve(directory);
    await refuseForeignBackupFolder(absolute, 'the export');
    restoreSwappedFolderSync(absolute);
    const existing = await readdir(absolute).catch(() => [] as string[]);
    if (existing.length > 0 && !existing.includes(EXPORT_MANIFEST_FILE)) {
      throw new Error(
        `${absolute}: exists, holds files and is not a duplexsynth export (no ${EXPORT_MANIFEST_FILE}); remove it or choose another --out`,
      );
    }
    if (existing.length > 0) {
      const markerFile = path.join(absolute, EXPORT_MANIFEST_FILE);
      const held = await readInputText(markerFile).then(
        (text) => {
          try {
            return (JSON.parse(text) as { format?: unknown }).format;
          } catch {
            return undefined;
          }
        },
        () => undefined,
      );
      if (held !== format) {
        const what =
          typeof held === 'string' ? `a ${held} export` : `an export whose ${EXPORT_MANIFEST_FILE} names no format`;
        throw new Error(
          `${absolute}: holds ${what}, not ${format}; it was left as it is: choose another --out or remove it`,
        );
      }
    }
    const work = `${absolute}.partial`;
    await rm(work, { recursive: true, force: true });
    await mkdir(work, { recursive: true });
    return new ExportWriter(absolute, work, signal);
  }

  /** @throws BuildStoppedError naming the folder when the export's signal was aborted. */
  private throwIfStopped(): void {
    if (this.signal?.aborted)
      throw new BuildStoppedError(
        `${this.finalDirectory}: export stopped (interrupted): its unfinished files are removed and the folder is as it was`,
      );
  }

  /**
   * The absolute path of `relative` inside `folder` (the work or the final folder).
   * @throws PathOutsideFolderError naming the export folder and `relative` when it leads outside the folder
   */
  private inside(folder: string, relative: string): string {
    return containedPath(folder, relative, {
      value: relative,
      file: this.finalDirectory,
      field: 'export file',
      fileName: false,
    });
  }

  /** Writes `data` at `relative` (forward slashes) inside the export. @throws PathOutsideFolderError when `relative` leads outside it */
  async write(relative: string, data: Uint8Array | string): Promise<void> {
    this.throwIfStopped();
    await writeAtomic(this.inside(this.workDirectory, relative), data);
    this.files.set(relative, bytesHash(data));
  }

  /**
   * Writes the bytes of `chunks` at `relative` as they come (a file too large to hold in memory, such
   * as a tar shard); its sha256 is taken on the way.
   * @returns the number of bytes written
   */
  async writeChunks(relative: string, chunks: AsyncIterable<Uint8Array>): Promise<number> {
    const hash = createHash('sha256');
    const throwIfStopped = () => this.throwIfStopped();
    async function* hashed() {
      for await (const chunk of chunks) {
        throwIfStopped();
        hash.update(chunk);
        yield chunk;
      }
    }
    const bytes = await writeAtomicChunks(this.inside(this.workDirectory, relative), hashed());
    this.files.set(relative, hash.digest('hex'));
    return bytes;
  }

  /**
   * Copies the file `source` to `relative` inside the export (bytes unchanged), streamed from the
   * handle pipeline/storage/read-input-file.ts opened and checked (a FIFO or a device is refused
   * before anything is written), its sha256 taken on the way.
   * @throws InputFileError naming `source` when it is not a regular file; the file-system error of its open or read
   */
  async copy(relative: string, source: string): Promise<void> {
    this.throwIfStopped();
    const { stream } = await openInputStream(source);
    try {
      await this.writeChunks(relative, stream);
    } finally {
      stream.destroy();
    }
  }

  /** Absolute path a relative export path will have once committed. */
  finalPath(relative: string): string {
    return this.inside(this.finalDirectory, relative);
  }

  /**
   * Writes `duplexsynth-export.json` and replaces the final folder by the finished one.
   * @param details format-specific settings recorded in the marker (e.g. the sample rate written)
   */
  async commit(format: string, source: ExportSource, details: Record<string, unknown> = {}): Promise<void> {
    this.throwIfStopped(); // from here on the commit runs to its end: an interrupt no longer stops it
    const files = Object.fromEntries([...this.files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const marker = { format, source, ...details, files };
    await writeAtomic(path.join(this.workDirectory, EXPORT_MANIFEST_FILE), `${JSON.stringify(marker, null, 2)}\n`);
    await mkdir(path.dirname(this.finalDirectory), { recursive: true });
    // a stop between the swap's renames puts the old export back (scripts/commands/export.ts)
    await swapInFolder(this.workDirectory, this.finalDirectory, 'the export');
  }

  /** Removes the work folder (after a failure). */
  async abandon(): Promise<void> {
    await rm(this.workDirectory, { recursive: true, force: true });
  }
}
