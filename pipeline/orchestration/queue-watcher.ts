/**
 * The queued build's watcher: it follows BullMQ's events of the build's queues (no polling) to tell
 * the local pass when each dialogue's job on the workers is done and when every job is, prints the
 * queue's counts as they change, says Redis outages, and stops the build when Redis stays away too
 * long or on Ctrl-C.
 */
import type { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { BuildStoppedError } from '../model/build-errors.ts';
import type { Language } from '../model/types.ts';
import type { BuildLog, BuildQueueHook } from './build-context.ts';
import { withTimeout } from './build-queue.ts';
import { formatQueueCounts, readQueueCounts, settledWorkerCounts, type QueueCounts } from './queue-counts.ts';
import { lastEventId, readFinishedJobIds, subscribeQueueEvents } from './queue-job-events.ts';
import { RedisOutage } from './queue-outage.ts';
import { QueueIdleWatch, REFUSAL_EVENT, type QueueIdleWatchOptions } from './queue-refusals.ts';

export { QueueLostError } from './queue-outage.ts';

/** What a {@link QueueWatcher} watches, and how long it waits for Redis. */
export interface QueueWatcherOptions {
  client: Redis;
  datasets: Queue;
  dialogues: Queue;
  /** Each language's dataset parent job. */
  parents: { language: Language; id: string }[];
  log: BuildLog;
  /** How long Redis may be away before the build stops (seconds; undefined: 300). */
  giveUpSeconds: number | undefined;
  /** Stops waiting (Ctrl-C). */
  signal: AbortSignal | undefined;
  /** The Redis URL as log lines name it. */
  described: string;
  /** Refusals printed and a build no worker serves stopped (./queue-refusals.ts); undefined: not watched. */
  idle?: Pick<QueueIdleWatchOptions, 'stamp' | 'idleSeconds' | 'noticeSeconds'>;
}

/**
 * How long after the last slow reading the counts and dataset parents are read again with no job finishing
 * (ms); doubled after each with no job event, up to {@link SLOWEST_REFRESH_MILLISECONDS}: idle costs less.
 */
const SLOW_REFRESH_MILLISECONDS = 30_000;
const SLOWEST_REFRESH_MILLISECONDS = 300_000;
/**
 * The shortest time between two event-driven readings of the counts (ms), and the part of it per worker
 * that has counts: a reading costs about ten commands (BullMQ's counts script, the workers' set and each
 * worker's hash), as many as a dialogue's job costs BullMQ, so readings every 10 s keep a build's commands
 * low and the progress line fresh enough; the last counts are read when every job is done in any case.
 */
const REFRESH_MILLISECONDS = 10_000;
const REFRESH_MILLISECONDS_PER_WORKER = 500;
/** How long one reading of Redis may take before Redis counts as away (ms). */
const ANSWER_MILLISECONDS = 3000;

/** A dialogue job waited for: its promise's resolvers. */
interface Waiter {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * One watcher for a whole queued build: it answers the local pass's `dialogueReady` (a dialogue's job
 * completed, or failed all its attempts) and `beforeCommit` (every dataset parent left `waiting-children`)
 * from BullMQ's events (`QueueEvents` on the dialogues and datasets queues, read from where their streams
 * ended when the watcher started). Jobs that finished before that (a second `build` continuing the same
 * jobs) are read once from the queue's completed and failed sets, a thousand ids per command; so are the
 * jobs of any events that may have been missed: after Redis came back, and when the queue counts more
 * finished jobs than the events told (BullMQ trims its events stream). The counts are printed as they
 * change, read when a job finished (at most once every 10 s, less often with many workers) and at a slow
 * pace ({@link SLOW_REFRESH_MILLISECONDS} ms, slower while nothing happens). Redis going away is said in
 * one line and its return in another; away longer than `giveUpSeconds`, or Ctrl-C (`signal`), every wait is
 * rejected with the same QueueLostError / BuildStoppedError. Once every dataset is done, none rejects.
 */
export class QueueWatcher implements BuildQueueHook {
  /** Dialogue jobs still waited for: job id → its promise's resolvers. */
  private readonly pending = new Map<string, Waiter>();
  /** Ids of the jobs of the dialogues queue known to be completed or failed for good. */
  private readonly finishedJobs = new Set<string>();
  /** The finished jobs were read from Redis once since the events were subscribed. */
  private synced = false;
  private stopError: unknown = null;
  private finished = false;
  private finishing = false;
  private readonly done: Promise<void>;
  private resolveDone!: () => void;
  private rejectDone!: (error: unknown) => void;
  private events: QueueEvents[] = [];
  private readonly outage: RedisOutage;
  private readonly idle: QueueIdleWatch | null;
  private refreshTimer: NodeJS.Timeout | null = null;
  private slowTimer: NodeJS.Timeout | null = null;
  private slowDelay = SLOW_REFRESH_MILLISECONDS;
  /** Job events since the last slow reading. */
  private jobEvents = 0;
  private lastRefreshAt = 0;
  private lastLine = '';
  private lastCounts: QueueCounts | null = null;
  /** Completed and failed jobs as the queue counted them at the previous slow reading. */
  private previouslyCountedFinished = 0;
  /** Kinds of Redis work under way, and the work asked for meanwhile (see guarded). */
  private readonly busy = new Set<string>();
  private readonly again = new Map<string, () => Promise<void>>();
  private teardown: Promise<void> | null = null;
  private readonly onAbort = () =>
    this.stop(
      new BuildStoppedError(
        `queue: stopped waiting; the jobs stay on ${this.options.described} and the workers go on: run the same build again to continue`,
      ),
    );

  constructor(private readonly options: QueueWatcherOptions) {
    this.done = new Promise<void>((resolve, reject) => ((this.resolveDone = resolve), (this.rejectDone = reject)));
    this.done.catch(() => {}); // awaited by beforeCommit; an early stop reaches the build through the dialogue waits
    const { client, signal } = options;
    this.outage = new RedisOutage({
      client,
      log: options.log,
      described: options.described,
      giveUpSeconds: options.giveUpSeconds,
      back: () => void this.sync(), // read once what the events may have missed
      giveUp: (error) => this.stop(error),
    });
    this.idle = options.idle
      ? new QueueIdleWatch({
          ...options.idle,
          dialogues: options.dialogues,
          log: options.log,
          described: options.described,
          giveUpSeconds: options.giveUpSeconds,
          redisDown: () => this.outage.down,
          giveUp: (error) => this.stop(error),
        })
      : null;
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.scheduleSlowRefresh();
    if (signal?.aborted) this.onAbort();
    else void this.sync();
  }

  /** The BullMQ id of a dialogue's job (as `runQueuedBuild` adds it). */
  private jobId(language: Language, id: string): string {
    return `${this.options.parents.find((parent) => parent.language === language)!.id}-dialogue-${id}`;
  }

  dialogueReady(language: Language, id: string): Promise<void> {
    if (this.finished) return Promise.resolve();
    if (this.stopError !== null) return Promise.reject(this.stopError);
    const jobId = this.jobId(language, id);
    if (this.finishedJobs.has(jobId)) return Promise.resolve();
    const known = this.pending.get(jobId);
    if (known) return known.promise;
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<void>((yes, no) => ((resolve = yes), (reject = no)));
    promise.catch(() => {}); // a rejection is seen by whoever awaits it
    this.pending.set(jobId, { promise, resolve, reject });
    return promise;
  }

  beforeCommit(): Promise<void> {
    return this.done;
  }

  /** Stop watching (the local pass ended, say with an error of its own) and wait until the event readers are closed. */
  async close(): Promise<void> {
    this.stop(new BuildStoppedError('queue: the local pass ended before every job was done'));
    await this.teardown;
  }

  private get over(): boolean {
    return this.finished || this.stopError !== null;
  }

  /**
   * Run `work` against Redis unless Redis is away or the watch is over; when the same kind of work is
   * under way, `work` runs once that ends (the last one asked for, once). A failure other than
   * BuildStoppedError (no answer within {@link ANSWER_MILLISECONDS} ms per step) counts as Redis going away.
   * @returns whether it ran to its end now
   */
  private async guarded(kind: string, work: () => Promise<void>): Promise<boolean> {
    if (this.over || this.outage.down) return false;
    if (this.busy.has(kind)) {
      this.again.set(kind, work);
      return false;
    }
    this.busy.add(kind);
    try {
      await work();
      return true;
    } catch (error) {
      if (error instanceof BuildStoppedError) this.stop(error);
      else this.outage.markDown(error);
      return false;
    } finally {
      this.busy.delete(kind);
      const next = this.again.get(kind);
      this.again.delete(kind);
      if (next) void this.guarded(kind, next);
    }
  }

  /** `promise`, or a rejection when Redis does not answer in time. */
  private answer<T>(promise: Promise<T>, milliseconds = ANSWER_MILLISECONDS): Promise<T> {
    return withTimeout(promise, milliseconds, `no answer within ${Math.round(milliseconds / 1000)} s`);
  }

  /**
   * Subscribe to the events (once: a `QueueEvents` reads on from its last event after a reconnect),
   * then read which jobs finished already, the parents' states and the counts. Run at the start and
   * each time Redis is back.
   */
  private async sync(): Promise<void> {
    await this.guarded('sync', async () => {
      const { client, datasets, dialogues } = this.options;
      if (this.events.length === 0) {
        const [dialoguesFrom, datasetsFrom] = await this.answer(
          Promise.all([lastEventId(client, dialogues), lastEventId(client, datasets)]),
        );
        if (this.over) return;
        this.subscribe(dialoguesFrom, datasetsFrom);
      }
      await this.readFinished();
    });
    await this.checkParents();
    await this.refreshCounts();
  }

  /** `QueueEvents` on both queues, reading their streams from the given ids on. */
  private subscribe(dialoguesFrom: string, datasetsFrom: string): void {
    const dialogueEvents = subscribeQueueEvents(this.options.dialogues, dialoguesFrom);
    // the events this stream carries anyway tell the idle watch that work moves, at no command's cost
    dialogueEvents.on('active', () => this.idle?.moved());
    dialogueEvents.on(REFUSAL_EVENT as 'active', (fields: unknown) =>
      this.idle?.refused(fields as Record<string, unknown>),
    );
    dialogueEvents.on('completed', ({ jobId }) => {
      this.idle?.moved();
      this.jobFinished(jobId);
      this.scheduleRefresh();
    });
    // BullMQ adds a job's `failed` event when it moves the job to its failed set, after its last
    // attempt; a retried attempt adds `delayed` or `waiting` instead. Its state says so, one command per failure.
    dialogueEvents.on('failed', ({ jobId }) => {
      this.idle?.moved();
      this.scheduleRefresh();
      void this.guarded(`failed ${jobId}`, async () => {
        if ((await this.answer(this.options.dialogues.getJobState(jobId))) === 'failed') this.jobFinished(jobId);
      });
    });
    const datasetEvents = subscribeQueueEvents(this.options.datasets, datasetsFrom);
    const parentIds = new Set(this.options.parents.map((parent) => parent.id));
    for (const name of ['waiting', 'delayed', 'failed', 'completed'] as const)
      datasetEvents.on(name, ({ jobId }: { jobId: string }) => {
        if (parentIds.has(jobId)) void this.checkParents();
      });
    this.events = [dialogueEvents, datasetEvents];
  }

  /** Read every completed and failed job id of the dialogues queue and release the waits they end. */
  private async readFinished(): Promise<void> {
    const { client, dialogues } = this.options;
    const finished = new Set<string>();
    await this.answer(readFinishedJobIds(client, dialogues, finished), ANSWER_MILLISECONDS * 10);
    for (const jobId of finished) this.jobFinished(jobId);
    this.synced = true;
  }

  private jobFinished(jobId: string): void {
    this.finishedJobs.add(jobId);
    const waiter = this.pending.get(jobId);
    if (!waiter) return;
    this.pending.delete(jobId);
    waiter.resolve();
  }

  /** Read the counts soon (a job finished; the next one is active already when its worker had one waiting): at most every {@link REFRESH_MILLISECONDS} ms, and once per {@link REFRESH_MILLISECONDS_PER_WORKER} ms per worker. */
  private scheduleRefresh(): void {
    this.jobEvents += 1;
    if (this.refreshTimer !== null || this.over) return;
    const workers = this.lastCounts?.workers.length ?? 0;
    const interval = Math.max(REFRESH_MILLISECONDS, REFRESH_MILLISECONDS_PER_WORKER * workers);
    const wait = Math.max(0, this.lastRefreshAt + interval - Date.now());
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      void this.refreshCounts();
    }, wait);
  }

  /** Read the counts and print them when they changed. */
  private async refreshCounts(): Promise<void> {
    await this.guarded('counts', async () => {
      this.lastRefreshAt = Date.now();
      const counts = await this.answer(readQueueCounts(this.options.dialogues, this.options.client));
      if (this.over) return;
      this.lastCounts = counts;
      const line = formatQueueCounts(counts);
      if (line !== this.lastLine) {
        this.options.log(`queue: ${line}`);
        this.lastLine = line;
      }
    });
  }

  /**
   * The slow reading: counts and parents; when the queue counted more finished jobs at the previous
   * slow reading (at least {@link SLOW_REFRESH_MILLISECONDS} ms ago) than the events have told since, some events were
   * missed (the stream was trimmed past them): read the finished jobs again.
   */
  private async slowRefresh(): Promise<void> {
    this.slowDelay =
      this.jobEvents === 0 ? Math.min(this.slowDelay * 2, SLOWEST_REFRESH_MILLISECONDS) : SLOW_REFRESH_MILLISECONDS;
    this.jobEvents = 0;
    this.scheduleSlowRefresh();
    if (this.outage.down) return;
    if (this.synced && this.finishedJobs.size < this.previouslyCountedFinished)
      await this.guarded('sync', () => this.readFinished());
    await this.refreshCounts();
    if (this.lastCounts) this.previouslyCountedFinished = this.lastCounts.done + this.lastCounts.failed;
    await this.checkParents();
  }

  private scheduleSlowRefresh(): void {
    if (this.over) return;
    this.slowTimer = setTimeout(() => void this.slowRefresh(), this.slowDelay);
  }

  /**
   * Finish when no dataset parent waits for children: ZSCORE of each in BullMQ's waiting-children set
   * (one round trip); EXISTS tells a parent that moved on from one that vanished.
   * @throws nothing (a vanished parent stops the watch)
   */
  private async checkParents(): Promise<void> {
    const { client, datasets, parents, described } = this.options;
    await this.guarded('parents', async () => {
      const waitingChildren = datasets.toKey('waiting-children');
      const scores = await this.answer(Promise.all(parents.map((parent) => client.zscore(waitingChildren, parent.id))));
      const moved = parents.filter((_, index) => scores[index] === null);
      const present = await this.answer(Promise.all(moved.map((parent) => client.exists(datasets.toKey(parent.id)))));
      if (present.includes(0))
        throw new BuildStoppedError(
          `queue: a job vanished from ${described} (the queue was cleared by someone else); run the build again`,
        );
      if (moved.length === parents.length) void this.finish();
    });
  }

  /** Every job is done: the final counts, with each worker's own, then release every wait. */
  private async finish(): Promise<void> {
    if (this.finishing || this.over) return;
    this.finishing = true;
    const { client, dialogues, log } = this.options;
    let final: QueueCounts | null = null;
    const read = await this.guarded('final', async () => {
      const counts = await this.answer(readQueueCounts(dialogues, client));
      // a worker counts a job on BullMQ's `completed` or `failed` event, just after the queue marks the job, so its count may lag a moment
      final = await this.answer(settledWorkerCounts(dialogues, client, counts), 5000);
    });
    this.finishing = false;
    if (!read || final === null || this.over) return; // Redis away: checked again once it is back
    const counts: QueueCounts = final;
    const line = formatQueueCounts(counts);
    if (line !== this.lastLine) log(`queue: ${line}`);
    this.lastLine = line;
    if (counts.failed > 0)
      log(
        `queue: ${counts.failed} jobs failed all their attempts on the workers; the local pass retries their dialogues and quarantines those that fail again`,
      );
    log('queue: every job is done');
    this.finished = true;
    for (const waiter of this.pending.values()) waiter.resolve();
    this.pending.clear();
    this.resolveDone();
    this.endWatch();
  }

  /** End the watch with `error` (every wait rejects with it), unless it is over already. */
  private stop(error: unknown): void {
    if (this.over) return;
    this.stopError = error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
    this.rejectDone(error);
    this.endWatch();
  }

  /** Stop the timers, leave the client and the signal alone again, and close the event readers. */
  private endWatch(): void {
    if (this.teardown) return;
    const { signal } = this.options;
    if (this.slowTimer) clearTimeout(this.slowTimer);
    this.outage.end();
    this.idle?.end();
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    signal?.removeEventListener('abort', this.onAbort);
    this.teardown = Promise.all(
      this.events.map((events) => withTimeout(events.close(), 3000, 'no close').catch(() => {})),
    ).then(() => {});
  }
}
