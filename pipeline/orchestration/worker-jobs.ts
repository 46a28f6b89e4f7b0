/**
 * What a worker of a queued build (./queue-worker.ts) leaves in the shared cache for one dialogue:
 * - its `dialogue` job: the dialogue's dataset record and its barge-in variant's (./dialogue-record.ts)
 *   under the key of the dialogue's inputs, and the report page of both WAVs, its waveform kept
 *   beside it (pipeline/report/cached-dialogue-pages.ts, waveform-cache.ts);
 * - its `score` job: DNSMOS and signal checks of both WAVs (stages/score-quality-dialogue.ts), under
 *   the keys the coordinator's scoring looks up.
 * So the coordinator writes, scores and reports the datasets from records and cache entries, reading
 * no audio.
 */
import path from 'node:path';
import type { BuildConfig } from '../config.ts';
import { parseEventsLine } from '../events/index.ts';
import { dialogueMetadataSchema } from '../model/dialogue-metadata.ts';
import type { Channel, Language } from '../model/types.ts';
import type { DatasetDialogue } from '../quality/dataset-files.ts';
import { resolveQualityThresholds } from '../quality/thresholds.ts';
import { keepDialoguePage } from '../report/cached-dialogue-pages.ts';
import { dialoguePagePlan } from '../report/pre-rendered-pages.ts';
import type { RecordingMosScorer } from '../services/mos/mos-scorer.ts';
import type { ContentCache } from '../storage/content-cache.ts';
import { parseRecord } from '../storage/json-records.ts';
import type { AnnotatedDialogue } from '../../stages/annotate-events.ts';
import type { PlacedUtterance, RenderedTimeline } from '../../stages/place-timeline.ts';
import { datasetRelativePath, type DialogueCounts, type DialogueSink } from '../../stages/render-dataset.ts';
import { scoreDialogueAudio } from '../../stages/score-quality-dialogue.ts';
import type { TaskDialogueMetadata } from '../model/dialogue-metadata.ts';
import { dialoguePageInputs } from './dialogue-page-inputs.ts';
import { recordDialogue, storedWavOf, type DatasetDialogueRecord, type DialogueRecord } from './dialogue-record.ts';

/** A render sink that makes the dialogue's record instead of writing it (the coordinator writes it). */
export class RecordingSink implements DialogueSink {
  record: DatasetDialogueRecord | null = null;

  constructor(private readonly cacheDirectory: string) {}

  async add(
    id: string,
    timeline: RenderedTimeline,
    annotated: AnnotatedDialogue,
    metadata: TaskDialogueMetadata,
    spoken: readonly PlacedUtterance[],
    userChannel: Channel,
    extra: DialogueCounts = {},
  ): Promise<void> {
    this.record = recordDialogue(
      { id, timeline, annotated, metadata, spoken, extra },
      userChannel,
      this.cacheDirectory,
      path.join('metadata', `${id}.json`),
    );
  }
}

/** The dataset records of a dialogue record that hold a WAV: the base's, and the variant's unless it failed. */
export function recordedDatasets(record: DialogueRecord): DatasetDialogueRecord[] {
  return record.variant === null || 'failed' in record.variant ? [record.base] : [record.base, record.variant];
}

/** Any absolute folder: the pages a worker keeps name their files relative to the output folder only. */
const PAGE_OUTPUT_DIRECTORY = path.resolve(path.sep, 'duplexsynth-output');

/**
 * Draw the report page of every WAV of `record` and keep it in the cache (pipeline/report/cached-dialogue-pages.ts),
 * marking the records `pageKept`; a page that cannot be drawn is left to the report.
 * @param datasets the base dataset's and the barge-in variant's names
 * @throws as the cache's write
 */
export async function keepRecordPages(
  cache: ContentCache,
  record: DialogueRecord,
  language: Language,
  datasets: { base: string; variant: string },
  config: BuildConfig,
): Promise<void> {
  for (const dataset of recordedDatasets(record)) {
    const name = dataset === record.base ? datasets.base : datasets.variant;
    let inputs: ReturnType<typeof dialoguePageInputs>;
    try {
      inputs = dialoguePageInputs({
        language,
        dataset: name,
        directory: path.join(PAGE_OUTPUT_DIRECTORY, datasetRelativePath(language, name)),
        id: dataset.id,
        eventsLine: dataset.eventsLine,
        durationSeconds: dataset.durationSeconds,
        metadataText: dataset.metadataText,
        alignmentText: dataset.alignmentText,
        fullBandSampleRate: dataset.fullBand?.sampleRate ?? null,
        channels: { user: config.channels.user, system: config.channels.system },
        sampleRate: config.audio.sampleRate,
      });
    } catch {
      continue; // the report makes it, and says why it cannot
    }
    const { links } = dialoguePagePlan(PAGE_OUTPUT_DIRECTORY, inputs.dataset, inputs.dialogue);
    const stored = storedWavOf(dataset.audio, cache.directory);
    await keepDialoguePage(
      cache,
      PAGE_OUTPUT_DIRECTORY,
      { ...inputs, links },
      { file: stored.path, sha256: stored.sha256 },
    );
    dataset.pageKept = true;
  }
}

/**
 * A dataset record as the scoring reads a written dataset's dialogue (pipeline/quality/dataset-files.ts):
 * its events line parsed, its metadata through the schema, its WAV the cache file.
 * @throws Error naming the record when its line or metadata cannot be read
 */
export function recordAsDatasetDialogue(record: DatasetDialogueRecord, cacheDirectory: string): DatasetDialogue {
  const line = `${record.eventsLine}\n`;
  const where = `the dialogue record of ${record.id}`;
  return {
    id: record.id,
    line,
    events: parseEventsLine(line, where).events,
    metadata: parseRecord(record.metadataText, `${where} (metadata)`, dialogueMetadataSchema),
    audioFile: storedWavOf(record.audio, cacheDirectory).path,
    audioSha256: record.audio.sha256,
  };
}

/**
 * Score every WAV of `record` (DNSMOS and signal checks) into the cache, with the settings the
 * build's scoring uses (pipeline/orchestration/score-and-split.ts: the default thresholds, loudness
 * measured, `quality.dnsmos.hopSeconds`), so that its lookups hit.
 * @throws as scoreDialogueAudio
 */
export async function scoreRecord(
  cache: ContentCache,
  record: DialogueRecord,
  language: Language,
  config: BuildConfig,
  scorer: () => Promise<RecordingMosScorer>,
): Promise<void> {
  for (const dataset of recordedDatasets(record))
    await scoreDialogueAudio(recordAsDatasetDialogue(dataset, cache.directory), {
      language,
      thresholds: resolveQualityThresholds({}),
      measureLoudness: true,
      hopSeconds: config.quality.dnsmos.hopSeconds,
      scorer,
      cache,
      cacheDnsmos: true,
    });
}
