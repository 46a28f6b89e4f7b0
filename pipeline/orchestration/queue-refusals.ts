/**
 * What a queued build's coordinator hears of workers that do not serve it. A worker that refuses the
 * build (another config, project version or cache; ./queue-worker.ts) adds one entry to the build's
 * refusal stream in Redis ({@link refusalsKey}, named by the stamp's marker token, so an earlier
 * build's refusals are never read) before it exits; the coordinator's {@link QueueIdleWatch} prints
 * each entry at once. It also reads the dialogues queue's counts every second: while jobs wait and no
 * worker takes one for `idleSeconds`, it says so once a minute naming the queue, and after a further
 * `giveUpSeconds` with nothing taken it stops the build with {@link QueueIdleError} (exit code 4), as a
 * Redis outage that lasts too long does (./queue-outage.ts).
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { BuildStoppedError } from '../model/build-errors.ts';
import { firstLine } from '../run/stage-runner.ts';
import type { BuildLog } from './build-context.ts';
import type { BuildStamp } from './build-queue.ts';

/** Prefix of the Redis stream of a build's refusals; the stamp's marker token follows it. */
export const REFUSALS_KEY_PREFIX = 'duplexsynth:refusals:';
/** How long a build's refusal stream stays in Redis after its last entry (seconds): a day, longer than any build waits. */
const REFUSALS_LIFETIME_SECONDS = 86_400;
/** Entries a refusal stream keeps (about; older ones are trimmed). */
const REFUSALS_KEPT = 1000;
/** Default of `--idle-seconds`: how long jobs may wait with no worker taking one before it is said. */
export const DEFAULT_IDLE_SECONDS = 300;
/** Default of `--give-up-seconds`. */
export const DEFAULT_GIVE_UP_SECONDS = 300;
/** How often the idle line is repeated (seconds). */
export const DEFAULT_IDLE_NOTICE_SECONDS = 60;
/** How often the refusals and counts are read (ms). */
const POLL_MILLISECONDS = 1000;

/** No worker took a job of the build for too long: the build stopped before writing anything (exit code 4). */
export class QueueIdleError extends BuildStoppedError {
  override name = 'QueueIdleError';
}

/** One refusal as a worker records it. */
export interface QueueRefusal {
  /** The worker's name (`--name`, default `{hostname}:{pid}`). */
  worker: string;
  /** Why, in the worker's own line (`this worker's config (hash …) differs from the build's …`). */
  reason: string;
}

/**
 * The Redis key of a build's refusal stream.
 * @param stamp the build's stamp (its marker token names the stream).
 * @returns e.g. `duplexsynth:refusals:4f0c…`.
 */
export function refusalsKey(stamp: Pick<BuildStamp, 'markerToken'>): string {
  return `${REFUSALS_KEY_PREFIX}${stamp.markerToken}`;
}

/**
 * Records that this worker refuses the build (one stream entry; the stream expires a day after its
 * last entry). A Redis that does not answer is left alone: the worker's own line says the refusal.
 * @param client the worker's Redis connection.
 * @param stamp the build refused.
 * @param refusal the worker's name and why.
 */
export async function recordRefusal(client: Redis, stamp: BuildStamp, refusal: QueueRefusal): Promise<void> {
  const key = refusalsKey(stamp);
  await client
    .multi()
    .xadd(key, 'MAXLEN', '~', String(REFUSALS_KEPT), '*', 'worker', refusal.worker, 'reason', refusal.reason)
    .expire(key, REFUSALS_LIFETIME_SECONDS)
    .exec()
    .catch(() => {});
}

/**
 * Every refusal recorded for a build after the stream entry `after`.
 * @param client a Redis connection.
 * @param stamp the build.
 * @param after the last entry id already read (`0` for all).
 * @returns the entries in order, each with its id.
 */
export async function readRefusals(
  client: Redis,
  stamp: BuildStamp,
  after = '0',
): Promise<(QueueRefusal & { id: string })[]> {
  const entries = await client.xrange(refusalsKey(stamp), after === '0' ? '-' : `(${after}`, '+', 'COUNT', 100);
  return entries.map(([id, fields]) => {
    const value = (name: string) => fields[fields.indexOf(name) + 1] ?? '';
    return { id, worker: value('worker'), reason: value('reason') };
  });
}

/** What a {@link QueueIdleWatch} watches and whom it tells. */
export interface QueueIdleWatchOptions {
  client: Redis;
  /** The dialogues queue the workers take jobs from. */
  dialogues: Queue;
  /** The build's stamp (its refusal stream). */
  stamp: BuildStamp;
  log: BuildLog;
  /** The Redis URL as log lines name it. */
  described: string;
  /** Jobs waiting this long with none taken is said (seconds; default {@link DEFAULT_IDLE_SECONDS}). */
  idleSeconds?: number;
  /** Then, this long more with none taken stops the build (seconds; default {@link DEFAULT_GIVE_UP_SECONDS}). */
  giveUpSeconds?: number;
  /** The idle line is repeated this often (seconds; default {@link DEFAULT_IDLE_NOTICE_SECONDS}). */
  noticeSeconds?: number;
  /** Called once with the error that stops the build. */
  giveUp: (error: QueueIdleError) => void;
}

/**
 * Prints the build's refusals as they come and says, then stops, a build no worker takes jobs of (see
 * the module comment). Work counts as taken while a job is active or when the queue's completed,
 * failed or delayed counts change; a reading Redis does not answer counts neither way.
 */
export class QueueIdleWatch {
  private readonly timer: NodeJS.Timeout;
  private lastRefusal = '0';
  private refusals = 0;
  private lastTakenAt = Date.now();
  private lastNoticeAt = 0;
  private lastProgress = '';
  private reading = false;
  private ended = false;

  constructor(private readonly options: QueueIdleWatchOptions) {
    this.timer = setInterval(() => void this.read(), POLL_MILLISECONDS);
    this.timer.unref();
    void this.read();
  }

  /** Stops reading (the build is done or stopped otherwise). */
  end(): void {
    this.ended = true;
    clearInterval(this.timer);
  }

  private async read(): Promise<void> {
    if (this.ended || this.reading) return;
    this.reading = true;
    try {
      await this.readRefusals();
      await this.readProgress();
    } catch {
      // Redis away: ./queue-outage.ts says so, and the idle time is not reset
    } finally {
      this.reading = false;
    }
  }

  private async readRefusals(): Promise<void> {
    const { client, stamp, log, described } = this.options;
    for (const refusal of await readRefusals(client, stamp, this.lastRefusal)) {
      if (this.ended) return;
      this.lastRefusal = refusal.id;
      this.refusals += 1;
      log(
        `queue: worker ${refusal.worker} refused the build ${stamp.name} on ${described}: ${firstLine(refusal.reason)}`,
      );
    }
  }

  private async readProgress(): Promise<void> {
    const { dialogues, log, described } = this.options;
    const counts = await dialogues.getJobCounts('waiting', 'prioritized', 'active', 'completed', 'failed', 'delayed');
    if (this.ended) return;
    const progress = `${counts.completed ?? 0}/${counts.failed ?? 0}/${counts.delayed ?? 0}`;
    const waiting = (counts.waiting ?? 0) + (counts.prioritized ?? 0);
    const now = Date.now();
    if ((counts.active ?? 0) > 0 || progress !== this.lastProgress || waiting === 0) {
      this.lastProgress = progress;
      this.lastTakenAt = now;
      this.lastNoticeAt = 0;
      return;
    }
    const idleMilliseconds = (this.options.idleSeconds ?? DEFAULT_IDLE_SECONDS) * 1000;
    const giveUpMilliseconds = (this.options.giveUpSeconds ?? DEFAULT_GIVE_UP_SECONDS) * 1000;
    const noticeMilliseconds = (this.options.noticeSeconds ?? DEFAULT_IDLE_NOTICE_SECONDS) * 1000;
    const idleFor = now - this.lastTakenAt;
    const refused = this.refusals === 0 ? '' : ` (${this.refusals} refused the build)`;
    if (idleFor >= idleMilliseconds + giveUpMilliseconds) {
      this.end();
      this.options.giveUp(
        new QueueIdleError(
          `queue: no worker took a job on ${described} for ${Math.round(idleFor / 1000)} s${refused}; stopped, nothing was written; the jobs stay queued: start a worker with this build's config and run the same build again to continue`,
        ),
      );
      return;
    }
    if (idleFor >= idleMilliseconds && now - this.lastNoticeAt >= noticeMilliseconds) {
      this.lastNoticeAt = now;
      const left = Math.max(0, Math.round((idleMilliseconds + giveUpMilliseconds - idleFor) / 1000));
      log(
        `queue: ${waiting} jobs waiting on ${described} and no worker has taken one for ${Math.round(idleFor / 1000)} s${refused}; the build stops in ${left} s unless one does (duplexsynth worker --queue ${described})`,
      );
    }
  }
}
