/** `duplexsynth status`: built, failed with reasons, splits, leftovers, cache use of the last run. */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatBuildStatus, readBuildStatus, runRecordFile } from './build-status.ts';

const FIXTURE = path.join(import.meta.dirname, '..', 'export', 'fixtures', 'tiny-dataset');
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-status-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('readBuildStatus', () => {
  it('reports built and failed dialogues with stage and reason, splits, a .partial leftover and the last run', async () => {
    const out = path.join(scratch, 'out');
    await cp(FIXTURE, out, { recursive: true });
    const dataset = path.join(out, 'data', 'en', 'task', 'tiny');
    await writeFile(
      path.join(dataset, 'summary.json'),
      JSON.stringify({
        failed: [{ id: 'tiny_0003', stage: 'synthesize-speech', reason: 'espeak-ng: synthesis failed' }],
      }),
    );
    await writeFile(path.join(out, 'summary.json'), JSON.stringify({ name: 'tiny-build', seed: 3, datasets: [] }));
    await mkdir(path.join(out, 'data', 'en', 'task', 'other.partial'), { recursive: true });
    const cache = path.join(scratch, 'cache');
    await mkdir(path.join(cache, 'runs'), { recursive: true });
    await writeFile(
      runRecordFile(cache, 'tiny-build', out),
      JSON.stringify({
        outputDirectory: out,
        cache: { 'synthesize-speech': { hits: 40, misses: 2, corrupt: 0 } },
        audioSeconds: 8,
      }),
    );
    // another folder built under the same name, later, with the same cache: its record is its own
    const other = path.join(scratch, 'other-out');
    await writeFile(
      runRecordFile(cache, 'tiny-build', other),
      JSON.stringify({
        outputDirectory: other,
        cache: { 'synthesize-speech': { hits: 0, misses: 99, corrupt: 0 } },
        audioSeconds: 1,
      }),
    );
    // the record of the old layout (one per name, whatever folder) is not taken for this folder's
    await writeFile(
      path.join(cache, 'runs', 'tiny-build.json'),
      JSON.stringify({ cache: { 'synthesize-speech': { hits: 7, misses: 7, corrupt: 0 } }, audioSeconds: 8 }),
    );

    const status = await readBuildStatus(out, cache);
    expect(status).toMatchObject({
      name: 'tiny-build',
      seed: 3,
      finished: true,
      partial: ['data/en/task/other.partial'],
      report: null,
    });
    expect(status.datasets).toEqual([
      {
        folder: 'data/en/task/tiny',
        built: 2,
        failed: [{ id: 'tiny_0003', stage: 'synthesize-speech', reason: 'espeak-ng: synthesis failed' }],
        splits: { test: 1, dev: 1 },
      },
    ]);
    const text = formatBuildStatus(status);
    expect(text).toContain('data/en/task/tiny: 2 built, 1 failed; test 1, dev 1');
    expect(text).toContain('failed: tiny_0003 at synthesize-speech: espeak-ng: synthesis failed');
    expect(text).toContain('cache, last build of this folder: synthesize-speech 40 cached / 2 computed');
    expect(runRecordFile(cache, 'tiny-build', other)).not.toBe(runRecordFile(cache, 'tiny-build', out));
    await rm(runRecordFile(cache, 'tiny-build', out));
    const without = formatBuildStatus(await readBuildStatus(out, cache));
    expect(without).toContain('no record of a build of this folder');
    expect(without).not.toMatch(/99 computed|7 computed/);
  });

  it('says so when a build has not finished, and names a missing folder', async () => {
    const out = path.join(scratch, 'unfinished');
    await mkdir(path.join(out, 'data'), { recursive: true });
    const status = await readBuildStatus(out, path.join(scratch, 'no-cache'));
    expect(status.finished).toBe(false);
    expect(formatBuildStatus(status)).toContain('no summary.json');
    await expect(readBuildStatus(path.join(scratch, 'missing'), scratch)).rejects.toThrow(
      /no such build output folder/,
    );
  });
});
