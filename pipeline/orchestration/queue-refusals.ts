/**
 * What a queued build's coordinator hears of workers that do not serve it, without polling. A worker
 * that refuses the build (another config, project version or cache; ./queue-worker.ts) publishes one
 * custom event on the dialogues queue's BullMQ events stream ({@link publishRefusal}) before it
 * exits; the coordinator's watcher reads that stream already (./queue-watcher.ts), so the refusal
 * reaches it with no command of its own and {@link QueueIdleWatch} prints it at once. The same watch
 * is told of every job a worker takes or finishes (the stream's `active`, `completed` and `failed`
 * events); only when none came for `idleSeconds` does it read the queue's counts (one command) to
 * tell a long job from a build no worker serves. Then it says so once a minute naming the queue, and
 * after a further `giveUpSeconds` with nothing taken it stops the build with {@link QueueIdleError}
 * (exit code 4), as a Redis outage that lasts too long does (./queue-outage.ts). A build whose jobs
 * move costs no Redis command for this, however long it runs.
 */
import { QueueEventsProducer, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { BuildStoppedError } from '../model/build-errors.ts';
import type { BuildLog } from './build-context.ts';
import { DIALOGUES_QUEUE, type BuildStamp } from './build-queue.ts';

/** Name of the custom BullMQ event a refusing worker publishes on the dialogues queue's events stream. */
export const REFUSAL_EVENT = 'duplexsynth-refused';
/** Default of `--idle-seconds`: how long jobs may wait with no worker taking one before it is said. */
export const DEFAULT_IDLE_SECONDS = 300;
/** Default of `--give-up-seconds`. */
export const DEFAULT_GIVE_UP_SECONDS = 300;
/** How often the idle line is repeated (seconds). */
export const DEFAULT_IDLE_NOTICE_SECONDS = 60;
/** Entries the events stream keeps when a refusal is added (BullMQ's own default for that stream). */
const EVENTS_KEPT = 10_000;

/** No worker took a job of the build for too long: the build stopped before writing anything (exit code 4). */
export class QueueIdleError extends BuildStoppedError {
  override name = 'QueueIdleError';
}

/** One refusal as a worker publishes it. */
export interface QueueRefusal {
  /** The worker's name (`--name`, default `{hostname}:{pid}`). */
  worker: string;
  /** Why, in the worker's own line (`this worker's config (hash …) differs from the build's …`). */
  reason: string;
  /** The refused build's stamp marker token, so a refusal of an earlier build is never taken for this one's. */
  build: string;
}

/**
 * Publishes that this worker refuses the build: one {@link REFUSAL_EVENT} entry on the dialogues
 * queue's events stream (one XADD through BullMQ's QueueEventsProducer on the worker's connection).
 * A Redis that does not answer is left alone: the worker's own line says the refusal.
 * @param client the worker's Redis connection (not closed here).
 * @param stamp the build refused.
 * @param refusal the worker's name and why.
 */
export async function publishRefusal(
  client: Redis,
  stamp: Pick<BuildStamp, 'markerToken'>,
  refusal: Omit<QueueRefusal, 'build'>,
): Promise<void> {
  const producer = new QueueEventsProducer(DIALOGUES_QUEUE, { connection: client });
  try {
    await producer.publishEvent(
      { eventName: REFUSAL_EVENT, worker: refusal.worker, reason: refusal.reason, build: stamp.markerToken },
      EVENTS_KEPT,
    );
  } catch {
    // Redis away: the worker's own line says the refusal
  } finally {
    await producer.close().catch(() => {});
  }
}

/** What a {@link QueueIdleWatch} watches and whom it tells. */
export interface QueueIdleWatchOptions {
  /** The dialogues queue the workers take jobs from (its counts are read when nothing moved for `idleSeconds`). */
  dialogues: Queue;
  /** The build's stamp (refusals of other builds are ignored). */
  stamp: Pick<BuildStamp, 'markerToken' | 'name'>;
  log: BuildLog;
  /** The Redis URL as log lines name it. */
  described: string;
  /** Jobs waiting this long with none taken is said (seconds; default {@link DEFAULT_IDLE_SECONDS}). */
  idleSeconds?: number;
  /** Then, this long more with none taken stops the build (seconds; default {@link DEFAULT_GIVE_UP_SECONDS}). */
  giveUpSeconds?: number;
  /** The idle line is repeated this often (seconds; default {@link DEFAULT_IDLE_NOTICE_SECONDS}). */
  noticeSeconds?: number;
  /** Whether Redis is away just now: the counts are not read then, and the idle time is not reset. */
  redisDown: () => boolean;
  /** Called once with the error that stops the build. */
  giveUp: (error: QueueIdleError) => void;
}

/**
 * Prints the build's refusals as the watcher hands them over and says, then stops, a build no worker
 * takes jobs of (see the module comment). The watcher calls {@link moved} for each job event and
 * {@link refused} for each refusal event; a timer does the rest.
 */
export class QueueIdleWatch {
  private timer: NodeJS.Timeout | null = null;
  private refusals = 0;
  private lastMovedAt = Date.now();
  private lastNoticeAt = 0;
  private ended = false;

  constructor(private readonly options: QueueIdleWatchOptions) {
    this.schedule(this.idleMilliseconds);
  }

  private get idleMilliseconds(): number {
    return (this.options.idleSeconds ?? DEFAULT_IDLE_SECONDS) * 1000;
  }

  /** A worker took or finished a job: the idle time starts again. */
  moved(): void {
    if (this.ended) return;
    this.lastMovedAt = Date.now();
    this.lastNoticeAt = 0;
  }

  /**
   * A refusal event from the stream; printed when it is this build's.
   * @param fields the event's fields as BullMQ's QueueEvents hands them (`worker`, `reason`, `build`).
   */
  refused(fields: Record<string, unknown>): void {
    const { stamp, log, described } = this.options;
    if (this.ended || fields.build !== stamp.markerToken) return;
    this.refusals += 1;
    log(
      `queue: worker ${String(fields.worker)} refused the build ${stamp.name} on ${described}: ${String(fields.reason).split('\n')[0]}`,
    );
  }

  /** Stops the timer (the build is done or stopped otherwise). */
  end(): void {
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(milliseconds: number): void {
    if (this.ended) return;
    this.timer = setTimeout(() => void this.check(), Math.max(10, milliseconds));
    this.timer.unref();
  }

  /** Nothing moved for a while (or a notice is due): read the counts once and say or stop as due. */
  private async check(): Promise<void> {
    this.timer = null;
    const { dialogues, log, described } = this.options;
    const now = Date.now();
    const idleFor = now - this.lastMovedAt;
    if (idleFor < this.idleMilliseconds) return this.schedule(this.idleMilliseconds - idleFor);
    const noticeMilliseconds = (this.options.noticeSeconds ?? DEFAULT_IDLE_NOTICE_SECONDS) * 1000;
    const giveUpMilliseconds = (this.options.giveUpSeconds ?? DEFAULT_GIVE_UP_SECONDS) * 1000;
    let waiting = 0;
    if (!this.options.redisDown()) {
      try {
        const counts = await dialogues.getJobCounts('waiting', 'prioritized', 'active');
        waiting = (counts.waiting ?? 0) + (counts.prioritized ?? 0);
        // a long job under way, or nothing left to take: not idle
        if ((counts.active ?? 0) > 0 || waiting === 0) this.moved();
      } catch {
        // Redis away: ./queue-outage.ts says so, and the idle time is not reset
      }
    }
    if (this.ended) return;
    const stillIdle = Date.now() - this.lastMovedAt;
    if (stillIdle < this.idleMilliseconds) return this.schedule(this.idleMilliseconds - stillIdle);
    const refused = this.refusals === 0 ? '' : ` (${this.refusals} refused the build)`;
    if (stillIdle >= this.idleMilliseconds + giveUpMilliseconds) {
      this.end();
      this.options.giveUp(
        new QueueIdleError(
          `queue: no worker took a job on ${described} for ${Math.round(stillIdle / 1000)} s${refused}; stopped, nothing was written; the jobs stay queued: start a worker with this build's config and run the same build again to continue`,
        ),
      );
      return;
    }
    if (waiting > 0 && now - this.lastNoticeAt >= noticeMilliseconds) {
      this.lastNoticeAt = now;
      const left = Math.max(0, Math.round((this.idleMilliseconds + giveUpMilliseconds - stillIdle) / 1000));
      log(
        `queue: ${waiting} jobs waiting on ${described} and no worker has taken one for ${Math.round(stillIdle / 1000)} s${refused}; the build stops in ${left} s unless one does (duplexsynth worker --queue ${described})`,
      );
    }
    const untilGiveUp = this.idleMilliseconds + giveUpMilliseconds - stillIdle;
    this.schedule(Math.min(noticeMilliseconds, untilGiveUp));
  }
}
