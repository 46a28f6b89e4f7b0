/**
 * Export to lhotse manifests: `recordings.jsonl.gz` and `supervisions.jsonl.gz`, lines as lhotse's own
 * `save_to_jsonl` writes them (`json.dumps(item, ensure_ascii=False)` of `Recording.to_dict()` and
 * `SupervisionSegment.to_dict()`; lhotse-speech/lhotse, `lhotse/serialization.py`,
 * `lhotse/audio/recording.py`, `lhotse/supervision.py`), so `RecordingSet.from_jsonl` and
 * `SupervisionSet.from_jsonl` read them.
 *
 * - One `Recording` per dialogue, a single two-channel source:
 *   `{"id", "sources": [{"type": "file", "channels": [0, 1], "source": PATH}], "sampling_rate",
 *   "num_samples", "duration", "channel_ids": [0, 1]}` (field order of the dataclass; `None` fields
 *   left out, as `asdict_nonull` does). `source` is the absolute path of the dataset's WAV: lhotse opens
 *   it as given, so the manifests point at the dataset in place (nothing is copied).
 * - One `SupervisionSegment` per utterance (question, answer, placed backchannel) on its channel:
 *   `{"id", "recording_id", "start", "duration", "channel", "text", "language", "speaker", "custom",
 *   "alignment"}`; `language` is the English name as lhotse recipes write it (`"English"`,
 *   `"Japanese"`); `custom` carries `role` (user/system; chat: channel0/channel1), `kind`
 *   (question/answer/backchannel, chat: turn/backchannel: the backchannels are marked here) and the
 *   TopiOCQA `turn_number`; an answer cut off by a barge-in (its `text` is what was spoken) also has
 *   `cut_off: true`, `cut_at` (seconds, the supervision's end) and `planned_text`; `alignment.word` lists the words as
 *   `AlignmentItem.serialize()` writes them, `[symbol, start, duration, score]` with score `null`,
 *   start relative to the recording.
 * Times are the dataset's centiseconds written as floats (seconds).
 */
import { gzipSync } from 'node:zlib';
import type { Centiseconds, Language } from '../model/types.ts';
import type { ExportDataset } from './export-dataset.ts';
import type { ExportWriter } from './export-writer.ts';
import { pythonFloat, pythonJson, type PythonJsonValue } from './python-json.ts';
import { readWavInfo } from './wav-info.ts';

/** Language names as lhotse recipes write them (e.g. `recipes/fisher_english.py`, `recipes/csj.py`). */
const LHOTSE_LANGUAGE: Record<Language, string> = { en: 'English', ja: 'Japanese' };

const seconds = (centiseconds: Centiseconds) => pythonFloat(centiseconds / 100);

/** The lhotse manifest lines of a dataset (one string per line, no newline). */
export async function lhotseManifestLines(dataset: ExportDataset): Promise<{ recordings: string[]; supervisions: string[] }> {
  const recordings: string[] = [];
  const supervisions: string[] = [];
  for (const dialogue of dataset.dialogues) {
    const wav = await readWavInfo(dialogue.audioFile);
    if (wav.channels !== 2) throw new RangeError(`${dialogue.audioFile}: ${wav.channels} channels; a dialogue recording has 2`);
    recordings.push(
      pythonJson({
        id: dialogue.id,
        sources: [{ type: 'file', channels: [0, 1], source: dialogue.audioFile }],
        sampling_rate: wav.sampleRate,
        num_samples: wav.sampleCount,
        duration: pythonFloat(wav.sampleCount / wav.sampleRate),
        channel_ids: [0, 1],
      }),
    );
    const width = String(dialogue.utterances.length).length;
    dialogue.utterances.forEach((utterance, index) => {
      const words = dialogue.words.filter((word) => word.channel === utterance.channel && word.start >= utterance.start && word.end <= utterance.end);
      const custom: Record<string, PythonJsonValue> = { role: utterance.role, kind: utterance.kind };
      if (utterance.turnNumber !== null) custom.turn_number = utterance.turnNumber;
      if (utterance.cutOff) Object.assign(custom, { cut_off: true, cut_at: seconds(utterance.end), planned_text: utterance.cutOff.plannedText });
      supervisions.push(
        pythonJson({
          id: `${dialogue.id}-${String(index).padStart(width, '0')}`,
          recording_id: dialogue.id,
          start: seconds(utterance.start),
          duration: seconds(utterance.end - utterance.start),
          channel: utterance.channel,
          text: utterance.text,
          language: LHOTSE_LANGUAGE[dataset.language],
          speaker: dialogue.speakers[utterance.channel],
          custom,
          alignment: words.length > 0 ? { word: words.map((word) => [word.word, seconds(word.start), seconds(word.end - word.start), null]) } : undefined,
        }),
      );
    });
  }
  return { recordings, supervisions };
}

/**
 * Writes `recordings.jsonl.gz` and `supervisions.jsonl.gz` (gzip, no file name or time in the header,
 * so the bytes are deterministic).
 * @throws RangeError when a dialogue's WAV does not have two channels; WavDecodeError for an unreadable WAV
 */
export async function writeLhotseExport(dataset: ExportDataset, writer: ExportWriter): Promise<Record<string, unknown>> {
  const { recordings, supervisions } = await lhotseManifestLines(dataset);
  const gzip = (lines: string[]) => gzipSync(Buffer.from(lines.map((line) => `${line}\n`).join(''), 'utf8'), { level: 9 });
  await writer.write('recordings.jsonl.gz', gzip(recordings));
  await writer.write('supervisions.jsonl.gz', gzip(supervisions));
  return { recordings: recordings.length, supervisions: supervisions.length };
}
