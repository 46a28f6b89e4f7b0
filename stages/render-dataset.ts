/**
 * Stage `render-dataset`: writes the M3-DuplexBench layout (docs/dataset-format.md, "One dataset
 * folder") for one language:
 *
 * ```
 * data/{lang}/task/{dataset}/
 *   audio/{id}.wav          2 channels, PCM 16-bit, one speaker per channel
 *   audio_fullband/{id}.wav the same mix at the TTS engine's own rate (audio.fullBandMaster), when above the output rate
 *   all.jsonl               one events line per dialogue, sorted by id (the split stage comes later)
 *   txt_align/{id}.txt      channel<TAB>start<TAB>end<TAB>word, seconds with 2 decimals
 *   metadata/{id}.json      source conversation, texts before/after rewrite and translation, speakers, seed
 *   manifest.json           every file with its sha256, plus the settings needed to re-derive events
 * ```
 *
 * Nothing is half-written: the dataset is written into `{dataset}.partial/` and renamed over the
 * final folder only when complete; each file inside is itself written atomically (fsync'd, its length
 * checked). Before the rename every file the manifest lists is checked to be there with the length
 * written, and no other file: the files are not read back (their bytes were hashed as they were
 * written, and reading a dataset's audio again costs as much as writing it). Nothing is lost: a dataset with no
 * dialogue is never committed, nor one with fewer dialogues than the dataset it would replace unless
 * asked (`allowShrink`, the CLI's `--allow-shrink`).
 *
 * The writer is stages/render-dataset-writer.ts ({@link DatasetWriter}), the replacement of a
 * committed folder stages/render-dataset-replace.ts; this module holds the stage and exports the
 * writer's names.
 */
import path from 'node:path';
import type { Channel, Language } from '../pipeline/model/types.ts';
import type { TaskDialogueMetadata } from '../pipeline/model/dialogue-metadata.ts';
import type { DialogueSummaryInput } from '../pipeline/quality/summarize-dataset.ts';
import type { Stage } from '../pipeline/run/stage.ts';
import type { AnnotatedDialogue } from './annotate-events.ts';
import type { PlacedUtterance, RenderedTimeline } from './place-timeline.ts';

export {
  DatasetWriter,
  FULL_BAND_DIRECTORY,
  type CommitOptions,
  type WrittenDialogue,
} from './render-dataset-writer.ts';

/**
 * Relative path of a dataset folder inside the build output: `data/{lang}/{domain}/{dataset}`, the
 * domain `task` (MT-QA, the default) or `chat` (docs/dataset-format.md, "One build folder").
 */
export function datasetRelativePath(language: Language, dataset: string, domain: 'task' | 'chat' = 'task'): string {
  return path.join('data', language, domain, dataset);
}

/** Counts of a dialogue the summary keeps besides what its timeline and events give. */
export type DialogueCounts = Pick<DialogueSummaryInput, 'splitQuestionsSpokenWhole' | 'bargeIns'>;

/** A dataset being written by a build, one dialogue at a time (the build's DatasetOutput: a {@link DatasetWriter} plus what the summary needs). */
export interface DialogueSink {
  /**
   * Write one dialogue's files and keep what the summary and the fidelity report need.
   * @param spoken the utterances as placed (same order as the timeline's)
   * @param userChannel the listener channel of backchannels (the user)
   * @throws as {@link DatasetWriter.addDialogue}
   */
  add(
    id: string,
    timeline: RenderedTimeline,
    annotated: AnnotatedDialogue,
    metadata: TaskDialogueMetadata,
    spoken: readonly PlacedUtterance[],
    userChannel: Channel,
    extra?: DialogueCounts,
  ): Promise<void>;
}

/** Input of {@link renderDatasetStage}: one placed and annotated dialogue with its metadata record. */
export interface RenderDatasetInput {
  id: string;
  timeline: RenderedTimeline;
  annotated: AnnotatedDialogue;
  metadata: TaskDialogueMetadata;
  /** The utterances as placed. */
  spoken: readonly PlacedUtterance[];
  counts: DialogueCounts;
}

/** Parameters of {@link renderDatasetStage}: the dataset being written and the user channel. */
export interface RenderDatasetParameters {
  output: DialogueSink;
  userChannel: Channel;
}

/**
 * Stage `render-dataset`: one dialogue's WAV, events line, word alignment and metadata added to the
 * dataset being written (committed by the build once every dialogue is done). Not cached: it writes
 * the output.
 * @throws as {@link DialogueSink.add} (a metadata record its schema refuses, a write error, the output lock lost)
 */
export const renderDatasetStage: Stage<RenderDatasetInput, RenderDatasetParameters, void> = {
  name: 'render-dataset',
  inputs: ['id', 'timeline', 'annotated', 'metadata', 'spoken', 'counts'],
  parameters: ['output', 'userChannel'],
  cacheStages: [],
  cacheKeys: async () => [],
  run: (input, parameters) =>
    parameters.output.add(
      input.id,
      input.timeline,
      input.annotated,
      input.metadata,
      input.spoken,
      parameters.userChannel,
      input.counts,
    ),
};
