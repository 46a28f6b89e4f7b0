/**
 * The build runner: ingest → rewrite (spoken style) → translate → synthesize → place timeline →
 * annotate events → render dataset → summary, per language, one dialogue at a time.
 *
 * - Each stage's result is cached by a content hash of its inputs and parameters
 *   (`ContentCache`), so a second identical build reuses everything and synthesizes nothing.
 * - One bad dialogue never sinks the run: its failure (stage and reason) is recorded in the summary
 *   and the build goes on.
 * - Outputs are deterministic: the same config and seed give byte-identical files (run timings and
 *   cache use go to `{cacheDirectory}/runs/{name}.json`, outside the output folder).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { resolveSpeechDetectorOptions } from '../audio/speech-regions.ts';
import { createResamplePool } from '../audio/resample-pool.ts';
import type { BuildConfig } from '../config.ts';
import { ConfigError } from '../config.ts';
import type { Language, ScriptUtterance, SourceConversation, SpeakerRole } from '../model/types.ts';
import { ingestCorpus, type IngestedCorpus } from '../../stages/ingest-corpus.ts';
import { buildFidelityReport, formatFidelityJson, formatFidelityMarkdown, generatedDialogueTiming, type GeneratedDialogueTiming } from '../timeline/fidelity.ts';
import { prepareDialogueText } from './prepare-text.ts';
import { createTextBackends, type DialogueTextBackends } from '../services/llm/text-backends.ts';
import { synthesizeDialogue, createSynthesisQueue, type SpokenUtterance } from '../../stages/synthesize-speech.ts';
import { placeBargeInTimeline, placeTimeline } from '../../stages/place-timeline.ts';
import { planTurnHolds, type QuestionParts } from '../text/turn-hold-split.ts';
import { dialogueRandomStream } from '../model/random.ts';
import { writeBuildReport } from '../report/build-report.ts';
import { BARGE_IN_SUFFIX, DatasetOutput, DEFAULT_BENCHMARK_TURN_HOLD_SHARE } from './dataset-output.ts';
import { annotateDialogue } from '../../stages/annotate-events.ts';
import { DatasetWriter, datasetRelativePath } from '../../stages/render-dataset.ts';
import { formatSummaryMarkdown, summarizeDataset, type DialogueSummaryInput } from '../quality/summarize-dataset.ts';
import { type DatasetSummary, type FailedDialogue } from '../model/dataset-summary.ts';
import { createSpeechSynthesizer, DEFAULT_VOICES } from '../services/tts/synthesizer-registry.ts';
import type { SpeechSynthesizer, VoiceSettings } from '../services/tts/speech-synthesizer.ts';
import { drawDialogueSpeakers, OFFLINE_SPEAKER_ROSTERS, type SpeakerIdentity } from '../services/tts/offline-speaker-roster.ts';
import { voicePromptRoster } from '../services/tts/voice-prompt.ts';
import { speakerPromptLineSchema } from '../model/speaker-prompt.ts';
import { buildSummarySchema } from '../model/dataset-summary.ts';
import { parseRecord, writeRecord } from '../storage/json-records.ts';
import { loadDefaultTimingStatistics, loadTimingStatistics, defaultTimingStatisticsPath, type TimingStatistics } from '../timeline/timing-statistics.ts';
import { ContentCache } from '../storage/content-cache.ts';
import { writeAtomic } from '../storage/write-atomic.ts';
import { progressStagesFailedAt, PROGRESS_STAGES, type ProgressListener } from '../run/progress.ts';
import { endsTheBuild } from '../model/build-errors.ts';
import { beginGuardedBuild, runLocked } from '../run/build-guards.ts';
import type { RetryEvent } from '../services/llm/retrying-model.ts';
import { scoreDatasetQuality } from '../../stages/score-quality.ts';
import { buildDatasetTables, formatStatisticsTableMarkdown } from '../quality/tables.ts';
import { applySplitToVariant, splitDatasets } from '../../stages/split-dev-test.ts';
import { type SplitReport } from '../model/split-report.ts';
import type { DialogueText } from '../model/types.ts';
import type { TaskDialogueMetadata } from '../model/dialogue-metadata.ts';

/** What a build returns (timings and cache use are also written to `{cacheDirectory}/runs/{name}.json`). */
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

/** Logger for progress lines (stderr in the CLI). */
export type BuildLog = (line: string) => void;

/**
 * Dialogues whose text and speech are made ahead of the one being placed and written (their
 * utterances wait in the synthesis queue, so the TTS servers never run dry between dialogues).
 */
const SYNTHESIS_LOOKAHEAD = 3;

/** Longest backchannel clip used, centiseconds: an IPU of at most 0.80 s is a BC (events.md rule 2). */
const MAXIMUM_BACKCHANNEL_CS = 80;

/** The stage names, in order; used for timings. */
export const STAGES = ['ingest-corpus', 'prepare-text', 'synthesize-speech', 'place-timeline', 'annotate-events', 'render-dataset'] as const;

/**
 * Fail fast, before any work, on a configuration that cannot build the requested languages.
 * @throws ConfigError with what to configure
 */
export function checkBuildIsPossible(config: BuildConfig): void {
  if (config.languages.includes('ja') && config.llm.translate.backend === 'none') {
    throw new ConfigError(
      'Japanese needs a translation backend: set llm.translate in a build config (--config FILE) to an LLM, ' +
        '{backend: gemini, model: gemma-4-31b-it} with GEMINI_API_KEY set, or {backend: openai-compatible, baseUrl: ..., model: ...}, ' +
        'or to recorded responses {backend: replay, file: ..., model: ...}; see README "Real services". The demo corpus has recordings (npm run demo).',
    );
  }
  for (const language of config.languages) {
    const engine = config.tts[language].backend;
    if (engine === 'espeak-ng' && language === 'ja') {
      throw new ConfigError('tts.ja.backend: espeak-ng cannot read kanji; use open-jtalk for Japanese');
    }
    if (engine === 'open-jtalk' && language !== 'ja') throw new ConfigError(`tts.${language}.backend: open-jtalk speaks Japanese only`);
  }
}

/**
 * The utterances to speak, in order: each turn's question (user), then its answer (system) when it
 * has one. A turn without an answer (the source's final question without answer) ends the dialogue
 * with its question. A turn in `holds` has its question spoken in two parts (`part` 1 and 2), so the
 * timeline puts a TURN_HOLD pause between them.
 */
export function dialogueScript(text: DialogueText, holds: ReadonlyMap<number, QuestionParts> = new Map()): ScriptUtterance[] {
  const utterances: ScriptUtterance[] = [];
  for (const turn of text.final) {
    const parts = holds.get(turn.turnNumber);
    if (parts) {
      utterances.push({ index: utterances.length, turnNumber: turn.turnNumber, kind: 'question', role: 'user', text: parts.first, part: 1 });
      utterances.push({ index: utterances.length, turnNumber: turn.turnNumber, kind: 'question', role: 'user', text: parts.second, part: 2 });
    } else utterances.push({ index: utterances.length, turnNumber: turn.turnNumber, kind: 'question', role: 'user', text: turn.question });
    if (turn.answer !== null) utterances.push({ index: utterances.length, turnNumber: turn.turnNumber, kind: 'answer', role: 'system', text: turn.answer });
  }
  return utterances;
}

/**
 * Run a whole build.
 * @param options `log` for progress lines (API keys redacted); `allowShrink` to let a dataset replace
 *   one with more dialogues
 * @throws ConfigError when the configuration cannot build what it asks for; corpus-level errors
 *   (unreadable, invalid UTF-8, not JSON, malformed) from the ingest stage; BuildInputError for a bad
 *   setting or output/cache folder; BuildStoppedError subclasses (./build-errors.ts, exit code 4) when
 *   the build stops before committing: no dialogue built, a smaller dataset, disk full, the lock held
 *   or lost. Other dialogue-level failures do not throw: they are counted and listed in the summary.
 */
export async function runBuild(config: BuildConfig, options: { log?: BuildLog; allowShrink?: boolean; progress?: ProgressListener } = {}): Promise<BuildReport> {
  checkBuildIsPossible(config);
  const log = beginGuardedBuild(config, options.log ?? (() => {})); // keys redacted; settings checked (./build-guards.ts)
  const stageSeconds: Record<string, number> = Object.fromEntries(STAGES.map((stage) => [stage, 0]));
  const timed = async <T>(stage: (typeof STAGES)[number], work: () => Promise<T> | T): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      stageSeconds[stage]! += (performance.now() - started) / 1000;
    }
  };
  const cache = new ContentCache(config.output.cacheDirectory);
  const corpus = await timed('ingest-corpus', () => ingestCorpus(config));
  log(`ingest: ${corpus.conversations.length} conversations from ${config.corpus.path}${corpus.rejected.length ? `, ${corpus.rejected.length} rejected` : ''}`);
  for (const rejected of corpus.rejected) log(`ingest: rejected ${rejected.id}: ${rejected.reason}`);
  for (const note of corpus.notes) log(`ingest: note: ${note}`);
  // folder checks, the output folder's lock, cleanup after killed builds (./build-guards.ts)
  return runLocked(config, corpus, log, () => buildLocked(config, corpus, cache, timed, stageSeconds, log, options.allowShrink === true, options.progress ?? (() => {})));
}

async function buildLocked(
  config: BuildConfig,
  corpus: IngestedCorpus,
  cache: ContentCache,
  timed: <T>(stage: (typeof STAGES)[number], work: () => Promise<T> | T) => Promise<T>,
  stageSeconds: Record<string, number>,
  log: BuildLog,
  allowShrink: boolean,
  progress: ProgressListener,
): Promise<BuildReport> {
  const textBackends = await createTextBackends(config, (event) => log(`retry: ${describeRetry(event)}`));
  const detector = resolveSpeechDetectorOptions(definedOnly({
    thresholdDbfs: config.speechDetection.thresholdDbfs,
    // the config says minimum…, the detector min… (pipeline/audio/speech-regions.ts)
    minSilenceSeconds: config.speechDetection.minimumSilenceSeconds,
    minSpeechSeconds: config.speechDetection.minimumSpeechSeconds,
  }));
  const queue = createSynthesisQueue(config.synthesis.concurrency);
  // resampling threads (synthesis.resampleThreads); idle threads end on their own if the build stops early
  const resamplePool = config.synthesis.resampleThreads > 0 ? createResamplePool(config.synthesis.resampleThreads) : null;
  const summaries: DatasetSummary[] = [];
  let audioSeconds = 0;
  let failedCount = 0;

  for (const language of config.languages) {
    const dataset = config.datasets[language]!;
    const datasetDirectory = path.join(config.output.directory, datasetRelativePath(language, dataset));
    const synthesizer = await createSpeechSynthesizer(config.tts[language].backend, config.tts[language].service);
    const roster = speakerRoster(language, config, synthesizer);
    const statisticsFile = config.timeline.statistics[language] ?? defaultTimingStatisticsPath(language);
    const statistics: TimingStatistics = config.timeline.statistics[language]
      ? await loadTimingStatistics(statisticsFile)
      : await loadDefaultTimingStatistics(language);
    const base = await DatasetOutput.open(language, dataset, datasetDirectory, corpus);
    const variantDataset = `${dataset}${BARGE_IN_SUFFIX}`;
    const variant = config.datasets.bargeIn
      ? await DatasetOutput.open(language, variantDataset, path.join(config.output.directory, datasetRelativePath(language, variantDataset)), corpus)
      : null;
    const synthesizeSettings = {
      language,
      sampleRate: config.audio.sampleRate,
      detector,
      minimumUtteranceSeconds: config.synthesis.minimumUtteranceSeconds,
      maximumInternalPauseSeconds: config.synthesis.maximumInternalPauseSeconds,
      resampleQuality: config.synthesis.resampleQuality,
      ...(resamplePool ? { resampler: resamplePool.resample } : {}),
    };
    const minimumUtteranceCs = Math.round(config.synthesis.minimumUtteranceSeconds * 100);
    const benchmarkProfile = config.timeline.profile === 'benchmark';
    const turnHoldShare = config.timeline.turnHoldShare ?? (benchmarkProfile ? DEFAULT_BENCHMARK_TURN_HOLD_SHARE : 0);
    const placementOptions = {
      leadingSilenceCs: Math.round(config.timeline.leadingSilenceSeconds * 100),
      trailingSilenceCs: Math.round(config.timeline.trailingSilenceSeconds * 100),
      maximumGapCs: config.timeline.maximumGapSeconds === null ? null : Math.round(config.timeline.maximumGapSeconds * 100),
      gapOnlyChannel: benchmarkProfile ? config.channels.system : null,
    };
    const backchannelPhrases = config.timeline.backchannels.enabled ? (config.timeline.backchannels.phrases[language] ?? []) : [];
    for (const stage of PROGRESS_STAGES) progress({ type: 'stage-start', language, stage, total: corpus.conversations.length });
    // Text for every dialogue is requested up front: the LLM endpoint queues bound what is in flight,
    // so remote backends work in parallel while speech is synthesized dialogue by dialogue.
    const texts = new Map(
      corpus.conversations.map((conversation) => {
        const pending = timed('prepare-text', () => prepareDialogueText(conversation, language, textBackends, cache));
        pending.catch(() => {}); // awaited (and reported) in the loop below
        // cached when no text of this language was computed meanwhile (texts are made concurrently, so a
        // dialogue finishing after another one's miss counts as done: never cached when it was not)
        const textMisses = () => (cache.statistics['rewrite-spoken']?.misses ?? 0) + (cache.statistics.translate?.misses ?? 0);
        const textMissesBefore = textMisses();
        pending.then(
          () => progress({ type: 'item', language, stage: 'prepare-text', id: conversation.id, status: textMisses() === textMissesBefore ? 'cached' : 'done' }),
          (error: unknown) => progress({ type: 'item', language, stage: 'prepare-text', id: conversation.id, status: 'failed', reason: error instanceof Error ? error.message.split('\n')[0]! : String(error) }),
        );
        return [conversation.id, pending] as const;
      }),
    );
    type Prepared = { text: DialogueText; spoken: SpokenUtterance[]; backchannelClips: SpokenUtterance[]; splitQuestionsSpokenWhole: number };
    type Synthesized = { ok: true; value: Prepared } | { ok: false; stage: (typeof STAGES)[number]; error: unknown };
    // Text and speech of a dialogue, started SYNTHESIS_LOOKAHEAD dialogues ahead of its placement, so
    // the TTS servers (or engine processes) are fed while earlier dialogues are placed and written.
    const synthesizeConversation = async (conversation: SourceConversation): Promise<Synthesized> => {
      const speakers = roster.fixed ?? drawDialogueSpeakers(roster.identities, config.seed, conversation.id);
      const voices = { user: speakers.user.voice, system: speakers.system.voice };
      let stage: (typeof STAGES)[number] = 'prepare-text';
      try {
        const text = await texts.get(conversation.id)!;
        stage = 'synthesize-speech';
        const synthesisMisses = () => cache.statistics['synthesize-speech']?.misses ?? 0;
        const missesBefore = synthesisMisses();
        const synthesize = (script: ScriptUtterance[]) => timed('synthesize-speech', () => synthesizeDialogue(script, synthesizer, { ...synthesizeSettings, voices }, cache, queue));
        // User TURN_HOLDs: a share of the questions spoken in two parts; a question whose part comes
        // out too short to be a TURN is spoken whole instead (the parts stay in the cache).
        const holds = await planTurnHolds(
          text.final.map((turn) => ({ turnNumber: turn.turnNumber, question: turn.question })),
          language,
          turnHoldShare,
          dialogueRandomStream(config.seed, conversation.id, 'turn-holds'),
        );
        let spoken = await synthesize(dialogueScript(text, holds));
        const tooShort = new Set(spoken.filter((utterance) => utterance.part !== undefined && utterance.durationCs <= minimumUtteranceCs).map((utterance) => utterance.turnNumber));
        if (tooShort.size > 0) {
          for (const turnNumber of tooShort) holds.delete(turnNumber);
          spoken = await synthesize(dialogueScript(text, holds));
        }
        const backchannelScript: ScriptUtterance[] = backchannelPhrases.map((text, position) => ({ index: position, turnNumber: 0, kind: 'backchannel', role: 'user', text }));
        const backchannelClips = (await synthesize(backchannelScript)).filter((clip) => clip.durationCs <= MAXIMUM_BACKCHANNEL_CS);
        progress({ type: 'item', language, stage: 'synthesize-speech', id: conversation.id, status: synthesisMisses() === missesBefore ? 'cached' : 'done' });
        return { ok: true, value: { text, spoken, backchannelClips, splitQuestionsSpokenWhole: tooShort.size } };
      } catch (error) {
        return { ok: false, stage, error };
      }
    };
    const synthesizing = new Map<string, Promise<Synthesized>>();
    let index = 0;
    for (const conversation of corpus.conversations) {
      for (const ahead of corpus.conversations.slice(index, index + 1 + SYNTHESIS_LOOKAHEAD)) {
        if (!synthesizing.has(ahead.id)) synthesizing.set(ahead.id, synthesizeConversation(ahead));
      }
      index += 1;
      let stage: (typeof STAGES)[number] = 'prepare-text';
      const speakers = roster.fixed ?? drawDialogueSpeakers(roster.identities, config.seed, conversation.id);
      let prepared: Prepared | null = null;
      try {
        const synthesized = await synthesizing.get(conversation.id)!;
        synthesizing.delete(conversation.id);
        if (!synthesized.ok) {
          stage = synthesized.stage;
          throw synthesized.error;
        }
        prepared = synthesized.value;
        const { text, spoken, backchannelClips } = prepared;
        stage = 'place-timeline';
        const timeline = await timed('place-timeline', () =>
          placeTimeline({ dialogueId: conversation.id, seed: config.seed, utterances: spoken, channelOfRole: config.channels, statistics, options: placementOptions, backchannelClips }),
        );
        stage = 'annotate-events';
        const annotated = await timed('annotate-events', () => annotateDialogue(conversation.id, timeline.segments, timeline, spoken));
        stage = 'render-dataset';
        const metadata = dialogueMetadata({ conversation, text, spoken, timeline, language, dataset, config, synthesizer, speakers, statisticsFile });
        await timed('render-dataset', () => base.add(conversation.id, timeline, annotated, metadata, spoken, config.channels.user, { splitQuestionsSpokenWhole: prepared!.splitQuestionsSpokenWhole }));
        audioSeconds += timeline.totalDurationCs / 100;
        log(`[${language}] ${index}/${corpus.conversations.length} ${conversation.id}: ${(timeline.totalDurationCs / 100).toFixed(1)} s, ${spoken.length} utterances`);
        progress({ type: 'item', language, stage: 'render-dataset', id: conversation.id, status: 'done' });
      } catch (error) {
        if (endsTheBuild(error)) throw error; // disk full, lock lost: nothing is committed
        const reason = error instanceof Error ? error.message.split('\n')[0]! : String(error);
        base.failed.push({ id: conversation.id, stage, reason });
        variant?.failed.push({ id: conversation.id, stage, reason });
        for (const later of progressStagesFailedAt(stage)) progress({ type: 'item', language, stage: later, id: conversation.id, status: 'failed', reason });
        log(`[${language}] ${index}/${corpus.conversations.length} ${conversation.id}: FAILED at ${stage}: ${reason}`);
        continue;
      }
      if (variant === null || prepared === null) continue;
      // The barge-in variant: the same synthesized audio, the user barging in on every answer long enough.
      const { text, spoken, backchannelClips } = prepared;
      stage = 'place-timeline';
      try {
        const timeline = await timed('place-timeline', () =>
          placeBargeInTimeline({
            dialogueId: conversation.id,
            seed: config.seed,
            utterances: spoken,
            channelOfRole: config.channels,
            statistics,
            options: { ...placementOptions, gapOnlyChannel: config.channels.system },
            backchannelClips,
            systemYields: config.timeline.bargeIn.systemYields,
            detector,
          }),
        );
        stage = 'annotate-events';
        const annotated = await timed('annotate-events', () => annotateDialogue(conversation.id, timeline.segments, timeline, timeline.utterances));
        stage = 'render-dataset';
        const metadata: TaskDialogueMetadata = {
          ...dialogueMetadata({ conversation, text, spoken: timeline.utterances, timeline, language, dataset: variantDataset, config, synthesizer, speakers, statisticsFile }),
          variant: {
            kind: 'barge-in',
            of: dataset,
            systemYields: config.timeline.bargeIn.systemYields,
            bargeIns: timeline.bargeIns.map((bargeIn) => ({
              answerIndex: bargeIn.answerIndex,
              questionIndex: bargeIn.questionIndex,
              userStartsIntoAnswerSeconds: bargeIn.leadCs / 100,
              drawnOverlapSeconds: bargeIn.drawnOverlapCs / 100,
              overlapSeconds: (bargeIn.cutCs - bargeIn.leadCs) / 100,
              answerSpokenSeconds: bargeIn.cutCs / 100,
              answerFullSeconds: spoken[bargeIn.answerIndex]!.durationCs / 100,
              unspokenWords: spoken[bargeIn.answerIndex]!.words.filter((word) => word.start >= bargeIn.cutCs).map((word) => word.word),
              fallback: bargeIn.fallback,
            })),
            answersTooShort: timeline.answersTooShort,
          },
        };
        await timed('render-dataset', () =>
          variant.add(conversation.id, timeline, annotated, metadata, timeline.utterances, config.channels.user, {
            splitQuestionsSpokenWhole: prepared.splitQuestionsSpokenWhole,
            bargeIns: { placed: timeline.bargeIns.length, answersTooShort: timeline.answersTooShort.length, fallbacks: timeline.bargeIns.filter((bargeIn) => bargeIn.fallback).length },
          }),
        );
        audioSeconds += timeline.totalDurationCs / 100;
      } catch (error) {
        if (endsTheBuild(error)) throw error;
        const reason = error instanceof Error ? error.message.split('\n')[0]! : String(error);
        variant.failed.push({ id: conversation.id, stage, reason });
        log(`[${language}] ${index}/${corpus.conversations.length} ${conversation.id} (${variantDataset}): FAILED at ${stage}: ${reason}`);
      }
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
      gapOnlyChannel: placementOptions.gapOnlyChannel,
    };
    const outputs = variant ? [base, variant] : [base];
    for (const [position, output] of outputs.entries()) {
      // a dataset that is refused (empty, smaller) or cannot be written stops the build: the ones not yet committed are discarded
      let summary: DatasetSummary;
      try {
        summary = await output.commit(
          statistics,
          output === base ? fidelityOptions : null,
          { ...commitSettings, ...(output === variant ? { variant: { kind: 'barge-in', of: dataset, systemYields: config.timeline.bargeIn.systemYields } } : {}) },
          { allowShrink, variant: output === variant ? 'barge-in' : 'default' },
        );
      } catch (error) {
        for (const later of outputs.slice(position + 1)) await later.discard();
        throw error;
      }
      failedCount += summary.failed.length;
      summaries.push(summary);
      log(`[${language}] wrote ${summary.dialogues} dialogues to ${output.directory}${summary.failed.length ? ` (${summary.failed.length} failed)` : ''}`);
    }
  }

  await resamplePool?.close();
  const splits = config.quality.enabled ? await scoreAndSplit(config, summaries, log) : [];

  const summaryMarkdownPath = path.join(config.output.directory, 'summary.md');
  await writeAtomic(
    summaryMarkdownPath,
    formatSummaryMarkdown(`duplexsynth build "${config.name}" (seed ${config.seed})`, summaries) + formatSplitsMarkdown(splits) + (await formatStatisticsPerSplit(config, summaries)),
  );
  await writeRecord(path.join(config.output.directory, 'summary.json'), buildSummarySchema, { name: config.name, seed: config.seed, datasets: summaries });
  // The HTML report (pipeline/report): tables, offset plots, a listening page per dialogue.
  let reportPath: string | null = null;
  try {
    reportPath = (await writeBuildReport(config.output.directory)).indexPath;
    log(`report: ${reportPath}`);
  } catch (error) {
    if (endsTheBuild(error)) throw error;
    log(`report: not written: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  const report: BuildReport = {
    outputDirectory: config.output.directory,
    summaryMarkdownPath,
    reportPath,
    datasets: summaries,
    failedDialogues: failedCount,
    stageSeconds,
    audioSeconds,
    cache: cache.statistics,
  };
  // Timings and cache use differ from run to run, so they stay out of the (deterministic) output folder.
  await writeAtomic(path.join(config.output.cacheDirectory, 'runs', `${config.name}.json`), `${JSON.stringify({ stageSeconds, audioSeconds, cache: cache.statistics }, null, 2)}\n`);
  return report;
}

/**
 * Quality scoring of every written dataset (DNSMOS, COMETKiwi for translations, signal checks) and
 * the dev/test split of all languages together (so shared test conversations are reported).
 * A failure here is reported, not thrown: the datasets stay valid without a split.
 */
async function scoreAndSplit(config: BuildConfig, summaries: DatasetSummary[], log: BuildLog): Promise<SplitOutcome[]> {
  const directoryOf = (summary: DatasetSummary) => path.join(config.output.directory, datasetRelativePath(summary.language, summary.dataset));
  const built = summaries.filter((summary) => summary.dialogues > 0);
  // A barge-in variant holds the same dialogues as its base dataset: it takes the base's split
  // (applySplitToVariant) rather than being scored and ranked on its own.
  const directories = built.filter((summary) => summary.variant === 'default').map(directoryOf);
  const { cometKiwi } = config.quality;
  try {
    for (const directory of directories) {
      log(`quality: scoring ${directory}`);
      await scoreDatasetQuality(directory, {
        cacheDirectory: config.output.cacheDirectory,
        ...(config.quality.dnsmosModelDirectory ? { dnsmosModels: { modelDirectory: config.quality.dnsmosModelDirectory } } : {}),
        cometKiwi: { httpUrl: cometKiwi.httpUrl, command: cometKiwi.command, gpus: cometKiwi.gpus, batchSize: cometKiwi.batchSize },
        dnsmos: config.quality.dnsmos,
        log,
      });
    }
    const results = await splitDatasets(directories, { testHours: config.quality.testHours, testSmall: config.quality.testSmall, unit: config.quality.splitUnit, devAlias: config.quality.devAlias, log });
    const outcomes: SplitOutcome[] = results.map((result) => ({ directory: result.directory, report: result.report }));
    for (const summary of built.filter((entry) => entry.variant === 'barge-in')) {
      const baseName = summary.dataset.slice(0, -BARGE_IN_SUFFIX.length);
      const base = results.find((result) => result.report.language === summary.language && result.report.dataset === baseName);
      if (!base) continue;
      const report = await applySplitToVariant(base.report, directoryOf(summary), { devAlias: config.quality.devAlias, log });
      outcomes.push({ directory: directoryOf(summary), report });
    }
    return outcomes;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    log(`quality: not done: ${reason}`);
    return [{ directory: config.output.directory, error: reason }];
  }
}

type SplitOutcome = { directory: string; report?: SplitReport; error?: string };

/** The paper's Table 3 rows of every written dataset, variants included, per split (pipeline/quality/tables.ts). */
async function formatStatisticsPerSplit(config: BuildConfig, summaries: readonly DatasetSummary[]): Promise<string> {
  const tables = [];
  for (const summary of summaries.filter((entry) => entry.dialogues > 0)) {
    tables.push(await buildDatasetTables(path.join(config.output.directory, datasetRelativePath(summary.language, summary.dataset))));
  }
  if (tables.length === 0) return '';
  return `\n## Statistics per split (Table 3: SHIFT = TURN_SHIFT, PAUSE = TURN_HOLD)\n\n${formatStatisticsTableMarkdown(tables)}`;
}

function formatSplitsMarkdown(outcomes: readonly SplitOutcome[]): string {
  if (outcomes.length === 0) return '';
  const lines = ['', '## Dev/test split (ranked by dialogue-level DNSMOS OVRL)', ''];
  for (const outcome of outcomes) {
    if (outcome.error) {
      lines.push(`- not done: ${outcome.error}`);
      continue;
    }
    const report = outcome.report!;
    const part = (name: 'test' | 'dev' | 'test_small') => {
      const split = report.splits[name];
      const label = name === 'dev' ? 'test_other (dev)' : name;
      return split ? `${label} ${split.dialogues} dialogues / ${split.hours.toFixed(2)} h` : `${label} none`;
    };
    lines.push(`- ${report.dataset} (${report.language}): ${part('test')}, ${part('dev')}, ${part('test_small')}; speaker-disjoint: ${report.settings.speakerDisjoint}; quality and statistics tables in tables.md`);
    for (const warning of report.warnings) lines.push(`  - warning: ${warning}`);
  }
  return `${lines.join('\n')}\n`;
}

function describeRetry(event: RetryEvent): string {
  return `${event.error.message.split('\n')[0]} (retry ${event.retryIndex + 1} in ${(event.delayMilliseconds / 1000).toFixed(1)} s)`;
}

function definedOnly<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}

/**
 * The speaker identities dialogues draw from: the two configured voices (`tts.{lang}.voices`, the same
 * pair in every dialogue) or, by default, the engine's offline roster.
 */
export function speakerRoster(
  language: Language,
  config: BuildConfig,
  synthesizer: SpeechSynthesizer,
): { fixed?: Record<SpeakerRole, SpeakerIdentity>; identities: readonly SpeakerIdentity[] } {
  const configured = config.tts[language].voices;
  if (configured) {
    const fixed = {
      user: { speakerId: `${synthesizer.id}:${canonicalVoice(configured.user)}`, voice: configured.user },
      system: { speakerId: `${synthesizer.id}:${canonicalVoice(configured.system)}`, voice: configured.system },
    };
    return { fixed, identities: [fixed.user, fixed.system] };
  }
  const prompts = config.tts[language].speakerPrompts;
  if (prompts) {
    const entries = readFileSync(prompts.manifest, 'utf8')
      .split('\n')
      .map((line, index) => ({ line, number: index + 1 }))
      .filter(({ line }) => line.trim().length > 0)
      .map(({ line, number }) =>
        parseRecord(line, `${prompts.manifest}:${number}`, speakerPromptLineSchema, (message) => new ConfigError(`${message} (a speaker prompt manifest line)`)),
      );
    const identities = voicePromptRoster(entries, path.dirname(prompts.manifest), { engine: synthesizer.id as 'cosyvoice2', mode: prompts.mode });
    // speaker groups are pairs: an odd speaker out is left unused
    const usable = identities.slice(0, identities.length - (identities.length % 2));
    if (usable.length < 2) throw new ConfigError(`tts.${language}.speakerPrompts: ${prompts.manifest} has ${identities.length} speaker(s); at least two are needed`);
    return { identities: usable };
  }
  const defaults = DEFAULT_VOICES[language];
  if (defaults.engine !== synthesizer.id) {
    throw new ConfigError(`tts.${language}: ${synthesizer.id} needs voices (tts.${language}.voices) or voice prompts (tts.${language}.speakerPrompts)`);
  }
  return { identities: OFFLINE_SPEAKER_ROSTERS[language] };
}

function canonicalVoice(voice: VoiceSettings): string {
  return Object.keys(voice).sort().map((key) => `${key}=${String(voice[key])}`).join(',');
}

function dialogueMetadata(input: {
  conversation: SourceConversation;
  text: DialogueText;
  spoken: SpokenUtterance[];
  timeline: ReturnType<typeof placeTimeline>;
  language: Language;
  dataset: string;
  config: BuildConfig;
  synthesizer: SpeechSynthesizer;
  speakers: Record<SpeakerRole, SpeakerIdentity>;
  statisticsFile: string;
}): TaskDialogueMetadata {
  const { conversation, text, spoken, timeline, config } = input;
  const turnText = (turnNumber: number, field: 'question' | 'answer') => ({
    source: text.source.find((turn) => turn.turnNumber === turnNumber)?.[field] ?? null,
    spoken: text.spoken.find((turn) => turn.turnNumber === turnNumber)?.[field] ?? null,
    final: text.final.find((turn) => turn.turnNumber === turnNumber)?.[field] ?? null,
  });
  const speaker = (role: SpeakerRole) => ({
    role,
    channel: config.channels[role],
    speakerId: input.speakers[role].speakerId,
    engine: input.synthesizer.id,
    engineVersion: input.synthesizer.version,
    voice: input.speakers[role].voice,
  });
  return {
    id: conversation.id,
    language: input.language,
    dataset: input.dataset,
    seed: config.seed,
    source: {
      corpus: 'TopiOCQA',
      file: path.basename(conversation.sourceFile),
      conversationNumber: conversation.conversationNumber,
      turns: conversation.turns.map((turn) => ({
        turnNumber: turn.turnNumber,
        topic: turn.topic,
        topicSwitch: turn.topicSwitch,
        answerable: turn.answerable,
      })),
    },
    text: { rewrittenBy: text.producedBy.rewrite, translatedBy: text.producedBy.translate ?? null },
    speakers: { user: speaker('user'), system: speaker('system') },
    timing: { statistics: path.basename(input.statisticsFile), resampledDraws: timeline.placement.resampled, fallbacks: timeline.placement.fallbacks },
    backchannels: timeline.backchannels.map((backchannel) => ({
      channel: backchannel.channel,
      start: backchannel.start / 100,
      end: backchannel.end / 100,
      text: backchannel.text,
      hostUtteranceIndex: backchannel.hostUtteranceIndex,
    })),
    sampleRate: timeline.sampleRate,
    durationSeconds: timeline.totalDurationCs / 100,
    utterances: spoken.map((utterance, index) => ({
      index,
      turnNumber: utterance.turnNumber,
      role: utterance.role,
      kind: utterance.kind,
      channel: timeline.channels[index]!,
      start: timeline.placement.starts[index]! / 100,
      end: timeline.placement.ends[index]! / 100,
      offsetFromFloor: index > 0 ? timeline.placement.offsets[index - 1]! / 100 : null,
      ...(utterance.part !== undefined ? { questionPart: utterance.part } : {}),
      text: { ...turnText(utterance.turnNumber, utterance.kind === 'answer' ? 'answer' : 'question'), synthesized: utterance.spokenText },
      paddingSteps: utterance.paddingSteps,
      rephrasedForSpeechRate: utterance.rephrasedForSpeechRate,
      wordTimingSource: utterance.wordTimingSource,
    })),
  };
}
