/**
 * One dataset being written by a build (the base dataset of a language, or its `_bargein` variant):
 * the writer of its folder, the results of its dialogues for the summary, the generated timing for the
 * fidelity report, and its failures. `commit` writes the reports and renames the folder into place.
 */
import type { IngestedCorpus } from '../../stages/ingest-corpus.ts';
import type { AnnotatedDialogue } from '../../stages/annotate-events.ts';
import type { PlacedUtterance, RenderedTimeline } from '../../stages/place-timeline.ts';
import {
  DatasetWriter,
  type DialogueCounts,
  type DialogueSink,
  type WrittenDialogue,
} from '../../stages/render-dataset.ts';
import type { PreRenderedDialoguePages } from '../report/pre-rendered-pages.ts';
import { formatSummaryMarkdown, summarizeDataset, type DialogueSummaryInput } from '../quality/summarize-dataset.ts';
import { dialoguePageInputs } from './dialogue-page-inputs.ts';
import { recordDialogue, storedWavOf, type DatasetDialogueRecord } from './dialogue-record.ts';
import { type DatasetSummary, type FailedDialogue } from '../model/dataset-summary.ts';
import type { Channel, Language, SpeakerRole } from '../model/types.ts';
import type { TaskDialogueMetadata } from '../model/dialogue-metadata.ts';
import type { ManifestSettings } from '../model/dataset-manifest.ts';
import { datasetSummarySchema } from '../model/dataset-summary.ts';
import { formatRecord } from '../storage/json-records.ts';
import path from 'node:path';
import {
  buildFidelityReport,
  formatFidelityJson,
  formatFidelityMarkdown,
  type FidelityOptions,
  type GeneratedDialogueTiming,
} from '../timeline/fidelity.ts';
import type { TimingStatistics } from '../timeline/timing-statistics.ts';

/** Suffix of the barge-in variant's dataset name (the benchmark's `topiocqa_bargein`, `topiocqa_ja_bargein`). */
export const BARGE_IN_SUFFIX = '_bargein';

/**
 * What a build needs to make each dialogue's report page as it is written (../report/pre-rendered-pages.ts):
 * the pages' folder, the output folder, and the manifest fields the page shows that the dataset writer
 * only records on commit.
 */
export interface DialoguePageSettings {
  preRendered: PreRenderedDialoguePages;
  outputDirectory: string;
  /** The manifest's `channels`. */
  channels: Record<SpeakerRole, Channel>;
  /** The manifest's `sampleRate`, Hz. */
  sampleRate: number;
}

/** Questions spoken in two parts in the benchmark profile by default (`timeline.turnHoldShare`). */
export const DEFAULT_BENCHMARK_TURN_HOLD_SHARE = 0.15;

export class DatasetOutput implements DialogueSink {
  readonly results: DialogueSummaryInput[] = [];
  readonly timings: GeneratedDialogueTiming[] = [];
  readonly failed: FailedDialogue[];

  private constructor(
    readonly language: Language,
    readonly dataset: string,
    readonly directory: string,
    private readonly writer: DatasetWriter,
    private readonly corpus: IngestedCorpus,
    private readonly pages: DialoguePageSettings | null,
    private readonly cacheDirectory: string,
  ) {
    this.failed = corpus.rejected.map((item) => ({ id: item.id, stage: 'ingest-corpus', reason: item.reason }));
  }

  /**
   * Starts writing the dataset folder `directory` (DatasetWriter.open: `.partial` first).
   * @param cacheDirectory the build's cache folder, which holds the rendered WAVs its dialogues' records name
   * @param options `linkToStored`: link the WAVs to the rendering's cache files (output.linkAudioToCache;
   *   default true); `pages`: make each dialogue's report page as it is written (default: none)
   * @throws as DatasetWriter.open (a foreign folder)
   */
  static async open(
    language: Language,
    dataset: string,
    directory: string,
    corpus: IngestedCorpus,
    cacheDirectory: string,
    options: { linkToStored?: boolean; pages?: DialoguePageSettings } = {},
  ): Promise<DatasetOutput> {
    return new DatasetOutput(
      language,
      dataset,
      directory,
      await DatasetWriter.open(directory, options),
      corpus,
      options.pages ?? null,
      cacheDirectory,
    );
  }

  /**
   * Writes one dialogue and keeps what the summary and the fidelity report need: its record
   * (./dialogue-record.ts) made and added as {@link addRecord} adds a worker's.
   * @param spoken the utterances as placed (same order as the timeline's)
   * @param userChannel the listener channel of backchannels (the user)
   */
  async add(
    id: string,
    timeline: RenderedTimeline,
    annotated: AnnotatedDialogue,
    metadata: TaskDialogueMetadata,
    spoken: readonly PlacedUtterance[],
    userChannel: Channel,
    extra: DialogueCounts = {},
  ): Promise<void> {
    const record = recordDialogue(
      { id, timeline, annotated, metadata, spoken, extra },
      userChannel,
      this.cacheDirectory,
      path.join(this.directory, 'metadata', `${id}.json`),
    );
    await this.addRecord(record);
  }

  /**
   * Writes one dialogue from its record: its WAVs linked to the cache files the record names, its
   * metadata and alignment as the record holds them, its line kept for `all.jsonl`; and keeps the
   * record's summary and timing. No audio is read or hashed (`verify` is the full check).
   * @throws as DatasetWriter.addFormattedDialogue (an unsafe id, a write error)
   */
  async addRecord(record: DatasetDialogueRecord): Promise<void> {
    const written = await this.writer.addFormattedDialogue({
      id: record.id,
      eventsLine: record.eventsLine,
      audio: storedWavOf(record.audio, this.cacheDirectory),
      ...(record.fullBand
        ? {
            fullBand: {
              file: storedWavOf(record.fullBand, this.cacheDirectory),
              sampleRate: record.fullBand.sampleRate,
            },
          }
        : {}),
      metadataText: record.metadataText,
      alignmentText: record.alignmentText,
    });
    if (this.pages !== null && record.pageKept !== true)
      await this.preRenderPage(record.id, record.eventsLine, record.durationSeconds, written, this.pages);
    this.timings.push(record.timing);
    this.results.push(record.summary);
  }

  /**
   * Makes the report page of a dialogue just written, from what the report will read once the dataset
   * is committed (its line of `all.jsonl`, metadata and alignment as written; the manifest fields of
   * `pages`; no split yet). Never throws: a page not made here is made by the report.
   */
  private async preRenderPage(
    id: string,
    eventsLine: string,
    durationSeconds: number,
    written: WrittenDialogue,
    pages: DialoguePageSettings,
  ): Promise<void> {
    let inputs: ReturnType<typeof dialoguePageInputs>;
    try {
      inputs = dialoguePageInputs({
        language: this.language,
        dataset: this.dataset,
        directory: this.directory,
        id,
        eventsLine,
        durationSeconds,
        metadataText: written.metadataText,
        alignmentText: written.alignmentText,
        fullBandSampleRate: written.fullBandSampleRate,
        channels: pages.channels,
        sampleRate: pages.sampleRate,
      });
    } catch {
      pages.preRendered.failures += 1;
      return;
    }
    await pages.preRendered.add(
      pages.outputDirectory,
      inputs.dataset,
      inputs.dialogue,
      written.audioFile,
      written.audioSha256,
    );
  }

  /** Abandons the dataset: its `.partial` folder is removed, a dataset already in place is kept. */
  async discard(): Promise<void> {
    await this.writer.discard();
  }

  /**
   * Writes the fidelity report (when `fidelity` is given and a dialogue was built), the summary, the
   * events file and the manifest, then puts the folder in place.
   * @param manifestExtra settings recorded in manifest.json
   * @param options `speechRecognition`: the recognition check's counts, written into the summary
   * @returns the dataset's summary
   * @throws as DatasetWriter.commit (an empty or smaller dataset, a write error)
   */
  async commit(
    statistics: TimingStatistics,
    fidelity: Partial<FidelityOptions> | null,
    manifestExtra: Omit<ManifestSettings, 'language' | 'dataset'>,
    options: {
      allowShrink: boolean;
      variant: 'default' | 'barge-in';
      userChannel?: Channel;
      speechRecognition?: DatasetSummary['speechRecognition'];
    },
  ): Promise<DatasetSummary> {
    if (fidelity !== null && this.timings.length > 0) {
      const report = buildFidelityReport(statistics, this.timings, fidelity);
      await this.writer.addFile('fidelity.json', formatFidelityJson(report));
      await this.writer.addFile('fidelity.md', formatFidelityMarkdown(report));
    }
    const builtIds = new Set(this.results.map((result) => result.id));
    const notes = this.corpus.notes.filter((note) => builtIds.has(note.split(' ')[0] as string));
    const summary: DatasetSummary = {
      ...summarizeDataset(this.language, this.dataset, this.results, this.failed, notes, {
        variant: options.variant,
        corpusWarnings: this.corpus.warnings,
        ...(options.userChannel !== undefined ? { userChannel: options.userChannel } : {}),
      }),
      ...(options.speechRecognition ? { speechRecognition: options.speechRecognition } : {}),
    };
    await this.writer.addFile(
      'summary.json',
      formatRecord(path.join(this.directory, 'summary.json'), datasetSummarySchema, summary),
    );
    await this.writer.addFile('summary.md', formatSummaryMarkdown(`${this.dataset} (${this.language})`, [summary]));
    await this.writer.commit(
      { language: this.language, dataset: this.dataset, ...manifestExtra },
      { allowShrink: options.allowShrink, failures: this.failed },
    ); // refuses an empty or smaller dataset (stages/render-dataset.ts)
    return summary;
  }
}
