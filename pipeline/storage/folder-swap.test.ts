import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BACKUP_MARKER } from './commit-backup-marker.ts';
import { ForeignBackupFolderError, restoreSwappedFolderSync, swapInFolder } from './folder-swap.ts';

let root: string;
let report: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'folder-swap-'));
  report = path.join(root, 'report');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A folder at `folder` holding `index.html` with `text`. */
async function folderWith(folder: string, text: string): Promise<void> {
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, 'index.html'), text);
}

describe('swapInFolder', () => {
  it('replaces the old folder by the new one and leaves no backup or marker', async () => {
    await folderWith(report, 'old');
    await folderWith(`${report}.partial`, 'new');
    await swapInFolder(`${report}.partial`, report, 'the report');
    expect(await readdir(report)).toEqual(['index.html']);
    expect(await readFile(path.join(report, 'index.html'), 'utf8')).toBe('new');
    expect((await readdir(root)).sort()).toEqual(['report']);
  });

  it('refuses a report.previous without the marker and leaves both folders as they were', async () => {
    await folderWith(report, 'old');
    await folderWith(`${report}.partial`, 'new');
    await folderWith(`${report}.previous`, 'mine');
    const refusal = await swapInFolder(`${report}.partial`, report, 'the report').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ForeignBackupFolderError);
    expect((refusal as Error).message).toBe(
      `${report}.previous: not a backup left by duplexsynth (no ${BACKUP_MARKER} in it), and the report is kept under that name while its new version is swapped in; it was left as it is: rename or move it`,
    );
    expect(await readFile(path.join(`${report}.previous`, 'index.html'), 'utf8')).toBe('mine');
    expect(await readdir(`${report}.previous`)).toEqual(['index.html']);
    expect(await readFile(path.join(report, 'index.html'), 'utf8')).toBe('old');
  });

  it('refuses a marker naming another folder', async () => {
    await folderWith(`${report}.partial`, 'new');
    await folderWith(`${report}.previous`, 'mine');
    await writeFile(path.join(`${report}.previous`, BACKUP_MARKER), 'other\n');
    await expect(swapInFolder(`${report}.partial`, report, 'the report')).rejects.toBeInstanceOf(
      ForeignBackupFolderError,
    );
    expect(existsSync(report)).toBe(false);
  });
});

describe('restoreSwappedFolderSync', () => {
  it('puts a marked backup back when the folder is missing (a stop between the renames), without its marker', async () => {
    await folderWith(report, 'old');
    await writeFile(path.join(report, BACKUP_MARKER), 'report\n');
    await rename(report, `${report}.previous`);
    restoreSwappedFolderSync(report);
    expect(await readdir(report)).toEqual(['index.html']);
    expect(existsSync(`${report}.previous`)).toBe(false);
  });

  it('removes a marked backup once the new folder is in place, and a marker left in the folder', async () => {
    await folderWith(`${report}.previous`, 'old');
    await writeFile(path.join(`${report}.previous`, BACKUP_MARKER), 'report\n');
    await folderWith(report, 'new');
    await writeFile(path.join(report, BACKUP_MARKER), 'report\n');
    restoreSwappedFolderSync(report);
    expect((await readdir(root)).sort()).toEqual(['report']);
    expect(await readdir(report)).toEqual(['index.html']);
  });

  it('leaves an unmarked report.previous as it is, whether or not the folder is there', async () => {
    await folderWith(`${report}.previous`, 'mine');
    restoreSwappedFolderSync(report);
    expect(existsSync(report)).toBe(false);
    expect(await readFile(path.join(`${report}.previous`, 'index.html'), 'utf8')).toBe('mine');
    await folderWith(report, 'new');
    restoreSwappedFolderSync(report);
    expect(await readdir(`${report}.previous`)).toEqual(['index.html']);
  });
});
