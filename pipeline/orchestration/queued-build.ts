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
 * 3. runs the local build (./build.ts `runBuild`) alongside the workers: each dialogue waits for its
 *    job (`QueueWatcher`, ./queue-watcher.ts, which follows BullMQ's events: no polling), then is written from the record the worker stored in
 *    the shared cache (./queued-dialogue-steps.ts): its files linked, its line appended, its hashes
 *    listed, no stage run and no audio read; before the first dataset is committed it waits until
 *    every dataset's children are done (scoring jobs included, which score both WAVs of every
 *    dialogue, so the scoring step only gathers cache hits), printing the queue's counts per worker as
 *    they change. The commit, scoring, split and report go through the local build's code, and a
 *    local build writes its own dialogues through the same record code, so the output is
 *    byte-identical to a one-machine build with the same config and seed. A dialogue whose job failed
 *    all its attempts goes through the stages here and is quarantined as a local build quarantines it;
 * 4. removes the build's jobs and stamp from Redis.
 *
 * Redis going away is said in one line, and coming back in another; gone for longer than
 * `giveUpSeconds` (or Ctrl-C), the build stops with exit code 4 and its uncommitted datasets are
 * discarded: nothing is written. A worker refusing the build is printed as it refuses; jobs waiting
 * with no worker taking one for `idleSeconds` is said once a minute, and after `giveUpSeconds` more
 * the build stops the same way (./queue-refusals.ts).
 */
import { FlowProducer, Job, Queue, type FlowJob } from 'bullmq';
import type { Redis } from 'ioredis';
import type { BuildConfig } from '../config.ts';
import { BuildInputError } from '../model/build-errors.ts';
import type { Language } from '../model/types.ts';
import { beginGuardedBuild, refuseForeignBackupFolders } from '../run/build-guards.ts';
import type { ProgressListener } from '../run/progress.ts';
import { firstLine } from '../run/stage-runner.ts';
import { ContentCache } from '../storage/content-cache.ts';
import { ingestCorpusStage } from '../../stages/ingest-corpus.ts';
import {
  buildConfigHash,
  connectQueue,
  DATASETS_QUEUE,
  describeQueueUrl,
  DIALOGUES_QUEUE,
  JOB_ATTEMPTS,
  parseQueueUrl,
  type DialogueJobData,
} from './build-queue.ts';
import { checkBuildIsPossible, runBuild, type BuildLog, type BuildReport } from './build.ts';
import { committedDatasetFolders } from './language-datasets.ts';
import { clearBuild, closeQueues, stampBuild } from './queue-stamp.ts';
import { QueueLostError, QueueWatcher } from './queue-watcher.ts';

export {
  formatQueueCounts,
  readQueueCounts,
  readQueueStatus,
  settledWorkerCounts,
  type QueueCounts,
  type WorkerCounts,
} from './queue-counts.ts';
export { QueueLostError } from './queue-watcher.ts';

/** Options of {@link runQueuedBuild}. */
export interface QueuedBuildOptions {
  /** The Redis URL (`--queue`). */
  queue: string;
  log?: BuildLog;
  progress?: ProgressListener;
  allowShrink?: boolean;
  /**
   * How long Redis may be away before the build stops, and how long more than `idleSeconds` jobs may
   * wait with no worker taking one (seconds; default 300).
   */
  giveUpSeconds?: number;
  /** How long jobs may wait with no worker taking one before it is said once a minute (seconds; default 300; ./queue-refusals.ts). */
  idleSeconds?: number;
  /** How often that is said (seconds; default 60). */
  idleNoticeSeconds?: number;
  /** Stops waiting (Ctrl-C): the jobs stay in the queue and a second `build` continues them. */
  signal?: AbortSignal;
  /** Told each output as it is written to stay (runBuild's `kept`). */
  kept?: (output: string) => void;
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
  // before any job is queued: someone else's report.previous or {dataset}.previous (pipeline/run/build-guards.ts)
  await refuseForeignBackupFolders(config.output.directory, committedDatasetFolders(config));
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
    const stamp = await stampBuild({ client, config, configHash, datasets, dialogues, log });
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
    const watcher = new QueueWatcher({
      client,
      datasets,
      dialogues,
      parents,
      log,
      giveUpSeconds: options.giveUpSeconds,
      signal: options.signal,
      described,
      idle: { stamp, idleSeconds: options.idleSeconds, noticeSeconds: options.idleNoticeSeconds },
    });
    let report: BuildReport;
    try {
      report = await runBuild(config, {
        log: options.log ?? (() => {}),
        ...(options.progress ? { progress: options.progress } : {}),
        ...(options.allowShrink !== undefined ? { allowShrink: options.allowShrink } : {}),
        ...(options.kept ? { kept: options.kept } : {}),
        queue: watcher,
        queueConfigHash: configHash,
        corpus,
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
