/**
 * The Parquet form of the Hugging Face export: one table per split in the Hub's layout
 * (`data/{split}-{shard:05d}-of-{shards:05d}.parquet`, what `Dataset.push_to_hub` writes), the audio
 * embedded as the `datasets` Audio feature's storage struct `{bytes, path}` (the WAV file's bytes,
 * unchanged, and its file name), the other columns as plain Parquet types: strings, doubles, 64-bit
 * integers, booleans and lists of structs (the Parquet LIST logical type, three-level, as pyarrow
 * writes it: `list<element: struct<...>>`).
 *
 * The columns are described once ({@link HUGGING_FACE_COLUMNS}); from that one description come the
 * Parquet schema, the `datasets` features stored in each file's key-value metadata under `huggingface`
 * (as `datasets` writes them: `{"info": {"features": ...}}`, read by `Features.from_arrow_schema`) and
 * the dataset card's `dataset_info.features` (YAML, `Features._to_yaml_list`'s form).
 *
 * Writer: hyparquet-writer (pure JavaScript, no WebAssembly, one dependency, its companion reader
 * hyparquet), chosen over parquet-wasm + apache-arrow (pyarrow reads what it writes too, but it is
 * 27 MB of WebAssembly and Arrow and the table is handed over as Arrow IPC) and @dsnp/parquetjs 1.9.3
 * (declares Node >= 24.18, pulls the AWS S3 client, and its package lacks its `main`,
 * `dist/parquet.js`). Its `ParquetWriter` writes a row group per `write` call, so a
 * split is written a row group at a time: only the WAVs of one row group are held in memory.
 *
 * Sizes follow `datasets`' own writer (`datasets/config.py`): a row group holds at most
 * {@link MAX_ROW_GROUP_BYTES} of audio (`MAX_ROW_GROUP_SIZE = "100MB"`), a shard file at most
 * {@link MAX_SHARD_BYTES} (`MAX_SHARD_SIZE = "500MB"`), each at least one dialogue. The plan depends only
 * on the WAV files' sizes, so the same input gives the same bytes.
 */
import { ByteWriter, ParquetWriter, type ColumnSource, type SchemaElement } from 'hyparquet-writer';
import { DatasetReadError } from '../quality/dataset-files.ts';
import { describeFileSystemError } from '../storage/file-system-errors.ts';
import { openInputFile, readInputFile } from '../storage/read-input-file.ts';
import type { ExportDialogue } from './export-dataset.ts';
import type { ExportWriter } from './export-writer.ts';
import { readDialogueWav } from './wav-info.ts';

/** A scalar `datasets` Value dtype and its Parquet physical type. */
type ScalarType = 'string' | 'int64' | 'float64' | 'bool';

/** One column: a scalar, the Audio feature, or a list of structs of scalars. */
export type HuggingFaceColumn =
  | { name: string; type: ScalarType }
  | { name: string; type: 'audio' }
  | { name: string; type: 'list'; fields: readonly { name: string; type: ScalarType }[] };

/**
 * The columns of every split, in order. Times are seconds (float64); `channel` is 0 or 1. In
 * `utterances`, `text` is what was spoken; an utterance cut off by a barge-in has `cut_off` true,
 * `cut_at` its cut time (seconds, the end of its audio) and `planned_text`; an uncut one has
 * `cut_off` false, `cut_at` null and `planned_text` equal to `text`.
 */
export const HUGGING_FACE_COLUMNS: readonly HuggingFaceColumn[] = [
  { name: 'audio', type: 'audio' },
  { name: 'id', type: 'string' },
  { name: 'language', type: 'string' },
  { name: 'dataset', type: 'string' },
  { name: 'split', type: 'string' },
  { name: 'test_small', type: 'bool' },
  { name: 'duration', type: 'float64' },
  { name: 'channel0_role', type: 'string' },
  { name: 'channel1_role', type: 'string' },
  { name: 'channel0_speaker', type: 'string' },
  { name: 'channel1_speaker', type: 'string' },
  {
    name: 'utterances',
    type: 'list',
    fields: [
      { name: 'channel', type: 'int64' },
      { name: 'role', type: 'string' },
      { name: 'kind', type: 'string' },
      { name: 'start', type: 'float64' },
      { name: 'end', type: 'float64' },
      { name: 'text', type: 'string' },
      { name: 'cut_off', type: 'bool' },
      { name: 'cut_at', type: 'float64' },
      { name: 'planned_text', type: 'string' },
    ],
  },
  {
    name: 'events',
    type: 'list',
    fields: [
      { name: 'channel', type: 'int64' },
      { name: 'event', type: 'string' },
      { name: 'start', type: 'float64' },
      { name: 'end', type: 'float64' },
    ],
  },
  {
    name: 'words',
    type: 'list',
    fields: [
      { name: 'channel', type: 'int64' },
      { name: 'start', type: 'float64' },
      { name: 'end', type: 'float64' },
      { name: 'word', type: 'string' },
    ],
  },
];

/** One row's values without its audio (column name -> value; numbers for int64 columns, null for a missing value). */
export type HuggingFaceRow = Record<string, unknown>;

/** datasets `config.MAX_ROW_GROUP_SIZE` ("100MB"): audio bytes per row group at most (a longer dialogue is a row group alone). */
export const MAX_ROW_GROUP_BYTES = 100_000_000;
/** datasets `config.MAX_SHARD_SIZE` ("500MB"): audio bytes per shard file at most (a longer dialogue is a shard alone). */
export const MAX_SHARD_BYTES = 500_000_000;

/** The `created_by` of every file: the writer library, without a version (the bytes stay the same across a patch update). */
const CREATED_BY = 'duplexsynth (hyparquet-writer)';

function scalarElement(name: string, type: ScalarType): SchemaElement {
  switch (type) {
    case 'string':
      return { name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' };
    case 'int64':
      return { name, type: 'INT64', repetition_type: 'OPTIONAL' };
    case 'float64':
      return { name, type: 'DOUBLE', repetition_type: 'OPTIONAL' };
    case 'bool':
      return { name, type: 'BOOLEAN', repetition_type: 'OPTIONAL' };
  }
}

/** The Parquet schema (flattened, depth first, as the footer stores it) of `columns`: every field optional, as pyarrow writes nullable fields. */
export function parquetSchema(columns: readonly HuggingFaceColumn[] = HUGGING_FACE_COLUMNS): SchemaElement[] {
  const schema: SchemaElement[] = [{ name: 'schema', num_children: columns.length }];
  for (const column of columns) {
    if (column.type === 'audio') {
      // datasets' Audio storage type: struct<bytes: binary, path: string>
      schema.push(
        { name: column.name, repetition_type: 'OPTIONAL', num_children: 2 },
        { name: 'bytes', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
        scalarElement('path', 'string'),
      );
    } else if (column.type === 'list') {
      schema.push(
        { name: column.name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', repetition_type: 'OPTIONAL', num_children: column.fields.length },
        ...column.fields.map((field) => scalarElement(field.name, field.type)),
      );
    } else {
      schema.push(scalarElement(column.name, column.type));
    }
  }
  return schema;
}

const valueFeature = (type: ScalarType) => ({ dtype: type, _type: 'Value' });

/**
 * The `datasets` features of `columns` as `Features.to_dict` writes them, with a list of structs as a
 * one-element JSON list (`[{...}]`), the form every `datasets` version reads (2 and 3 have no `List`
 * type; 4 and later read `[{...}]` as `List({...})`).
 */
export function datasetsFeatures(
  columns: readonly HuggingFaceColumn[] = HUGGING_FACE_COLUMNS,
): Record<string, unknown> {
  return Object.fromEntries(
    columns.map((column) => [
      column.name,
      column.type === 'audio'
        ? { _type: 'Audio' }
        : column.type === 'list'
          ? [Object.fromEntries(column.fields.map((field) => [field.name, valueFeature(field.type)]))]
          : valueFeature(column.type),
    ]),
  );
}

/** The card's `dataset_info.features` (the YAML list `Features._to_yaml_list` writes: `{name, dtype}` or `{name, list: [...]}`). */
export function datasetsYamlFeatures(
  columns: readonly HuggingFaceColumn[] = HUGGING_FACE_COLUMNS,
): Record<string, unknown>[] {
  return columns.map((column) =>
    column.type === 'audio'
      ? { name: column.name, dtype: 'audio' }
      : column.type === 'list'
        ? { name: column.name, list: column.fields.map((field) => ({ name: field.name, dtype: field.type })) }
        : { name: column.name, dtype: column.type },
  );
}

/** A dialogue with the size of its WAV, planned into shards and row groups. */
interface PlannedDialogue {
  dialogue: ExportDialogue;
  bytes: number;
}

/**
 * Checks every dialogue's WAV (present, readable, two channels) and splits the list into shards of
 * row groups, keeping the order: a shard holds at most `limits.shardBytes` of WAV bytes
 * ({@link MAX_SHARD_BYTES}), a row group at most `limits.rowGroupBytes` ({@link MAX_ROW_GROUP_BYTES}),
 * each at least one dialogue.
 * @returns shards, each a list of row groups, each a list of dialogues
 * @throws DatasetReadError naming the WAV file and the dialogue id when a WAV is missing, unreadable,
 *   not a WAV or not two-channel
 */
export async function planParquetShards(
  dialogues: readonly ExportDialogue[],
  limits: { shardBytes: number; rowGroupBytes: number } = {
    shardBytes: MAX_SHARD_BYTES,
    rowGroupBytes: MAX_ROW_GROUP_BYTES,
  },
): Promise<ExportDialogue[][][]> {
  const planned: PlannedDialogue[] = [];
  for (const dialogue of dialogues) planned.push({ dialogue, bytes: await checkDialogueWav(dialogue) });
  const group = <T extends { bytes: number }>(items: T[], limit: number): T[][] => {
    const groups: T[][] = [];
    let size = 0;
    for (const item of items) {
      if (groups.length === 0 || (size > 0 && size + item.bytes > limit)) {
        groups.push([]);
        size = 0;
      }
      groups.at(-1)!.push(item);
      size += item.bytes;
    }
    return groups;
  };
  return group(planned, limits.shardBytes).map((shard) =>
    group(shard, limits.rowGroupBytes).map((rowGroup) => rowGroup.map((item) => item.dialogue)),
  );
}

/**
 * Checks one dialogue's WAV for the huggingface export (both layouts), from its header: it exists, is
 * a WAV, has two channels, and holds all the data its header declares (a file cut short would load
 * as a shorter dialogue than its `duration` column says).
 * @returns the file's size in bytes
 * @throws DatasetReadError naming the WAV file and the dialogue id
 */
export async function checkDialogueWav(dialogue: ExportDialogue): Promise<number> {
  const file = dialogue.audioFile;
  const info = await readDialogueWav(file, dialogue, `the huggingface export's audio column`);
  if (info.channels !== 2)
    throw new DatasetReadError(
      `${file}: WAV of dialogue ${dialogue.id} has ${info.channels} channel(s); the huggingface export's audio column holds two-channel dialogues`,
    );
  const { handle, size } = await openInputFile(file); // the header was read from a regular file (wav-info.ts)
  await handle.close();
  return size;
}

/** The Hub's file name of shard `index` of `count` of `split` (`data/test-00000-of-00001.parquet`). */
export function parquetShardPath(split: string, index: number, count: number): string {
  return `data/${split}-${String(index).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.parquet`;
}

/** Converts the int64 fields of a row (numbers) to the bigints the Parquet writer takes. */
function columnValue(column: HuggingFaceColumn, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (column.type === 'int64') return BigInt(value as number);
  if (column.type !== 'list') return value;
  const int64Fields = column.fields.filter((field) => field.type === 'int64').map((field) => field.name);
  if (int64Fields.length === 0) return value;
  return (value as Record<string, unknown>[]).map((item) => {
    const copy = { ...item };
    for (const name of int64Fields)
      if (copy[name] !== null && copy[name] !== undefined) copy[name] = BigInt(copy[name] as number);
    return copy;
  });
}

/** Reads one dialogue's WAV for the audio column. @throws DatasetReadError naming the file and the dialogue id */
async function readAudio(dialogue: ExportDialogue): Promise<Uint8Array> {
  try {
    return await readInputFile(dialogue.audioFile);
  } catch (error) {
    throw new DatasetReadError(
      describeFileSystemError(
        error,
        dialogue.audioFile,
        `WAV of dialogue ${dialogue.id} (the huggingface export's audio column)`,
      ),
    );
  }
}

/**
 * Writes one shard at `relative` inside the export: its row groups in order, each one read, encoded
 * and handed to the file before the next one's WAVs are read.
 * @param rowOf the row of a dialogue without its audio (column name -> value)
 * @returns bytes written
 * @throws DatasetReadError naming the file and the dialogue id when a WAV cannot be read
 */
export async function writeParquetShard(
  writer: ExportWriter,
  relative: string,
  rowGroups: readonly ExportDialogue[][],
  rowOf: (dialogue: ExportDialogue) => HuggingFaceRow,
): Promise<number> {
  const bytes = new ByteWriter();
  const parquet = new ParquetWriter({
    writer: bytes,
    schema: parquetSchema(),
    createdBy: CREATED_BY,
    kvMetadata: [{ key: 'huggingface', value: JSON.stringify({ info: { features: datasetsFeatures() } }) }],
  });
  // hands over what the writer holds; the view is written out before the generator resumes, then reused
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (const rowGroup of rowGroups) {
      const rows = await Promise.all(
        rowGroup.map(async (dialogue): Promise<HuggingFaceRow> => ({
          ...rowOf(dialogue),
          audio: { bytes: await readAudio(dialogue), path: `${dialogue.id}.wav` },
        })),
      );
      const columnData: ColumnSource[] = HUGGING_FACE_COLUMNS.map((column) => ({
        name: column.name,
        data: rows.map((row) => columnValue(column, row[column.name])),
        // the WAV bytes: no dictionary attempt and no min/max statistics (meaningless for audio)
        ...(column.type === 'audio' ? { encoding: 'PLAIN' as const, statistics: false } : {}),
      }));
      // one write call, one row group (rowGroupSize: all rows given)
      await parquet.write({ columnData, rowGroupSize: rows.length });
      yield new Uint8Array(bytes.buffer, 0, bytes.index);
      bytes.index = 0;
    }
    await parquet.finish();
    yield new Uint8Array(bytes.buffer, 0, bytes.index);
  }
  return writer.writeChunks(relative, chunks());
}
