/**
 * Export for Hugging Face `datasets`, which `load_dataset(DIR)` loads without code, in one of two layouts:
 *
 * **parquet** (the default; ./huggingface-parquet.ts): the Hub's own layout, what `push_to_hub` writes
 * ```
 * README.md                                 dataset card: YAML `configs:` (split -> files) and `dataset_info.features`
 * data/test-00000-of-00001.parquet          one file (or more, 500 MB each) per split: every column, the WAV bytes embedded
 * data/validation-00000-of-00001.parquet    the dev part (test_other.jsonl / dev.jsonl)
 * data/test_small-00000-of-00001.parquet    test_small.jsonl (a subset of test)
 * ```
 * It stands alone (no WAV files beside it), uploads as it is, the columns are typed once for all
 * splits (a list may be empty, a value null: `cut_at` of an uncut utterance), and pyarrow, DuckDB or
 * polars read it without `datasets`.
 *
 * **audiofolder** (`layout: 'audiofolder'`; docs "Create an audio dataset" -> AudioFolder,
 * `packaged_modules/folder_based_builder`): the WAV files as they are, beside a metadata file, for a
 * reader who wants the files themselves or `load_dataset("audiofolder", data_dir=DIR)`:
 * ```
 * README.md                      dataset card; its YAML header's `configs:` names the split folders
 * test/metadata.jsonl            one line per dialogue: file_name, id, duration, ..., events, words
 * test/{id}.wav                  the dataset's two-channel WAV, unchanged
 * validation/...                 the dev part (test_other.jsonl / dev.jsonl; split keyword "validation")
 * small/...                      test_small.jsonl (a subset of test): split `test_small`
 * ```
 * A dataset built without the dev/test split is written as one `train` split in both layouts.
 *
 * Split `test_small` lives in `small/` and not `test_small/`: `load_dataset("audiofolder", data_dir=DIR)`
 * ignores the card and finds splits by folder keyword (`data_files.py`: a folder named `test`, or `test`
 * followed by `-`, `.`, `_`, a space or a digit, is the test split), which would put a `test_small/`
 * folder's rows into `test` a second time. `load_dataset(DIR)` reads
 * the card's `configs:` and gives test, test_small and validation; the audiofolder form gives test and
 * validation. Each row's `file_name` must stay inside its metadata file's folder (datasets refuses
 * `../`), so `small/` holds copies of its WAVs.
 *
 * Rules of the AudioFolder reader this writer keeps (folder_based_builder checks that every split's metadata has
 * the same features, taken from the types pyarrow infers):
 * - every time and duration is written as a float (`3.0`, never `3`), so it is `double` everywhere;
 * - no list that can be empty (an empty list is inferred as `list<null>`) and no value that can be
 *   null (hence no `cut_at` there: a cut-off utterance's `end` is its cut): backchannels are in
 *   `utterances` with `kind: "backchannel"`, and every dialogue has events and words;
 * - `file_name` is relative to the metadata file.
 * The `audio` column decodes with the file's two channels in datasets 4 and later (`Audio(num_channels=None)`,
 * the default; decoding needs torchcodec); datasets 2 and 3 average the channels to mono unless
 * `Audio(mono=False)` is cast, a keyword datasets 4 no longer has (the card's snippet casts it only there).
 */
import YAML from 'yaml';
import type { Channel } from '../model/types.ts';
import type { ExportDataset, ExportDialogue, ExportSplit } from './export-dataset.ts';
import type { ExportWriter } from './export-writer.ts';
import {
  checkDialogueWav,
  datasetsYamlFeatures,
  parquetShardPath,
  planParquetShards,
  writeParquetShard,
  type HuggingFaceRow,
} from './huggingface-parquet.ts';
import { pythonFloat, pythonJson, type PythonJsonValue } from './python-json.ts';

/** The two layouts (module comment). */
export const HUGGING_FACE_LAYOUTS = ['parquet', 'audiofolder'] as const;
/** A layout of the huggingface export. */
export type HuggingFaceLayout = (typeof HUGGING_FACE_LAYOUTS)[number];

/** The split a dialogue goes to (`test_small`: also, beside `test`). */
type HuggingFaceSplit = 'test' | 'validation' | 'train' | 'test_small';

/** The folder of each split in the audiofolder layout (see the module comment for `small/`). */
const SPLIT_DIRECTORY: Record<HuggingFaceSplit, string> = {
  test: 'test',
  validation: 'validation',
  train: 'train',
  test_small: 'small',
};
/** Order of the splits in the card and the export. */
const SPLIT_ORDER: readonly HuggingFaceSplit[] = ['train', 'validation', 'test', 'test_small'];

const SPLIT_FOLDER: Record<ExportSplit, HuggingFaceSplit> = { test: 'test', dev: 'validation' };
/** The English name of a language code (`en` English, `ja` Japanese, `zh` Chinese), from ICU's display names. */
const languageName = (code: string): string => new Intl.DisplayNames(['en'], { type: 'language' }).of(code) ?? code;

/**
 * One dialogue's columns (every column but `audio`), times in seconds. In `utterances` a cut-off
 * utterance has `cut_off: true`, `cut_at` (its end: where the audio stops) and its `planned_text`;
 * an uncut one `cut_off: false`, `cut_at: null`, `planned_text` its text.
 */
export function huggingFaceRow(
  dataset: ExportDataset,
  dialogue: ExportDialogue,
  split: HuggingFaceSplit,
): HuggingFaceRow {
  const seconds = (centiseconds: number) => centiseconds / 100;
  const events: Record<string, unknown>[] = [];
  for (const channel of [0, 1] as Channel[]) {
    for (const event of dialogue.events[channel])
      events.push({ channel, event: event.event, start: seconds(event.start), end: seconds(event.end) });
  }
  return {
    id: dialogue.id,
    language: dataset.language,
    dataset: dataset.dataset,
    split,
    test_small: dialogue.testSmall,
    duration: dialogue.durationSeconds,
    channel0_role: dataset.roles[0],
    channel1_role: dataset.roles[1],
    channel0_speaker: dialogue.speakers[0],
    channel1_speaker: dialogue.speakers[1],
    utterances: dialogue.utterances.map((utterance) => ({
      channel: utterance.channel,
      role: utterance.role,
      kind: utterance.kind,
      start: seconds(utterance.start),
      end: seconds(utterance.end),
      text: utterance.text,
      cut_off: utterance.cutOff !== undefined,
      cut_at: utterance.cutOff === undefined ? null : seconds(utterance.end),
      planned_text: utterance.cutOff?.plannedText ?? utterance.text,
    })),
    events,
    words: dialogue.words.map((word) => ({
      channel: word.channel,
      start: seconds(word.start),
      end: seconds(word.end),
      word: word.word,
    })),
  };
}

/**
 * The audiofolder layout's `metadata.jsonl` line of one dialogue (no newline): `file_name`, then the
 * row of {@link huggingFaceRow} without `cut_at` (module comment), every time as a Python float.
 */
export function huggingFaceMetadataLine(
  dataset: ExportDataset,
  dialogue: ExportDialogue,
  split: HuggingFaceSplit,
): string {
  const row = huggingFaceRow(dataset, dialogue, split);
  const timed = (items: unknown) =>
    (items as Record<string, unknown>[]).map((item) => {
      const { cut_at: _cutAt, ...rest } = item;
      for (const key of ['start', 'end'] as const) rest[key] = pythonFloat(item[key] as number);
      return rest;
    });
  return pythonJson({
    file_name: `${dialogue.id}.wav`,
    ...row,
    duration: pythonFloat(row.duration as number),
    utterances: timed(row.utterances),
    events: timed(row.events),
    words: timed(row.words),
  } as PythonJsonValue);
}

/** The card's YAML header: `configs:` (datasets docs "Define your splits in YAML", one default config, a split per folder or file pattern), for parquet `dataset_info.features`, the language and tags. */
function cardHeader(dataset: ExportDataset, splits: readonly HuggingFaceSplit[], layout: HuggingFaceLayout): string {
  const path = (split: HuggingFaceSplit) => (layout === 'parquet' ? `data/${split}-*` : `${SPLIT_DIRECTORY[split]}/*`);
  const header: Record<string, unknown> = {
    configs: [{ config_name: 'default', data_files: splits.map((split) => ({ split, path: path(split) })) }],
    ...(layout === 'parquet' ? { dataset_info: { features: datasetsYamlFeatures() } } : {}),
    language: [dataset.language],
    task_categories: ['audio-to-audio'],
    tags: ['full-duplex', 'spoken-dialogue', 'turn-taking'],
  };
  return YAML.stringify(header);
}

function datasetCard(
  dataset: ExportDataset,
  counts: Partial<Record<HuggingFaceSplit, number>>,
  layout: HuggingFaceLayout,
): string {
  const splits = SPLIT_ORDER.filter((split) => counts[split] !== undefined);
  const where = (split: HuggingFaceSplit) =>
    layout === 'parquet' ? `files \`data/${split}-*.parquet\`` : `folder \`${SPLIT_DIRECTORY[split]}/\``;
  const sizes = splits.map((split) => `- \`${split}\` (${where(split)}): ${counts[split]} dialogues`).join('\n');
  const form =
    layout === 'parquet'
      ? "as Parquet files in the Hub's layout (the WAV of each dialogue embedded in the `audio` column)"
      : 'as an AudioFolder (the WAV files beside a metadata.jsonl per split)';
  const audiofolderNote =
    layout === 'audiofolder'
      ? ` \`load_dataset("audiofolder", data_dir=...)\` ignores this card and gives
\`test\` and \`validation\` only (\`test_small\` is in the folder \`small/\`).`
      : '';
  const cutNote =
    layout === 'parquet'
      ? 'an answer cut off by a barge-in has `cut_off` true, `cut_at` (seconds, where its audio stops) and its `planned_text`; otherwise `cut_at` is null'
      : 'an answer cut off by a barge-in has `cut_off` true, its `end` where the audio stops, and its `planned_text`';
  return `---
${cardHeader(dataset, splits, layout)}---
# ${dataset.dataset}

Two-channel spoken dialogues (${languageName(dataset.language)}, ${dataset.domain === 'chat' ? 'real conversations' : 'synthetic multi-turn QA'}) in the
M3-DuplexBench event conventions, exported by duplexsynth ${form}:

\`\`\`python
import datasets
from datasets import Audio, load_dataset
dataset = load_dataset("path/to/this/folder")
if int(datasets.__version__.split(".")[0]) < 4:
    # datasets 2 and 3 average the two channels to mono unless told otherwise
    # (datasets 4 and later keep the file's channels and have no \`mono\` argument)
    dataset = dataset.cast_column("audio", Audio(mono=False))
\`\`\`

Decoding the audio in datasets 4 and later needs torchcodec (\`pip install "datasets[audio]"\`); each
row's \`audio\` then has both channels.

Splits (the YAML header above lists their files): \`test\` (the benchmark's test.jsonl),
\`validation\` (its test_other.jsonl, also written as dev.jsonl) and \`test_small\` (test_small.jsonl, a
subset of test), where the dataset has them; \`train\` for a dataset built without the test split.${audiofolderNote}
The \`test_small\` column marks the test dialogues of test_small.

${sizes}

Each WAV has two channels: channel 0 is the ${dataset.roles[0]}, channel 1 the ${dataset.roles[1]}${dataset.channels ? ' (the user asks, the system answers)' : ''}. Columns: \`events\` (benchmark events: TURN, SHORTPAUSE, BC, TURN_HOLD, TURN_SHIFT,
BARGE_IN, with channel and start/end in seconds; a TURN_SHIFT with start > end is an overlap), \`words\`
(word or morpheme timings per channel), \`utterances\` (with their channel, role, kind and the text
spoken; ${cutNote}), the role and
speaker of each channel, and the split. Check the licence of the source material (MT-QA builds: texts
derived from TopiOCQA, CC BY-NC-SA 4.0).
`;
}

/** Options of the huggingface export. */
export interface HuggingFaceExportOptions {
  /** `parquet` (default) or `audiofolder` (module comment). */
  layout?: HuggingFaceLayout;
}

/**
 * Writes the export in `options.layout` (module comment). Dialogues of a split dataset that are in
 * neither part (left out of dev for sharing a speaker with test) are not exported; their count is returned.
 * @returns the marker details: layout, dialogues per split, left-out count, and (parquet) the files of each split
 * @throws DatasetReadError naming the WAV file and the dialogue id when a WAV is missing, unreadable or
 *   not two-channel (parquet: checked for every dialogue before any file is written)
 */
export async function writeHuggingFaceExport(
  dataset: ExportDataset,
  writer: ExportWriter,
  options: HuggingFaceExportOptions = {},
): Promise<Record<string, unknown>> {
  const layout = options.layout ?? 'parquet';
  const bySplit = new Map<HuggingFaceSplit, ExportDialogue[]>();
  const add = (split: HuggingFaceSplit, dialogue: ExportDialogue) =>
    bySplit.set(split, [...(bySplit.get(split) ?? []), dialogue]);
  let leftOut = 0;
  for (const dialogue of dataset.dialogues) {
    const split: HuggingFaceSplit | null = dataset.hasSplits
      ? dialogue.split === null
        ? null
        : SPLIT_FOLDER[dialogue.split]
      : 'train';
    if (split === null) {
      leftOut += 1;
      continue;
    }
    add(split, dialogue);
    if (split === 'test' && dialogue.testSmall) add('test_small', dialogue);
  }
  const counts: Partial<Record<HuggingFaceSplit, number>> = {};
  const files: Partial<Record<HuggingFaceSplit, string[]>> = {};
  // every WAV checked (and, for parquet, the shards planned) before anything is written
  const plans = new Map<HuggingFaceSplit, ExportDialogue[][][]>();
  if (layout === 'parquet')
    for (const [split, dialogues] of bySplit) plans.set(split, await planParquetShards(dialogues));
  else for (const dialogues of bySplit.values()) for (const dialogue of dialogues) await checkDialogueWav(dialogue);
  for (const split of SPLIT_ORDER) {
    const dialogues = bySplit.get(split);
    if (!dialogues) continue;
    counts[split] = dialogues.length;
    if (layout === 'parquet') {
      const shards = plans.get(split)!;
      files[split] = [];
      for (const [index, rowGroups] of shards.entries()) {
        const relative = parquetShardPath(split, index, shards.length);
        await writeParquetShard(writer, relative, rowGroups, (dialogue) => huggingFaceRow(dataset, dialogue, split));
        files[split].push(relative);
      }
    } else {
      const directory = SPLIT_DIRECTORY[split];
      for (const dialogue of dialogues) await writer.copy(`${directory}/${dialogue.id}.wav`, dialogue.audioFile);
      await writer.write(
        `${directory}/metadata.jsonl`,
        dialogues.map((dialogue) => `${huggingFaceMetadataLine(dataset, dialogue, split)}\n`).join(''),
      );
    }
  }
  await writer.write('README.md', datasetCard(dataset, counts, layout));
  return { layout, splits: counts, leftOut, ...(layout === 'parquet' ? { splitFiles: files } : {}) };
}
