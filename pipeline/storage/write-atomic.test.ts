/**
 * An atomic write on a full or filling disk never leaves a short file under
 * its final name and says which file and how much space; temporary files a killed writer left in the
 * cache are removed, those of a running writer kept. The disk is a real tmpfs (root only).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiskFullError } from '../model/build-errors.ts';
import { ContentCache } from './content-cache.ts';
import {
  freeBytes,
  linkOrWriteAtomic,
  removeOrphanedTemporaryFiles,
  writeAtomic,
  writeAtomicChunks,
} from './write-atomic.ts';
import { hostIdentifier } from './process-liveness.ts';
import { fillFileSystem, mountTmpfs, tmpfsSkipReason, type MountedTmpfs } from './testing/tmpfs.ts';

const skipReason = tmpfsSkipReason();

describe.skipIf(skipReason !== undefined)(
  `writeAtomic on a 4 MB tmpfs${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let disk: MountedTmpfs;
    beforeAll(() => {
      disk = mountTmpfs(4 * 1024 * 1024);
    });
    afterAll(() => disk.unmount());

    it('a file larger than the free space: DiskFullError naming the file and the bytes needed; the old file stays whole', async () => {
      const file = path.join(disk.directory, 'audio', 'dialogue.wav');
      await writeAtomic(file, new Uint8Array(1000).fill(7));
      const large = new Uint8Array(5 * 1024 * 1024).fill(1);
      const error = await writeAtomic(file, large).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(DiskFullError);
      const message = (error as DiskFullError).message;
      expect(message).toContain(file);
      expect(message).toMatch(/needs 5\.2 MB/);
      expect(message.split('\n')).toHaveLength(1);
      expect((error as DiskFullError).neededBytes).toBe(large.byteLength);
      // the previous content is intact and no temporary file is left
      expect(await readFile(file)).toEqual(Buffer.from(new Uint8Array(1000).fill(7)));
      expect(await readdir(path.dirname(file))).toEqual(['dialogue.wav']);
    });

    it('a disk that fills while writing (another process takes the space): no short file under the final name', async () => {
      const filler = fillFileSystem(disk.directory);
      try {
        const file = path.join(disk.directory, 'late.json');
        await expect(writeAtomic(file, 'x'.repeat(100_000))).rejects.toThrow(DiskFullError);
        expect(existsSync(file)).toBe(false);
        expect((await readdir(disk.directory)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
      } finally {
        await rm(filler, { force: true });
      }
    });

    it('writeAtomicChunks: a stream larger than the free space is DiskFullError naming the file, nothing left, and the source is told to stop', async () => {
      const file = path.join(disk.directory, 'shards', 'recording.000000.tar');
      let produced = 0;
      let stopped = false;
      async function* chunks() {
        try {
          for (;;) {
            produced += 1;
            yield new Uint8Array(256 * 1024).fill(5);
          }
        } finally {
          stopped = true;
        }
      }
      const error = await writeAtomicChunks(file, chunks()).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(DiskFullError);
      expect((error as Error).message).toContain(file);
      expect((error as Error).message.split('\n')).toHaveLength(1);
      expect(stopped).toBe(true);
      expect(produced).toBeLessThan(20); // 4 MB: it stopped at the full disk
      expect(await readdir(path.dirname(file))).toEqual([]);
      // the space comes back: nothing of the failed write stays allocated. Polled, since a full test run
      // once saw 0 bytes free right after the temporary file was removed (a 10-byte write then failed
      // with ENOSPC) and the space back a moment later
      await expectFreeSpace(disk.directory, 3 * 1024 * 1024);
      // a source's own error comes out unchanged
      async function* failing() {
        yield new Uint8Array(10);
        throw new Error('tiny_0002.wav: not a RIFF/WAVE file');
      }
      await expect(writeAtomicChunks(file, failing())).rejects.toThrow(/^tiny_0002\.wav: not a RIFF/);
      expect(await readdir(path.dirname(file))).toEqual([]);
      await writeAtomicChunks(
        file,
        (async function* () {
          yield new Uint8Array([1, 2]);
          yield new Uint8Array([3]);
        })(),
      );
      expect(await readFile(file)).toEqual(Buffer.from([1, 2, 3]));
      await rm(path.dirname(file), { recursive: true });
    });

    it('a cache entry that does not fit is an error, never a truncated entry a later run would trust', async () => {
      const cache = new ContentCache(path.join(disk.directory, 'cache'));
      const codec = {
        encode: (value: Uint8Array) => ({ bytes: value, metadata: { length: value.byteLength } }),
        decode: (bytes: Buffer) => new Uint8Array(bytes),
      };
      const huge = new Uint8Array(6 * 1024 * 1024).fill(3);
      await expect(
        cache.binary('synthesize-speech', { text: 'hello' }, async () => huge, codec, '.wav'),
      ).rejects.toThrow(DiskFullError);
      await expectFreeSpace(disk.directory, 3 * 1024 * 1024);
      // a second run recomputes (a miss), it does not find a short entry
      let computed = 0;
      const small = await cache.binary(
        'synthesize-speech',
        { text: 'hello' },
        async () => {
          computed += 1;
          return new Uint8Array(10);
        },
        codec,
        '.wav',
      );
      expect(computed).toBe(1);
      expect(small.byteLength).toBe(10);
    });
  },
);

/** Wait (up to 10 s, polling every 50 ms) until the file system holding `directory` has `bytes` free; fails naming what it has. */
async function expectFreeSpace(directory: string, bytes: number): Promise<void> {
  let free: number | undefined;
  for (let attempt = 0; attempt < 200; attempt += 1) {
    free = await freeBytes(directory);
    if (free !== undefined && free >= bytes) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(free, `free bytes on ${directory} 10 s after the failed write`).toBeGreaterThanOrEqual(bytes);
}

describe('writeAtomic errors name the file and the cause', () => {
  it('makes missing folders (only when the file cannot be opened without them) and leaves no temporary file', async () => {
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-write-'));
    try {
      const nested = path.join(scratch, 'a', 'b', 'c.json');
      await writeAtomic(nested, '{"x":1}');
      await writeAtomic(nested, '{"x":2}');
      await writeAtomicChunks(
        path.join(scratch, 'd', 'e.bin'),
        (async function* () {
          yield new Uint8Array([1, 2, 3]);
        })(),
      );
      expect(await readFile(nested, 'utf8')).toBe('{"x":2}');
      expect(await readdir(path.join(scratch, 'a', 'b'))).toEqual(['c.json']);
      expect([...(await readFile(path.join(scratch, 'd', 'e.bin')))]).toEqual([1, 2, 3]);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it('a file where a folder should be', async () => {
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-write-'));
    try {
      await writeFile(path.join(scratch, 'blocker'), '');
      await expect(writeAtomic(path.join(scratch, 'blocker', 'a.json'), '{}')).rejects.toThrow(
        new RegExp(
          `${path.join(scratch, 'blocker', 'a.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cannot write: a part of the path is a file, not a folder`,
        ),
      );
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});

describe('temporary files left by killed writers (defect 9)', () => {
  it('are removed when their writer no longer runs (or, unknown writers, after a day); a running writer keeps its own', async () => {
    const cache = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-orphans-'));
    try {
      const entries = path.join(cache, 'synthesize-speech', 'ab');
      await mkdir(entries, { recursive: true });
      // a PID that surely ended: a child that already exited
      const ended = spawnSync(process.execPath, ['-e', '']).pid!;
      const host = hostIdentifier();
      const dead = path.join(entries, `abcd.wav.${host}-${ended}-0badf00d.tmp`);
      const live = path.join(entries, `abcd.json.${host}-${process.pid}-0badf00d.tmp`);
      const legacyOld = path.join(entries, 'abcd.json.1234567');
      const legacyNew = path.join(entries, 'abce.json.7654321');
      const otherHostOld = path.join(entries, `abcf.json.00000000-1-0badf00d.tmp`);
      const entry = path.join(entries, 'abcd.json');
      for (const file of [dead, live, legacyOld, legacyNew, otherHostOld, entry]) await writeFile(file, 'x');
      const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
      await utimes(legacyOld, twoDaysAgo, twoDaysAgo);
      await utimes(otherHostOld, twoDaysAgo, twoDaysAgo);

      const removed = await removeOrphanedTemporaryFiles(cache);
      expect(removed.sort()).toEqual([dead, legacyOld, otherHostOld].sort());
      expect((await readdir(entries)).sort()).toEqual(
        [path.basename(entry), path.basename(legacyNew), path.basename(live)].sort(),
      );
    } finally {
      await rm(cache, { recursive: true, force: true });
    }
  });
});

describe('linkOrWriteAtomic', () => {
  it('links to the stored copy (one file, two names); writes the bytes when the copy is gone or of another length; replaces a file already there', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-link-'));
    try {
      const data = new Uint8Array(1000).fill(3);
      const source = path.join(directory, 'cache', 'entry.wav');
      await writeAtomic(source, data);
      const target = path.join(directory, 'dataset', 'audio', 'd1.wav');
      expect(await linkOrWriteAtomic(target, data, source)).toBe('linked');
      const [sourceStat, targetStat] = [await stat(source), await stat(target)];
      expect(targetStat.ino).toBe(sourceStat.ino);
      expect(targetStat.nlink).toBe(2);
      // linked again to the same file (rename(2) between two links to one file does nothing): no temporary name left
      expect(await linkOrWriteAtomic(target, data, source)).toBe('linked');
      expect(await readdir(path.dirname(target))).toEqual(['d1.wav']);
      expect((await stat(target)).nlink).toBe(2);
      // the cache replaces its entries by rename: the dataset's name keeps the bytes it linked to
      await writeAtomic(source, new Uint8Array(1000).fill(4));
      expect(await readFile(target)).toEqual(Buffer.from(data));

      expect(await linkOrWriteAtomic(target, new Uint8Array(999).fill(5), source)).toBe('written'); // another length
      expect(await readFile(target)).toEqual(Buffer.alloc(999, 5));
      expect(
        await linkOrWriteAtomic(
          path.join(directory, 'dataset', 'd2.wav'),
          data,
          path.join(directory, 'cache', 'gone.wav'),
        ),
      ).toBe('written');
      expect(await readFile(path.join(directory, 'dataset', 'd2.wav'))).toEqual(Buffer.from(data));
      expect((await readdir(path.join(directory, 'dataset'))).sort()).toEqual(['audio', 'd2.wav']); // no temporary file left
      expect(await readdir(path.join(directory, 'dataset', 'audio'))).toEqual(['d1.wav']);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('reads deferred bytes only when it must write them (the stored copy gone or of another length), and passes on their error', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-link-'));
    try {
      const data = new Uint8Array(500).fill(7);
      const source = path.join(directory, 'cache', 'entry.wav');
      await writeAtomic(source, data);
      let reads = 0;
      const deferred = { byteLength: data.byteLength, read: async () => ((reads += 1), data) };
      expect(await linkOrWriteAtomic(path.join(directory, 'd1.wav'), deferred, source)).toBe('linked');
      expect(reads).toBe(0);
      expect(
        await linkOrWriteAtomic(path.join(directory, 'd2.wav'), deferred, path.join(directory, 'cache', 'gone.wav')),
      ).toBe('written');
      expect(reads).toBe(1);
      expect(await readFile(path.join(directory, 'd2.wav'))).toEqual(Buffer.from(data));
      const refused = {
        byteLength: 499,
        read: async () => Promise.reject(new Error('entry.wav: changed since it was recorded')),
      };
      await expect(linkOrWriteAtomic(path.join(directory, 'd3.wav'), refused, source)).rejects.toThrow(
        'entry.wav: changed since it was recorded',
      );
      expect((await readdir(directory)).sort()).toEqual(['cache', 'd1.wav', 'd2.wav']); // nothing half-written, no temporary name left
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  // /dev/shm is a tmpfs on Linux, another filesystem than the temporary folder's (unless that is one too)
  const otherFilesystem = existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync(os.tmpdir()).dev;
  it.skipIf(!otherFilesystem)('writes the bytes when the stored copy is on another filesystem (EXDEV)', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-link-'));
    const elsewhere = await mkdtemp(path.join('/dev/shm', 'duplexsynth-link-'));
    try {
      const data = new Uint8Array(100).fill(9);
      const source = path.join(elsewhere, 'entry.wav');
      await writeAtomic(source, data);
      const target = path.join(directory, 'd1.wav');
      expect(await linkOrWriteAtomic(target, data, source)).toBe('written');
      expect((await stat(target)).nlink).toBe(1);
      expect(await readFile(target)).toEqual(Buffer.from(data));
    } finally {
      await rm(directory, { recursive: true, force: true });
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});
