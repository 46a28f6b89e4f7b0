/**
 * Files written without an fsync each into a work folder reach the disk together: one
 * `sync --file-system` on that folder, or, when `sync` cannot run, an fsync of each file. A fake
 * `sync` first on PATH records how it was called.
 */
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncFileSystemOf } from './file-system-sync.ts';
import { writeAtomic } from './write-atomic.ts';

let scratch: string;
const originalPath = process.env.PATH;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-fs-sync-'));
});

afterAll(async () => {
  process.env.PATH = originalPath;
  await rm(scratch, { recursive: true, force: true });
});

/** A `sync` that appends its arguments to `calls` and exits with `code`. */
async function fakeSync(name: string, code: number): Promise<{ bin: string; calls: string }> {
  const bin = path.join(scratch, name);
  const calls = path.join(scratch, `${name}.calls`);
  await mkdir(bin, { recursive: true });
  await writeFile(path.join(bin, 'sync'), `#!/bin/sh\necho "$@" >> ${calls}\nexit ${code}\n`);
  await chmod(path.join(bin, 'sync'), 0o755);
  return { bin, calls };
}

describe('syncFileSystemOf', () => {
  it('writes without fsync still give whole files under their final names and no temporary file', async () => {
    const work = path.join(scratch, 'work-a');
    await writeAtomic(path.join(work, 'audio', 'x.wav'), new Uint8Array([1, 2, 3]), { durable: false });
    await writeAtomic(path.join(work, 'x.json'), '{"a":1}\n', { durable: false });
    expect([...(await readFile(path.join(work, 'audio', 'x.wav')))]).toEqual([1, 2, 3]);
    expect((await readdir(work, { recursive: true })).sort()).toEqual(['audio', 'audio/x.wav', 'x.json']);
    await syncFileSystemOf(work); // the real coreutils sync
  });

  it('runs `sync --file-system FOLDER` once', async () => {
    const work = path.join(scratch, 'work-b');
    await writeAtomic(path.join(work, 'x.json'), '{}', { durable: false });
    const fake = await fakeSync('ok', 0);
    process.env.PATH = `${fake.bin}:${originalPath}`;
    try {
      await syncFileSystemOf(work);
    } finally {
      process.env.PATH = originalPath;
    }
    expect(await readFile(fake.calls, 'utf8')).toBe(`--file-system ${work}\n`);
  });

  it('falls back to an fsync of each file when sync fails; a missing folder is an error', async () => {
    const work = path.join(scratch, 'work-c');
    await writeAtomic(path.join(work, 'a', 'x.json'), '{}', { durable: false });
    const fake = await fakeSync('failing', 1);
    process.env.PATH = fake.bin; // no other sync to be found
    try {
      await syncFileSystemOf(work);
      await expect(syncFileSystemOf(path.join(scratch, 'missing'))).rejects.toThrow(/ENOENT/);
    } finally {
      process.env.PATH = originalPath;
    }
    expect((await readFile(fake.calls, 'utf8')).trim().split('\n')).toHaveLength(2);
  });
});
