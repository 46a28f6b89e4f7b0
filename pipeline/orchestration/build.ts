/**
 * The MT-QA build: the list of stages and the lock. Per language, every dialogue goes through
 *
 *   prepare-text (rewrite-spoken, then translate) → synthesize-speech → place-timeline →
 *   annotate-events → render-dataset
 *
 * (and, for the barge-in variant, place-timeline → annotate-events → render-dataset again from the
 * same speech), run by the stage runner (pipeline/run/stage-runner.ts); then the datasets are
 * committed, scored and split, and the build summary and HTML report are written.
 *
 * - Each stage's result is cached by a content hash of its inputs and parameters
 *   (`ContentCache`), so a second identical build reuses everything and synthesizes nothing.
 * - One bad dialogue never sinks the run: its failure (stage and reason) is recorded in the summary
 *   and the build goes on.
 * - Outputs are deterministic: the same config and seed give byte-identical files (run timings and
 *   cache use go to `{cacheDirectory}/runs/{name}-{hash of the output folder}.json`, outside the output folder).
 * - The output folder is locked while the build runs (pipeline/run/build-guards.ts).
 */
import path from 'node:path';
import { resolveSpeechDetectorOptions } from '../audio/speech-regions.ts';
import { createResamplePool } from '../audio/resample-pool.ts';
import { createRenderPool, type RenderPool } from '../audio/render-pool.ts';
import type { BuildConfig } from '../config.ts';
import { ConfigError, configSourceOf, datasetNameOf, ttsOf } from '../config.ts';
import type { DialogueText, Language, SourceConversation, SpeakerRole } from '../model/types.ts';
import { buildSummarySchema, type DatasetSummary } from '../model/dataset-summary.ts';
import { endsTheBuild } from '../model/build-errors.ts';
import { writeBuildReport } from '../report/build-report.ts';
import { PreRenderedDialoguePages } from '../report/pre-rendered-pages.ts';
import { beginGuardedBuild, runLocked } from '../run/build-guards.ts';
import type { LogLevel, ProgressListener } from '../run/progress.ts';
import {
  failureText,
  firstLine,
  itemLogLine,
  StageRunner,
  stageStep,
  type StageStep,
  type StepsOutcome,
} from '../run/stage-runner.ts';
import type { RetryEvent } from '../services/llm/retrying-model.ts';
import { createTextBackends } from '../services/llm/text-backends.ts';
import {
  createSpeechSynthesizer,
  REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS,
} from '../services/tts/synthesizer-registry.ts';
import { cosyVoiceLanguageProblem } from '../services/tts/cosyvoice-languages.ts';
import { espeakNgVoiceNames } from '../services/tts/espeak-ng.ts';
import { drawDialogueSpeakers, type SpeakerIdentity } from '../services/tts/offline-speaker-roster.ts';
import {
  findLanguagePack,
  knownLanguageCodes,
  languagePackOf,
  languagePackSource,
  registerLanguagePacks,
} from '../model/language-pack.ts';
import { ContentCache } from '../storage/content-cache.ts';
import { writeRecord } from '../storage/json-records.ts';
import { writeAtomic } from '../storage/write-atomic.ts';
import { loadTimingStatistics, shippedTimingStatisticsOf } from '../timeline/timing-statistics.ts';
import { annotateEventsStage, type AnnotatedDialogue } from '../../stages/annotate-events.ts';
import { ingestCorpusStage, type IngestedCorpus } from '../../stages/ingest-corpus.ts';
import {
  placeBargeInTimelineStage,
  placeTimelineStage,
  type RenderedBargeInTimeline,
  type RenderedTimeline,
} from '../../stages/place-timeline.ts';
import { datasetRelativePath, renderDatasetStage, type DialogueSink } from '../../stages/render-dataset.ts';
import { protectedPhrasesOf } from '../text/turn-hold-split.ts';
import { loadDefaultQuestionPauses, withQuestionPauses } from '../timeline/question-pauses.ts';
import {
  createSynthesisQueue,
  synthesizeSettingsOf,
  synthesizeSpeechStage,
  type DialogueSpeech,
} from '../../stages/synthesize-speech.ts';
import { BARGE_IN_SUFFIX, DatasetOutput, DEFAULT_BENCHMARK_TURN_HOLD_SHARE } from './dataset-output.ts';
import { prepareTextStage } from './prepare-text.ts';
import { scoreAndSplit } from './score-and-split.ts';
import { runRecordFile } from './build-status.ts';
import { checkSpeakerPromptClips, speakerRoster } from './speaker-roster.ts';
import { formatBuildSummaryMarkdown } from './summary-markdown.ts';
import { bargeInVariantMetadata, taskDialogueMetadata } from './task-metadata.ts';

/** What a build returns (timings and cache use are also written to build-status.ts `runRecordFile`). */
export interface BuildReport {
  outputDirectory: string;
  summaryMarkdownPath: string;
  /** The HTML report's index.html, or null when it could not be written (the reason is logged). */
  reportPath: string | null;
  datasets: DatasetSummary[];
  failedDialogues: number;
  /** Wall-clock seconds per stage, summed over dialogues (not deterministic; for `npm run bench`). */
  stageSeconds: Record<string, number>;
  /** Seconds of dialogue audio written. */
  audioSeconds: number;
  cache: ContentCache['statistics'];
}

/** Logger for progress lines (stderr in the CLI); `warn` for a dialogue or a step that failed while the build goes on. */
export type BuildLog = (line: string, level?: LogLevel) => void;

/**
 * Dialogues whose text and speech are made ahead of the one being placed and written (their
 * utterances wait in the synthesis queue, so the TTS servers never run dry between dialogues).
 */
const SYNTHESIS_LOOKAHEAD = 3;

/** The stage names, in order; used for timings. */
export const STAGES = [
  'ingest-corpus',
  'prepare-text',
  'synthesize-speech',
  'place-timeline',
  'annotate-events',
  'render-dataset',
] as const;

/**
 * Fail fast, before any work, on a configuration that cannot build the requested languages.
 * @throws ConfigError with what to configure
 */
export function checkBuildIsPossible(config: BuildConfig): void {
  registerLanguagePacks(config.languagePacks);
  const source = configSourceOf(config);
  for (const [index, language] of config.languages.entries()) {
    if (!findLanguagePack(language)) {
      throw new ConfigError(
        `${source === undefined ? 'languages' : `${source}: languages.${index}`}: no language pack for ${language} (built in or added: ${knownLanguageCodes().join(', ')}); add one with --language-pack FILE or languagePacks: in the build config (README "Adding a language")`,
      );
    }
  }
  // a language other than the corpus's is translated from it
  const translated = config.languages.find((language) => language !== config.corpus.language);
  if (translated !== undefined && config.corpus.language !== 'en') {
    throw new ConfigError(
      `languages: ${translated} differs from corpus.language ${config.corpus.language}; translation is from English only (the prompt templates), so build ${config.corpus.language} alone`,
    );
  }
  if (translated !== undefined && config.llm.translate.backend === 'none') {
    const name = languagePackOf(translated).name;
    throw new ConfigError(
      `${name} needs a translation backend: set llm.translate in a build config (--config FILE) to an LLM, ` +
        '{backend: gemini, model: gemma-4-31b-it} with GEMINI_API_KEY set, or {backend: openai-compatible, baseUrl: ..., model: ...}, ' +
        'or to recorded responses {backend: replay, file: ..., model: ...}; see README "Real services". The demo corpus has recordings (npm run demo).',
    );
  }
  for (const language of config.languages) {
    const tts = ttsOf(config, language);
    const pack = languagePackOf(language);
    if (tts.backend === 'espeak-ng' && pack.offlineVoice.engine === 'open-jtalk') {
      throw new ConfigError(
        `tts.${language}.backend: espeak-ng cannot read ${pack.name} (kanji); use open-jtalk, the offline engine of ${languagePackSource(pack)}`,
      );
    }
    if (tts.backend === 'open-jtalk' && pack.offlineVoice.engine !== 'open-jtalk')
      throw new ConfigError(`tts.${language}.backend: open-jtalk speaks Japanese only`);
    // a CosyVoice model speaks the languages its generation was trained on (language pack cosyVoice)
    if (tts.backend === 'cosyvoice2' || tts.backend === 'cosyvoice2-triton') {
      const label = REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS[tts.backend].parse(tts.service ?? {}).model;
      const problem = cosyVoiceLanguageProblem(language, label, `tts.${language}.service.model`);
      if (problem !== null) throw new ConfigError(problem);
    }
  }
}

/**
 * Checks, before any work, that the espeak-ng voice of each language built with espeak-ng without
 * configured voices (its language pack's `offlineVoice.voice`) exists in `espeak-ng --voices`.
 * @throws ConfigError naming the pack's field and the voice
 */
export async function checkOfflineVoices(config: BuildConfig): Promise<void> {
  const needed = config.languages.filter(
    (language) =>
      ttsOf(config, language).backend === 'espeak-ng' && !ttsOf(config, language).voices && language !== 'en',
  );
  if (needed.length === 0) return;
  const voices = await espeakNgVoiceNames();
  for (const language of needed) {
    const pack = languagePackOf(language);
    if (!voices.has(pack.offlineVoice.voice)) {
      throw new ConfigError(
        `${languagePackSource(pack)}: offlineVoice.voice: espeak-ng has no voice "${pack.offlineVoice.voice}" (see espeak-ng --voices)`,
      );
    }
  }
}

/**
 * How a queued build (./queued-build.ts) paces the local pass: each dialogue starts once the workers
 * are done with its job, and no dataset is committed before every job (scoring included) is done.
 */
export interface BuildQueueHook {
  /**
   * Resolves when the workers finished the dialogue's job, or failed it for good (the local pass then
   * makes the dialogue itself and quarantines it if it fails again).
   * @throws BuildStoppedError (Redis gone too long, Ctrl-C): the build stops and its uncommitted
   *   datasets are discarded
   */
  dialogueReady(language: Language, id: string): Promise<void>;
  /** Resolves when every job of every language is done; awaited before the first commit. @throws as dialogueReady */
  beforeCommit(): Promise<void>;
}

/**
 * Run a whole build.
 * @param options `log` for progress lines (API keys redacted); `allowShrink` to let a dataset replace
 *   one with more dialogues; `queue` when the build is queued (./queued-build.ts): its dialogues wait for
 *   the workers' jobs, and a stop of that wait discards the uncommitted datasets; `kept` is told each
 *   output as soon as it is written to stay (a committed dataset folder, `summary.md`, `summary.json`,
 *   the report's `index.html`), so a caller can name what a build that fails later left behind
 * @throws ConfigError when the configuration cannot build what it asks for; corpus-level errors
 *   (unreadable, invalid UTF-8, not JSON, malformed) from the ingest stage; BuildInputError for a bad
 *   setting or output/cache folder; BuildStoppedError subclasses (pipeline/model/build-errors.ts, exit
 *   code 4) when the build stops before committing: no dialogue built, a smaller dataset, disk full,
 *   the lock held or lost. Other dialogue-level failures do not throw: they are counted and listed in
 *   the summary.
 */
export async function runBuild(
  config: BuildConfig,
  options: {
    log?: BuildLog;
    allowShrink?: boolean;
    progress?: ProgressListener;
    queue?: BuildQueueHook;
    kept?: (output: string) => void;
  } = {},
): Promise<BuildReport> {
  checkBuildIsPossible(config);
  await checkOfflineVoices(config);
  const log = beginGuardedBuild(config, options.log ?? (() => {})); // keys redacted; settings checked (pipeline/run/build-guards.ts)
  // a damaged cache entry (its content hash differs) is recomputed; each is named, the count closes the build
  const cache = new ContentCache(config.output.cacheDirectory, {
    onCorrupt: (file, reason) => log(`cache: corrupt entry redone: ${file}: ${reason}`, 'warn'),
  });
  const runner = new StageRunner(STAGES, { cache });
  const corpus = await runner.runStage(ingestCorpusStage, { corpus: config.corpus }, { languages: config.languages });
  log(
    `ingest: ${corpus.conversations.length} conversations from ${config.corpus.path}${corpus.rejected.length ? `, ${corpus.rejected.length} rejected` : ''}`,
  );
  for (const rejected of corpus.rejected) log(`ingest: rejected ${rejected.id}: ${rejected.reason}`, 'warn');
  for (const note of corpus.notes) log(`ingest: note: ${note}`);
  // what the corpus loader did to the text (empty answers, dropped turns, removed control characters): printed, never silent
  for (const warning of corpus.warnings) log(`ingest: warning: ${warning}`, 'warn');
  // voice prompts that cannot be what their manifest says stop the build before any request (a truncated clip)
  for (const language of config.languages) await checkSpeakerPromptClips(language, config);
  // folder checks, the output folder's lock, cleanup after killed builds (pipeline/run/build-guards.ts)
  return runLocked(config, corpus, log, () =>
    buildLocked(
      config,
      corpus,
      runner,
      log,
      options.allowShrink === true,
      options.progress ?? (() => {}),
      options.queue ?? null,
      options.kept ?? (() => {}),
    ),
  );
}

/** One dialogue on its way through the stages: each stage adds its output. */
interface DialogueWork {
  conversation: SourceConversation;
  speakers: Record<SpeakerRole, SpeakerIdentity>;
  text?: DialogueText;
  speech?: DialogueSpeech;
  timeline?: RenderedTimeline;
  bargeInTimeline?: RenderedBargeInTimeline;
  annotated?: AnnotatedDialogue;
}

/** A stage's output that an earlier stage of the list makes. @throws Error when the list is out of order */
function made<T>(value: T | undefined, what: string, work: DialogueWork): T {
  if (value === undefined) throw new Error(`${work.conversation.id}: no ${what} yet (the stage list is out of order)`);
  return value;
}

/**
 * {@link buildWithPages} with the report's dialogue pages made as each dialogue is written
 * (pipeline/report/pre-rendered-pages.ts), so that after the last answer the report mostly moves
 * files. Not in a scored build: its split, which every page shows, is assigned after the last
 * dialogue, so its pages are made by the report. The pages' folder is removed when the build ends
 * (a killed build's by the next build, scored or not: pipeline/run/build-guards.ts).
 */
async function buildLocked(
  config: BuildConfig,
  corpus: IngestedCorpus,
  runner: StageRunner,
  log: BuildLog,
  allowShrink: boolean,
  progress: ProgressListener,
  queueHook: BuildQueueHook | null,
  kept: (output: string) => void,
): Promise<BuildReport> {
  const preRendered = config.quality.enabled ? null : await PreRenderedDialoguePages.open(config.output.directory);
  try {
    return await buildWithPages(preRendered, config, corpus, runner, log, allowShrink, progress, queueHook, kept);
  } finally {
    await preRendered?.discard();
  }
}

/** The build proper: {@link buildLocked}'s arguments, after the pages the build makes while it runs (null: none). */
async function buildWithPages(
  preRendered: PreRenderedDialoguePages | null,
  ...[config, corpus, runner, log, allowShrink, progress, queueHook, kept]: Parameters<typeof buildLocked>
): Promise<BuildReport> {
  const { cache } = runner.context;
  /** The error that stopped a queued build's wait (Redis gone, Ctrl-C): the datasets being written are then discarded. */
  let queueStop: unknown = undefined;
  const fromQueue = async (waiting: Promise<void>): Promise<void> => {
    try {
      await waiting;
    } catch (error) {
      queueStop ??= error;
      throw error;
    }
  };
  const { textBackends, detector, queue, resamplePool, renderPool } = await createSharedBuildServices(config, log);
  const summaries: DatasetSummary[] = [];
  let audioSeconds = 0;
  let failedCount = 0;
  /** Languages built with the cross-language timing prior: a warning each, repeated in summary.md. */
  const timingPriorWarnings: string[] = [];

  for (const language of config.languages) {
    const dataset = datasetNameOf(config, language);
    const { stepsInto, initial, statistics, placement, turnHoldShare, backchannelPhrases, timingPriorWarning } =
      await languageWork(config, language, { textBackends, detector, queue, resamplePool, renderPool }, progress);
    if (timingPriorWarning !== null) {
      log(`warning: ${timingPriorWarning}`);
      timingPriorWarnings.push(timingPriorWarning);
    }
    const linking = {
      linkToStored: config.output.linkAudioToCache ?? true,
      ...(preRendered
        ? {
            pages: {
              preRendered,
              outputDirectory: config.output.directory,
              channels: { user: config.channels.user, system: config.channels.system },
              sampleRate: config.audio.sampleRate,
            },
          }
        : {}),
    };
    const base = await DatasetOutput.open(
      language,
      dataset,
      path.join(config.output.directory, datasetRelativePath(language, dataset)),
      corpus,
      linking,
    );
    const variantDataset = `${dataset}${BARGE_IN_SUFFIX}`;
    const variant = config.datasets.bargeIn
      ? await DatasetOutput.open(
          language,
          variantDataset,
          path.join(config.output.directory, datasetRelativePath(language, variantDataset)),
          corpus,
          linking,
        )
      : null;
    const { steps: baseSteps, variantSteps } = stepsInto({ base, variant });
    // The variant's placement needs only the speech: it starts beside the base's placement (the one
    // computes while the other waits on the disk; after the last answer that is the build's time), and
    // the variant's steps after it run once the base dialogue is written (afterCompleted), in order.
    const [variantPlacementStep, ...variantLaterSteps] = variantSteps;
    const earlyVariantPlacements = new Map<string, Promise<StepsOutcome<DialogueWork>>>();
    const abandonedVariantPlacements: Promise<void>[] = [];
    const languageSteps: StageStep<DialogueWork>[] = variantPlacementStep
      ? baseSteps.flatMap((step) =>
          step.name !== placeTimelineStage.name
            ? [step]
            : [
                {
                  name: 'start-barge-in-placement',
                  cacheStages: [],
                  startAhead: 0,
                  progress: null,
                  run: async (work: DialogueWork) => {
                    const placing = runner.runSteps([variantPlacementStep], work);
                    placing.catch(() => {}); // runSteps reports failures in its outcome
                    earlyVariantPlacements.set(work.conversation.id, placing);
                    return work;
                  },
                },
                step,
              ],
        )
      : baseSteps;
    // queued: each dialogue waits for its job on the workers (whose results are then cache hits), so the local pass runs alongside them
    const steps: StageStep<DialogueWork>[] = queueHook
      ? [
          {
            name: 'wait-for-workers',
            cacheStages: [],
            startAhead: 'all',
            progress: null,
            run: async (work) => {
              await fromQueue(queueHook.dialogueReady(language, work.conversation.id));
              return work;
            },
          },
          ...languageSteps,
        ]
      : languageSteps;

    const total = corpus.conversations.length;
    try {
      try {
        await runner.runDataset<SourceConversation, DialogueWork>({
          language,
          items: corpus.conversations,
          id: (conversation) => conversation.id,
          initial,
          steps,
          completed: (_conversation, work) => {
            const timeline = made(work.timeline, 'timeline', work);
            audioSeconds += timeline.totalDurationCs / 100;
            return `${(timeline.totalDurationCs / 100).toFixed(1)} s, ${made(work.speech, 'speech', work).spoken.length} utterances`;
          },
          afterCompleted: async (conversation, work, position) => {
            if (variant === null) return;
            const early = earlyVariantPlacements.get(conversation.id);
            earlyVariantPlacements.delete(conversation.id);
            const placed = early ? await early : await runner.runSteps(variantSteps.slice(0, 1), work);
            const outcome = placed.ok ? await runner.runSteps(variantLaterSteps, placed.state) : placed;
            if (outcome.ok) {
              audioSeconds += made(outcome.state.bargeInTimeline, 'barge-in timeline', work).totalDurationCs / 100;
              return;
            }
            if (endsTheBuild(outcome.error)) throw outcome.error;
            const failure = { stage: outcome.stage, reason: firstLine(outcome.error) };
            variant.failed.push({ id: conversation.id, ...failure });
            log(
              itemLogLine(
                language,
                position + 1,
                total,
                `${conversation.id} (${variantDataset})`,
                failureText(failure),
              ),
              'warn',
            );
          },
          failed: (conversation, failure) => {
            // its variant's placement, if started, is not used: only its end is awaited (not its state, which holds the audio)
            const early = earlyVariantPlacements.get(conversation.id);
            earlyVariantPlacements.delete(conversation.id);
            if (early) abandonedVariantPlacements.push(early.then(() => undefined));
            base.failed.push({ id: conversation.id, ...failure });
            variant?.failed.push({ id: conversation.id, ...failure });
          },
          log,
          progress,
        });
      } finally {
        // variant placements started beside bases that then failed, or were not reached, end before the build goes on
        await Promise.allSettled([...earlyVariantPlacements.values(), ...abandonedVariantPlacements]);
      }
      if (queueHook) await fromQueue(queueHook.beforeCommit());
    } catch (error) {
      // a queued build stopped waiting: nothing of this language is committed (earlier languages were not either: beforeCommit comes first)
      if (error === queueStop) for (const output of [base, variant]) await output?.discard();
      throw error;
    }

    const commitSettings = {
      domain: 'task' as const,
      sampleRate: config.audio.sampleRate,
      channels: { user: config.channels.user, system: config.channels.system },
      speechDetection: detector,
      build: { name: config.name, seed: config.seed },
      timeline: { profile: config.timeline.profile, turnHoldShare },
    };
    const fidelityOptions = {
      backchannelListener: config.channels.user,
      backchannelsGenerated: backchannelPhrases.length > 0,
      gapOnlyChannel: placement.options.gapOnlyChannel,
    };
    const outputs = variant ? [base, variant] : [base];
    for (const [position, output] of outputs.entries()) {
      // a dataset that is refused (empty, smaller) or cannot be written stops the build: the ones not yet committed are discarded
      let summary: DatasetSummary;
      try {
        summary = await output.commit(
          statistics,
          output === base ? fidelityOptions : null,
          {
            ...commitSettings,
            ...(output === variant
              ? { variant: { kind: 'barge-in', of: dataset, systemYields: config.timeline.bargeIn.systemYields } }
              : {}),
          },
          { allowShrink, variant: output === variant ? 'barge-in' : 'default' },
        );
      } catch (error) {
        for (const later of outputs.slice(position + 1)) await later.discard();
        throw error;
      }
      kept(output.directory);
      failedCount += summary.failed.length;
      summaries.push(summary);
      log(
        `[${language}] wrote ${summary.dialogues} dialogues to ${output.directory}${summary.failed.length ? ` (${summary.failed.length} failed)` : ''}`,
      );
    }
  }

  await resamplePool?.close();
  await renderPool?.close();
  const splits = config.quality.enabled ? await scoreAndSplit(config, summaries, log, runner.context, progress) : [];

  const summaryMarkdownPath = path.join(config.output.directory, 'summary.md');
  const timingNote =
    timingPriorWarnings.length > 0
      ? `\n## Timing statistics assumed, not measured\n\n${timingPriorWarnings.map((warning) => `- ${warning}`).join('\n')}\n`
      : '';
  await writeAtomic(summaryMarkdownPath, (await formatBuildSummaryMarkdown(config, summaries, splits)) + timingNote);
  kept(summaryMarkdownPath);
  await writeRecord(path.join(config.output.directory, 'summary.json'), buildSummarySchema, {
    name: config.name,
    seed: config.seed,
    datasets: summaries,
  });
  kept(path.join(config.output.directory, 'summary.json'));
  // The HTML report (pipeline/report): tables, offset plots, a listening page per dialogue.
  let reportPath: string | null = null;
  try {
    const written = await writeBuildReport(config.output.directory, preRendered ? { preRendered } : {});
    reportPath = written.indexPath;
    kept(reportPath);
    const unmade =
      preRendered && preRendered.failures > 0
        ? `; ${preRendered.failures} could not be made then and were made by the report`
        : '';
    log(
      `report: ${reportPath}${preRendered ? ` (${preRendered.taken} of ${written.dialoguePages} dialogue pages made during the build${unmade})` : ''}`,
    );
  } catch (error) {
    if (endsTheBuild(error)) throw error;
    log(`report: not written: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`, 'warn');
  }
  const { stageSeconds } = runner;
  // Timings and cache use differ from run to run, so they stay out of the (deterministic) output folder.
  const outputDirectory = path.resolve(config.output.directory);
  await writeAtomic(
    runRecordFile(config.output.cacheDirectory, config.name, outputDirectory),
    `${JSON.stringify({ outputDirectory, stageSeconds, audioSeconds, cache: cache.statistics }, null, 2)}\n`,
  );
  if (cache.corruptEntries > 0) log(`cache: ${describeCorruptEntries(cache.corruptEntries)}`, 'warn');
  return {
    outputDirectory: config.output.directory,
    summaryMarkdownPath,
    reportPath,
    datasets: summaries,
    failedDialogues: failedCount,
    stageSeconds,
    audioSeconds,
    cache: cache.statistics,
  };
}

/** `3 corrupt cache entries redone` (the build's closing line about damaged cache entries). */
export function describeCorruptEntries(count: number): string {
  return `${count} corrupt cache ${count === 1 ? 'entry' : 'entries'} redone`;
}

/** What every language of a build shares: the text backends, the speech detector, the synthesis queue, the resampling and rendering threads. */
export interface SharedBuildServices {
  textBackends: Awaited<ReturnType<typeof createTextBackends>>;
  detector: ReturnType<typeof resolveSpeechDetectorOptions>;
  queue: ReturnType<typeof createSynthesisQueue>;
  resamplePool: ReturnType<typeof createResamplePool> | null;
  renderPool: RenderPool | null;
}

/** The services a build's languages share, made from the config (retry lines go to `log`). */
export async function createSharedBuildServices(config: BuildConfig, log: BuildLog): Promise<SharedBuildServices> {
  const textBackends = await createTextBackends(config, (event) => log(`retry: ${describeRetry(event)}`));
  const detector = resolveSpeechDetectorOptions(
    definedOnly({
      thresholdDbfs: config.speechDetection.thresholdDbfs,
      // the config says minimum…, the detector min… (pipeline/audio/speech-regions.ts)
      minSilenceSeconds: config.speechDetection.minimumSilenceSeconds,
      minSpeechSeconds: config.speechDetection.minimumSpeechSeconds,
    }),
  );
  const queue = createSynthesisQueue(config.synthesis.concurrency);
  // resampling threads (synthesis.resampleThreads); idle threads end on their own if the build stops early
  const resamplePool =
    config.synthesis.resampleThreads > 0 ? createResamplePool(config.synthesis.resampleThreads) : null;
  // threads that master the placed dialogues (audio.renderThreads); started on first use, likewise
  const renderPool = config.audio.renderThreads > 0 ? createRenderPool(config.audio.renderThreads) : null;
  return { textBackends, detector, queue, resamplePool, renderPool };
}

/**
 * One language's stage lists, `stepsInto(sinks)`: `steps` (text, speech, placement, events, render
 * into `sinks.base`) and `variantSteps` (the barge-in variant from the same speech, rendered into
 * `sinks.variant`; empty without a variant), the state a dialogue starts from, and the warning when
 * the language has no measured timing statistics. The local build runs them over the whole corpus, a
 * queue worker (./queue-worker.ts) over one dialogue per job: the same code either way.
 * @param progress synthesis progress events
 * @throws as createSpeechSynthesizer and the timing statistics' loading
 */
export async function languageWork(
  config: BuildConfig,
  language: Language,
  shared: SharedBuildServices,
  progress: ProgressListener,
) {
  const { textBackends, detector, queue, resamplePool, renderPool } = shared;
  const dataset = datasetNameOf(config, language);
  const synthesizer = await createSpeechSynthesizer(ttsOf(config, language).backend, ttsOf(config, language).service);
  const roster = speakerRoster(language, config, synthesizer);
  const shipped = shippedTimingStatisticsOf(language);
  const statisticsFile = config.timeline.statistics[language] ?? shipped.file;
  // with the shipped statistics, a question split in two draws its pause from the measured pauses inside questions
  const statistics = config.timeline.statistics[language]
    ? await loadTimingStatistics(statisticsFile)
    : withQuestionPauses(await loadTimingStatistics(statisticsFile), await loadDefaultQuestionPauses(language));
  const timingPriorWarning =
    !config.timeline.statistics[language] && shipped.prior
      ? `${language}: no measured timing statistics (its language pack has timing.statistics: null); using the cross-language prior ${path.basename(shipped.file)} (CallFriend/CallHome calls of en, ja, zh, de pooled; Stivers et al. 2009, PNAS 106:10587). Measure real ${language} conversations with duplexsynth measure and set timeline.statistics.${language}`
      : null;
  const variantDataset = `${dataset}${BARGE_IN_SUFFIX}`;
  const benchmarkProfile = config.timeline.profile === 'benchmark';
  const turnHoldShare = config.timeline.turnHoldShare ?? (benchmarkProfile ? DEFAULT_BENCHMARK_TURN_HOLD_SHARE : 0);
  const placement = {
    seed: config.seed,
    channelOfRole: config.channels,
    statistics,
    renderPool,
    options: {
      leadingSilenceCs: Math.round(config.timeline.leadingSilenceSeconds * 100),
      trailingSilenceCs: Math.round(config.timeline.trailingSilenceSeconds * 100),
      maximumGapCs:
        config.timeline.maximumGapSeconds === null ? null : Math.round(config.timeline.maximumGapSeconds * 100),
      gapOnlyChannel: benchmarkProfile ? config.channels.system : null,
    },
  };
  const backchannelPhrases = config.timeline.backchannels.enabled
    ? (config.timeline.backchannels.phrases[language] ?? [])
    : [];
  const metadataOf = { language, config, synthesizer, statisticsFile };

  const stepsInto = (sinks: { base: DialogueSink; variant: DialogueSink | null }) => {
    // The list. Text for every dialogue is requested up front: the LLM endpoint queues bound what is in
    // flight, so remote backends work in parallel while speech is synthesized SYNTHESIS_LOOKAHEAD
    // dialogues ahead of the one being placed and written, so the TTS servers are never idle.
    const steps: StageStep<DialogueWork>[] = [
      stageStep(prepareTextStage, {
        startAhead: 'all',
        progress: 'prepare-text',
        input: (work) => ({ conversation: work.conversation, language }),
        parameters: { backends: textBackends },
        output: (work, text) => ({ ...work, text }),
      }),
      stageStep(synthesizeSpeechStage, {
        startAhead: SYNTHESIS_LOOKAHEAD,
        progress: 'synthesize-speech',
        input: (work) => ({
          dialogueId: work.conversation.id,
          text: made(work.text, 'text', work),
          voices: { user: work.speakers.user.voice, system: work.speakers.system.voice },
          protectedPhrases: protectedPhrasesOf(work.conversation.turns),
        }),
        parameters: {
          synthesizer,
          queue,
          seed: config.seed,
          turnHoldShare,
          backchannelPhrases,
          settings: {
            ...synthesizeSettingsOf(config, language, detector),
            ...(resamplePool ? { resampler: resamplePool.resample } : {}),
          },
          progress: {
            planned: (id, amount) =>
              progress({ type: 'item-planned', language, stage: 'synthesize-speech', id, amount }),
            spoken: (id) => progress({ type: 'item-advanced', language, stage: 'synthesize-speech', id, amount: 1 }),
          },
        },
        output: (work, speech) => ({ ...work, speech }),
      }),
      stageStep(placeTimelineStage, {
        input: (work) => ({
          dialogueId: work.conversation.id,
          utterances: made(work.speech, 'speech', work).spoken,
          backchannelClips: made(work.speech, 'speech', work).backchannelClips,
        }),
        parameters: placement,
        output: (work, timeline) => ({ ...work, timeline }),
      }),
      stageStep(annotateEventsStage, {
        input: (work) => ({
          dialogueId: work.conversation.id,
          timeline: made(work.timeline, 'timeline', work),
          utterances: made(work.speech, 'speech', work).spoken,
        }),
        parameters: {},
        output: (work, annotated) => ({ ...work, annotated }),
      }),
      stageStep(renderDatasetStage, {
        progress: 'render-dataset',
        input: (work) => {
          const { conversation, speakers } = work;
          const [text, speech, timeline] = [
            made(work.text, 'text', work),
            made(work.speech, 'speech', work),
            made(work.timeline, 'timeline', work),
          ];
          return {
            id: conversation.id,
            timeline,
            annotated: made(work.annotated, 'events', work),
            metadata: taskDialogueMetadata({
              ...metadataOf,
              conversation,
              text,
              spoken: speech.spoken,
              timeline,
              dataset,
              speakers,
            }),
            spoken: speech.spoken,
            counts: { splitQuestionsSpokenWhole: speech.splitQuestionsSpokenWhole },
          };
        },
        parameters: { output: sinks.base, userChannel: config.channels.user },
        output: (work) => work,
      }),
    ];
    // The barge-in variant: the same synthesized audio, the user barging in on every answer long enough.
    const variantSteps: StageStep<DialogueWork>[] = !sinks.variant
      ? []
      : [
          stageStep(placeBargeInTimelineStage, {
            input: (work) => ({
              dialogueId: work.conversation.id,
              utterances: made(work.speech, 'speech', work).spoken,
              backchannelClips: made(work.speech, 'speech', work).backchannelClips,
            }),
            parameters: {
              ...placement,
              options: { ...placement.options, gapOnlyChannel: config.channels.system },
              systemYields: config.timeline.bargeIn.systemYields,
              minimumUnspoken: config.timeline.bargeIn.minimumUnspoken,
              detector,
            },
            output: (work, bargeInTimeline) => ({ ...work, bargeInTimeline }),
          }),
          stageStep(annotateEventsStage, {
            input: (work) => ({
              dialogueId: work.conversation.id,
              timeline: made(work.bargeInTimeline, 'barge-in timeline', work),
              utterances: made(work.bargeInTimeline, 'barge-in timeline', work).utterances,
            }),
            parameters: {},
            output: (work, annotated) => ({ ...work, annotated }),
          }),
          stageStep(renderDatasetStage, {
            input: (work) => {
              const { conversation, speakers } = work;
              const [text, speech, timeline] = [
                made(work.text, 'text', work),
                made(work.speech, 'speech', work),
                made(work.bargeInTimeline, 'barge-in timeline', work),
              ];
              return {
                id: conversation.id,
                timeline,
                annotated: made(work.annotated, 'events', work),
                metadata: bargeInVariantMetadata(
                  { ...metadataOf, conversation, text, timeline, dataset: variantDataset, speakers },
                  speech.spoken,
                  dataset,
                ),
                spoken: timeline.utterances,
                counts: {
                  splitQuestionsSpokenWhole: speech.splitQuestionsSpokenWhole,
                  bargeIns: {
                    placed: timeline.bargeIns.length,
                    answersTooShort: timeline.answersTooShort.length,
                    fallbacks: timeline.bargeIns.filter((bargeIn) => bargeIn.fallback).length,
                    unspokenCs: timeline.bargeIns.map((bargeIn) => bargeIn.unspokenCs),
                    // measured as the metadata lists them: the answer's words starting at or after the cut
                    unspokenWords: timeline.bargeIns.map(
                      (bargeIn) =>
                        speech.spoken[bargeIn.answerIndex]!.words.filter((word) => word.start >= bargeIn.cutCs).length,
                    ),
                  },
                },
              };
            },
            parameters: { output: sinks.variant, userChannel: config.channels.user },
            output: (work) => work,
          }),
        ];
    return { steps, variantSteps };
  };
  const initial = (conversation: SourceConversation): DialogueWork => ({
    conversation,
    speakers: roster.fixed ?? drawDialogueSpeakers(roster.identities, config.seed, conversation.id),
  });
  return { stepsInto, initial, statistics, placement, turnHoldShare, backchannelPhrases, timingPriorWarning };
}

function describeRetry(event: RetryEvent): string {
  return `${event.error.message.split('\n')[0]} (retry ${event.retryIndex + 1} in ${(event.delayMilliseconds / 1000).toFixed(1)} s)`;
}

function definedOnly<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
