/**
 * `duplexsynth build --queue redis://…`: the build spread over any number of `duplexsynth worker`
 * processes (./queue-worker.ts) through BullMQ on Redis. The coordinator
 *
 * 1. ingests the corpus, stamps the build (config hash, project version, a marker written into the
 *    shared cache; ./build-queue.ts) and publishes the stamp in Redis;
 * 2. adds one BullMQ flow per language: the dataset's parent job, whose children are one scoring job
 *    per dialogue (with quality scoring on), each the parent of the dialogue's job (text, speech,
 *    placement, events, render, barge-in variant); job ids are fixed by the config hash, so adding
 *    the flows again (a second `build` after Ctrl-C) continues the same jobs;
 * 3. runs the local build (./build.ts `runBuild`) alongside the workers: one watcher
 *    (`QueueWatcher`) polls the states of the dialogue jobs the local pass waits for, a bounded batch
 *    at a time, and each dialogue goes through the stages as soon as its job completed (or failed
 *    all its attempts), so every text and speech result and every placed and rendered dialogue (its
 *    WAV bytes; stages/place-timeline.ts) is a cache hit; before the first dataset is committed it
 *    waits until every dataset's children are done (scoring jobs included, so every DNSMOS score is a
 *    cache hit too), printing the queue's counts per worker as they change. The commit, scoring,
 *    split and report go through today's code path, so the output is byte-identical to a one-machine
 *    build with the same config and seed. A dialogue that failed all its attempts on the workers is
 *    retried there once and quarantined exactly as a local build quarantines it;
 * 4. removes the build's jobs and stamp from Redis.
 *
 * Redis going away is said in one line, and coming back in another; gone for longer than
 * `giveUpSeconds` (or Ctrl-C), the build stops with exit code 4 and its uncommitted datasets are
 * discarded: nothing is written.
 */
import { FlowProducer, Job, Queue, type FlowJob } from 'bullmq';
import type { Redis } from 'ioredis';
import type { BuildConfig } from '../config.ts';
import { BuildInputError, BuildStoppedError } from '../model/build-errors.ts';
import type { Language } from '../model/types.ts';
import { beginGuardedBuild } from '../run/build-guards.ts';
import type { ProgressListener } from '../run/progress.ts';
import { firstLine } from '../run/stage-runner.ts';
import { ContentCache } from '../storage/content-cache.ts';
import { ingestCorpusStage } from '../../stages/ingest-corpus.ts';
import {
  BUILD_KEY,
  buildConfigHash,
  connectQueue,
  DATASETS_QUEUE,
  describeQueueUrl,
  DIALOGUES_QUEUE,
  JOB_ATTEMPTS,
  markerFile,
  parseQueueUrl,
  projectVersion,
  withTimeout,
  WORKERS_KEY,
  writeMarker,
  type BuildStamp,
  type DialogueJobData,
} from './build-queue.ts';
import { checkBuildIsPossible, runBuild, type BuildLog, type BuildQueueHook, type BuildReport } from './build.ts';
import { readFile } from 'node:fs/promises';

/** Redis stayed away too long: the build stopped before writing anything (exit code 4). */
export class QueueLostError extends BuildStoppedError {
  override name = 'QueueLostError';
}

/** Options of {@link runQueuedBuild}. */
export interface QueuedBuildOptions {
  /** The Redis URL (`--queue`). */
  queue: string;
  log?: BuildLog;
  progress?: ProgressListener;
  allowShrink?: boolean;
  /** How long Redis may be away before the build stops (seconds; default 300). */
  giveUpSeconds?: number;
  /** Stops waiting (Ctrl-C): the jobs stay in the queue and a second `build` continues them. */
  signal?: AbortSignal;
  /** Told each output as it is written to stay (runBuild's `kept`). */
  kept?: (output: string) => void;
}

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
      active: Number(fields.active ?? 0),
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

/**
 * Run a build through the queue (see the module comment).
 * @throws BuildInputError when `--queue` is not Redis; QueueLostError (exit code 4) when Redis cannot
 *   be reached at the start or stays away longer than `giveUpSeconds`; BuildStoppedError when
 *   `signal` stops the wait (the jobs stay queued); whatever `runBuild` throws
 */
export async function runQueuedBuild(config: BuildConfig, options: QueuedBuildOptions): Promise<BuildReport> {
  checkBuildIsPossible(config);
  const log = beginGuardedBuild(config, options.log ?? (() => {}));
  const described = describeQueueUrl(options.queue);
  const connection = parseQueueUrl(options.queue);
  let client: Redis;
  try {
    client = await connectQueue(options.queue);
  } catch (error) {
    if (error instanceof BuildInputError) throw error;
    throw new QueueLostError(`queue: no Redis at ${described} (${firstLine(error)}); nothing was written`);
  }
  const datasets = new Queue(DATASETS_QUEUE, { connection });
  const dialogues = new Queue(DIALOGUES_QUEUE, { connection });
  const flows = new FlowProducer({ connection });
  // an outage is said once, by the wait below
  datasets.on('error', () => {});
  dialogues.on('error', () => {});
  flows.on('error', () => {});
  try {
    const context = { cache: new ContentCache(config.output.cacheDirectory) };
    const corpus = await ingestCorpusStage.run({ corpus: config.corpus }, { languages: config.languages }, context);
    const configHash = buildConfigHash(config);
    const stamp = await stampBuild(client, config, configHash, datasets, dialogues, log);
    const parents: { language: Language; id: string }[] = [];
    for (const language of config.languages) {
      const parentId = `${config.name}-${language}-${configHash.slice(0, 16)}`;
      parents.push({ language, id: parentId });
      const jobOptions = {
        attempts: JOB_ATTEMPTS,
        backoff: { type: 'exponential', delay: 1000 },
        ignoreDependencyOnFailure: true,
        removeOnComplete: false,
        removeOnFail: false,
      } as const;
      const children: FlowJob[] = corpus.conversations.map((conversation) => {
        const data: DialogueJobData = { stamp, language, id: conversation.id };
        const dialogue: FlowJob = {
          name: 'dialogue',
          queueName: DIALOGUES_QUEUE,
          data,
          opts: { ...jobOptions, jobId: `${parentId}-dialogue-${conversation.id}` },
        };
        if (!config.quality.enabled) return dialogue;
        return {
          name: 'score',
          queueName: DIALOGUES_QUEUE,
          data,
          opts: { ...jobOptions, jobId: `${parentId}-score-${conversation.id}` },
          children: [dialogue],
        };
      });
      const existing = await Job.fromId(datasets, parentId);
      if (existing) log(`queue: [${language}] continuing the queued dataset (${parentId})`);
      else
        await flows.add({
          name: 'dataset',
          queueName: DATASETS_QUEUE,
          data: { stamp, language },
          opts: { jobId: parentId },
          children,
        });
    }
    log(
      `queue: ${corpus.conversations.length} dialogues per language queued on ${described}; waiting for the workers (duplexsynth worker --queue ${described})`,
    );

    // the local pass runs alongside the workers: each dialogue as soon as its job is done (cache hits), the commit once every job is
    const watcher = new QueueWatcher(client, datasets, dialogues, parents, log, options, described);
    let report: BuildReport;
    try {
      report = await runBuild(config, {
        log: options.log ?? (() => {}),
        ...(options.progress ? { progress: options.progress } : {}),
        ...(options.allowShrink !== undefined ? { allowShrink: options.allowShrink } : {}),
        ...(options.kept ? { kept: options.kept } : {}),
        queue: watcher,
      });
    } finally {
      await watcher.close();
    }
    await closeQueues([datasets, dialogues, flows]);
    client.disconnect();
    await clearBuild(options.queue, stamp);
    return report;
  } finally {
    await closeQueues([datasets, dialogues, flows]);
    client.disconnect();
  }
}

/** Close BullMQ connections; with Redis away closing waits for it, so after 2 s they are cut (reconnect timers would keep the process alive). */
async function closeQueues(queues: (Queue | FlowProducer)[]): Promise<void> {
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
async function stampBuild(
  client: Redis,
  config: BuildConfig,
  configHash: string,
  datasets: Queue,
  dialogues: Queue,
  log: BuildLog,
): Promise<BuildStamp> {
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

async function clearWorkerCounts(client: Redis): Promise<void> {
  for (const name of await client.smembers(WORKERS_KEY)) await client.del(`${WORKERS_KEY}:${name}`);
  await client.del(WORKERS_KEY);
}

/** Remove the finished build's jobs, counts and stamp (a new connection: the build's was closed before the local pass). */
async function clearBuild(url: string, stamp: BuildStamp): Promise<void> {
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
class QueueWatcher implements BuildQueueHook {
  /** Dialogue jobs still waited for: job id → its promise's resolvers, in the order they were asked for. */
  private readonly pending = new Map<
    string,
    { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void }
  >();
  private stopError: unknown = null;
  private finished = false;
  private closed = false;
  private readonly done: Promise<void>;

  constructor(
    private readonly client: Redis,
    private readonly datasets: Queue,
    private readonly dialogues: Queue,
    private readonly parents: { language: Language; id: string }[],
    private readonly log: BuildLog,
    private readonly options: QueuedBuildOptions,
    private readonly described: string,
  ) {
    this.done = this.watch();
    this.done.catch(() => {}); // awaited by beforeCommit; an early stop reaches the build through the dialogue waits
  }

  /** The BullMQ id of a dialogue's job (as `runQueuedBuild` adds it). */
  private jobId(language: Language, id: string): string {
    return `${this.parents.find((parent) => parent.language === language)!.id}-dialogue-${id}`;
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
    const { client, datasets, dialogues, parents, log, options, described } = this;
    const giveUpMilliseconds = (options.giveUpSeconds ?? 300) * 1000;
    let downSince: number | null = null;
    let lastLine = '';
    let lastLineAt = 0;
    for (;;) {
      if (this.closed) throw new BuildStoppedError('queue: the local pass ended before every job was done');
      if (options.signal?.aborted) {
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
