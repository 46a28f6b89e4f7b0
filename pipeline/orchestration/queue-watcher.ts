/**
 * The queued build's watcher: one poller of Redis that tells the local pass when each dialogue's job
 * on the workers is done and when every job is, says Redis outages, and stops the build when Redis
 * stays away too long or on Ctrl-C.
 */
import { Job, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { BuildStoppedError } from '../model/build-errors.ts';
import type { Language } from '../model/types.ts';
import { firstLine } from '../run/stage-runner.ts';
import type { BuildLog, BuildQueueHook } from './build-context.ts';
import { withTimeout } from './build-queue.ts';
import { formatQueueCounts, readQueueCounts, settledWorkerCounts } from './queue-counts.ts';

/** Redis stayed away too long: the build stopped before writing anything (exit code 4). */
export class QueueLostError extends BuildStoppedError {
  override name = 'QueueLostError';
}

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
}

/** How many pending dialogue jobs one poll asks Redis about (the first ones, in corpus order). */
const DIALOGUE_POLL_BATCH = 64;

/**
 * One poller for a whole queued build: it answers the local pass's `dialogueReady` (a dialogue's job
 * completed, or failed all its attempts) and `beforeCommit` (every dataset parent left
 * `waiting-children`), asking Redis about at most {@link DIALOGUE_POLL_BATCH} pending dialogue jobs
 * per poll (BullMQ `getJobState`), in the order the local pass needs them. Redis going away is said in
 * one line and its return in another; away longer than `giveUpSeconds`, or Ctrl-C (`signal`), every
 * wait is rejected with the same QueueLostError / BuildStoppedError. Once every dataset is done, no
 * wait rejects any more.
 */
export class QueueWatcher implements BuildQueueHook {
  /** Dialogue jobs still waited for: job id → its promise's resolvers, in the order they were asked for. */
  private readonly pending = new Map<
    string,
    { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void }
  >();
  private stopError: unknown = null;
  private finished = false;
  private closed = false;
  private readonly done: Promise<void>;

  constructor(private readonly options: QueueWatcherOptions) {
    this.done = this.watch();
    this.done.catch(() => {}); // awaited by beforeCommit; an early stop reaches the build through the dialogue waits
  }

  /** The BullMQ id of a dialogue's job (as `runQueuedBuild` adds it). */
  private jobId(language: Language, id: string): string {
    return `${this.options.parents.find((parent) => parent.language === language)!.id}-dialogue-${id}`;
  }

  dialogueReady(language: Language, id: string): Promise<void> {
    if (this.finished) return Promise.resolve();
    if (this.stopError !== null) return Promise.reject(this.stopError);
    const jobId = this.jobId(language, id);
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

  /** Stop polling (the local pass ended, say with an error of its own) and wait for the last poll to end. */
  async close(): Promise<void> {
    this.closed = true;
    await this.done.catch(() => {});
  }

  /** Poll until every dataset parent left `waiting-children`; say Redis outages once each; stop on `signal`. */
  private async watch(): Promise<void> {
    try {
      await this.poll();
      this.finished = true;
      for (const waiting of this.pending.values()) waiting.resolve();
      this.pending.clear();
    } catch (error) {
      this.stopError = error;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
      throw error;
    }
  }

  private async poll(): Promise<void> {
    const { client, datasets, dialogues, parents, log, described, giveUpSeconds, signal } = this.options;
    const giveUpMilliseconds = (giveUpSeconds ?? 300) * 1000;
    let downSince: number | null = null;
    let lastLine = '';
    let lastLineAt = 0;
    for (;;) {
      if (this.closed) throw new BuildStoppedError('queue: the local pass ended before every job was done');
      if (signal?.aborted) {
        throw new BuildStoppedError(
          `queue: stopped waiting; the jobs stay on ${described} and the workers go on: run the same build again to continue`,
        );
      }
      let batchAllDone = false;
      try {
        // the dialogues the local pass waits for, first ones first
        const batch: string[] = [];
        for (const jobId of this.pending.keys()) {
          if (batch.length === DIALOGUE_POLL_BATCH) break;
          batch.push(jobId);
        }
        const jobStates = await withTimeout(
          Promise.all(batch.map((jobId) => dialogues.getJobState(jobId))),
          3000,
          'no answer within 3 s',
        );
        const states = await withTimeout(
          Promise.all(parents.map(async (parent) => (await Job.fromId(datasets, parent.id))?.getState() ?? 'missing')),
          3000,
          'no answer within 3 s',
        );
        const counts = await withTimeout(readQueueCounts(dialogues, client), 3000, 'no answer within 3 s');
        if (downSince !== null) log(`queue: Redis at ${described} is back; going on`);
        downSince = null;
        const line = formatQueueCounts(counts);
        if (line !== lastLine && Date.now() - lastLineAt >= 1000) {
          log(`queue: ${line}`);
          lastLine = line;
          lastLineAt = Date.now();
        }
        if (states.includes('missing') || jobStates.includes('unknown')) {
          throw new BuildStoppedError(
            `queue: a job vanished from ${described} (the queue was cleared by someone else); run the build again`,
          );
        }
        batch.forEach((jobId, position) => {
          if (jobStates[position] !== 'completed' && jobStates[position] !== 'failed') return;
          this.pending.get(jobId)!.resolve();
          this.pending.delete(jobId);
        });
        batchAllDone =
          batch.length === DIALOGUE_POLL_BATCH &&
          jobStates.every((state) => state === 'completed' || state === 'failed');
        if (states.every((state) => state !== 'waiting-children')) {
          // the final counts, always, with each worker's own: a worker counts a job on BullMQ's
          // `completed` or `failed` event, just after the queue marks the job, so its count may lag a moment
          const final = formatQueueCounts(
            await withTimeout(settledWorkerCounts(dialogues, client, counts), 5000, 'no answer within 5 s'),
          );
          if (final !== lastLine) log(`queue: ${final}`);
          if (counts.failed > 0)
            log(
              `queue: ${counts.failed} jobs failed all their attempts on the workers; the local pass retries their dialogues and quarantines those that fail again`,
            );
          log('queue: every job is done');
          return;
        }
      } catch (error) {
        if (error instanceof BuildStoppedError) throw error;
        if (downSince === null) {
          downSince = Date.now();
          log(
            `queue: lost Redis at ${described} (${firstLine(error)}); waiting up to ${Math.round(giveUpMilliseconds / 1000)} s for it`,
          );
        } else if (Date.now() - downSince >= giveUpMilliseconds) {
          throw new QueueLostError(
            `queue: Redis at ${described} gone for ${Math.round(giveUpMilliseconds / 1000)} s; nothing was written; start it again and rerun the build to continue`,
          );
        }
      }
      // a full batch of finished jobs: more are likely finished, ask again at once
      if (!batchAllDone) await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
