/**
 * The counts of a queued build's jobs, read from Redis: BullMQ's jobs by state, and the counts each
 * `duplexsynth worker` keeps of its own (`duplexsynth:workers:{name}`), and their one-line form.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { connectQueue, DIALOGUES_QUEUE, parseQueueUrl, WORKERS_KEY } from './build-queue.ts';

/** Counts of one worker (workers keep them in Redis, `duplexsynth:workers:{name}`). */
export interface WorkerCounts {
  name: string;
  active: number;
  done: number;
  /** failed attempts (a job retried elsewhere counts here too) */
  failed: number;
  /** jobs whose last attempt failed on this worker (the queue counts them failed) */
  gaveUp: number;
}

/** The queue's jobs by state, and per worker. */
export interface QueueCounts {
  waiting: number;
  active: number;
  done: number;
  failed: number;
  workers: WorkerCounts[];
}

/**
 * The queue's counts: jobs waiting (including those waiting for their children or a retry),
 * active, done, failed, and each worker's own counts.
 */
export async function readQueueCounts(queue: Queue, client: Redis): Promise<QueueCounts> {
  const counts = await queue.getJobCounts(
    'waiting',
    'waiting-children',
    'delayed',
    'prioritized',
    'active',
    'completed',
    'failed',
  );
  const names = (await client.smembers(WORKERS_KEY)).sort();
  // every worker's hash in one round trip
  const pipeline = client.pipeline();
  for (const name of names) pipeline.hgetall(`${WORKERS_KEY}:${name}`);
  const replies = (await pipeline.exec()) ?? [];
  const workers: WorkerCounts[] = names.map((name, index) => {
    const [error, reply] = replies[index] ?? [new Error('no reply'), null];
    if (error) throw error;
    const fields = reply as Record<string, string>;
    return {
      name,
      // workers count jobs taken and finished (./queue-worker.ts); active is what is taken and not finished
      active: Math.max(0, Number(fields.started ?? 0) - Number(fields.done ?? 0) - Number(fields.failed ?? 0)),
      done: Number(fields.done ?? 0),
      failed: Number(fields.failed ?? 0),
      gaveUp: Number(fields.gaveUp ?? 0),
    };
  });
  return {
    waiting:
      (counts.waiting ?? 0) + (counts['waiting-children'] ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0),
    active: counts.active ?? 0,
    done: counts.completed ?? 0,
    failed: counts.failed ?? 0,
    workers,
  };
}

/**
 * The queue's counts once the workers' own counts have caught up with the queue's (`counts`, as read
 * when every job was done or failed): a worker counts a job on BullMQ's `completed` or `failed` event,
 * which comes just after the queue has marked the job, so for a moment the queue may say 6 done while
 * the workers' counts add up to 5. Waits until the workers' done counts add up to at least the queue's
 * done and their last failed attempts (`gaveUp`) to at least its failed, reading again every 100 ms,
 * for at most `waitMilliseconds` (2000 by default); then the last reading is returned as it is (a
 * worker killed between the queue's mark and its own count never counts that job).
 * @throws as readQueueCounts
 */
export async function settledWorkerCounts(
  queue: Queue,
  client: Redis,
  counts: QueueCounts,
  waitMilliseconds = 2000,
): Promise<QueueCounts> {
  const deadline = Date.now() + waitMilliseconds;
  const total = (latest: QueueCounts, field: 'done' | 'gaveUp') =>
    latest.workers.reduce((sum, worker) => sum + worker[field], 0);
  let latest = counts;
  while (total(latest, 'done') < counts.done || total(latest, 'gaveUp') < counts.failed) {
    if (Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
    latest = await readQueueCounts(queue, client);
  }
  return latest;
}

/**
 * The counts of the build queued on `url` (`duplexsynth status OUT --queue URL`).
 * @throws as connectQueue (not Redis, no answer)
 */
export async function readQueueStatus(url: string): Promise<QueueCounts> {
  const client = await connectQueue(url);
  const queue = new Queue(DIALOGUES_QUEUE, { connection: parseQueueUrl(url) });
  try {
    return await readQueueCounts(queue, client);
  } finally {
    await queue.close();
    client.disconnect();
  }
}

/** `jobs: 3 waiting, 2 active, 7 done, 0 failed; host:12 1 active 4 done, …` */
export function formatQueueCounts(counts: QueueCounts): string {
  const workers = counts.workers.map(
    (worker) =>
      `${worker.name} ${worker.active} active ${worker.done} done${worker.failed ? ` ${worker.failed} failed` : ''}`,
  );
  return `jobs: ${counts.waiting} waiting, ${counts.active} active, ${counts.done} done, ${counts.failed} failed${workers.length ? `; ${workers.join(', ')}` : ''}`;
}
