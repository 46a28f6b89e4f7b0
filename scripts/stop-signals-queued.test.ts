/**
 * SIGTERM to a queued coordinator (`build --queue`) while it waits for workers, against a real
 * redis-server this file starts on a free loopback port: the one line, exit code 143, no `.partial`
 * under the output folder, and the jobs still queued for the same build run again. The Ctrl-C case
 * (SIGINT) is in pipeline/orchestration/queued-build.test.ts; the other commands' signals are in
 * scripts/stop-signals.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, sharedDirectory } from '../pipeline/config.ts';
import { connectQueue, DIALOGUES_QUEUE, parseQueueUrl } from '../pipeline/orchestration/build-queue.ts';
import { readQueueCounts } from '../pipeline/orchestration/queue-counts.ts';
import { freePort } from '../pipeline/orchestration/queued-build.bench.ts';
import { STOP_EXIT_CODES } from '../pipeline/run/stop-signals.ts';
import { TEST_CLI } from './testing/cli-command.ts';

const TOPIOCQA_DEV = path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');

let scratch: string;
let redis: ChildProcess;
let queueUrl: string;

/** Resolves once `redis-cli -p PORT ping` answers PONG. @throws Error after 100 tries 0.1 s apart */
async function waitForRedis(port: number): Promise<void> {
  for (let tries = 0; tries < 100; tries += 1) {
    const ping = spawn('redis-cli', ['-p', String(port), 'ping'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const answer = await new Promise<string>((resolve) => {
      let out = '';
      ping.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      ping.on('exit', () => resolve(out));
    });
    if (answer.includes('PONG')) return;
    await sleep(100);
  }
  throw new Error('redis-server did not start');
}

/** Every path under `directory` that ends in `.partial`, relative to it. */
async function partialsUnder(directory: string): Promise<string[]> {
  if (!existsSync(directory)) return [];
  return (await readdir(directory, { recursive: true })).filter((entry) => entry.endsWith('.partial'));
}

describe('SIGTERM to a queued coordinator', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-queued-signal-'));
    const port = await freePort();
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', scratch, '--save', ''], {
      stdio: 'ignore',
    });
    await waitForRedis(port);
    queueUrl = `redis://127.0.0.1:${port}/0`;
  });

  afterAll(async () => {
    const exited = new Promise((resolve) => redis.on('exit', resolve));
    redis.kill('SIGTERM');
    await exited;
    await rm(scratch, { recursive: true, force: true });
  });

  it('while it waits for workers: one line, exit 143, no .partial, the jobs stay queued', async () => {
    const out = path.join(scratch, 'out');
    const config = path.join(scratch, 'config.json');
    await writeFile(
      config,
      JSON.stringify({
        name: 'queued-signal',
        seed: 11,
        languages: ['en'],
        corpus: { path: TOPIOCQA_DEV, limit: 2 },
        output: { directory: out, cacheDirectory: path.join(scratch, 'cache') },
        llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
        quality: { enabled: false },
      }),
    );
    const coordinator = spawn(process.execPath, [TEST_CLI, 'build', '--queue', queueUrl, '--config', config], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let output = '';
    coordinator.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    coordinator.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => coordinator.on('exit', (code) => resolve(code)));
    let ended = false;
    void exited.then(() => (ended = true));
    while (!/waiting for the workers/.test(output) && !ended) await sleep(100);
    expect(ended, output).toBe(false);
    coordinator.kill('SIGTERM');
    expect(await exited, output).toBe(STOP_EXIT_CODES.SIGTERM);
    expect(STOP_EXIT_CODES.SIGTERM).toBe(143);
    expect(stderr.trim().split('\n').at(-1)).toBe(
      `duplexsynth: build stopped by SIGTERM; nothing committed; the jobs stay queued on ${queueUrl}; run the same build again to continue`,
    );
    expect(stderr.match(/stopped by SIGTERM/g)).toHaveLength(1);
    expect(await partialsUnder(out)).toEqual([]);

    const client = await connectQueue(queueUrl);
    const queue = new Queue(DIALOGUES_QUEUE, { connection: parseQueueUrl(queueUrl) });
    try {
      const counts = await readQueueCounts(queue, client);
      expect({ waiting: counts.waiting, active: counts.active, done: counts.done, failed: counts.failed }).toEqual({
        waiting: 2,
        active: 0,
        done: 0,
        failed: 0,
      });
    } finally {
      await queue.close();
      client.disconnect();
    }
  });
});
