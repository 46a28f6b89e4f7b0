/**
 * Export as a Hugging Face `datasets` AudioFolder (docs: "Create an audio dataset" → AudioFolder,
 * "Structure your repository" → split name keywords; `packaged_modules/folder_based_builder`), which
 * `load_dataset("audiofolder", data_dir=DIR)` (or `load_dataset(DIR)`) loads without code:
 *
 * ```
 * README.md                      dataset card
 * test/metadata.jsonl            one line per dialogue: file_name, id, duration, ..., events, words
 * test/{id}.wav                  the dataset's two-channel WAV, unchanged
 * validation/...                 the dev part (split keyword "validation")
 * ```
 * A dataset built without the dev/test split is written as one `train/` folder.
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
 * The `audio` column decodes with the file's two channels (`Audio(num_channels=None)`, the default in
 * datasets 4; older versions downmix unless `Audio(mono=False)` is cast).
 */
import type { Channel } from '../model/types.ts';
import type { ExportDataset, ExportDialogue, ExportSplit } from './export-dataset.ts';
import type { ExportWriter } from './export-writer.ts';
import { pythonFloat, pythonJson, type PythonJsonValue } from './python-json.ts';

/** The split folder a dialogue goes to. */
type HuggingFaceSplit = 'test' | 'validation' | 'train';

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

function datasetCard(dataset: ExportDataset, counts: Record<string, number>): string {
  const sizes = Object.entries(counts)
    .map(([split, count]) => `- \`${split}\`: ${count} dialogues`)
    .join('\n');
  return `---
language:
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
from datasets import load_dataset
dataset = load_dataset("audiofolder", data_dir="path/to/this/folder")
\`\`\`

${sizes}

Each WAV has two channels: channel 0 is the ${dataset.roles[0]}, channel 1 the ${dataset.roles[1]}${dataset.channels ? ' (the user asks, the system answers)' : ''}. Columns: \`events\` (benchmark events: TURN, SHORTPAUSE, BC, TURN_HOLD, TURN_SHIFT,
BARGE_IN, with channel and start/end in seconds; a TURN_SHIFT with start > end is an overlap), \`words\`
(word or morpheme timings per channel), \`utterances\` (with their channel, role, kind and text), the
role and speaker of each channel, and the split. Check the licence of the source material (MT-QA
builds: texts derived from TopiOCQA, CC BY-NC-SA 4.0).
`;
}

/**
 * Writes the AudioFolder (module comment). Dialogues of a split dataset that are in neither part
 * (left out of dev for sharing a speaker with test) are not exported; their count is returned.
 */
export async function writeHuggingFaceExport(dataset: ExportDataset, writer: ExportWriter): Promise<Record<string, unknown>> {
  const bySplit = new Map<HuggingFaceSplit, ExportDialogue[]>();
  let leftOut = 0;
  for (const dialogue of dataset.dialogues) {
    const split: HuggingFaceSplit | null = dataset.hasSplits ? (dialogue.split === null ? null : SPLIT_FOLDER[dialogue.split]) : 'train';
    if (split === null) {
      leftOut += 1;
      continue;
    }
    bySplit.set(split, [...(bySplit.get(split) ?? []), dialogue]);
  }
  const counts: Record<string, number> = {};
  for (const split of ['train', 'validation', 'test'] as const) {
    const dialogues = bySplit.get(split);
    if (!dialogues) continue;
    counts[split] = dialogues.length;
    for (const dialogue of dialogues) await writer.copy(`${split}/${dialogue.id}.wav`, dialogue.audioFile);
    await writer.write(`${split}/metadata.jsonl`, dialogues.map((dialogue) => `${huggingFaceMetadataLine(dataset, dialogue, split)}\n`).join(''));
  }
  await writer.write('README.md', datasetCard(dataset, counts));
  return { layout: 'audiofolder', splits: counts, leftOut };
}
