/**
 * Stage `score-quality`: measures every dialogue of a written dataset folder and writes
 * `quality.json` beside it (format: pipeline/quality/quality-report.ts):
 * - DNSMOS P.835 (OVRL, SIG, BAK) and P.808 per channel and per dialogue (mean over the channels with
 *   speech), pipeline/services/mos/dnsmos.ts;
 * - COMETKiwi of every translated utterance (source = the English spoken-style text `text.spoken`,
 *   translation = the final text `text.final`) for a translated dataset (metadata
 *   `text.translatedBy` set), pipeline/services/qe/cometkiwi.ts — or `{computed: false, reason}`;
 * - the signal and content checks of pipeline/quality/signal-checks.ts (clipping, silence ratio,
 *   EBU R 128 loudness and true peak, speech rate, role/label agreement), and the quarantined
 *   dialogues of `summary.json`.
 * Deterministic: the same dataset and settings give the same bytes (no timestamps, fixed order,
 * rounded values). The quality tables (tables.md / tables.json) are written too.
 *
 * DNSMOS (models, cache entries, rounding) is in stages/score-quality-dnsmos.ts, COMETKiwi in
 * stages/score-quality-cometkiwi.ts; this module scores a dataset, holds the stage and exports the
 * names of both.
 */
import {
  readDatasetFolder,
  dialogueSpeakerIds,
  sourceConversationKey,
  type DatasetDialogue,
} from '../pipeline/quality/dataset-files.ts';
import {
  aggregateQuality,
  writeQualityReport,
  type DatasetCometKiwi,
  type DatasetQualityReport,
  type DialogueCometKiwi,
  type DialogueQuality,
} from '../pipeline/quality/quality-report.ts';
import { speechRateUnit } from '../pipeline/quality/speech-rate.ts';
import { writeQualityTables } from '../pipeline/quality/tables.ts';
import { resolveQualityThresholds, type QualityThresholds } from '../pipeline/quality/thresholds.ts';
import { ContentCache } from '../pipeline/storage/content-cache.ts';
import {
  DEFAULT_DNSMOS_BATCH_WINDOWS,
  DNSMOS_REFERENCE_HOP_SECONDS,
  type DnsmosRunSettings,
  type DnsmosScorer,
} from '../pipeline/services/mos/dnsmos.ts';
import type { DnsmosModelLocationConfig } from '../pipeline/services/mos/dnsmos-model-files.ts';
import type { CometKiwiOptions } from '../pipeline/services/qe/cometkiwi.ts';
import type { TranslationQualityEstimator } from '../pipeline/services/qe/translation-quality.ts';
import type { RecordingMosScorer } from '../pipeline/services/mos/mos-scorer.ts';
import type { Stage } from '../pipeline/run/stage.ts';
import type { ProgressListener } from '../pipeline/run/progress.ts';
import { isTranslated, scoreTranslations } from './score-quality-cometkiwi.ts';
import { dnsmosCacheKey, loadDatasetDnsmosScorer } from './score-quality-dnsmos.ts';
import { scoreDialogueAudio } from './score-quality-dialogue.ts';

export { cacheDialogueDnsmos, defaultDnsmosModelLocation, roundDnsmos } from './score-quality-dnsmos.ts';
export { translationPairs } from './score-quality-cometkiwi.ts';

/** Options of {@link scoreDatasetQuality}; every field is optional. */
export interface ScoreQualityOptions {
  /** A loaded DNSMOS scorer to use (not closed here). Default: one loaded from `dnsmosModels`. */
  dnsmosScorer?: RecordingMosScorer;
  /** Where the DNSMOS model files are (resolveDnsmosModelDirectory). Default: {@link defaultDnsmosModelLocation}. */
  dnsmosModels?: DnsmosModelLocationConfig;
  /**
   * Content-addressed cache folder for per-dialogue DNSMOS results (keyed by the WAV's sha256 and the
   * scorer settings), e.g. the build's `output.cacheDirectory`. Default: no cache.
   */
  cacheDirectory?: string;
  /** The build's content cache, when it is `cacheDirectory`'s (its hits and misses are then the build's). */
  cache?: ContentCache;
  /** COMETKiwi scorer settings (HTTP URL, command, GPUs, batch size). */
  cometKiwi?: CometKiwiOptions;
  /** The translation quality estimator to use. Default: the COMETKiwi client with `cometKiwi`. */
  translationQuality?: TranslationQualityEstimator;
  /** false: do not try COMETKiwi at all (recorded as not computed, reason "disabled"). Default true. */
  cometKiwiEnabled?: boolean;
  /**
   * true: a COMETKiwi scorer that runs and fails throws; false (default): the failure is recorded as
   * `{computed: false, reason}` with the error message.
   */
  cometKiwiRequired?: boolean;
  /** Threshold overrides (pipeline/quality/thresholds.ts). */
  thresholds?: Parameters<typeof resolveQualityThresholds>[0];
  /** Measure EBU R 128 loudness with ffmpeg. Default true. */
  measureLoudness?: boolean;
  /** Progress lines. */
  log?: (line: string) => void;
  /**
   * Progress events of stage `score-quality` in channel-seconds (pipeline/run/progress.ts): a
   * `stage-start`, each dialogue's planned channels × duration, the audio scored as DNSMOS goes, and
   * each dialogue's end (`cached` when its DNSMOS came from the cache); each event names the dataset
   * (`dataset`), so a base dataset and its `_bargein` variant have a bar each.
   */
  progress?: ProgressListener;
  /**
   * How the scorer loaded here runs (execution provider, intra-op threads, windows per model run) and
   * how many dialogues are scored at once. Defaults: CPU, onnxruntime's threads, 4 windows, 2 dialogues.
   */
  dnsmos?: Partial<DnsmosRunSettings & { concurrentDialogues: number }>;
}

/**
 * Scores one dataset folder and writes `quality.json`, `tables.md` and `tables.json` into it.
 * Order: COMETKiwi first (one run for the whole dataset, so a required scorer fails before the long
 * DNSMOS pass), then per dialogue DNSMOS and the signal checks.
 * @param directory a dataset folder `data/{lang}/task/{dataset}`.
 * @returns the report written.
 * @throws DatasetReadError for an unreadable dataset folder; DnsmosModelFileError when the DNSMOS
 *   models cannot be found; CometKiwiError when `cometKiwiRequired` and the scorer fails (or is
 *   unavailable); LoudnessMeasurementError when ffmpeg fails; WavDecodeError for a bad WAV.
 */
export async function scoreDatasetQuality(
  directory: string,
  options: ScoreQualityOptions = {},
): Promise<DatasetQualityReport> {
  const log = options.log ?? (() => {});
  const thresholds: QualityThresholds = resolveQualityThresholds(options.thresholds ?? {});
  const folder = await readDatasetFolder(directory);
  const translated = folder.dialogues.some(isTranslated);

  let datasetCometKiwi: DatasetCometKiwi | null = null;
  let cometByDialogue = new Map<string, DialogueCometKiwi>();
  if (translated) {
    const scores = await scoreTranslations(folder, options, log);
    datasetCometKiwi = scores.dataset;
    cometByDialogue = scores.byDialogue;
  }

  const hopSeconds = options.dnsmos?.hopSeconds ?? DNSMOS_REFERENCE_HOP_SECONDS;
  // the models are loaded on the first dialogue whose DNSMOS is not cached (none, when workers scored them all)
  let loaded: Promise<DnsmosScorer> | null = null;
  const scorer = async (): Promise<RecordingMosScorer> => {
    if (options.dnsmosScorer) return options.dnsmosScorer;
    const run = {
      executionProvider: options.dnsmos?.executionProvider ?? 'cpu',
      intraOpThreads: options.dnsmos?.intraOpThreads ?? null,
      batchWindows: options.dnsmos?.batchWindows ?? DEFAULT_DNSMOS_BATCH_WINDOWS,
      hopSeconds,
    };
    return (loaded ??= loadDatasetDnsmosScorer(options.dnsmosModels, run));
  };
  const cache =
    options.cache && options.cache.directory === options.cacheDirectory
      ? options.cache
      : options.cacheDirectory
        ? new ContentCache(options.cacheDirectory)
        : null;
  // Dialogues are scored a few at a time (their WAV decoding, signal checks and ffmpeg loudness
  // overlap another one's model runs), in order: results are kept by position, so the report does not
  // depend on which finishes first; at most `concurrentDialogues` recordings are in memory.
  const concurrentDialogues = Math.max(1, options.dnsmos?.concurrentDialogues ?? 2);
  const dialogues: DialogueQuality[] = new Array(folder.dialogues.length);
  let scored = 0;
  const progress = options.progress ?? (() => {});
  // the base dataset and its barge-in variant are scored one after the other: each has its own bar
  const stage = { language: folder.language, stage: 'score-quality', dataset: folder.dataset } as const;
  progress({ type: 'stage-start', ...stage, total: folder.dialogues.length });
  // every dialogue's channels are scored (a channel without speech counts as done at once)
  for (const dialogue of folder.dialogues)
    progress({ type: 'item-planned', ...stage, id: dialogue.id, amount: 2 * dialogue.metadata.durationSeconds });
  const computedIds = new Set<string>();
  const scoreDialogue = async (dialogue: DatasetDialogue): Promise<DialogueQuality> => {
    const { dnsmos, signal, dnsmosComputed } = await scoreDialogueAudio(dialogue, {
      language: folder.language,
      thresholds,
      measureLoudness: options.measureLoudness ?? true,
      hopSeconds,
      scorer,
      cache,
      cacheDnsmos: !options.dnsmosScorer,
      onProgress: (channelSeconds: number) =>
        progress({ type: 'item-advanced', ...stage, id: dialogue.id, amount: channelSeconds }),
    });
    if (dnsmosComputed) computedIds.add(dialogue.id);
    return {
      id: dialogue.id,
      durationSeconds: signal.durationSeconds,
      audioSha256: dialogue.audioSha256,
      speakerIds: dialogueSpeakerIds(dialogue.metadata),
      sourceConversation: sourceConversationKey(dialogue),
      dnsmos,
      cometKiwi: translated ? (cometByDialogue.get(dialogue.id) ?? { mean: null, segments: [] }) : null,
      signal,
    } satisfies DialogueQuality;
  };
  try {
    let next = 0;
    let failed = false;
    const worker = async (): Promise<void> => {
      while (next < folder.dialogues.length) {
        const position = next++;
        if (failed) return;
        const dialogue = folder.dialogues[position]!;
        dialogues[position] = await scoreDialogue(dialogue).catch((error: unknown) => {
          failed = true;
          progress({
            type: 'item',
            ...stage,
            id: dialogue.id,
            status: 'failed',
            reason: error instanceof Error ? error.message.split('\n')[0]! : String(error),
          });
          throw error;
        });
        progress({ type: 'item', ...stage, id: dialogue.id, status: computedIds.has(dialogue.id) ? 'done' : 'cached' });
        const dnsmos = dialogues[position].dnsmos;
        log(
          `[${folder.language}] ${++scored}/${folder.dialogues.length} ${dialogue.id}: DNSMOS OVRL ${dnsmos.dialogue ? dnsmos.dialogue.ovrl.toFixed(2) : 'n/a'}`,
        );
      }
    };
    // every worker ends before the scorer is closed; the first failure is then thrown
    const outcomes = await Promise.allSettled(
      Array.from({ length: Math.min(concurrentDialogues, folder.dialogues.length) }, worker),
    );
    const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failure) throw failure.reason;
  } finally {
    const loading = loaded as Promise<DnsmosScorer> | null; // set by the first dialogue that needed the models
    if (loading) await (await loading.catch(() => null))?.close();
  }

  const unit = speechRateUnit(folder.language);
  const unitCounter = dialogues.find((dialogue) => dialogue.signal.unitCounter !== '')?.signal.unitCounter ?? 'none';
  const report: DatasetQualityReport = {
    format: 'duplexsynth-quality',
    version: 1,
    language: folder.language,
    dataset: folder.dataset,
    methods: {
      dnsmos: `DNSMOS P.835 (sig_bak_ovr.onnx) and P.808 (model_v8.onnx) as DNS-Challenge dnsmos_local.py${hopSeconds === DNSMOS_REFERENCE_HOP_SECONDS ? '' : ` but with 9.01 s windows every ${hopSeconds} s (the reference: every 1 s; not the published numbers)`}, per channel with speech; dialogue = mean over those channels; dataset = mean over dialogues`,
      cometKiwi: translated
        ? 'Unbabel/wmt22-cometkiwi-da on (text.spoken, text.final) of every translated utterance; dialogue = mean of its utterances; dataset = mean of all utterances'
        : 'not applicable (not a translated dataset)',
      loudness:
        'EBU R 128 / ITU-R BS.1770 integrated loudness and true peak, ffmpeg ebur128 filter, each channel as a mono programme and the whole file',
      speechRate: `${unit}s per second of speech (TURN and BC spans minus SHORTPAUSE inside each utterance); counter: ${unitCounter}`,
    },
    thresholds,
    cometKiwi: translated ? datasetCometKiwi : null,
    aggregates: aggregateQuality(dialogues, unit),
    quarantined: folder.quarantined,
    dialogues,
  };
  await writeQualityReport(folder.directory, report);
  await writeQualityTables(folder.directory);
  return report;
}

/**
 * Stage `score-quality`: {@link scoreDatasetQuality} of one written dataset folder. Its DNSMOS results
 * are cached in `options.cacheDirectory` (not the context's cache: `duplexsynth quality` scores without
 * a build), one entry per dialogue keyed by the WAV's sha256, when the default scorer is loaded.
 * @throws as {@link scoreDatasetQuality}; `cacheKeys` as `readDatasetFolder` (DatasetReadError)
 */
export const scoreQualityStage: Stage<{ directory: string }, ScoreQualityOptions, DatasetQualityReport> = {
  name: 'score-quality',
  inputs: ['directory'],
  parameters: [
    'dnsmosScorer',
    'dnsmosModels',
    'cacheDirectory',
    'cometKiwi',
    'translationQuality',
    'cometKiwiEnabled',
    'cometKiwiRequired',
    'thresholds',
    'measureLoudness',
    'log',
    'progress',
    'dnsmos',
  ],
  cacheStages: ['dnsmos'],
  cacheKeys: async (input, parameters) => {
    if (!parameters.cacheDirectory || parameters.dnsmosScorer) return [];
    const folder = await readDatasetFolder(input.directory);
    return folder.dialogues.flatMap((dialogue) =>
      dialogue.audioSha256 ? [dnsmosCacheKey(dialogue.audioSha256, parameters.dnsmos?.hopSeconds)] : [],
    );
  },
  run: (input, parameters, context) => scoreDatasetQuality(input.directory, { ...parameters, cache: context.cache }),
};
