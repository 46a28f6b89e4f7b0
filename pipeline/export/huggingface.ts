/**
 * Export as a Hugging Face `datasets` AudioFolder (docs: "Create an audio dataset" → AudioFolder,
 * "Structure your repository" → split name keywords and "Define your splits in YAML" (`configs:`);
 * `packaged_modules/folder_based_builder`), which `load_dataset(DIR)` and
 * `load_dataset("audiofolder", data_dir=DIR)` load without code:
 *
 * ```
 * README.md                      dataset card; its YAML header's `configs:` names the split folders
 * test/metadata.jsonl            one line per dialogue: file_name, id, duration, ..., events, words
 * test/{id}.wav                  the dataset's two-channel WAV, unchanged
 * validation/...                 the dev part (test_other.jsonl / dev.jsonl; split keyword "validation")
 * small/...                      test_small.jsonl (a subset of test): split `test_small`
 * ```
 * A dataset built without the dev/test split is written as one `train/` folder.
 *
 * Split `test_small` lives in `small/` and not `test_small/`: `load_dataset("audiofolder", data_dir=DIR)`
 * ignores the card and finds splits by folder keyword (`data_files.py`: a folder named `test`, or `test`
 * followed by `-`, `.`, `_`, a space or a digit, is the test split), which would put a `test_small/`
 * folder's rows into `test` a second time. `load_dataset(DIR)` reads
 * the card's `configs:` and gives test, test_small and validation; the audiofolder form gives test and
 * validation. Each row's `file_name` must stay inside its metadata file's folder (datasets refuses
 * `../`), so `small/` holds copies of its WAVs.
 *
 * Why AudioFolder and not Parquet: it needs no Parquet writer (no new dependency) and keeps the WAV
 * files as they are; the metadata is read by pyarrow's JSON reader.
 *
 * Rules of that reader this writer keeps (folder_based_builder checks that every split's metadata has
 * the same features, taken from the types pyarrow infers):
 * - every time and duration is written as a float (`3.0`, never `3`), so it is `double` everywhere;
 * - no list that can be empty (an empty list is inferred as `list<null>`): backchannels are in
 *   `utterances` with `kind: "backchannel"`, and every dialogue has events and words;
 * - `file_name` is relative to the metadata file.
 * The `audio` column decodes with the file's two channels in datasets 4 and later (`Audio(num_channels=None)`,
 * the default; decoding needs torchcodec); datasets 2 and 3 average the channels to mono unless
 * `Audio(mono=False)` is cast, a keyword datasets 4 no longer has (the card's snippet casts it only there).
 */
import type { Channel } from '../model/types.ts';
import type { ExportDataset, ExportDialogue, ExportSplit } from './export-dataset.ts';
import type { ExportWriter } from './export-writer.ts';
import { pythonFloat, pythonJson, type PythonJsonValue } from './python-json.ts';

/** The split a dialogue goes to (`test_small`: also, beside `test`). */
type HuggingFaceSplit = 'test' | 'validation' | 'train' | 'test_small';

/** The folder of each split (see the module comment for `small/`). */
const SPLIT_DIRECTORY: Record<HuggingFaceSplit, string> = { test: 'test', validation: 'validation', train: 'train', test_small: 'small' };
/** Order of the splits in the card and the export. */
const SPLIT_ORDER: readonly HuggingFaceSplit[] = ['train', 'validation', 'test', 'test_small'];

const SPLIT_FOLDER: Record<ExportSplit, HuggingFaceSplit> = { test: 'test', dev: 'validation' };
/** The English name of a language code (`en` English, `ja` Japanese, `zh` Chinese), from ICU's display names. */
const languageName = (code: string): string => new Intl.DisplayNames(['en'], { type: 'language' }).of(code) ?? code;

const seconds = (centiseconds: number) => pythonFloat(centiseconds / 100);

/** The `metadata.jsonl` line of one dialogue (no newline). */
export function huggingFaceMetadataLine(dataset: ExportDataset, dialogue: ExportDialogue, split: HuggingFaceSplit): string {
  const events: PythonJsonValue[] = [];
  for (const channel of [0, 1] as Channel[]) {
    for (const event of dialogue.events[channel]) events.push({ channel, event: event.event, start: seconds(event.start), end: seconds(event.end) });
  }
  return pythonJson({
    file_name: `${dialogue.id}.wav`,
    id: dialogue.id,
    language: dataset.language,
    dataset: dataset.dataset,
    split,
    test_small: dialogue.testSmall,
    duration: pythonFloat(dialogue.durationSeconds),
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
      // in every row (pyarrow infers one struct for all splits): cut off by a barge-in at `end`, and the text planned
      cut_off: utterance.cutOff !== undefined,
      planned_text: utterance.cutOff?.plannedText ?? utterance.text,
    })),
    events,
    words: dialogue.words.map((word) => ({ channel: word.channel, start: seconds(word.start), end: seconds(word.end), word: word.word })),
  });
}

/** The card's YAML `configs:` (datasets docs "Define your splits in YAML"): one default config, a split per folder. */
function configsYaml(splits: readonly HuggingFaceSplit[]): string {
  const dataFiles = splits.map((split) => `  - split: ${split}\n    path: ${SPLIT_DIRECTORY[split]}/*`).join('\n');
  return `configs:\n- config_name: default\n  data_files:\n${dataFiles}\n`;
}

function datasetCard(dataset: ExportDataset, counts: Partial<Record<HuggingFaceSplit, number>>): string {
  const splits = SPLIT_ORDER.filter((split) => counts[split] !== undefined);
  const sizes = splits.map((split) => `- \`${split}\` (folder \`${SPLIT_DIRECTORY[split]}/\`): ${counts[split]} dialogues`).join('\n');
  return `---
${configsYaml(splits)}language:
- ${dataset.language}
task_categories:
- audio-to-audio
tags:
- full-duplex
- spoken-dialogue
- turn-taking
---
# ${dataset.dataset}

Two-channel spoken dialogues (${languageName(dataset.language)}, ${dataset.domain === 'chat' ? 'real conversations' : 'synthetic multi-turn QA'}) in the
M3-DuplexBench event conventions, exported by duplexsynth as an AudioFolder:

\`\`\`python
import datasets
from datasets import Audio, load_dataset
dataset = load_dataset("path/to/this/folder")
if int(datasets.__version__.split(".")[0]) < 4:
    # datasets 2 and 3 average the two channels to mono unless told otherwise
    # (datasets 4 and later keep the file's channels and have no \`mono\` argument)
    dataset = dataset.cast_column("audio", Audio(mono=False))
\`\`\`

Splits (the YAML header above lists their folders): \`test\` (the benchmark's test.jsonl),
\`validation\` (its test_other.jsonl, also written as dev.jsonl) and \`test_small\` (test_small.jsonl, a
subset of test, in the folder \`small/\`), where the dataset has them; \`train\` for a dataset built
without the test split. \`load_dataset("audiofolder", data_dir=...)\` ignores this card and gives
\`test\` and \`validation\` only. The \`test_small\` column marks the test dialogues of test_small.

${sizes}

Each WAV has two channels: channel 0 is the ${dataset.roles[0]}, channel 1 the ${dataset.roles[1]}${dataset.channels ? ' (the user asks, the system answers)' : ''}. Columns: \`events\` (benchmark events: TURN, SHORTPAUSE, BC, TURN_HOLD, TURN_SHIFT,
BARGE_IN, with channel and start/end in seconds; a TURN_SHIFT with start > end is an overlap), \`words\`
(word or morpheme timings per channel), \`utterances\` (with their channel, role, kind and the text
spoken; an answer cut off by a barge-in has \`cut_off\` true and its \`planned_text\`), the role and
speaker of each channel, and the split. Check the licence of the source material (MT-QA builds: texts
derived from TopiOCQA, CC BY-NC-SA 4.0).
`;
}

/**
 * Writes the AudioFolder (module comment). Dialogues of a split dataset that are in neither part
 * (left out of dev for sharing a speaker with test) are not exported; their count is returned.
 */
export async function writeHuggingFaceExport(dataset: ExportDataset, writer: ExportWriter): Promise<Record<string, unknown>> {
  const bySplit = new Map<HuggingFaceSplit, ExportDialogue[]>();
  const add = (split: HuggingFaceSplit, dialogue: ExportDialogue) => bySplit.set(split, [...(bySplit.get(split) ?? []), dialogue]);
  let leftOut = 0;
  for (const dialogue of dataset.dialogues) {
    const split: HuggingFaceSplit | null = dataset.hasSplits ? (dialogue.split === null ? null : SPLIT_FOLDER[dialogue.split]) : 'train';
    if (split === null) {
      leftOut += 1;
      continue;
    }
    add(split, dialogue);
    if (split === 'test' && dialogue.testSmall) add('test_small', dialogue);
  }
  const counts: Partial<Record<HuggingFaceSplit, number>> = {};
  for (const split of SPLIT_ORDER) {
    const dialogues = bySplit.get(split);
    if (!dialogues) continue;
    counts[split] = dialogues.length;
    const directory = SPLIT_DIRECTORY[split];
    for (const dialogue of dialogues) await writer.copy(`${directory}/${dialogue.id}.wav`, dialogue.audioFile);
    await writer.write(`${directory}/metadata.jsonl`, dialogues.map((dialogue) => `${huggingFaceMetadataLine(dataset, dialogue, split)}\n`).join(''));
  }
  await writer.write('README.md', datasetCard(dataset, counts));
  return { layout: 'audiofolder', splits: counts, leftOut };
}
