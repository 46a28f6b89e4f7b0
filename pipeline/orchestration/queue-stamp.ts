/**
 * A queued build's bookkeeping in Redis: the build's stamp (kept when the same build is continued,
 * written anew otherwise), the workers' counts, and the removal of a finished build's jobs; and the
 * closing of BullMQ connections when Redis may be away.
 */
import { readFile } from 'node:fs/promises';
import { FlowProducer, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { BuildConfig } from '../config.ts';
import type { BuildLog } from './build-context.ts';
import {
  BUILD_KEY,
  connectQueue,
  DATASETS_QUEUE,
  DIALOGUES_QUEUE,
  markerFile,
  parseQueueUrl,
  projectVersion,
  WORKERS_KEY,
  writeMarker,
  type BuildStamp,
} from './build-queue.ts';

/** Close BullMQ connections; with Redis away closing waits for it, so after 2 s they are cut (reconnect timers would keep the process alive). */
export async function closeQueues(queues: (Queue | FlowProducer)[]): Promise<void> {
  const within = (milliseconds: number, work: Promise<unknown>) =>
    Promise.race([work, new Promise((resolve) => setTimeout(resolve, milliseconds).unref())]);
  await within(2000, Promise.allSettled(queues.map((queue) => queue.close())));
  await within(1000, Promise.allSettled(queues.map((queue) => queue.disconnect())));
}

/**
 * The stamp of this build in Redis: the one there when it is this build's (same name, config hash,
 * version, and its marker still in the cache: a build continued), else a new one, whose marker is
 * written into the cache; another build's leftover jobs are removed first.
 */
export async function stampBuild(build: {
  client: Redis;
  config: BuildConfig;
  configHash: string;
  datasets: Queue;
  dialogues: Queue;
  log: BuildLog;
}): Promise<BuildStamp> {
  const { client, config, configHash, datasets, dialogues, log } = build;
  const previousText = await client.get(BUILD_KEY);
  const previous = previousText ? (JSON.parse(previousText) as BuildStamp) : null;
  if (
    previous &&
    previous.configHash === configHash &&
    previous.version === projectVersion() &&
    previous.name === config.name
  ) {
    const marker = await readFile(markerFile(config.output.cacheDirectory, config.name), 'utf8').catch(() => '');
    if (marker.includes(previous.markerToken)) return previous;
  }
  if (previous) {
    log(
      `queue: removing the jobs of an earlier build (${previous.name}, config ${previous.configHash.slice(0, 12)}) from the queue`,
    );
    await datasets.obliterate({ force: true });
    await dialogues.obliterate({ force: true });
  }
  // a new build's workers count from zero, also after a count that came in once the last build was cleared
  await clearWorkerCounts(client);
  const stamp: BuildStamp = {
    configHash,
    version: projectVersion(),
    markerToken: await writeMarker(config.output.cacheDirectory, config.name),
    name: config.name,
  };
  await client.set(BUILD_KEY, JSON.stringify(stamp));
  return stamp;
}

/** Remove every worker's counts and the set of workers. */
async function clearWorkerCounts(client: Redis): Promise<void> {
  for (const name of await client.smembers(WORKERS_KEY)) await client.del(`${WORKERS_KEY}:${name}`);
  await client.del(WORKERS_KEY);
}

/** Remove the finished build's jobs, counts and stamp (a new connection: the build's was closed before the local pass). */
export async function clearBuild(url: string, stamp: BuildStamp): Promise<void> {
  const connection = parseQueueUrl(url);
  const client = await connectQueue(url);
  const queues = [new Queue(DATASETS_QUEUE, { connection }), new Queue(DIALOGUES_QUEUE, { connection })];
  try {
    const current = await client.get(BUILD_KEY);
    if (current && (JSON.parse(current) as BuildStamp).markerToken !== stamp.markerToken) return; // another build took the queue meanwhile
    for (const queue of queues) await queue.obliterate({ force: true });
    await clearWorkerCounts(client);
    await client.del(BUILD_KEY);
  } finally {
    await closeQueues(queues);
    client.disconnect();
  }
}
