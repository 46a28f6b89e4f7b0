/**
 * Export to lhotse manifests: `recordings.jsonl.gz`, `supervisions.jsonl.gz`, `events.jsonl.gz` and
 * `cuts.jsonl.gz`, lines as lhotse's own
 * `save_to_jsonl` writes them (`json.dumps(item, ensure_ascii=False)` of `Recording.to_dict()` and
 * `SupervisionSegment.to_dict()`; lhotse-speech/lhotse, `lhotse/serialization.py`,
 * `lhotse/audio/recording.py`, `lhotse/supervision.py`), so `RecordingSet.from_jsonl` and
 * `SupervisionSet.from_jsonl` read them.
 *
 * - One `Recording` per dialogue, a single two-channel source:
 *   `{"id", "sources": [{"type": "file", "channels": [0, 1], "source": PATH}], "sampling_rate",
 *   "num_samples", "duration", "channel_ids": [0, 1]}` (field order of the dataclass; `None` fields
 *   left out, as `asdict_nonull` does). `source` is the dataset's WAV by its path relative to the
 *   export folder (the manifests' folder), so build folder and export move together; lhotse opens a
 *   `source` as given, i.e. relative to the working directory, so load with
 *   `RecordingSet.from_jsonl(D / "recordings.jsonl.gz").with_path_prefix(D)` (lhotse's own way to
 *   re-root relative sources) or run from D. `copyAudio` copies the WAVs into `audio/{id}.wav` of the
 *   export (self-contained), `absolutePaths` writes absolute paths.
 * - One `SupervisionSegment` per utterance (question, answer, placed backchannel) on its channel:
 *   `{"id", "recording_id", "start", "duration", "channel", "text", "language", "speaker", "custom",
 *   "alignment"}`; `language` is the English name as lhotse recipes write it (`"English"`,
 *   `"Japanese"`); `custom` carries `role` (user/system; chat: channel0/channel1), `kind`
 *   (question/answer/backchannel, chat: turn/backchannel: the backchannels are marked here) and the
 *   TopiOCQA `turn_number`; an answer cut off by a barge-in (its `text` is what was spoken) also has
 *   `cut_off: true`, `cut_at` (seconds, the supervision's end) and `planned_text`; `alignment.word` lists the words as
 *   `AlignmentItem.serialize()` writes them, `[symbol, start, duration, score]` with score `null`,
 *   start relative to the recording.
 * - `events.jsonl.gz`: the benchmark events as a second SupervisionSet (`SupervisionSet.from_jsonl`),
 *   one supervision per event on its channel, no text, `custom: {event: TYPE}`; a TURN_SHIFT whose
 *   turn overlaps the floor (start > end) is the span [end, start] with `custom.overlap: true`, and a
 *   zero-length one (lhotse requires a duration > 0) lasts 0.01 s with `custom.zero_length: true`.
 * - `cuts.jsonl.gz`: the same as a CutSet (`CutSet.from_file`), one `MultiCut` per dialogue over the
 *   whole recording with its supervisions, the events and the split in `custom` ({@link lhotseCut}).
 * Times are the dataset's centiseconds written as floats (seconds).
 */
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Centiseconds, Language } from '../model/types.ts';
import type { ExportDataset } from './export-dataset.ts';
import type { ExportWriter } from './export-writer.ts';
import { pythonFloat, pythonJson, type PythonJsonValue } from './python-json.ts';
import { readDialogueWav } from './wav-info.ts';

/** Language names as lhotse recipes write them (e.g. `recipes/fisher_english.py`, `recipes/csj.py`). */
const LHOTSE_LANGUAGE: Record<Language, string> = { en: 'English', ja: 'Japanese' };

const seconds = (centiseconds: Centiseconds) => pythonFloat(centiseconds / 100);

/** A JSON object as lhotse's `to_dict` gives it. */
export type LhotseDict = { readonly [key: string]: PythonJsonValue | undefined };

/** The lhotse manifests of one dialogue: its `Recording`, one `SupervisionSegment` per utterance, one per event. */
export interface LhotseDialogueManifests {
  recording: LhotseDict;
  supervisions: LhotseDict[];
  events: LhotseDict[];
}

/**
 * The lhotse manifests of `dialogue` (module comment), its recording being the two-channel WAV
 * `audioFile` (header read for rate and length) whose `AudioSource.source` is written as `source`.
 * @param sourceType the `AudioSource.type`: `file`, or `shar` (with `source` "") for a Shar shard
 * @throws RangeError when the WAV does not have two channels; DatasetReadError naming the file and the
 *   dialogue when it is missing, unreadable, not a WAV or cut short (wav-info.ts readDialogueWav)
 */
export async function lhotseDialogueManifests(
  dataset: ExportDataset,
  dialogue: ExportDataset['dialogues'][number],
  audioFile: string,
  source: string,
  sourceType: 'file' | 'shar' = 'file',
): Promise<LhotseDialogueManifests> {
  const wav = await readDialogueWav(audioFile, dialogue, `the lhotse recording's source`);
  if (wav.channels !== 2) throw new RangeError(`${audioFile}: ${wav.channels} channels; a dialogue recording has 2`);
  const recording = {
    id: dialogue.id,
    sources: [{ type: sourceType, channels: [0, 1], source }],
    sampling_rate: wav.sampleRate,
    num_samples: wav.sampleCount,
    duration: pythonFloat(wav.sampleCount / wav.sampleRate),
    channel_ids: [0, 1],
  };
  const width = String(dialogue.utterances.length).length;
  const supervisions = dialogue.utterances.map((utterance, index) => {
    const words = dialogue.words.filter(
      (word) => word.channel === utterance.channel && word.start >= utterance.start && word.end <= utterance.end,
    );
    const custom: Record<string, PythonJsonValue> = { role: utterance.role, kind: utterance.kind };
    if (utterance.turnNumber !== null) custom.turn_number = utterance.turnNumber;
    if (utterance.cutOff)
      Object.assign(custom, {
        cut_off: true,
        cut_at: seconds(utterance.end),
        planned_text: utterance.cutOff.plannedText,
      });
    return {
      id: `${dialogue.id}-${String(index).padStart(width, '0')}`,
      recording_id: dialogue.id,
      start: seconds(utterance.start),
      duration: seconds(utterance.end - utterance.start),
      channel: utterance.channel,
      text: utterance.text,
      language: LHOTSE_LANGUAGE[dataset.language],
      speaker: dialogue.speakers[utterance.channel],
      custom,
      alignment:
        words.length > 0
          ? { word: words.map((word) => [word.word, seconds(word.start), seconds(word.end - word.start), null]) }
          : undefined,
    };
  });
  const all = ([0, 1] as const).flatMap((channel) => dialogue.events[channel].map((event) => ({ channel, ...event })));
  all.sort((a, b) => Math.min(a.start, a.end) - Math.min(b.start, b.end) || a.channel - b.channel);
  const eventWidth = String(all.length).length;
  const events = all.map((event, index) => {
    const [start, end] = [Math.min(event.start, event.end), Math.max(event.start, event.end)];
    const custom: Record<string, PythonJsonValue> = { event: event.event };
    if (event.start > event.end) custom.overlap = true;
    if (start === end) custom.zero_length = true;
    return {
      id: `${dialogue.id}-event-${String(index).padStart(eventWidth, '0')}`,
      recording_id: dialogue.id,
      start: seconds(start),
      duration: seconds(Math.max(1, end - start)),
      channel: event.channel,
      speaker: dialogue.speakers[event.channel],
      custom,
    };
  });
  return { recording, supervisions, events };
}

/**
 * The dialogue as one lhotse `MultiCut` (`MultiCut.to_dict()`: `{"id", "start", "duration",
 * "channel": [0, 1], "supervisions", "recording", "custom", "type": "MultiCut"}`, lhotse
 * `lhotse/cut/multi.py`, `lhotse/cut/data.py`): the whole recording, its supervisions, and in
 * `custom` the benchmark events (`events`: the event supervisions' dicts, each readable with
 * `SupervisionSegment.from_dict`) and the dialogue's benchmark split (`split`: `test` or `dev`, left
 * out when the dataset has none).
 */
export function lhotseCut(
  dialogue: ExportDataset['dialogues'][number],
  manifests: LhotseDialogueManifests,
): LhotseDict {
  return {
    id: dialogue.id,
    start: pythonFloat(0),
    duration: manifests.recording.duration,
    channel: [0, 1],
    supervisions: manifests.supervisions,
    recording: manifests.recording,
    custom: { split: dialogue.split ?? undefined, events: manifests.events },
    type: 'MultiCut',
  };
}

/** The lhotse manifest lines of a dataset (one string per line, no newline). */
export async function lhotseManifestLines(
  dataset: ExportDataset,
  sourceOf: (dialogue: ExportDataset['dialogues'][number]) => string = (dialogue) => dialogue.audioFile,
): Promise<{ recordings: string[]; supervisions: string[]; events: string[]; cuts: string[] }> {
  const lines = {
    recordings: [] as string[],
    supervisions: [] as string[],
    events: [] as string[],
    cuts: [] as string[],
  };
  for (const dialogue of dataset.dialogues) {
    const manifests = await lhotseDialogueManifests(dataset, dialogue, dialogue.audioFile, sourceOf(dialogue));
    lines.recordings.push(pythonJson(manifests.recording));
    lines.supervisions.push(...manifests.supervisions.map((supervision) => pythonJson(supervision)));
    lines.events.push(...manifests.events.map((event) => pythonJson(event)));
    lines.cuts.push(pythonJson(lhotseCut(dialogue, manifests)));
  }
  return lines;
}

/** JSONL lines gzipped as lhotse's `.jsonl.gz` files are read (no file name or time in the gzip header: deterministic bytes). */
export function gzipJsonl(lines: readonly string[]): Buffer {
  return gzipSync(Buffer.from(lines.map((line) => `${line}\n`).join(''), 'utf8'), { level: 9 });
}

/**
 * Writes `recordings.jsonl.gz`, `supervisions.jsonl.gz`, `events.jsonl.gz` and `cuts.jsonl.gz` (gzip, no file name or time in the header,
 * so the bytes are deterministic).
 * @throws RangeError when a dialogue's WAV does not have two channels; WavDecodeError for an unreadable WAV
 */
export async function writeLhotseExport(
  dataset: ExportDataset,
  writer: ExportWriter,
  options: { copyAudio?: boolean; absolutePaths?: boolean } = {},
): Promise<Record<string, unknown>> {
  if (options.copyAudio)
    for (const dialogue of dataset.dialogues) await writer.copy(`audio/${dialogue.id}.wav`, dialogue.audioFile);
  const sourceOf = (dialogue: ExportDataset['dialogues'][number]) =>
    options.copyAudio
      ? options.absolutePaths
        ? writer.finalPath(`audio/${dialogue.id}.wav`)
        : `audio/${dialogue.id}.wav`
      : options.absolutePaths
        ? dialogue.audioFile
        : path.relative(writer.finalDirectory, dialogue.audioFile).split(path.sep).join('/');
  const { recordings, supervisions, events, cuts } = await lhotseManifestLines(dataset, sourceOf);
  await writer.write('recordings.jsonl.gz', gzipJsonl(recordings));
  await writer.write('supervisions.jsonl.gz', gzipJsonl(supervisions));
  await writer.write('events.jsonl.gz', gzipJsonl(events));
  await writer.write('cuts.jsonl.gz', gzipJsonl(cuts));
  return {
    recordings: recordings.length,
    supervisions: supervisions.length,
    events: events.length,
    cuts: cuts.length,
    sources: options.absolutePaths
      ? 'absolute'
      : 'relative to the export folder: RecordingSet.from_jsonl(...).with_path_prefix(export folder)',
    audioCopied: options.copyAudio ?? false,
  };
}
