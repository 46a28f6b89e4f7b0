/**
 * What a queued build's watcher (./queue-watcher.ts) reads from Redis besides the counts: where a
 * queue's BullMQ events stream ends (so that a `QueueEvents` reads from there on, not the stream from
 * its start), the ids of every job a queue holds as completed or failed (read in bounded batches, for
 * the jobs that finished while no events were read), and a `QueueEvents` subscribed from a given
 * stream id.
 */
import { QueueEvents, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** How many job ids one ZRANGE of a queue's completed or failed set asks for. */
export const FINISHED_ID_BATCH = 1000;

/**
 * The id of the last entry of a BullMQ events stream (`queue.toKey('events')`), or `0-0` when the stream
 * is empty or absent: a `QueueEvents` given it as `lastEventId` is told every event added after this
 * call, and none from before. One XREVRANGE.
 * @throws what ioredis throws (Redis away: the command waits, so callers bound it with a timeout)
 */
export async function lastEventId(client: Redis, queue: Queue): Promise<string> {
  const entries = await client.xrevrange(queue.toKey('events'), '+', '-', 'COUNT', 1);
  return entries[0]?.[0] ?? '0-0';
}

/**
 * Add to `into` the id of every job `queue` holds as completed or as failed (BullMQ puts a job in its
 * failed set only once it failed its last attempt), {@link FINISHED_ID_BATCH} ids per ZRANGE: one
 * command per thousand finished jobs. A job that finishes while this runs may be missed; its event
 * is not (callers subscribe first).
 * @returns how many ids were read (a job id counts once per set it was read from)
 * @throws as lastEventId
 */
export async function readFinishedJobIds(client: Redis, queue: Queue, into: Set<string>): Promise<number> {
  let read = 0;
  for (const key of [queue.toKey('completed'), queue.toKey('failed')]) {
    for (let start = 0; ; start += FINISHED_ID_BATCH) {
      const ids = await client.zrange(key, start, start + FINISHED_ID_BATCH - 1);
      for (const id of ids) into.add(id);
      read += ids.length;
      if (ids.length < FINISHED_ID_BATCH) break;
    }
  }
  return read;
}

/**
 * A `QueueEvents` of `queue` (same name, prefix and connection) that reads the events stream from
 * `fromId` on (see {@link lastEventId}); its errors (Redis away) are swallowed: the watcher says
 * outages itself. It blocks on XREAD for at most 30 s at a time, so an idle build costs one command
 * per 30 s per queue.
 */
export function subscribeQueueEvents(queue: Queue, fromId: string): QueueEvents {
  const events = new QueueEvents(queue.name, {
    connection: queue.opts.connection,
    ...(queue.opts.prefix ? { prefix: queue.opts.prefix } : {}),
    lastEventId: fromId,
    blockingTimeout: 30_000,
  });
  events.on('error', () => {});
  return events;
}
