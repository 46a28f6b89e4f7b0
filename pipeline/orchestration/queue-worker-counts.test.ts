/**
 * A worker's own counts in Redis (./queue-worker-counts.ts) against a real redis-server this file
 * starts on a free loopback port: what the coordinator reads (./queue-counts.ts) and how many
 * commands the writes cost.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { connectQueue, DIALOGUES_QUEUE, parseQueueUrl, WORKERS_KEY } from './build-queue.ts';
import { readQueueCounts } from './queue-counts.ts';
import { COUNT_WRITE_MILLISECONDS, WorkerCountWriter } from './queue-worker-counts.ts';
import { freePort } from './queued-build.bench.ts';
import { readRedisCommandCounts, resetRedisCommandCounts } from './redis-command-count.ts';

let redis: ChildProcess;
let url: string;
let client: Redis;
let queue: Queue;

beforeAll(async () => {
  const port = await freePort();
  url = `redis://127.0.0.1:${port}`;
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  // the server takes a moment to listen
  for (let tries = 0; ; tries += 1) {
    try {
      client = await connectQueue(url);
      break;
    } catch (error) {
      if (tries >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  queue = new Queue(DIALOGUES_QUEUE, { connection: parseQueueUrl(url) });
}, 60_000);

afterAll(async () => {
  await queue?.close();
  client?.disconnect();
  redis?.kill('SIGTERM');
});

beforeEach(async () => {
  await client.flushall();
});

const settle = () => new Promise((resolve) => setTimeout(resolve, COUNT_WRITE_MILLISECONDS * 3));

/** The named worker's counts as the coordinator reads them. */
async function workerCounts(name: string) {
  return (await readQueueCounts(queue, client)).workers.find((worker) => worker.name === name);
}

describe('a worker keeps its own counts in Redis', () => {
  it('writes a job finished and the next one taken in one command, and the coordinator reads them', async () => {
    const writer = new WorkerCountWriter(client, 'w');
    writer.count('build-a', { started: 1 });
    await settle();
    expect(await workerCounts('w')).toEqual({ name: 'w', active: 1, done: 0, failed: 0, gaveUp: 0 });
    await resetRedisCommandCounts(client);
    for (let job = 0; job < 5; job += 1) {
      writer.count('build-a', { done: 1 });
      writer.count('build-a', { started: 1 });
      await settle();
    }
    const { commands } = await readRedisCommandCounts(client);
    // one HSET per job (two HINCRBY per job when each event is written alone), and the INFO reading itself
    expect(commands).toBe(5 + 1);
    expect(await workerCounts('w')).toEqual({ name: 'w', active: 1, done: 5, failed: 0, gaveUp: 0 });
    writer.count('build-a', { failed: 1, gaveUp: 1 });
    await writer.flush();
    expect(await workerCounts('w')).toEqual({ name: 'w', active: 0, done: 5, failed: 1, gaveUp: 1 });
  });

  it('counts a job of another build from zero, as the coordinator cleared the counts for that build', async () => {
    const writer = new WorkerCountWriter(client, 'w');
    writer.count('build-a', { started: 3, done: 2 });
    await writer.flush();
    // the coordinator of a new build clears the counts (./queue-stamp.ts)
    await client.del(WORKERS_KEY, `${WORKERS_KEY}:w`);
    writer.count('build-b', { started: 1 });
    await writer.flush();
    expect(await workerCounts('w')).toEqual({ name: 'w', active: 1, done: 0, failed: 0, gaveUp: 0 });
    expect(writer.current).toEqual({ started: 1, done: 0, failed: 0, gaveUp: 0 });
  });

  it('writes nothing before the first count and everything by the time flush returns', async () => {
    const writer = new WorkerCountWriter(client, 'w');
    await writer.flush();
    expect(await client.exists(`${WORKERS_KEY}:w`)).toBe(0);
    writer.count('build-a', { started: 2, done: 1 });
    await writer.flush();
    expect(await client.hgetall(`${WORKERS_KEY}:w`)).toEqual({ started: '2', done: '1', failed: '0', gaveUp: '0' });
    expect(await client.smembers(WORKERS_KEY)).toEqual(['w']);
  });
});
