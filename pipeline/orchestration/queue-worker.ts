/**
 * `duplexsynth worker --queue redis://…`: takes the jobs of a queued build (./queued-build.ts) from
 * BullMQ and runs them with the same stage code as a local build (./language-work.ts `languageWork`, run by
 * the stage runner). A `dialogue` job makes one dialogue's text, speech, placement, events and render
 * (and its barge-in variant) and ends with the dialogue's record in the shared cache
 * (./dialogue-record.ts, ./worker-jobs.ts): everything its datasets need, the WAVs as cache files,
 * and the waveforms the report draws. A `score` job scores both WAVs of the record (DNSMOS, signal
 * checks, loudness) into the cache. The coordinator then writes, scores and reports the datasets from
 * records and cache hits, placing, rendering and scoring nothing itself.
 *
 * - Before taking a job the worker checks the build's stamp in Redis (./build-queue.ts): the same
 *   project version, the same config hash, and the coordinator's marker in its cache folder; it
 *   refuses with one line otherwise. Every job carries the stamp and is checked again.
 * - A job may run twice (BullMQ delivers at least once; a killed worker's job is taken back by the
 *   stalled-job check after `stalledSeconds`): every cache entry is written atomically under its
 *   content hash, so a second run writes the same bytes.
 * - Redis going away and coming back is said in one line each; the worker waits for it meanwhile.
 */
import os from 'node:os';
import { Worker, type Job } from 'bullmq';
import { datasetNameOf, type BuildConfig } from '../config.ts';
import { BuildInputError, endsTheBuild } from '../model/build-errors.ts';
import type { Language, SourceConversation } from '../model/types.ts';
import { firstLine, StageRunner } from '../run/stage-runner.ts';
import { registerConfiguredSecrets } from '../run/build-guards.ts';
import { ContentCache } from '../storage/content-cache.ts';
import { redactSecrets } from '../storage/redact.ts';
import { resolveDnsmosModelDirectory } from '../services/mos/dnsmos-model-files.ts';
import { DEFAULT_DNSMOS_BATCH_WINDOWS, loadDnsmosScorer } from '../services/mos/dnsmos.ts';
import type { RecordingMosScorer } from '../services/mos/mos-scorer.ts';
import { ingestCorpusStage } from '../../stages/ingest-corpus.ts';
import { defaultDnsmosModelLocation } from '../../stages/score-quality.ts';
import {
  BUILD_KEY,
  buildConfigHash,
  connectQueue,
  describeQueueUrl,
  DIALOGUES_QUEUE,
  JOB_ATTEMPTS,
  parseQueueUrl,
  refusalOf,
  withTimeout,
  type BuildStamp,
  type DialogueJobData,
  type DialogueJobResult,
} from './build-queue.ts';
import { checkBuildIsPossible } from './build-checks.ts';
import { publishRefusal } from './queue-refusals.ts';
import { WorkerCountWriter } from './queue-worker-counts.ts';
import { BARGE_IN_SUFFIX } from './dataset-output.ts';
import { dialogueRecordKey, readDialogueRecord, storeDialogueRecord, type DialogueRecord } from './dialogue-record.ts';
import { languageWork } from './language-work.ts';
import { speechRecognitionIsChecked } from './speech-recognition-check.ts';
import { noRecognitionCounts } from '../services/tts/recognition-tally.ts';
import { createSharedBuildServices, type SharedBuildServices } from './shared-build-services.ts';
import { STAGES } from './stage-list.ts';
import { keepRecordPages, RecordingSink, recordedDatasets, scoreRecord } from './worker-jobs.ts';

/** Options of {@link runQueueWorker}. */
export interface QueueWorkerOptions {
  /** The Redis URL (`--queue`). */
  queue: string;
  /** Jobs run at once (default 1; more keep remote speech servers busy). */
  concurrency?: number;
  /**
   * Seconds a job's lock lasts without renewal: a killed worker's job goes back to the queue after
   * about this long (BullMQ's lockDuration and stalledInterval; default 30).
   */
  stalledSeconds?: number;
  /** A global cap, over all workers, of dialogue jobs started per interval (BullMQ's rate limiter; each makes the dialogue's LLM requests). */
  rateLimit?: { jobs: number; seconds: number } | null;
  /** This worker's name in `status` and progress (default `{hostname}:{pid}`). */
  name?: string;
  /** One line per job and per event. */
  log?: (line: string) => void;
  /** Stop after this many jobs (tests and benchmarks; default: run until stopped). */
  maximumJobs?: number;
  /** Stops the worker (it finishes its jobs first). */
  signal?: AbortSignal;
}

/**
 * Run a worker until `signal` aborts (or `maximumJobs` are done).
 * @param config this machine's config: the build's, with its own endpoints, concurrency and folders
 * @throws BuildInputError (exit code 2) when the URL is not Redis, or the build's stamp refuses this
 *   worker (another version, config, or cache), naming why in one line
 */
export async function runQueueWorker(config: BuildConfig, options: QueueWorkerOptions): Promise<void> {
  const log = (line: string) => (options.log ?? (() => {}))(redactSecrets(line));
  const described = describeQueueUrl(options.queue);
  checkBuildIsPossible(config);
  registerConfiguredSecrets(config);
  const configHash = buildConfigHash(config);
  const client = await connectQueue(options.queue);
  const name = options.name ?? `${os.hostname()}:${process.pid}`;

  // the build this worker serves: wait for a coordinator to publish it, then check it
  let stamp: BuildStamp | null = null;
  let said = false;
  while (stamp === null) {
    if (options.signal?.aborted) {
      client.disconnect();
      return;
    }
    const text = await client.get(BUILD_KEY).catch(() => null);
    if (text) stamp = JSON.parse(text) as BuildStamp;
    else {
      if (!said) log(`worker ${name}: waiting for a build on ${described}`);
      said = true;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  const refusal = await refusalOf(stamp, config, configHash);
  if (refusal !== null) {
    await publishRefusal(client, stamp, { worker: name, reason: refusal }); // the coordinator prints it (./queue-refusals.ts)
    client.disconnect();
    throw new BuildInputError(`worker refused the build ${stamp.name} on ${described}: ${refusal}`);
  }
  const servedBuild = stamp.markerToken;
  log(`worker ${name}: serving build ${stamp.name} (config ${configHash.slice(0, 12)}) on ${described}`);

  const runner = new StageRunner(STAGES, { cache: new ContentCache(config.output.cacheDirectory) });
  let shared: Promise<SharedBuildServices> | null = null;
  const languages = new Map<
    Language,
    Promise<{ work: Awaited<ReturnType<typeof languageWork>>; conversations: Map<string, SourceConversation> }>
  >();
  const languageOf = (language: Language) => {
    let entry = languages.get(language);
    if (!entry) {
      entry = (async () => {
        shared ??= createSharedBuildServices(config, log);
        const work = await languageWork(config, language, await shared, () => {});
        // the job names the dialogue; the corpus is read whole (the coordinator's --limit picked the jobs)
        const corpus = await ingestCorpusStage.run(
          { corpus: { ...config.corpus, limit: null } },
          { languages: [language] },
          runner.context,
        );
        return {
          work,
          conversations: new Map(corpus.conversations.map((conversation) => [conversation.id, conversation])),
        };
      })();
      languages.set(language, entry);
    }
    return entry;
  };
  let scorer: Promise<RecordingMosScorer> | null = null;
  const dnsmosScorer = () =>
    (scorer ??= (async () => {
      const location = config.quality.dnsmosModelDirectory
        ? { modelDirectory: config.quality.dnsmosModelDirectory }
        : await defaultDnsmosModelLocation();
      const run = {
        executionProvider: config.quality.dnsmos.executionProvider,
        intraOpThreads: config.quality.dnsmos.intraOpThreads,
        batchWindows: config.quality.dnsmos.batchWindows ?? DEFAULT_DNSMOS_BATCH_WINDOWS,
        hopSeconds: config.quality.dnsmos.hopSeconds,
      };
      return (await loadDnsmosScorer(await resolveDnsmosModelDirectory(location), run)).scorer;
    })());

  /**
   * One dialogue through the stage lists (its barge-in variant too), its record stored in the cache
   * and its report pages kept (./worker-jobs.ts).
   * @throws Error `{id}: FAILED at {stage}: {reason}` when the base dialogue fails (a variant's failure is recorded)
   */
  const buildDialogueRecord = async (data: DialogueJobData): Promise<DialogueRecord> => {
    const { work, conversations } = await languageOf(data.language);
    const conversation = conversations.get(data.id);
    if (!conversation) throw new Error(`${data.id}: not in ${config.corpus.path} (${data.language}) on this worker`);
    const cacheDirectory = config.output.cacheDirectory;
    const base = new RecordingSink(cacheDirectory);
    const variant = config.datasets.bargeIn ? new RecordingSink(cacheDirectory) : null;
    const { steps, variantSteps } = work.stepsInto({ base, variant });
    const outcome = await runner.runSteps(steps, work.initial(conversation));
    if (!outcome.ok) {
      if (endsTheBuild(outcome.error)) throw outcome.error;
      throw new Error(`${data.id}: FAILED at ${outcome.stage}: ${firstLine(outcome.error)}`);
    }
    let variantRecord: DialogueRecord['variant'] = null;
    if (variant) {
      const variantOutcome = await runner.runSteps(variantSteps, outcome.state);
      if (!variantOutcome.ok && endsTheBuild(variantOutcome.error)) throw variantOutcome.error;
      variantRecord = variantOutcome.ok
        ? variant.record!
        : { failed: { stage: variantOutcome.stage, reason: firstLine(variantOutcome.error) } };
    }
    // the recognition check's counts of the clips this dialogue is spoken with, as their cache entries hold them
    const speechRecognition = outcome.state.speech?.speechRecognition ?? noRecognitionCounts();
    const record: DialogueRecord = {
      base: base.record!,
      variant: variantRecord,
      ...(speechRecognitionIsChecked(config, data.language) ? { speechRecognition } : {}),
    };
    const cache = runner.context.cache;
    const dataset = datasetNameOf(config, data.language);
    await keepRecordPages(
      cache,
      record,
      data.language,
      { base: dataset, variant: `${dataset}${BARGE_IN_SUFFIX}` },
      config,
    );
    await storeDialogueRecord(cache, dialogueRecordKey(configHash, data.language, conversation), record);
    return record;
  };

  /** The stored record of a dialogue whose job completed, or null. */
  const storedRecord = async (data: DialogueJobData): Promise<DialogueRecord | null> => {
    const conversation = (await languageOf(data.language)).conversations.get(data.id);
    if (!conversation) return null;
    return readDialogueRecord(runner.context.cache, dialogueRecordKey(configHash, data.language, conversation));
  };

  const counts = new WorkerCountWriter(client, name);
  let refused: string | null = null;
  let done = 0;
  const finished = new Promise<void>((resolve) => {
    const processJob = async (job: Job<DialogueJobData>): Promise<DialogueJobResult | { scored: boolean }> => {
      const jobRefusal = await refusalOf(job.data.stamp, config, configHash);
      if (jobRefusal !== null) {
        refused = `worker refused job ${job.id} on ${described}: ${jobRefusal}`;
        await publishRefusal(client, job.data.stamp, { worker: name, reason: jobRefusal });
        void worker.close();
        throw new Error(refused);
      }
      const started = performance.now();
      log(`worker ${name}: took ${job.name} ${job.data.language}/${job.data.id} (attempt ${job.attemptsMade + 1})`);
      if (job.name === 'score') {
        // the dialogue job is this job's child: when it failed all its attempts, there is nothing to score
        const children = Object.values(await job.getChildrenValues<DialogueJobResult>());
        const record =
          children.length === 0 ? null : ((await storedRecord(job.data)) ?? (await buildDialogueRecord(job.data)));
        if (record === null) return { scored: false };
        await scoreRecord(runner.context.cache, record, job.data.language, config, dnsmosScorer);
        log(
          `worker ${name}: scored ${job.data.language}/${job.data.id} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
        );
        return { scored: true };
      }
      const record = await buildDialogueRecord(job.data);
      const seconds = recordedDatasets(record).reduce((total, dataset) => total + dataset.durationSeconds, 0);
      log(
        `worker ${name}: built ${job.data.language}/${job.data.id}: ${seconds.toFixed(1)} s of audio (${((performance.now() - started) / 1000).toFixed(1)} s)`,
      );
      return { audioSha256: record.base.audio.sha256, audioSeconds: seconds };
    };
    const stalledMilliseconds = (options.stalledSeconds ?? 30) * 1000;
    const worker: Worker<DialogueJobData> = new Worker<DialogueJobData>(DIALOGUES_QUEUE, processJob, {
      connection: parseQueueUrl(options.queue),
      concurrency: options.concurrency ?? 1,
      name,
      lockDuration: stalledMilliseconds,
      stalledInterval: stalledMilliseconds,
      ...(options.rateLimit
        ? { limiter: { max: options.rateLimit.jobs, duration: options.rateLimit.seconds * 1000 } }
        : {}),
    });
    // Redis going away and coming back, said once each (BullMQ's connections wait for it meanwhile)
    let redisDown = false;
    client.on('error', (error: Error) => {
      if (!redisDown) log(`worker ${name}: lost Redis at ${described} (${firstLine(error)}); waiting for it`);
      redisDown = true;
    });
    client.on('ready', () => {
      if (redisDown) log(`worker ${name}: Redis at ${described} is back; going on`);
      redisDown = false;
    });
    worker.on('error', () => {}); // the same outage, seen by BullMQ's connections: said above
    // this worker's counts, for the coordinator's progress and `status`: one write per job taken and
    // finished in a row (./queue-worker-counts.ts); a last failed attempt also counts `gaveUp`
    const build = (job: Job<DialogueJobData> | undefined) => job?.data.stamp.markerToken ?? servedBuild;
    worker.on('active', (job) => counts.count(build(job), { started: 1 }));
    worker.on('failed', (job, error) => {
      // BullMQ sets finishedOn when the job is not retried: its last attempt, which the queue counts failed
      counts.count(build(job), { failed: 1, ...(job?.finishedOn ? { gaveUp: 1 } : {}) });
      if (job)
        log(
          `worker ${name}: ${job.name} ${job.data.language}/${job.data.id} failed (attempt ${job.attemptsMade} of ${JOB_ATTEMPTS}): ${firstLine(error)}`,
        );
    });
    worker.on('completed', (job) => {
      counts.count(build(job), { done: 1 });
      done += 1;
      if (options.maximumJobs !== undefined && done >= options.maximumJobs) void worker.close();
    });
    worker.on('closed', () => {
      resolve();
    });
    options.signal?.addEventListener(
      'abort',
      () => {
        void worker.close();
        // Redis away: closing waits for it; the jobs in hand go back to the queue through the stalled-job check
        setTimeout(() => {
          void worker.disconnect();
          resolve();
        }, 10_000).unref();
      },
      { once: true },
    );
  });
  await finished;
  await withTimeout(counts.flush(), 3000, 'no answer').catch(() => {}); // Redis away: the last counts are lost with it
  client.disconnect();
  const services = shared ? await (shared as Promise<SharedBuildServices>) : null;
  await services?.resamplePool?.close();
  await services?.renderPool?.close();
  if (refused !== null) throw new BuildInputError(refused);
}
