/**
 * The export formats' names and descriptions, apart from their writers (./index.ts), so the command
 * line lists them without loading any writer.
 */

/** One line per format: what it writes and for which tool. */
export const EXPORT_FORMAT_DESCRIPTIONS = {
  lhotse:
    'lhotse recordings.jsonl.gz + supervisions.jsonl.gz + events.jsonl.gz + cuts.jsonl.gz (RecordingSet/SupervisionSet/CutSet.from_file), sources relative to the export folder',
  'lhotse-shar':
    'lhotse Shar for training: shar/cuts.NNNNNN.jsonl.gz + shar/recording.NNNNNN.tar shards with the full-band audio inside (CutSet.from_shar(in_dir=EXPORT/shar))',
  'moshi-finetune':
    'kyutai moshi-finetune: stereo 24 kHz WAV (left system, right user), {dataset}.jsonl of {path, duration}, per-file word alignments',
  huggingface:
    'Hugging Face datasets: Parquet in the Hub layout (data/{split}-00000-of-00001.parquet, audio embedded; test, validation and test_small splits in the card), or --layout audiofolder (WAVs + metadata.jsonl)',
  rttm: 'RTTM speaker segments with SPKR-INFO lines and role-named speakers, one {id}.rttm per dialogue',
  textgrid: 'Praat TextGrid per dialogue: word tier per channel, an interval tier per channel and event type',
  audacity: 'Audacity label tracks per dialogue: system words, user words, events',
} as const;

/** A format name. */
export type ExportFormatName = keyof typeof EXPORT_FORMAT_DESCRIPTIONS;

/** Format names, in the order the help lists them. */
export const EXPORT_FORMAT_NAMES = Object.keys(EXPORT_FORMAT_DESCRIPTIONS) as ExportFormatName[];
