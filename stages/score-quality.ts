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
 */
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { decodeWav } from '../pipeline/audio/wav.ts';
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
  type DialogueDnsmos,
  type DialogueQuality,
} from '../pipeline/quality/quality-report.ts';
import { checkDialogueSignal } from '../pipeline/quality/signal-checks.ts';
import { speechRateUnit } from '../pipeline/quality/speech-rate.ts';
import { findLanguagePack, languagePackSource } from '../pipeline/model/language-pack.ts';
import { writeQualityTables } from '../pipeline/quality/tables.ts';
import { resolveQualityThresholds, type QualityThresholds } from '../pipeline/quality/thresholds.ts';
import { sharedDirectory } from '../pipeline/config.ts';
import { bytesHash, ContentCache } from '../pipeline/storage/content-cache.ts';
import type { DnsmosRecordingScores, MultiChannelAudio } from '../pipeline/services/mos/dnsmos.ts';
import {
  DEFAULT_DNSMOS_BATCH_WINDOWS,
  DNSMOS_REFERENCE_HOP_SECONDS,
  DnsmosScorer,
  loadDnsmosScorer,
  type DnsmosRunSettings,
} from '../pipeline/services/mos/dnsmos.ts';
import {
  DNSMOS_DIRECTORY_ENVIRONMENT_VARIABLE,
  DNSMOS_MODEL_FILE_NAMES,
  resolveDnsmosModelDirectory,
  type DnsmosModelLocationConfig,
} from '../pipeline/services/mos/dnsmos-model-files.ts';
import { CometKiwiError, type CometKiwiOptions, type TranslationPair } from '../pipeline/services/qe/cometkiwi.ts';
import { cometKiwiEstimator, type TranslationQualityEstimator } from '../pipeline/services/qe/translation-quality.ts';
import type { RecordingMosScorer } from '../pipeline/services/mos/mos-scorer.ts';
import { cachedJson, type Stage, type StageCacheKey } from '../pipeline/run/stage.ts';
import type { ProgressListener } from '../pipeline/run/progress.ts';

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
 * The default DNSMOS model location: the project's shared copy `{shared}/models/dnsmos`
 * (pipeline/config.ts sharedDirectory) when it holds `sig_bak_ovr.onnx` and the
 * `DUPLEXSYNTH_DNSMOS_DIR` environment variable is not set; otherwise `{}`, i.e. the search order of
 * resolveDnsmosModelDirectory (environment variable, user cache, download).
 */
export async function defaultDnsmosModelLocation(
  environment: NodeJS.ProcessEnv = process.env,
): Promise<DnsmosModelLocationConfig> {
  if (environment[DNSMOS_DIRECTORY_ENVIRONMENT_VARIABLE]) return {};
  const shared = path.join(sharedDirectory(), 'models', 'dnsmos');
  try {
    await access(path.join(shared, DNSMOS_MODEL_FILE_NAMES.primary));
    return { modelDirectory: shared };
  } catch {
    return {};
  }
}

/** Version of the DNSMOS cache entries; bump when the stored shape or the computation changes. */
const DNSMOS_CACHE_VERSION = 1;

/**
 * The cache entry of one dialogue's DNSMOS scores: the WAV's sha256 under `dnsmos`, and the window hop
 * when it is not the reference's 1 s (the key of the reference hop is the one of earlier versions, so
 * their entries are still found).
 */
function dnsmosCacheKey(audioSha256: string, hopSeconds: number = DNSMOS_REFERENCE_HOP_SECONDS): StageCacheKey {
  return {
    stage: 'dnsmos',
    keyMaterial: {
      version: DNSMOS_CACHE_VERSION,
      audioSha256,
      scorer: 'DnsmosScorer default (sig_bak_ovr + model_v8, reference windows)',
      ...(hopSeconds !== DNSMOS_REFERENCE_HOP_SECONDS ? { hopSeconds } : {}),
    },
  };
}

/**
 * Score one rendered dialogue WAV with DNSMOS into the cache, under the same entry `score-quality`
 * looks up for a written WAV with these bytes (a queue worker's scoring job: the coordinator's
 * scoring then hits the cache). Does nothing when the entry is there already.
 * @param wav the dialogue's WAV file bytes, exactly as the dataset writer writes them
 * @param label names the dialogue in decoding errors
 * @param scorer a scorer loaded with the default settings (loadDnsmosScorer), as score-quality's own
 * @param hopSeconds the scorer's window hop (quality.dnsmos.hopSeconds), s: part of the cache key
 * @throws as decodeWav (not a WAV) and the scorer
 */
export async function cacheDialogueDnsmos(
  cache: ContentCache,
  wav: Uint8Array,
  label: string,
  scorer: RecordingMosScorer,
  hopSeconds: number = DNSMOS_REFERENCE_HOP_SECONDS,
): Promise<void> {
  await cachedJson(cache, dnsmosCacheKey(bytesHash(wav), hopSeconds), async () =>
    roundDnsmos(await scorer.scoreRecording(decodeWav(wav, label))),
  );
}

function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/** DNSMOS scores of a recording, rounded to 4 decimals (stable across runs and machines). */
export function roundDnsmos(scores: DnsmosRecordingScores): DialogueDnsmos {
  return {
    dialogue: scores.dialogue
      ? {
          ovrl: round4(scores.dialogue.ovrl),
          sig: round4(scores.dialogue.sig),
          bak: round4(scores.dialogue.bak),
          p808: round4(scores.dialogue.p808),
        }
      : null,
    channels: scores.channels.map((channel) => ({
      channel: channel.channel,
      hasSpeech: channel.hasSpeech,
      scores: channel.scores
        ? {
            ovrl: round4(channel.scores.ovrl),
            sig: round4(channel.scores.sig),
            bak: round4(channel.scores.bak),
            p808: round4(channel.scores.p808),
            windows: channel.scores.windows,
          }
        : null,
    })),
  };
}

/** The language translations are made from (the prompt templates translate English: build.ts checkBuildIsPossible). */
const TRANSLATION_SOURCE_LANGUAGE = 'en';

/** Whether a dialogue is a translation: its metadata names a translation producer. */
function isTranslated(dialogue: DatasetDialogue): boolean {
  return typeof dialogue.metadata.text?.translatedBy === 'string' && dialogue.metadata.text.translatedBy !== '';
}

/**
 * The (source, translation) pairs of a dialogue: every utterance whose `text.spoken` (English
 * spoken-style source) and `text.final` (translation) are both non-empty.
 * @returns pairs with the utterance index each came from, in metadata order.
 */
export function translationPairs(dialogue: DatasetDialogue): (TranslationPair & { utteranceIndex: number })[] {
  return dialogue.metadata.utterances.flatMap((utterance) => {
    const src = utterance.text.spoken?.trim() ?? '';
    const mt = utterance.text.final?.trim() ?? '';
    return src !== '' && mt !== '' ? [{ src, mt, utteranceIndex: utterance.index }] : [];
  });
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
  const cometByDialogue = new Map<string, DialogueCometKiwi>();
  if (translated) {
    const pairsByDialogue = folder.dialogues.map((dialogue) => ({
      id: dialogue.id,
      pairs: isTranslated(dialogue) ? translationPairs(dialogue) : [],
    }));
    const allPairs = pairsByDialogue.flatMap((entry) => entry.pairs);
    let scores: number[] | null = null;
    // the direction: source = the corpus's spoken-style text (English: a build translates from English
    // only, build.ts checkBuildIsPossible), target = the dataset's language; COMETKiwi (XLM-R) must cover both
    const unsupported = [TRANSLATION_SOURCE_LANGUAGE, folder.language]
      .map((code) => findLanguagePack(code))
      .find((pack) => pack !== undefined && !pack.cometKiwi.supported);
    if (options.cometKiwiEnabled === false) {
      datasetCometKiwi = { computed: false, reason: 'disabled by the caller (cometKiwiEnabled: false)' };
    } else if (unsupported !== undefined) {
      datasetCometKiwi = {
        computed: false,
        reason: `COMETKiwi does not cover ${unsupported.name} (${languagePackSource(unsupported)} cometKiwi.supported: false)`,
      };
      log(`[${folder.language}] COMETKiwi not computed: ${datasetCometKiwi.reason}`);
    } else {
      log(
        `[${folder.language}] COMETKiwi ${TRANSLATION_SOURCE_LANGUAGE}→${folder.language}: ${allPairs.length} translated utterances (source text.spoken, translation text.final)`,
      );
      try {
        const result = await (options.translationQuality ?? cometKiwiEstimator(options.cometKiwi ?? {})).score(
          allPairs,
        );
        if (result.computed) {
          scores = result.segmentScores;
          datasetCometKiwi = {
            computed: true,
            scorer: result.scorer,
            model: result.model,
            systemScore: round4(result.systemScore),
            segments: result.segmentScores.length,
          };
        } else {
          if (options.cometKiwiRequired)
            throw new CometKiwiError(`COMETKiwi is required but not available: ${result.reason}`);
          datasetCometKiwi = { computed: false, reason: result.reason };
        }
      } catch (error) {
        if (options.cometKiwiRequired || !(error instanceof CometKiwiError)) throw error;
        datasetCometKiwi = { computed: false, reason: `scorer failed: ${error.message}` };
      }
      if (!datasetCometKiwi.computed) log(`[${folder.language}] COMETKiwi not computed: ${datasetCometKiwi.reason}`);
    }
    let offset = 0;
    for (const entry of pairsByDialogue) {
      const segmentScores = entry.pairs.map((pair, index) => ({
        utteranceIndex: pair.utteranceIndex,
        score: scores ? scores[offset + index]! : null,
      }));
      offset += entry.pairs.length;
      const values = segmentScores.flatMap((segment) => (segment.score === null ? [] : [segment.score]));
      cometByDialogue.set(entry.id, {
        mean: values.length ? round4(values.reduce((a, b) => a + b, 0) / values.length) : null,
        segments: segmentScores,
      });
    }
  }

  const hopSeconds = options.dnsmos?.hopSeconds ?? DNSMOS_REFERENCE_HOP_SECONDS;
  let scorer = options.dnsmosScorer;
  let loaded: DnsmosScorer | null = null;
  if (!scorer) {
    const run = {
      executionProvider: options.dnsmos?.executionProvider ?? 'cpu',
      intraOpThreads: options.dnsmos?.intraOpThreads ?? null,
      batchWindows: options.dnsmos?.batchWindows ?? DEFAULT_DNSMOS_BATCH_WINDOWS,
      hopSeconds,
    };
    loaded = (
      await loadDnsmosScorer(
        await resolveDnsmosModelDirectory(options.dnsmosModels ?? (await defaultDnsmosModelLocation())),
        run,
      )
    ).scorer;
    scorer = loaded;
  }
  const cache = options.cacheDirectory ? new ContentCache(options.cacheDirectory) : null;
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
    const audio = decodeWav(await readFile(dialogue.audioFile), dialogue.audioFile);
    const onProgress = (channelSeconds: number) =>
      progress({ type: 'item-advanced', ...stage, id: dialogue.id, amount: channelSeconds });
    const compute = async () => {
      computedIds.add(dialogue.id);
      return roundDnsmos(await scorer!.scoreRecording(audio, { onProgress }));
    };
    const dnsmos =
      cache && dialogue.audioSha256 && loaded
        ? await cachedJson(cache, dnsmosCacheKey(dialogue.audioSha256, hopSeconds), compute)
        : await compute();
    const signal = await checkDialogueSignal(
      {
        file: dialogue.audioFile,
        audio,
        language: folder.language,
        events: dialogue.events,
        utterances: dialogue.metadata.utterances.map((utterance) => ({
          index: utterance.index,
          role: utterance.role,
          kind: utterance.kind,
          channel: utterance.channel,
          start: utterance.start,
          end: utterance.end,
          spokenText: utterance.text.transcript ?? utterance.text.synthesized ?? utterance.text.final ?? '',
        })),
      },
      thresholds,
      { measureLoudness: options.measureLoudness ?? true },
    );
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
    if (loaded) await loaded.close();
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
  run: (input, parameters) => scoreDatasetQuality(input.directory, parameters),
};
