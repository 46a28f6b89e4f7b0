/**
 * The Shar writer's two sides (the tar producer and the export writer reading it) stop together and
 * name the side that failed first, whatever their timing: a bad WAV found before the writer has begun
 * reading the tar is the error thrown (not an uncaught 'error' event of the destroyed tar), and a
 * writer that fails first is not hidden by the producer's "destroyed" error that follows.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readExportDataset, type ExportDataset } from './export-dataset.ts';
import type { ExportWriter } from './export-writer.ts';
import { writeLhotseSharExport } from './lhotse-shar.ts';
import { copyExportFixture } from './testing/export-fixture.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-shar-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A writer that waits `delayMs` before it reads the tar (a slow disk), then reads it all or throws `fail`. */
function slowWriter(delayMs: number, fail?: Error): ExportWriter & { read: number } {
  const writer = {
    read: 0,
    async writeChunks(_relative: string, chunks: AsyncIterable<Uint8Array>): Promise<number> {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (fail !== undefined) throw fail;
      for await (const chunk of chunks) writer.read += chunk.length;
      return writer.read;
    },
    async write(): Promise<void> {},
  };
  return writer as unknown as ExportWriter & { read: number };
}

describe('lhotse-shar writer', () => {
  let good: ExportDataset;
  let withFifo: ExportDataset;
  beforeAll(async () => {
    good = await readExportDataset(await copyExportFixture(path.join(scratch, 'good')));
    const directory = await copyExportFixture(path.join(scratch, 'fifo'));
    for (const folder of ['audio', 'audio_fullband']) {
      const file = path.join(directory, folder, 'tiny_0001.wav');
      await rm(file);
      execFileSync('mkfifo', [file]);
    }
    withFifo = await readExportDataset(directory);
  });

  it.each([0, 50])('a FIFO WAV with the writer %i ms late: the FIFO is the error', async (delayMs) => {
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      await expect(writeLhotseSharExport(withFifo, slowWriter(delayMs))).rejects.toThrow(
        /audio(_fullband)?\/tiny_0001\.wav: .*is a FIFO, not a regular file$/,
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off('uncaughtException', record);
    }
    expect(uncaught).toEqual([]);
  });

  it('a writer that fails first is the error, not the destroyed tar the producer meets', async () => {
    const full = new Error('ENOSPC: the disk is full');
    await expect(writeLhotseSharExport(good, slowWriter(0, full))).rejects.toBe(full);
  });

  it('a slow writer still receives every member', async () => {
    const writer = slowWriter(30);
    const details = await writeLhotseSharExport(good, writer);
    expect(details.cuts).toBe(good.dialogues.length);
    expect(writer.read).toBeGreaterThan(0);
  });
});
