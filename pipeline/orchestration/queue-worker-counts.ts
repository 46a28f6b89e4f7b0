/**
 * The counts a `duplexsynth worker` keeps of its own jobs in Redis, for the coordinator's progress and
 * `duplexsynth status` (read by ./queue-counts.ts): jobs taken (`started`), finished (`done`,
 * `failed`: failed attempts) and last attempts failed (`gaveUp`), in the hash
 * `{WORKERS_KEY}:{name}`, the worker's name in the set `WORKERS_KEY`.
 *
 * The worker holds the counts itself and writes all four at once (one HSET of their values), so a
 * reader, computing active as started - done - failed, never sees a job counted neither active nor
 * finished. Changes that come within {@link COUNT_WRITE_MILLISECONDS} ms of each other go out in one
 * write: a worker that finishes a job and takes its next one (BullMQ hands it over in the same
 * command) writes once per job, not once per event. The counts are of one build: a job of another
 * build (another stamp marker) starts them from zero and lists the name again, as the coordinator
 * cleared the counts and the set for that build.
 * The name joins the set with the first write, and again after Redis was away (it may have lost
 * the set, and the hash with it, which the next write restores whole).
 */
import type { Redis } from 'ioredis';
import { WORKERS_KEY } from './build-queue.ts';

/**
 * How long a count change waits for others before it is written (ms): long enough for BullMQ's
 * `active` event of the next job to follow the `completed` event of the one before, short enough
 * that progress lines and `status` see it at once.
 */
export const COUNT_WRITE_MILLISECONDS = 50;

/** A worker's counts of one build. */
export interface WorkerJobCounts {
  started: number;
  done: number;
  failed: number;
  gaveUp: number;
}

/** One worker's counts in Redis (see the module comment). */
export class WorkerCountWriter {
  private counts: WorkerJobCounts = { started: 0, done: 0, failed: 0, gaveUp: 0 };
  /** The marker token of the build counted (null: none yet). */
  private build: string | null = null;
  private listed = false;
  private timer: NodeJS.Timeout | null = null;
  /** The write under way, if any. */
  private writing: Promise<void> = Promise.resolve();

  /**
   * @param client the worker's own Redis connection (not BullMQ's; not closed here)
   * @param name the worker's name (`--name`)
   */
  constructor(
    private readonly client: Redis,
    private readonly name: string,
  ) {
    client.on('ready', () => {
      this.listed = false;
      if (this.build !== null) this.schedule(); // Redis was away: write the counts whole again
    });
  }

  /** The counts as this worker holds them (a copy). */
  get current(): WorkerJobCounts {
    return { ...this.counts };
  }

  /**
   * Count changes of a job of the build whose stamp marker is `build`; they are written within
   * {@link COUNT_WRITE_MILLISECONDS} ms, together with any that come meanwhile.
   */
  count(build: string, changes: Partial<WorkerJobCounts>): void {
    if (build !== this.build) {
      this.build = build;
      this.listed = false; // the coordinator cleared the set for that build
      this.counts = { started: 0, done: 0, failed: 0, gaveUp: 0 };
    }
    for (const [field, by] of Object.entries(changes) as [keyof WorkerJobCounts, number][]) this.counts[field] += by;
    this.schedule();
  }

  /** Write what is not written yet now, and wait for the writes (before the connection closes). Never throws. */
  async flush(): Promise<void> {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
      this.write();
    }
    await this.writing;
  }

  private schedule(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.write();
    }, COUNT_WRITE_MILLISECONDS);
  }

  /** One HSET of the four counts (a transaction with the SADD while the name is not listed). Redis away: left to the next write. */
  private write(): void {
    const key = `${WORKERS_KEY}:${this.name}`;
    const { started, done, failed, gaveUp } = this.counts;
    const values = ['started', started, 'done', done, 'failed', failed, 'gaveUp', gaveUp] as const;
    const written = this.listed
      ? this.client.hset(key, ...values).then(() => {})
      : this.client
          .multi()
          .sadd(WORKERS_KEY, this.name)
          .hset(key, ...values)
          .exec()
          .then((replies) => {
            if (replies && replies.every(([error]) => error === null)) this.listed = true;
          });
    this.writing = written.catch(() => {});
  }
}
