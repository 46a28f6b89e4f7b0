/**
 * containedPath: a name read from a file becomes a path only inside its folder; everything else is one
 * line naming the file, the field and the name.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../model/build-errors.ts';
import { ExportWriter } from '../export/export-writer.ts';
import { containedPath, isInsideFolder, PathOutsideFolderError } from './contained-path.ts';

const ROOT = path.join(os.tmpdir(), 'dataset', 'metadata');
const source = (value: string) => ({ value, file: '/d/all.jsonl:3', field: 'id' });

describe('containedPath', () => {
  it('resolves a file name inside the folder', () => {
    expect(containedPath(ROOT, 'tiny_0001.json', source('tiny_0001'))).toBe(path.join(ROOT, 'tiny_0001.json'));
    expect(containedPath(ROOT, '..x.json', source('..x'))).toBe(path.join(ROOT, '..x.json'));
  });

  it.each(['../../x', '/tmp/x', 'a/b', 'a\\b', 'x\0y', '..', '.', ''])('refuses the id %j', (id) => {
    const attempt = () => containedPath(ROOT, `${id}.json`, source(id));
    expect(attempt).toThrow(PathOutsideFolderError);
    expect(attempt).toThrow(
      `/d/all.jsonl:3: id ${JSON.stringify(id)} is not a file name (it names files and folders: no "/", "\\" or NUL character, not "." or "..")`,
    );
    try {
      attempt();
    } catch (error) {
      expect((error as PathOutsideFolderError).exitCode).toBe(EXIT_CODES.badInput);
      expect((error as Error).message).not.toContain('\n');
    }
  });

  it('refuses a relative path that leads outside, or to the folder itself', () => {
    const relative = (value: string) => ({ ...source(value), field: 'export file', fileName: false });
    expect(containedPath(ROOT, 'data_stereo/x.wav', relative('data_stereo/x.wav'))).toBe(
      path.join(ROOT, 'data_stereo', 'x.wav'),
    );
    expect(() => containedPath(ROOT, 'data/../../x.wav', relative('data/../../x.wav'))).toThrow(
      `/d/all.jsonl:3: export file "data/../../x.wav" names ${path.join(os.tmpdir(), 'dataset', 'x.wav')}, outside ${ROOT}`,
    );
    expect(() => containedPath(ROOT, '/etc/passwd', relative('/etc/passwd'))).toThrow(/outside/);
    expect(() => containedPath(ROOT, 'a/..', relative('a/..'))).toThrow(/outside/);
  });

  it('isInsideFolder tells a sibling with the same prefix from a child', () => {
    expect(isInsideFolder('/a/b', '/a/b/c')).toBe(true);
    expect(isInsideFolder('/a/b', '/a/bc')).toBe(false);
    expect(isInsideFolder('/a/b', '/a/b')).toBe(false);
    expect(isInsideFolder('/a/b', '/a/b/..x')).toBe(true);
  });
});

describe('ExportWriter', () => {
  it('refuses a file outside the export and writes nothing beside it', async () => {
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-contained-writer-'));
    try {
      const out = path.join(scratch, 'out');
      const writer = await ExportWriter.open(out, 'rttm');
      await expect(writer.write('../x.rttm', 'text')).rejects.toThrow(`${out}: export file "../x.rttm" names`);
      await expect(writer.copy('../../x.wav', import.meta.filename)).rejects.toThrow(PathOutsideFolderError);
      expect(() => writer.finalPath('../x.wav')).toThrow(PathOutsideFolderError);
      await writer.abandon();
      expect(await readdir(scratch)).toEqual([]);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
