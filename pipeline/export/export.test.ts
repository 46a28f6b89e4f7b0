/**
 * Exports of the hand-written two-dialogue dataset (fixtures/tiny-dataset): golden lines for lhotse
 * and moshi-finetune written from those projects' documentation (fixtures/golden), lhotse's own
 * validation rules (lhotse/qa.py), the AudioFolder rules of Hugging Face `datasets`, the Parquet
 * export read back with hyparquet (pyarrow and `datasets` read it in export-consumers.test.ts), and round trips
 * through our own readers (RTTM: corpora/rttm.ts; the events tier of the TextGrid).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import tarStream from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRttm, toTwoChannelSegments } from '../../corpora/rttm.ts';
import { decodeTextGrid, parseTextGrid, textGridToReferenceRecording } from '../../corpora/textgrid.ts';
import { decodeWav, encodeWavPcm16 } from '../audio/wav.ts';
import { computeEvents, formatEventsLine, segmentsFromEvents, segmentsFromWords } from '../events/index.ts';
import type { BenchmarkEvent, Channel, ChannelEvents, ChannelSegments } from '../model/types.ts';
import { dialogueAudacityLabels, formatAudacityLabels } from './audacity.ts';
import { readExportDataset, type ExportDialogue } from './export-dataset.ts';
import { huggingFaceRow } from './huggingface.ts';
import { HUGGING_FACE_COLUMNS, parquetShardPath, planParquetShards, writeParquetShard } from './huggingface-parquet.ts';
import { rttmSpeakerLabels } from './rttm.ts';
import { EXPORT_MANIFEST_FILE, ExportWriter } from './export-writer.ts';
import { SHAR_FOLDER } from './lhotse-shar.ts';
import { mountTmpfs, tmpfsSkipReason } from '../storage/testing/tmpfs.ts';
import { BuildStoppedError, DiskFullError } from '../model/build-errors.ts';
import { defaultExportDirectory, EXPORT_FORMAT_NAMES, exportDataset } from './index.ts';
import { pythonFloat, pythonFloatText, pythonJson } from './python-json.ts';
import {
  copyExportFixture,
  cutTiny0002Answer,
  FULL_BAND_RATE,
  HIGH_TONE_HZ,
  SAMPLE_RATE,
} from './testing/export-fixture.ts';
import {
  coverDomain,
  dialogueTextGrid,
  eventsFromTiers,
  EVENT_TYPES,
  formatTextGrid,
  wordIntervals,
  ZERO_LENGTH_TIER,
} from './textgrid.ts';

const GOLDEN = path.join(import.meta.dirname, 'fixtures', 'golden');

let scratch: string;
let dataset: string;

/** Power of `samples` at `frequency` Hz (Goertzel), per sample. */
function tonePower(samples: Float32Array, sampleRate: number, frequency: number): number {
  const coefficient = 2 * Math.cos((2 * Math.PI * frequency) / sampleRate);
  let [previous, beforePrevious] = [0, 0];
  for (const sample of samples)
    [previous, beforePrevious] = [sample + coefficient * previous - beforePrevious, previous];
  return (previous ** 2 + beforePrevious ** 2 - coefficient * previous * beforePrevious) / samples.length ** 2;
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-export-test-'));
  dataset = await copyExportFixture(scratch);
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/**
 * The rows of a Parquet file as hyparquet (the writer's companion reader) reads them: int64 as
 * numbers, binary as bytes, strings as strings.
 */
async function readParquetRows(file: string): Promise<Record<string, any>[]> {
  const bytes = await readFile(file);
  const rows = await parquetReadObjects({
    file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    utf8: false,
  });
  const numbers = (value: unknown): unknown =>
    typeof value === 'bigint'
      ? Number(value)
      : value instanceof Uint8Array
        ? value
        : Array.isArray(value)
          ? value.map(numbers)
          : value !== null && typeof value === 'object'
            ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, numbers(item)]))
            : value;
  return rows.map((row) => numbers(row) as Record<string, any>);
}

const golden = async (name: string) =>
  (await readFile(path.join(GOLDEN, name), 'utf8')).replaceAll('{DATASET}', dataset);
const gunzipLines = async (file: string) => gunzipSync(await readFile(file)).toString('utf8');

describe('pythonJson', () => {
  it('writes what json.dumps(ensure_ascii=False) writes', () => {
    expect(
      pythonJson({ a: 1, b: pythonFloat(3), c: [pythonFloat(0.1), null, true], d: 'x"é\n\u0001', e: undefined }),
    ).toBe('{"a": 1, "b": 3.0, "c": [0.1, null, true], "d": "x\\"é\\n\\u0001"}');
    expect(pythonFloatText(24.521950113378686)).toBe('24.521950113378686');
    expect(pythonFloatText(-0)).toBe('0.0');
  });
  it('refuses a float written as an integer and exponent notation', () => {
    expect(() => pythonJson(0.5)).toThrow(/pythonFloat/);
    expect(() => pythonFloatText(1e-7)).toThrow(/exponent/);
  });
});

describe('readExportDataset', () => {
  it('reads utterances with the backchannels, words, speakers and splits', async () => {
    const read = await readExportDataset(dataset);
    expect(read.hasSplits).toBe(true);
    expect(read.dialogues.map((dialogue) => [dialogue.id, dialogue.split])).toEqual([
      ['tiny_0001', 'test'],
      ['tiny_0002', 'dev'],
    ]);
    const first = read.dialogues[0]!;
    expect(
      first.utterances.map((utterance) => [utterance.kind, utterance.channel, utterance.start, utterance.end]),
    ).toEqual([
      ['question', 1, 50, 160],
      ['answer', 0, 190, 350],
      ['backchannel', 1, 240, 270],
    ]);
    expect(first.words).toHaveLength(7);
  });
  it('takes test_other.jsonl as the dev part when there is no dev.jsonl', async () => {
    const copy = path.join(scratch, 'test-other');
    await cp(dataset, copy, { recursive: true });
    await rename(path.join(copy, 'dev.jsonl'), path.join(copy, 'test_other.jsonl'));
    const read = await readExportDataset(copy);
    expect(read.hasSplits).toBe(true);
    expect(read.dialogues.map((dialogue) => dialogue.split)).toEqual(['test', 'dev']);
  });
  it('names the file when a split lists an unknown dialogue', async () => {
    const copy = path.join(scratch, 'bad-split');
    await cp(dataset, copy, { recursive: true });
    await writeFile(path.join(copy, 'dev.jsonl'), '{"id": "missing_0009", "events": {"0": [], "1": []}}\n');
    await expect(readExportDataset(copy)).rejects.toThrow(/dev\.jsonl: lists missing_0009/);
  });
});

/**
 * A copy of the fixture dataset as a barge-in variant (tiny_bargein) in `scratch/{folder}`, where
 * tiny_0002's answer stopped after "Austen" at 2.9 s: metadata as the build writes it (the spoken text,
 * `cutOff` with the planned text), "did…" out of the alignment. Returns the variant's folder.
 */
async function makeBargeInVariant(folder: string): Promise<string> {
  const variant = path.join(scratch, folder, 'data', 'en', 'task', 'tiny_bargein');
  await cp(dataset, variant, { recursive: true });
  await cutTiny0002Answer(variant);
  return variant;
}

describe("a barge-in variant's cut-off answer", () => {
  let variant: string;
  beforeAll(async () => {
    variant = await makeBargeInVariant('variant-build');
  });

  it('reads the spoken text, with the planned text kept beside it; an uncut utterance has no cutOff', async () => {
    const read = await readExportDataset(variant);
    const answer = read.dialogues[1]!.utterances.find((utterance) => utterance.kind === 'answer')!;
    expect(answer).toMatchObject({
      text: 'Jane Austen',
      end: 290,
      cutOff: { plannedText: 'Jane Austen did…', unspokenWords: ['did…'] },
    });
    expect(read.dialogues[0]!.utterances.find((utterance) => utterance.kind === 'answer')).not.toHaveProperty('cutOff');
  });

  it('lhotse supervisions and the Hugging Face utterances column carry what was spoken, marked cut off with the planned text', async () => {
    await exportDataset(variant, 'lhotse', path.join(scratch, 'variant-lhotse'));
    const supervisions = (await gunzipLines(path.join(scratch, 'variant-lhotse', 'supervisions.jsonl.gz')))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const cut = supervisions.find(
      (supervision) => supervision.recording_id === 'tiny_0002' && supervision.custom.kind === 'answer',
    );
    expect(cut).toMatchObject({
      text: 'Jane Austen',
      duration: 1.0,
      custom: { cut_off: true, cut_at: 2.9, planned_text: 'Jane Austen did…' },
    });
    expect(cut.alignment.word.map((word: unknown[]) => word[0])).toEqual(['Jane', 'Austen']);
    const whole = supervisions.find(
      (supervision) => supervision.recording_id === 'tiny_0001' && supervision.custom.kind === 'answer',
    );
    expect(whole.text).toBe('Jane Austen did…');
    expect(whole.custom).not.toHaveProperty('cut_off');

    await exportDataset(variant, 'huggingface', path.join(scratch, 'variant-hf'));
    const [row] = await readParquetRows(path.join(scratch, 'variant-hf', 'data', 'validation-00000-of-00001.parquet'));
    expect(row!.utterances.find((utterance: { kind: string }) => utterance.kind === 'answer')).toEqual(
      expect.objectContaining({
        text: 'Jane Austen',
        end: 2.9,
        cut_off: true,
        cut_at: 2.9,
        planned_text: 'Jane Austen did…',
      }),
    );
    const [test] = await readParquetRows(path.join(scratch, 'variant-hf', 'data', 'test-00000-of-00001.parquet'));
    expect(test!.utterances.find((utterance: { kind: string }) => utterance.kind === 'answer')).toEqual(
      expect.objectContaining({
        text: 'Jane Austen did…',
        cut_off: false,
        cut_at: null,
        planned_text: 'Jane Austen did…',
      }),
    );

    // the audiofolder layout: the cut is the utterance's end (no null-able cut_at there)
    await exportDataset(variant, 'huggingface', path.join(scratch, 'variant-hf-audiofolder'), {
      huggingFaceLayout: 'audiofolder',
    });
    const line = JSON.parse(
      (await readFile(path.join(scratch, 'variant-hf-audiofolder', 'validation', 'metadata.jsonl'), 'utf8')).trim(),
    );
    expect(line.utterances.find((utterance: { kind: string }) => utterance.kind === 'answer')).toMatchObject({
      text: 'Jane Austen',
      end: 2.9,
      cut_off: true,
      planned_text: 'Jane Austen did…',
    });
    const testLine = JSON.parse(
      (await readFile(path.join(scratch, 'variant-hf-audiofolder', 'test', 'metadata.jsonl'), 'utf8')).trim(),
    );
    expect(testLine.utterances.find((utterance: { kind: string }) => utterance.kind === 'answer')).toMatchObject({
      text: 'Jane Austen did…',
      cut_off: false,
      planned_text: 'Jane Austen did…',
    });
  });
});

describe('lhotse export', () => {
  let out: string;
  beforeAll(async () => {
    out = path.join(scratch, 'lhotse');
    await exportDataset(dataset, 'lhotse', out);
  });

  it('writes the golden lines (lhotse to_dict + save_to_jsonl), sources relative to the export folder', async () => {
    // {DATASET} is the dataset folder, here seen from the export folder (lhotse: with_path_prefix(export folder))
    const recordingsGolden = (await golden('lhotse-recordings.jsonl')).replaceAll(dataset, path.relative(out, dataset));
    expect(await gunzipLines(path.join(out, 'recordings.jsonl.gz'))).toBe(recordingsGolden);
    expect(await gunzipLines(path.join(out, 'supervisions.jsonl.gz'))).toBe(await golden('lhotse-supervisions.jsonl'));
  });

  it("passes lhotse's validate_recordings_and_supervisions rules and uses only dataclass fields", async () => {
    const recordings = (await gunzipLines(path.join(out, 'recordings.jsonl.gz')))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const supervisions = (await gunzipLines(path.join(out, 'supervisions.jsonl.gz')))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const recordingFields = ['id', 'sources', 'sampling_rate', 'num_samples', 'duration', 'channel_ids', 'transforms'];
    const sourceFields = ['type', 'channels', 'source', 'video'];
    const supervisionFields = [
      'id',
      'recording_id',
      'start',
      'duration',
      'channel',
      'text',
      'language',
      'speaker',
      'gender',
      'custom',
      'alignment',
    ];
    const byId = new Map<string, { duration: number; channel_ids: number[] }>();
    for (const recording of recordings) {
      for (const key of Object.keys(recording)) expect(recordingFields).toContain(key);
      for (const source of recording.sources)
        for (const key of Object.keys(source)) expect(sourceFields).toContain(key);
      expect(recording.duration).toBeGreaterThan(0);
      expect(Math.abs(recording.num_samples / recording.sampling_rate - recording.duration)).toBeLessThanOrEqual(0.025);
      const wav = decodeWav(
        await readFile(path.resolve(out, recording.sources[0].source)),
        recording.sources[0].source,
      );
      expect([wav.channels.length, wav.channels[0]!.length]).toEqual([
        recording.channel_ids.length,
        recording.num_samples,
      ]);
      byId.set(recording.id, recording);
    }
    for (const supervision of supervisions) {
      for (const key of Object.keys(supervision)) expect(supervisionFields).toContain(key);
      const recording = byId.get(supervision.recording_id)!;
      expect(recording).toBeDefined();
      expect(supervision.duration).toBeGreaterThan(0);
      expect(supervision.start).toBeGreaterThanOrEqual(-1e-3);
      expect(supervision.start + supervision.duration).toBeLessThanOrEqual(recording.duration + 1e-3);
      expect(recording.channel_ids).toContain(supervision.channel);
      for (const [, start, duration] of supervision.alignment.word) {
        expect(start).toBeGreaterThanOrEqual(supervision.start);
        expect(start + duration).toBeLessThanOrEqual(supervision.start + supervision.duration + 1e-9);
      }
    }
  });

  it('is byte-identical when run again and records every file in duplexsynth-export.json', async () => {
    const again = path.join(scratch, 'lhotse-again');
    await exportDataset(dataset, 'lhotse', again);
    for (const name of [
      'recordings.jsonl.gz',
      'supervisions.jsonl.gz',
      'events.jsonl.gz',
      'cuts.jsonl.gz',
      EXPORT_MANIFEST_FILE,
    ]) {
      expect(await readFile(path.join(again, name))).toEqual(await readFile(path.join(out, name)));
    }
    const marker = JSON.parse(await readFile(path.join(out, EXPORT_MANIFEST_FILE), 'utf8'));
    expect(Object.keys(marker.files)).toEqual([
      'cuts.jsonl.gz',
      'events.jsonl.gz',
      'recordings.jsonl.gz',
      'supervisions.jsonl.gz',
    ]);
    expect(marker.source).toMatchObject({ language: 'en', dataset: 'tiny' });
  });
});

describe('lhotse export: events, copied audio, a moved export', () => {
  it('writes every benchmark event as a supervision with duration > 0 (lhotse qa), an overlapping TURN_SHIFT forward and marked', async () => {
    const out = path.join(scratch, 'lhotse-events');
    await exportDataset(dataset, 'lhotse', out);
    const events = (await gunzipLines(path.join(out, 'events.jsonl.gz')))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const read = await readExportDataset(dataset);
    expect(events.filter((event) => event.recording_id === 'tiny_0001')).toHaveLength(
      read.dialogues[0]!.events[0].length + read.dialogues[0]!.events[1].length,
    );
    for (const event of events) {
      expect(event.duration).toBeGreaterThan(0);
      expect(Object.keys(event).sort()).toEqual([
        'channel',
        'custom',
        'duration',
        'id',
        'recording_id',
        'speaker',
        'start',
      ]);
    }
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    const turns = events.filter(
      (event) => event.recording_id === 'tiny_0001' && event.channel === 1 && event.custom.event === 'TURN',
    );
    expect(turns.map((event) => [event.start, event.duration])).toEqual([[0.5, 1.1]]);
  });

  it('--copy-audio: a self-contained export that still loads after the build folder is gone', async () => {
    const build = path.join(scratch, 'lhotse-moved-build');
    await cp(path.join(scratch, 'build'), build, { recursive: true });
    const out = path.join(build, 'exports', 'lhotse');
    await exportDataset(path.join(build, 'data', 'en', 'task', 'tiny'), 'lhotse', out, { copyAudio: true });
    const moved = path.join(scratch, 'lhotse-moved-export');
    await rename(out, moved);
    await rm(build, { recursive: true, force: true });
    for (const line of (await gunzipLines(path.join(moved, 'recordings.jsonl.gz'))).trim().split('\n')) {
      const recording = JSON.parse(line);
      expect(recording.sources[0].source).toBe(`audio/${recording.id}.wav`);
      const wav = decodeWav(await readFile(path.join(moved, recording.sources[0].source)), recording.id);
      expect(wav.channels[0]!.length).toBe(recording.num_samples);
    }
  });
});

/** The members of a tar file in order: name, header and bytes (tar-stream's extractor). */
async function tarMembers(file: string): Promise<{ name: string; header: tarStream.Header; data: Buffer }[]> {
  const extract = tarStream.extract();
  const members: { name: string; header: tarStream.Header; data: Buffer }[] = [];
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk) => chunks.push(chunk as Buffer));
      stream.on('end', () => {
        members.push({ name: header.name, header, data: Buffer.concat(chunks) });
        next();
      });
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  extract.end(await readFile(file));
  await done;
  return members;
}

const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

describe('lhotse cuts.jsonl.gz and the lhotse-shar export', () => {
  let plain: string;
  let shar: string;
  beforeAll(async () => {
    plain = path.join(scratch, 'lhotse-cuts');
    shar = path.join(scratch, 'lhotse-shar');
    await exportDataset(dataset, 'lhotse', plain);
    await exportDataset(dataset, 'lhotse-shar', shar, { shardSize: 1 });
  });

  it("cuts.jsonl.gz: one MultiCut per dialogue over its whole recording, with that recording's lines, its supervisions, its events and its split", async () => {
    const cuts = jsonLines(await gunzipLines(path.join(plain, 'cuts.jsonl.gz')));
    const recordings = jsonLines(await gunzipLines(path.join(plain, 'recordings.jsonl.gz')));
    const supervisions = jsonLines(await gunzipLines(path.join(plain, 'supervisions.jsonl.gz')));
    const events = jsonLines(await gunzipLines(path.join(plain, 'events.jsonl.gz')));
    expect(cuts.map((cut) => cut.id)).toEqual(['tiny_0001', 'tiny_0002']);
    for (const cut of cuts) {
      // the fields of lhotse's MultiCut dataclass, in its order, and the type tag deserialize_item reads
      expect(Object.keys(cut)).toEqual([
        'id',
        'start',
        'duration',
        'channel',
        'supervisions',
        'recording',
        'custom',
        'type',
      ]);
      const recording = recordings.find((line) => line.id === cut.id);
      expect(cut).toMatchObject({ start: 0, duration: recording.duration, channel: [0, 1], type: 'MultiCut' });
      expect(cut.recording).toEqual(recording);
      expect(cut.supervisions).toEqual(supervisions.filter((line) => line.recording_id === cut.id));
      expect(cut.custom.events).toEqual(events.filter((line) => line.recording_id === cut.id));
    }
    expect(cuts.map((cut) => cut.custom.split)).toEqual(['test', 'dev']);
    // written as Python writes floats: "start": 0.0
    expect(
      (await gunzipLines(path.join(plain, 'cuts.jsonl.gz'))).startsWith(
        '{"id": "tiny_0001", "start": 0.0, "duration": 4.0, "channel": [0, 1], "supervisions": [',
      ),
    ).toBe(true);
  });

  it('lhotse-shar: shar/ holds cuts.NNNNNN.jsonl.gz and recording.NNNNNN.tar per shard, the marker outside (lhotse takes every file of in_dir as a field)', async () => {
    expect((await readdir(shar)).sort()).toEqual([EXPORT_MANIFEST_FILE, SHAR_FOLDER]);
    expect((await readdir(path.join(shar, SHAR_FOLDER))).sort()).toEqual([
      'cuts.000000.jsonl.gz',
      'cuts.000001.jsonl.gz',
      'recording.000000.tar',
      'recording.000001.tar',
    ]);
    const marker = JSON.parse(await readFile(path.join(shar, EXPORT_MANIFEST_FILE), 'utf8'));
    expect(marker).toMatchObject({
      format: 'lhotse-shar',
      shards: 2,
      shardSize: 1,
      cuts: 2,
      audio: { fullBandDialogues: 2, benchmarkAudioDialogues: 0, sampleRates: [FULL_BAND_RATE] },
    });
    const whole = path.join(scratch, 'lhotse-shar-one-shard');
    await exportDataset(dataset, 'lhotse-shar', whole);
    expect((await readdir(path.join(whole, SHAR_FOLDER))).sort()).toEqual([
      'cuts.000000.jsonl.gz',
      'recording.000000.tar',
    ]);
    expect(
      jsonLines(await gunzipLines(path.join(whole, SHAR_FOLDER, 'cuts.000000.jsonl.gz'))).map((cut) => cut.id),
    ).toEqual(['tiny_0001', 'tiny_0002']);
  });

  it("lhotse-shar: each tar holds {id}.wav (the full-band master's bytes) then {id}.json (the recording with a shar placeholder source); the cut is cuts.jsonl.gz's at the master's rate", async () => {
    const plainCuts = jsonLines(await gunzipLines(path.join(plain, 'cuts.jsonl.gz')));
    for (const [index, id] of ['tiny_0001', 'tiny_0002'].entries()) {
      const number = String(index).padStart(6, '0');
      const members = await tarMembers(path.join(shar, SHAR_FOLDER, `recording.${number}.tar`));
      expect(members.map((member) => member.name)).toEqual([`${id}.wav`, `${id}.json`]);
      for (const { header } of members) {
        // what Python's TarInfo gives when lhotse's writer sets only name and size
        expect({
          type: header.type,
          mode: header.mode,
          uid: header.uid,
          gid: header.gid,
          mtime: header.mtime?.getTime(),
        }).toEqual({ type: 'file', mode: 0o644, uid: 0, gid: 0, mtime: 0 });
      }
      expect(members[0]!.data).toEqual(await readFile(path.join(dataset, 'audio_fullband', `${id}.wav`)));
      const recording = {
        id,
        sources: [{ type: 'shar', channels: [0, 1], source: '' }],
        sampling_rate: FULL_BAND_RATE,
        num_samples: 4 * FULL_BAND_RATE,
        duration: 4.0,
        channel_ids: [0, 1],
      };
      expect(members[1]!.data.toString('utf8')).toBe(`${pythonJson({ ...recording, duration: pythonFloat(4) })}\n`);
      const [cut] = jsonLines(await gunzipLines(path.join(shar, SHAR_FOLDER, `cuts.${number}.jsonl.gz`)));
      expect(cut.recording).toEqual(recording);
      expect({ ...cut, recording: null }).toEqual({ ...plainCuts[index], recording: null });
    }
  });

  it('lhotse-shar: the 16 kHz files when the dataset has no full-band master; byte-identical again; a bad WAV or shard size leaves nothing behind', async () => {
    const again = path.join(scratch, 'lhotse-shar-again');
    await exportDataset(dataset, 'lhotse-shar', again, { shardSize: 1 });
    for (const name of [
      'recording.000000.tar',
      'recording.000001.tar',
      'cuts.000000.jsonl.gz',
      'cuts.000001.jsonl.gz',
    ]) {
      expect(await readFile(path.join(again, SHAR_FOLDER, name))).toEqual(
        await readFile(path.join(shar, SHAR_FOLDER, name)),
      );
    }
    expect(await readFile(path.join(again, EXPORT_MANIFEST_FILE))).toEqual(
      await readFile(path.join(shar, EXPORT_MANIFEST_FILE)),
    );

    const narrow = path.join(scratch, 'shar-no-master', 'data', 'en', 'task', 'tiny');
    await cp(dataset, narrow, { recursive: true });
    await rm(path.join(narrow, 'audio_fullband'), { recursive: true });
    const manifest = JSON.parse(await readFile(path.join(narrow, 'manifest.json'), 'utf8'));
    delete manifest.fullBand;
    await writeFile(path.join(narrow, 'manifest.json'), JSON.stringify(manifest));
    const out = path.join(scratch, 'shar-no-master-export');
    await exportDataset(narrow, 'lhotse-shar', out);
    const members = await tarMembers(path.join(out, SHAR_FOLDER, 'recording.000000.tar'));
    expect(members[0]!.data).toEqual(await readFile(path.join(narrow, 'audio', 'tiny_0001.wav')));
    expect(JSON.parse(members[1]!.data.toString('utf8')).sampling_rate).toBe(SAMPLE_RATE);

    await writeFile(path.join(narrow, 'audio', 'tiny_0002.wav'), 'not a wav');
    const broken = path.join(scratch, 'shar-broken');
    await expect(exportDataset(narrow, 'lhotse-shar', broken)).rejects.toThrow(/tiny_0002\.wav/);
    await expect(exportDataset(dataset, 'lhotse-shar', broken, { shardSize: 0 })).rejects.toThrow(/shard size 0/);
    expect((await readdir(scratch)).filter((name) => name.startsWith('shar-broken'))).toEqual([]);
  });
});

it('refuses a WAV cut short (its header declares more data than the file holds) in the lhotse, lhotse-shar and moshi-finetune exports, naming the file and the dialogue, and writes nothing', async () => {
  // a copy that did not finish: lhotse's recording would be shorter than its supervisions (lhotse's
  // validate rejects it), moshi-finetune's WAV shorter than its alignments, both with exit code 0
  // cut after 2000 bytes (whole frames) or 2001 (in the middle of a frame: cut short too, not a malformed file)
  const cases: [string, 'lhotse' | 'lhotse-shar' | 'moshi-finetune', string, { copyAudio?: boolean }, number][] = [
    ['lhotse', 'lhotse', 'audio', {}, 2000],
    ['lhotse-copy', 'lhotse', 'audio', { copyAudio: true }, 2001],
    ['shar', 'lhotse-shar', 'audio_fullband', {}, 2000],
    ['moshi', 'moshi-finetune', 'audio_fullband', {}, 2001],
  ];
  for (const [name, format, folder, options, cutBytes] of cases) {
    const broken = path.join(scratch, `cut-short-${name}`);
    await cp(dataset, broken, { recursive: true });
    const wav = path.join(broken, folder, 'tiny_0002.wav');
    await writeFile(wav, (await readFile(wav)).subarray(0, cutBytes));
    const target = path.join(scratch, `cut-short-${name}-export`);
    const error = await exportDataset(broken, format, target, options).then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    expect(error, `${name}: exported with no error`).toBeInstanceOf(Error);
    expect(error?.message, name).toMatch(
      new RegExp(
        `^${wav.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: WAV of dialogue tiny_0002 ends before the data its header declares`,
      ),
    );
    expect(error?.message).not.toContain('\n');
    expect(error?.message.split(wav), `${name}: the file named once`).toHaveLength(2);
    expect(
      (await readdir(scratch)).filter((entry) => entry.startsWith(`cut-short-${name}-export`)),
      name,
    ).toEqual([]);
  }
});

it('an export stopped mid-way (Ctrl-C: its signal aborted) ends with one line, writes nothing and leaves an earlier export of the same format as it was, in every format', async () => {
  for (const format of EXPORT_FORMAT_NAMES) {
    const target = path.join(scratch, `stopped-${format}`);
    await exportDataset(dataset, format, target);
    const before = new Map<string, string>();
    for (const file of (await readdir(target, { recursive: true, withFileTypes: true })).filter((entry) =>
      entry.isFile(),
    )) {
      const full = path.join(file.parentPath, file.name);
      before.set(path.relative(target, full), (await readFile(full)).toString('base64'));
    }
    // aborted from the second file on: the writer has started (its .partial folder exists) when it stops
    let checks = 0;
    const signal = {
      get aborted() {
        checks += 1;
        return checks > 1;
      },
    } as AbortSignal;
    const error = await exportDataset(dataset, format, target, { signal }).then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    expect(error, format).toBeInstanceOf(BuildStoppedError);
    expect(error?.message, format).toBe(
      `${target}: export stopped (interrupted): its unfinished files are removed and the folder is as it was`,
    );
    expect(checks, `${format}: the export got as far as a second file`).toBeGreaterThan(1);
    expect(existsSync(`${target}.partial`), format).toBe(false);
    const after = new Map<string, string>();
    for (const file of (await readdir(target, { recursive: true, withFileTypes: true })).filter((entry) =>
      entry.isFile(),
    )) {
      const full = path.join(file.parentPath, file.name);
      after.set(path.relative(target, full), (await readFile(full)).toString('base64'));
    }
    expect(after, format).toEqual(before);
    // a first export stopped the same way leaves no folder at all
    const fresh = path.join(scratch, `stopped-fresh-${format}`);
    await expect(exportDataset(dataset, format, fresh, { signal: AbortSignal.abort() }), format).rejects.toThrow(
      BuildStoppedError,
    );
    expect(
      (await readdir(scratch)).filter((entry) => entry.startsWith(`stopped-fresh-${format}`)),
      format,
    ).toEqual([]);
  }
});

const tmpfsSkip = tmpfsSkipReason();

it.skipIf(tmpfsSkip !== undefined)(
  `lhotse-shar on a disk too small for a shard: DiskFullError naming the shard, no export and no .partial left${tmpfsSkip ? ` (skipped: ${tmpfsSkip})` : ''}`,
  async () => {
    const disk = mountTmpfs(512 * 1024); // the shard of two 4 s 24 kHz stereo masters is 770 kB
    try {
      const out = path.join(disk.directory, 'shar');
      const error = await exportDataset(dataset, 'lhotse-shar', out).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(DiskFullError);
      expect((error as Error).message).toMatch(/shar\.partial\/shar\/recording\.000000\.tar: no space left/);
      expect(await readdir(disk.directory)).toEqual([]);
    } finally {
      disk.unmount();
    }
  },
);

/** The Python that runs lhotse (Debian's, with python3-torch, python3-soundfile, python3-audioread ...). */
const PYTHON = process.env.DUPLEXSYNTH_PYTHON ?? '/usr/bin/python3';
/** A lhotse source tree (lhotse-speech/lhotse) for Python's path, when lhotse is not installed. */
const LHOTSE_SOURCE = process.env.DUPLEXSYNTH_LHOTSE_SOURCE;

/** Why lhotse cannot run here, or undefined when it can (module lookup only: importing torch takes seconds). */
function lhotseSkipReason(): string | undefined {
  const probe = spawnSync(
    PYTHON,
    [
      '-c',
      "import importlib.util, sys; sys.exit(0 if all(importlib.util.find_spec(m) for m in ('lhotse', 'torch', 'soundfile', 'numpy')) else 1)",
    ],
    {
      encoding: 'utf8',
      env: { ...process.env, PYTHONPATH: LHOTSE_SOURCE ?? process.env.PYTHONPATH ?? '' },
    },
  );
  if (probe.error) return `no ${PYTHON}`;
  if (probe.status !== 0) {
    return `lhotse (or torch, soundfile, numpy) is not importable by ${PYTHON}: lhotse comes from PyPI only, which this project's machines and CI cannot reach; set DUPLEXSYNTH_LHOTSE_SOURCE to a lhotse source tree to run it`;
  }
  return undefined;
}
const lhotseSkip = lhotseSkipReason();

/**
 * Runs fixtures/lhotse-load.py on a lhotse and a lhotse-shar export and returns its JSON summary (its
 * last stdout line), after checking it printed no error and exited 0.
 */
function runLhotseFixture(lhotse: string, shar: string) {
  const run = spawnSync(PYTHON, [path.join(import.meta.dirname, 'fixtures', 'lhotse-load.py'), lhotse, shar], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: LHOTSE_SOURCE ?? process.env.PYTHONPATH ?? '' },
  });
  expect(run.stderr.split('\n').filter((line) => /Error|assert/.test(line))).toEqual([]);
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!);
}

describe.skipIf(lhotseSkip !== undefined)(
  `lhotse itself loads the exports${lhotseSkip ? ` (skipped: ${lhotseSkip})` : ''}`,
  () => {
    it('loads, validates with read_data, writes back the same lines, and reads the Shar audio as the full-band master (fixtures/lhotse-load.py)', async () => {
      const lhotse = path.join(scratch, 'lhotse-for-lhotse');
      const shar = path.join(scratch, 'lhotse-shar-for-lhotse');
      await exportDataset(dataset, 'lhotse', lhotse);
      await exportDataset(dataset, 'lhotse-shar', shar, { shardSize: 1 });
      const summary = runLhotseFixture(lhotse, shar);
      const read = await readExportDataset(dataset);
      expect(summary.types).toEqual({
        recordings: 'RecordingSet',
        supervisions: 'SupervisionSet',
        events: 'SupervisionSet',
        cuts: 'CutSet',
      });
      expect(summary.counts).toEqual({
        recordings: 2,
        supervisions: read.dialogues.reduce((sum, dialogue) => sum + dialogue.utterances.length, 0),
        events: read.dialogues.reduce(
          (sum, dialogue) => sum + dialogue.events[0].length + dialogue.events[1].length,
          0,
        ),
        cuts: 2,
      });
      expect(
        summary.cuts.map(
          (cut: { id: string; type: string; samplingRate: number; audioShape: number[]; split: string }) => [
            cut.id,
            cut.type,
            cut.samplingRate,
            cut.audioShape,
            cut.split,
          ],
        ),
      ).toEqual([
        ['tiny_0001', 'MultiCut', SAMPLE_RATE, [2, 4 * SAMPLE_RATE], 'test'],
        ['tiny_0002', 'MultiCut', SAMPLE_RATE, [2, 4 * SAMPLE_RATE], 'dev'],
      ]);
      expect(summary.cuts[0].words).toBe(read.dialogues[0]!.words.length);
      expect(summary.withPathPrefix).toEqual([
        [2, 4 * SAMPLE_RATE],
        [2, 4 * SAMPLE_RATE],
      ]);
      expect(summary.shar).toEqual([
        { id: 'tiny_0001', samplingRate: FULL_BAND_RATE, audioShape: [2, 4 * FULL_BAND_RATE], source: 'memory' },
        { id: 'tiny_0002', samplingRate: FULL_BAND_RATE, audioShape: [2, 4 * FULL_BAND_RATE], source: 'memory' },
      ]);
      expect(summary.sharShards).toBe(2);
      expect(summary.lhotseWarnings).toEqual([]);
    });

    it("loads a barge-in variant: the cut-off answer's supervision ends at the cut, with its spoken words and the planned text beside", async () => {
      const variant = await makeBargeInVariant('variant-for-lhotse');
      const lhotse = path.join(scratch, 'variant-lhotse-for-lhotse');
      const shar = path.join(scratch, 'variant-lhotse-shar-for-lhotse');
      await exportDataset(variant, 'lhotse', lhotse);
      await exportDataset(variant, 'lhotse-shar', shar, { shardSize: 1 });
      const summary = runLhotseFixture(lhotse, shar);
      const read = await readExportDataset(variant);
      expect(
        summary.cuts.map((cut: { id: string; cutOff: number; words: number }) => [cut.id, cut.cutOff, cut.words]),
      ).toEqual(
        read.dialogues.map((dialogue) => [
          dialogue.id,
          dialogue.utterances.filter((utterance) => utterance.cutOff).length,
          dialogue.words.length,
        ]),
      );
      expect(summary.cuts[1].cutOff).toBe(1);
      expect(summary.shar.map((cut: { id: string }) => cut.id)).toEqual(['tiny_0001', 'tiny_0002']);
      expect(summary.lhotseWarnings).toEqual([]);
    });
  },
);

describe('moshi-finetune export', () => {
  let out: string;
  beforeAll(async () => {
    out = path.join(scratch, 'moshi');
    await exportDataset(dataset, 'moshi-finetune', out);
  });

  it('writes the README layout: {path, duration} lines and the annotate.py alignment JSON', async () => {
    expect(await readFile(path.join(out, 'tiny.jsonl'), 'utf8')).toBe(await golden('moshi-finetune.jsonl'));
    expect(await readFile(path.join(out, 'data_stereo', 'tiny_0001.json'), 'utf8')).toBe(
      await golden('moshi-finetune-tiny_0001.json'),
    );
  });

  it("takes the full-band master (24 kHz, the TTS's rate) instead of the 16 kHz benchmark audio", async () => {
    const audio = decodeWav(await readFile(path.join(out, 'data_stereo', 'tiny_0001.wav')), 'moshi wav');
    const benchmark = decodeWav(await readFile(path.join(dataset, 'audio', 'tiny_0001.wav')), 'benchmark wav');
    // the 10 kHz tone is only in the master: its power there is that of a 0.1 amplitude sine over the words (~1/4 of the time)
    expect(tonePower(audio.channels[0]!, FULL_BAND_RATE, HIGH_TONE_HZ)).toBeGreaterThan(1e-4);
    expect(tonePower(benchmark.channels[0]!, SAMPLE_RATE, HIGH_TONE_HZ - SAMPLE_RATE)).toBeLessThan(1e-8);
    // the master is at 24 kHz already: copied sample for sample, not resampled
    const master = decodeWav(await readFile(path.join(dataset, 'audio_fullband', 'tiny_0001.wav')), 'master');
    expect(audio.channels[1]).toEqual(master.channels[1]);
    const marker = JSON.parse(await readFile(path.join(out, EXPORT_MANIFEST_FILE), 'utf8'));
    expect(JSON.stringify(marker)).toContain('"fullBandDialogues":2');
  });

  it('resamples the 16 kHz files when the dataset has no full-band master', async () => {
    const copy = path.join(scratch, 'no-master');
    await cp(dataset, copy, { recursive: true });
    const manifest = JSON.parse(await readFile(path.join(copy, 'manifest.json'), 'utf8'));
    delete manifest.fullBand;
    await writeFile(path.join(copy, 'manifest.json'), JSON.stringify(manifest));
    const target = path.join(scratch, 'moshi-no-master');
    await exportDataset(copy, 'moshi-finetune', target);
    const audio = decodeWav(await readFile(path.join(target, 'data_stereo', 'tiny_0001.wav')), 'moshi wav');
    expect(audio.sampleRate).toBe(24_000);
    expect(tonePower(audio.channels[0]!, 24_000, HIGH_TONE_HZ)).toBeLessThan(1e-8);
  });

  it('writes stereo 24 kHz WAVs with the system on the left and the user on the right', async () => {
    const audio = decodeWav(await readFile(path.join(out, 'data_stereo', 'tiny_0001.wav')), 'moshi wav');
    expect(audio.sampleRate).toBe(24_000);
    expect(audio.channels).toHaveLength(2);
    const energy = (channel: number, from: number, to: number) => {
      let sum = 0;
      for (let index = Math.round(from * 24_000); index < Math.round(to * 24_000); index++)
        sum += audio.channels[channel]![index]! ** 2;
      return sum;
    };
    // 2.0-2.3 s: only the system speaks (word "Jane"); 0.9-1.1 s: only the user ("wrote")
    expect(energy(0, 2.0, 2.3)).toBeGreaterThan(100 * energy(1, 2.0, 2.3));
    expect(energy(1, 0.9, 1.1)).toBeGreaterThan(100 * energy(0, 0.9, 1.1));
    const line = JSON.parse((await readFile(path.join(out, 'tiny.jsonl'), 'utf8')).split('\n')[0]!);
    expect(line.duration).toBe(audio.channels[0]!.length / 24_000);
  });

  it('writes the alignments sorted by start, as the loader binary-searches them', async () => {
    const { alignments } = JSON.parse(await readFile(path.join(out, 'data_stereo', 'tiny_0001.json'), 'utf8')) as {
      alignments: [string, [number, number], string][];
    };
    const starts = alignments.map((item) => item[1][0]);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(alignments.filter((item) => item[2] === 'SPEAKER_MAIN').map((item) => item[0])).toEqual([
      'Jane',
      'Austen',
      'did…',
    ]);
  });
});

/** A kyutai-labs/moshi-finetune source tree (its data code needs sphn and moshi, which Debian does not have). */
const MOSHI_FINETUNE_SOURCE = process.env.DUPLEXSYNTH_MOSHI_FINETUNE_SOURCE;
const moshiFinetuneSkip =
  MOSHI_FINETUNE_SOURCE === undefined || !existsSync(path.join(MOSHI_FINETUNE_SOURCE, 'finetune', 'data', 'dataset.py'))
    ? 'no moshi-finetune source tree: set DUPLEXSYNTH_MOSHI_FINETUNE_SOURCE to a kyutai-labs/moshi-finetune checkout (it is not a Debian or npm package)'
    : spawnSync(
          PYTHON,
          [
            '-c',
            "import importlib.util, sys; sys.exit(0 if all(importlib.util.find_spec(m) for m in ('soundfile', 'torch', 'sentencepiece')) else 1)",
          ],
          { encoding: 'utf8' },
        ).status === 0
      ? undefined
      : `${PYTHON} cannot import soundfile, torch and sentencepiece (the Interleaver's; pip install them into a venv and set DUPLEXSYNTH_PYTHON)`;

describe.skipIf(moshiFinetuneSkip !== undefined)(
  `moshi-finetune's data code reads the export${moshiFinetuneSkip ? ` (skipped: ${moshiFinetuneSkip})` : ''}`,
  () => {
    it("finds the jsonl from the export folder, reads 24 kHz stereo of the stated duration from another working folder, its binary search windows take every word once, and the Interleaver's text stream holds only the main speaker's words (fixtures/moshi-finetune-load.py)", async () => {
      const out = path.join(scratch, 'moshi-for-moshi-finetune');
      await exportDataset(dataset, 'moshi-finetune', out);
      const run = spawnSync(
        PYTHON,
        [path.join(import.meta.dirname, 'fixtures', 'moshi-finetune-load.py'), MOSHI_FINETUNE_SOURCE!, out],
        { encoding: 'utf8' },
      );
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      const summary = JSON.parse(run.stdout.trim());
      const read = await readExportDataset(dataset);
      expect(summary.jsonl).toEqual(['tiny.jsonl']);
      expect(
        summary.files.map((file: { path: string; frames: number; duration: number }) => [
          file.path,
          file.frames,
          file.duration,
        ]),
      ).toEqual([
        ['data_stereo/tiny_0001.wav', 4 * 24_000, 4.0],
        ['data_stereo/tiny_0002.wav', 4 * 24_000, 4.0],
      ]);
      for (const [index, dialogue] of read.dialogues.entries()) {
        expect(summary.files[index].words).toBe(dialogue.words.length);
        // the Interleaver's text stream (keep_main_only) holds the main words' tokens, checked one by one in the fixture
        expect(summary.files[index].textTokens).toBeGreaterThan(0);
        const system = read.channels!.system;
        expect(summary.files[index].mainWords).toEqual(
          [...dialogue.words]
            .filter((word) => word.channel === system)
            .sort((a, b) => a.start - b.start)
            .map((word) => word.word),
        );
      }
    });
  },
);

describe('huggingface export (Parquet, the default)', () => {
  let out: string;
  beforeAll(async () => {
    out = path.join(scratch, 'huggingface-parquet');
    await exportDataset(dataset, 'huggingface', out);
  });

  it('writes one Parquet file per split in the Hub layout, the card pointing at them; nothing else', async () => {
    expect((await readdir(out)).sort()).toEqual(['README.md', 'data', EXPORT_MANIFEST_FILE]);
    expect((await readdir(path.join(out, 'data'))).sort()).toEqual([
      'test-00000-of-00001.parquet',
      'validation-00000-of-00001.parquet',
    ]);
    const card = await readFile(path.join(out, 'README.md'), 'utf8');
    expect(card).toContain('dataset.cast_column("audio", Audio(mono=False))');
    expect(card).toMatch(/- split: test\n\s+path: data\/test-\*\n/);
    expect(card).toMatch(/- split: validation\n\s+path: data\/validation-\*\n/);
  });

  it('holds per dialogue the WAV bytes as they are and the columns read from the dataset (hyparquet reads it back)', async () => {
    const read = await readExportDataset(dataset);
    for (const split of ['test', 'validation']) {
      const rows = await readParquetRows(path.join(out, parquetShardPath(split, 0, 1)));
      const expected = read.dialogues.filter(
        (dialogue) => (dialogue.split === 'dev' ? 'validation' : dialogue.split) === split,
      );
      expect(rows.map((row) => row.id)).toEqual(expected.map((dialogue) => dialogue.id));
      for (const [index, row] of rows.entries()) {
        const dialogue = expected[index]!;
        expect(Object.keys(row)).toEqual(HUGGING_FACE_COLUMNS.map((column) => column.name));
        expect(row.audio.path).toBe(`${dialogue.id}.wav`);
        expect(Buffer.from(row.audio.bytes).equals(await readFile(dialogue.audioFile))).toBe(true);
        expect(row.split).toBe(split);
        expect(row.utterances.map((utterance: { text: string }) => utterance.text)).toEqual(
          dialogue.utterances.map((utterance) => utterance.text),
        );
        expect(
          row.utterances.map((utterance: { start: number; end: number }) =>
            [utterance.start * 100, utterance.end * 100].map(Math.round),
          ),
        ).toEqual(dialogue.utterances.map((utterance) => [utterance.start, utterance.end]));
        expect(row.words.map((word: { word: string; channel: number }) => [word.channel, word.word])).toEqual(
          dialogue.words.map((word) => [word.channel, word.word]),
        );
        expect(row.events).toHaveLength(dialogue.events[0].length + dialogue.events[1].length);
        const { audio: _audio, ...columns } = row;
        expect(columns).toEqual(huggingFaceRow(read, dialogue, split as 'test'));
      }
    }
  });

  it('gives the same bytes for the same dataset', async () => {
    const again = path.join(scratch, 'huggingface-parquet-again');
    await exportDataset(dataset, 'huggingface', again);
    for (const file of ['README.md', ...(await readdir(path.join(out, 'data'))).map((name) => `data/${name}`)]) {
      expect((await readFile(path.join(again, file))).equals(await readFile(path.join(out, file))), file).toBe(true);
    }
  });

  it('writes a row group per planned group and shards by size (limits made small), each read back in order', async () => {
    const read = await readExportDataset(dataset);
    const wavBytes = (await readFile(read.dialogues[0]!.audioFile)).byteLength;
    // each WAV over the row-group limit: one dialogue per row group; both under the shard limit
    const shards = await planParquetShards(read.dialogues, { shardBytes: 2 * wavBytes, rowGroupBytes: wavBytes });
    expect(shards.map((shard) => shard.map((rowGroup) => rowGroup.map((dialogue) => dialogue.id)))).toEqual([
      read.dialogues.map((dialogue) => [dialogue.id]),
    ]);
    expect(
      (await planParquetShards(read.dialogues, { shardBytes: wavBytes, rowGroupBytes: wavBytes })).map(
        (shard) => shard.length,
      ),
    ).toEqual([1, 1]);
    const writer = await ExportWriter.open(path.join(scratch, 'huggingface-row-groups'), 'huggingface');
    const relative = parquetShardPath('train', 0, 1);
    await writeParquetShard(writer, relative, shards[0]!, (dialogue) => huggingFaceRow(read, dialogue, 'train'));
    const file = path.join(writer.workDirectory, relative);
    const bytes = await readFile(file);
    const metadata = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    expect(metadata.row_groups.map((group) => Number(group.num_rows))).toEqual([1, 1]);
    expect((await readParquetRows(file)).map((row) => row.id)).toEqual(read.dialogues.map((dialogue) => dialogue.id));
    await writer.abandon();
  });

  it('refuses a dataset whose WAV is missing, cut short or mono, in either layout, naming the file and the dialogue, and writes nothing', async () => {
    const wav = (folder: string) => path.join(folder, 'audio', 'tiny_0002.wav');
    const breakages: [string, (folder: string) => Promise<void>, RegExp][] = [
      ['missing', (folder) => rm(wav(folder)), /WAV of dialogue tiny_0002/],
      // the header still declares the whole data chunk (a copy that did not finish)
      [
        'cut-short',
        async (folder) => writeFile(wav(folder), (await readFile(wav(folder))).subarray(0, 2000)),
        /WAV of dialogue tiny_0002 ends before the data its header declares/,
      ],
      [
        'cut-mid-frame',
        async (folder) => writeFile(wav(folder), (await readFile(wav(folder))).subarray(0, 2001)),
        /WAV of dialogue tiny_0002 ends before the data its header declares/,
      ],
      [
        'not-a-wav',
        (folder) => writeFile(wav(folder), 'hello'),
        /WAV of dialogue tiny_0002 \(the huggingface export's audio column\): not a RIFF\/WAVE file/,
      ],
      [
        'mono',
        async (folder) =>
          writeFile(wav(folder), encodeWavPcm16({ channels: [new Float32Array(16_000)], sampleRate: 16_000 })),
        /WAV of dialogue tiny_0002 has 1 channel/,
      ],
    ];
    for (const [name, breakIt, message] of breakages) {
      for (const layout of ['parquet', 'audiofolder'] as const) {
        const broken = path.join(scratch, `huggingface-${name}-${layout}`);
        await cp(dataset, broken, { recursive: true });
        await breakIt(broken);
        const target = path.join(scratch, `huggingface-${name}-${layout}-export`);
        const refusal = exportDataset(broken, 'huggingface', target, { huggingFaceLayout: layout });
        await expect(refusal, `${name}, ${layout}`).rejects.toThrow(`${wav(broken)}: `);
        await refusal.catch((error: Error) => {
          expect(error.message, `${name}, ${layout}`).toMatch(message);
          expect(error.message).not.toContain('\n');
          expect(error.message.split(wav(broken)), `${name}, ${layout}: the file named once`).toHaveLength(2);
        });
        expect(
          (await readdir(scratch)).filter((entry) => entry.startsWith(`huggingface-${name}-${layout}-export`)),
        ).toEqual([]);
      }
    }
  });
});

describe('huggingface export (AudioFolder, --layout audiofolder)', () => {
  let out: string;
  beforeAll(async () => {
    out = path.join(scratch, 'huggingface');
    await exportDataset(dataset, 'huggingface', out, { huggingFaceLayout: 'audiofolder' });
  });

  it('puts each split in a folder named by a split keyword, with metadata.jsonl linking file_name to its WAV', async () => {
    expect((await readdir(out)).sort()).toEqual(['README.md', EXPORT_MANIFEST_FILE, 'test', 'validation']);
    expect(await readFile(path.join(out, 'README.md'), 'utf8')).toContain(
      'dataset.cast_column("audio", Audio(mono=False))',
    );
    for (const split of ['test', 'validation']) {
      const lines = (await readFile(path.join(out, split, 'metadata.jsonl'), 'utf8')).trim().split('\n');
      for (const line of lines) {
        const row = JSON.parse(line);
        const copied = await readFile(path.join(out, split, row.file_name));
        expect(copied).toEqual(await readFile(path.join(dataset, 'audio', `${row.id}.wav`)));
        expect(row.split).toBe(split);
      }
    }
  });

  it('writes every time as a float and the same columns in every split (pyarrow infers one schema)', async () => {
    const keysOf = (value: unknown): unknown =>
      Array.isArray(value)
        ? keysOf(value[0])
        : value !== null && typeof value === 'object'
          ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, keysOf(item)]))
          : typeof value;
    const shapes = new Set<string>();
    for (const split of ['test', 'validation']) {
      for (const line of (await readFile(path.join(out, split, 'metadata.jsonl'), 'utf8')).trim().split('\n')) {
        expect(line).not.toMatch(/"(start|end|duration)": -?\d+[,}\]]/);
        expect(line).toMatch(/"duration": \d+\.\d+/);
        const row = JSON.parse(line);
        for (const list of ['utterances', 'events', 'words']) expect(row[list].length).toBeGreaterThan(0);
        shapes.add(JSON.stringify(keysOf(row)));
      }
    }
    expect(shapes.size).toBe(1);
  });
});

describe('rttm export', () => {
  it('reads back with corpora/rttm.ts to the same segments, and the events rules give the same line', async () => {
    const out = path.join(scratch, 'rttm');
    await exportDataset(dataset, 'rttm', out);
    const read = await readExportDataset(dataset);
    for (const dialogue of read.dialogues) {
      const recording = parseRttm(await readFile(path.join(out, `${dialogue.id}.rttm`), 'utf8'), `${dialogue.id}.rttm`);
      expect(recording.fileId).toBe(dialogue.id);
      const twoChannel = toTwoChannelSegments(recording);
      // corpora/rttm.ts puts the speaker with more talk time on channel 0; map back by speaker label (role first)
      const channelOfSpeaker: Record<string, Channel> = {
        'user_fixture:user-voice': 1,
        'system_fixture:system-voice': 0,
      };
      const segments: ChannelSegments = { 0: [], 1: [] };
      for (const channel of [0, 1] as Channel[])
        segments[channelOfSpeaker[twoChannel.channelSpeakers[channel]]!] = twoChannel.segments[channel];
      expect(segments).toEqual(segmentsFromEvents(dialogue.events));
      expect(`${formatEventsLine(dialogue.id, computeEvents(segments))}\n`).toBe(dialogue.eventsLine);
    }
  });

  it("keeps what NIST's rttmValidator.pl checks: 10 fields, SPKR-INFO for every speaker, no speaker's segments overlapping", async () => {
    const out = path.join(scratch, 'rttm-spec');
    await exportDataset(dataset, 'rttm', out);
    const lines = (await readFile(path.join(out, 'tiny_0001.rttm'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => line.split(' '));
    // RT-09 evaluation plan, appendix A: type file channel tbeg tdur ortho stype name conf slat
    for (const fields of lines) expect(fields).toHaveLength(10);
    const declared = lines.filter((fields) => fields[0] === 'SPKR-INFO');
    expect(declared.map((fields) => [fields[3], fields[4], fields[5], fields[6], fields[7]])).toEqual([
      ['<NA>', '<NA>', '<NA>', 'unknown', 'system_fixture:system-voice'],
      ['<NA>', '<NA>', '<NA>', 'unknown', 'user_fixture:user-voice'],
    ]);
    const speakers = lines.filter((fields) => fields[0] === 'SPEAKER');
    expect(lines.map((fields) => fields[0])).toEqual([
      ...declared.map(() => 'SPKR-INFO'),
      ...speakers.map(() => 'SPEAKER'),
    ]);
    const lastEnd = new Map<string, number>();
    for (const fields of speakers) {
      expect(fields[2]).toBe('1');
      expect(declared.map((info) => info[7])).toContain(fields[7]);
      expect([fields[5], fields[6], fields[8], fields[9]]).toEqual(['<NA>', '<NA>', '<NA>', '<NA>']);
      // find_speaker matches the name against each SPKR-INFO name as a regular expression, case-insensitively
      expect(declared.some((info) => new RegExp(`^${info[7]}$`, 'i').test(fields[7]!))).toBe(true);
      const [start, duration] = [Number(fields[3]), Number(fields[4])];
      expect(start).toBeGreaterThanOrEqual(lastEnd.get(fields[7]!) ?? 0);
      lastEnd.set(fields[7]!, start + duration);
    }
  });

  it('makes speaker names that match themselves as regular expressions (espeak-ng voice ids hold "+")', () => {
    const labels = rttmSpeakerLabels(
      { roles: { 0: 'system', 1: 'user' } },
      { speakers: { 0: 'espeak-ng:en-us+m4:p40', 1: 'voice (2).wav' } },
    );
    expect(labels).toEqual({ 0: 'system_espeak-ng:en-us_m4:p40', 1: 'user_voice__2__wav' });
    for (const label of Object.values(labels)) expect(new RegExp(`^${label}$`, 'i').test(label)).toBe(true);
  });
});

/** NIST SCTK's RTTM validator (Debian package sctk). */
const RTTM_VALIDATOR = process.env.DUPLEXSYNTH_RTTM_VALIDATOR ?? '/usr/lib/sctk/bin/rttmValidator.pl';
const rttmValidatorSkip = existsSync(RTTM_VALIDATOR)
  ? undefined
  : `no ${RTTM_VALIDATOR} (Debian sctk; scripts/setup-system.sh installs it)`;

describe.skipIf(rttmValidatorSkip !== undefined)(
  `NIST SCTK rttmValidator.pl accepts the rttm export without flags${rttmValidatorSkip ? ` (skipped: ${rttmValidatorSkip})` : ''}`,
  () => {
    it('exits 0 with no ERROR line for every file, and refuses the same file without its SPKR-INFO lines (the validator is live)', async () => {
      const out = path.join(scratch, 'rttm-sctk');
      await exportDataset(dataset, 'rttm', out);
      for (const id of ['tiny_0001', 'tiny_0002']) {
        // the validator checks that the file column matches the file name: run it from the export folder
        const run = spawnSync('perl', [RTTM_VALIDATOR, '-i', `${id}.rttm`], { cwd: out, encoding: 'utf8' });
        expect(`${run.stdout}${run.stderr}`).not.toMatch(/ERROR|aborted/);
        expect(run.status).toBe(0);
      }
      const stripped = path.join(scratch, 'rttm-sctk-stripped');
      await mkdir(stripped, { recursive: true });
      const text = await readFile(path.join(out, 'tiny_0001.rttm'), 'utf8');
      await writeFile(
        path.join(stripped, 'tiny_0001.rttm'),
        text
          .split('\n')
          .filter((line) => !line.startsWith('SPKR-INFO'))
          .join('\n'),
      );
      const refused = spawnSync('perl', [RTTM_VALIDATOR, '-i', 'tiny_0001.rttm'], { cwd: stripped, encoding: 'utf8' });
      expect(refused.status).not.toBe(0);
      expect(refused.stdout).toMatch(/doesn't match any of the speaker IDs in SPKR-INFO/);
    });
  },
);

const PRAAT = process.env.DUPLEXSYNTH_PRAAT ?? 'praat';
const praatSkip =
  spawnSync(PRAAT, ['--version'], { encoding: 'utf8' }).status === 0
    ? undefined
    : `no ${PRAAT} (Debian praat; scripts/setup-system.sh installs it)`;

describe.skipIf(praatSkip !== undefined)(
  `Praat reads the textgrid export${praatSkip ? ` (skipped: ${praatSkip})` : ''}`,
  () => {
    it('reads every tier, interval, point and label we wrote (UTF-8 "…" included), interval tiers without gaps or overlaps (fixtures/textgrid-dump.praat)', async () => {
      const out = path.join(scratch, 'textgrid-praat');
      await exportDataset(dataset, 'textgrid', out);
      const read = await readExportDataset(dataset);
      const centiseconds = (text: string) => Math.round(Number(text) * 100);
      for (const dialogue of read.dialogues) {
        const run = spawnSync(
          PRAAT,
          [
            '--run',
            path.join(import.meta.dirname, 'fixtures', 'textgrid-dump.praat'),
            path.join(out, `${dialogue.id}.TextGrid`),
          ],
          { encoding: 'utf8' },
        );
        expect(run.stderr).toBe('');
        expect(run.status).toBe(0);
        const lines = run.stdout
          .replace(/\n$/, '')
          .split('\n')
          .map((line) => line.split('\t'));
        const grid = dialogueTextGrid(read, dialogue);
        expect([centiseconds(lines[0]![1]!), centiseconds(lines[0]![2]!), Number(lines[0]![3])]).toEqual([
          0,
          grid.end,
          grid.tiers.length,
        ]);
        // what Praat read, in the shape of the grid we wrote
        const praat: unknown[] = [];
        for (const line of lines.slice(1)) {
          if (line[0] === 'tier')
            praat.push(
              line[2] === 'interval'
                ? { kind: 'interval', name: line[1], intervals: [] }
                : { kind: 'point', name: line[1], points: [] },
            );
          else if (line.length === 3)
            (praat.at(-1) as { intervals: unknown[] }).intervals.push({
              start: centiseconds(line[0]!),
              end: centiseconds(line[1]!),
              text: line[2],
            });
          else (praat.at(-1) as { points: unknown[] }).points.push({ time: centiseconds(line[0]!), mark: line[1] });
        }
        expect(praat).toEqual(
          grid.tiers.map((tier) =>
            tier.kind === 'interval'
              ? { ...tier, intervals: tier.intervals.map(({ start, end, text }) => ({ start, end, text })) }
              : { ...tier, points: tier.points.map(({ time, mark }) => ({ time, mark })) },
          ),
        );
      }
      expect(read.dialogues.some((dialogue) => dialogue.words.some((word) => word.word.includes('…')))).toBe(true);
    });
  },
);

describe('audacity export', () => {
  it('writes start<TAB>end<TAB>text with six decimals, one label file per track', async () => {
    const out = path.join(scratch, 'audacity');
    await exportDataset(dataset, 'audacity', out);
    expect(await readFile(path.join(out, 'tiny_0001.user-words.txt'), 'utf8')).toBe(
      '0.500000\t0.800000\tWho\n0.800000\t1.200000\twrote\n1.200000\t1.600000\t"Emma"?\n2.400000\t2.700000\tmm-hmm\n',
    );
    const events = await readFile(path.join(out, 'tiny_0001.events.txt'), 'utf8');
    expect(events.split('\n')[0]).toBe('0.500000\t1.600000\tTURN (channel 1)');
    expect(events).toContain('1.600000\t1.900000\tTURN_SHIFT (channel 0)\n');
  });
  it('writes an overlapping TURN_SHIFT (start > end) as a forward region marked as overlap', () => {
    const labels = dialogueAudacityLabels({ roles: { 0: 'system', 1: 'user' } }, {
      events: { 0: [{ event: 'TURN_SHIFT', start: 300, end: 250 }], 1: [] },
      words: [],
    } as never);
    expect(formatAudacityLabels(labels.events!)).toBe('2.500000\t3.000000\tTURN_SHIFT (channel 0, overlap)\n');
  });
});

describe('textgrid export', () => {
  const sortedEvents = (events: ChannelEvents): ChannelEvents => {
    const order = (a: BenchmarkEvent, b: BenchmarkEvent) =>
      a.start - b.start || a.end - b.end || EVENT_TYPES.indexOf(a.event) - EVENT_TYPES.indexOf(b.event);
    return { 0: [...events[0]].sort(order), 1: [...events[1]].sort(order) };
  };
  const asIntervals = (grid: ReturnType<typeof dialogueTextGrid>) =>
    grid.tiers.map((tier) =>
      tier.kind === 'interval'
        ? { name: tier.name, intervals: tier.intervals }
        : { name: tier.name, points: tier.points.map((point) => ({ time: point.time, mark: point.mark })) },
    );

  it('covers the domain with word intervals, and every event is a span on the interval tier of its channel and type', async () => {
    const read = await readExportDataset(dataset);
    const dialogue = read.dialogues[0]!;
    const grid = dialogueTextGrid(read, dialogue);
    const eventTiers = ['system', 'user'].flatMap((role) => EVENT_TYPES.map((type) => `${role} - ${type}`));
    expect(grid.tiers.map((tier) => tier.name)).toEqual(['system - words', 'user - words', ...eventTiers]);
    expect(grid.tiers.every((tier) => tier.kind === 'interval')).toBe(true);
    const system = grid.tiers[0]!;
    if (system.kind !== 'interval') throw new Error('interval tier expected');
    expect(system.intervals[0]).toEqual({ start: 0, end: 190, text: '' });
    expect(system.intervals.at(-1)).toEqual({ start: 350, end: 400, text: '' });
    const userTurns = grid.tiers.find((tier) => tier.name === 'user - TURN')!;
    if (userTurns.kind !== 'interval') throw new Error('interval tier expected');
    expect(userTurns.intervals.filter((interval) => interval.text !== '')).toEqual([
      { start: 50, end: 160, text: 'TURN' },
    ]);
    expect(eventsFromTiers(asIntervals(grid), read.roles)).toEqual(sortedEvents(dialogue.events));
    const text = formatTextGrid(grid);
    expect(text).toContain('            text = """Emma""?" \n');
    expect(
      text.startsWith(
        'File type = "ooTextFile"\nObject class = "TextGrid"\n\nxmin = 0 \nxmax = 4 \ntiers? <exists> \nsize = 14 \n',
      ),
    ).toBe(true);
  });

  it('writes an overlapping TURN_SHIFT as [end, start] marked overlap, and a zero-length one as a point; both read back', () => {
    const roles = { 0: 'system', 1: 'user' } as const;
    const events: ChannelEvents = {
      0: [
        { event: 'TURN', start: 100, end: 300 },
        { event: 'TURN_SHIFT', start: 120, end: 100 },
      ],
      1: [
        { event: 'TURN', start: 10, end: 120 },
        { event: 'TURN', start: 300, end: 380 },
        { event: 'TURN_SHIFT', start: 300, end: 300 },
      ],
    };
    const grid = dialogueTextGrid({ roles }, { durationSeconds: 4, words: [], events } as unknown as ExportDialogue);
    const shifts = grid.tiers.find((tier) => tier.name === 'system - TURN_SHIFT')!;
    if (shifts.kind !== 'interval') throw new Error('interval tier expected');
    expect(shifts.intervals.filter((interval) => interval.text !== '')).toEqual([
      { start: 100, end: 120, text: 'TURN_SHIFT (overlap)' },
    ]);
    const zero = grid.tiers.at(-1)!;
    expect(zero).toEqual({
      kind: 'point',
      name: ZERO_LENGTH_TIER,
      points: [{ time: 300, mark: 'TURN_SHIFT channel 1' }],
    });
    expect(eventsFromTiers(asIntervals(grid), roles)).toEqual(sortedEvents(events));
  });
  it('reads back with corpora/textgrid.ts: the same words, segments and speakers per channel, and the same events', async () => {
    const out = path.join(scratch, 'textgrid');
    await exportDataset(dataset, 'textgrid', out);
    const read = await readExportDataset(dataset);
    for (const dialogue of read.dialogues) {
      const file = path.join(out, `${dialogue.id}.TextGrid`);
      const grid = parseTextGrid(decodeTextGrid(await readFile(file)), file);
      const recording = textGridToReferenceRecording(dialogue.id, [grid]);
      expect(recording.channelSpeakers).toEqual({ 0: 'system', 1: 'user' });
      expect(recording.durationCs).toBe(400);
      expect(recording.segments).toEqual(segmentsFromWords(dialogue.words));
      const words = (recording.supervisions ?? []).flatMap((supervision) => supervision.words ?? []);
      const order = (a: { channel: number; start: number }, b: { channel: number; start: number }) =>
        a.channel - b.channel || a.start - b.start;
      expect(words.sort(order)).toEqual([...dialogue.words].sort(order));
      // corpora/textgrid.ts reads times as centiseconds; the event tiers give back every event
      const tiers = grid.tiers.map((tier) => ({
        name: tier.name,
        intervals: tier.intervals.map((interval) => ({
          start: interval.start,
          end: interval.end,
          text: interval.text,
        })),
      }));
      expect(eventsFromTiers(tiers, read.roles)).toEqual(sortedEvents(dialogue.events));
    }
  });
  it('joins a word that overlaps the one before it (real transcripts) into one interval', () => {
    expect(
      wordIntervals([
        { start: 0, end: 50, word: 'a' },
        { start: 40, end: 60, word: 'b' },
        { start: 70, end: 80, word: 'c' },
      ]),
    ).toEqual([
      { start: 0, end: 60, text: 'a b' },
      { start: 70, end: 80, text: 'c' },
    ]);
  });
  it('refuses overlapping intervals on one tier', () => {
    expect(() =>
      coverDomain(
        [
          { start: 0, end: 50, text: 'a' },
          { start: 40, end: 60, text: 'b' },
        ],
        100,
      ),
    ).toThrow(/overlaps/);
  });
});

describe('a chat dataset (duplexsynth chat layout: two real speakers, no user/system mapping)', () => {
  let chat: string;
  beforeAll(async () => {
    chat = path.join(scratch, 'chat-build', 'data', 'en', 'chat', 'tiny_chat');
    await cp(dataset, chat, { recursive: true });
    const manifest = JSON.parse(await readFile(path.join(chat, 'manifest.json'), 'utf8'));
    delete manifest.channels;
    delete manifest.sampleRate;
    await writeFile(
      path.join(chat, 'manifest.json'),
      JSON.stringify({ ...manifest, domain: 'chat', channelsEvaluated: [0, 1], sampleRates: [16000] }),
    );
    for (const id of ['tiny_0001', 'tiny_0002']) {
      const file = path.join(chat, 'metadata', `${id}.json`);
      const metadata = JSON.parse(await readFile(file, 'utf8'));
      const chatMetadata = {
        id,
        language: 'en',
        domain: 'chat',
        speakers: { channel0: { speakerId: 'corpus:A', channel: 0 }, channel1: { speakerId: 'corpus:B', channel: 1 } },
        durationSeconds: metadata.durationSeconds,
        utterances: [...metadata.utterances, { ...metadata.backchannels[0], kind: 'backchannel' }].map(
          (
            utterance: { channel: number; start: number; end: number; kind: string; text?: unknown },
            index: number,
          ) => ({
            index,
            role: `channel${utterance.channel}`,
            kind: utterance.kind === 'backchannel' ? 'backchannel' : 'turn',
            channel: utterance.channel,
            start: utterance.start,
            end: utterance.end,
            text: { final: 'words' },
          }),
        ),
      };
      await writeFile(file, JSON.stringify(chatMetadata));
    }
  });

  it('reads with channel roles channel0/channel1 and the speaker of each channel', async () => {
    const read = await readExportDataset(chat);
    expect(read).toMatchObject({
      channels: null,
      roles: { 0: 'channel0', 1: 'channel1' },
      sampleRate: 16000,
      domain: 'chat',
    });
    expect(read.dialogues[0]!.speakers).toEqual({ 0: 'corpus:A', 1: 'corpus:B' });
    expect(read.dialogues[0]!.utterances.map((utterance) => utterance.kind)).toEqual(['turn', 'turn', 'backchannel']);
  });

  it('exports every format; moshi-finetune puts channel 0 on the left as SPEAKER_MAIN, TextGrid tiers are named by channel', async () => {
    for (const format of EXPORT_FORMAT_NAMES)
      await exportDataset(chat, format, path.join(scratch, 'chat-exports', format));
    const { alignments } = JSON.parse(
      await readFile(path.join(scratch, 'chat-exports', 'moshi-finetune', 'data_stereo', 'tiny_0001.json'), 'utf8'),
    ) as { alignments: [string, unknown, string][] };
    expect(alignments.filter((item) => item[2] === 'SPEAKER_MAIN').map((item) => item[0])).toEqual([
      'Jane',
      'Austen',
      'did…',
    ]);
    const grid = parseTextGrid(
      decodeTextGrid(await readFile(path.join(scratch, 'chat-exports', 'textgrid', 'tiny_0001.TextGrid'))),
      'chat TextGrid',
    );
    expect(grid.tiers.slice(0, 3).map((tier) => tier.name)).toEqual([
      'channel0 - words',
      'channel1 - words',
      'channel0 - TURN',
    ]);
    expect(await readdir(path.join(scratch, 'chat-exports', 'audacity'))).toContain('tiny_0001.channel1-words.txt');
    const [row] = await readParquetRows(
      path.join(scratch, 'chat-exports', 'huggingface', 'data', 'test-00000-of-00001.parquet'),
    );
    expect(row).toMatchObject({ channel0_role: 'channel0', channel1_speaker: 'corpus:B' });
    expect(row!.utterances.map((utterance: { kind: string }) => utterance.kind)).toEqual([
      'turn',
      'turn',
      'backchannel',
    ]);
  });
});

describe('export folders', () => {
  it('default to {build}/exports/{format}/{lang}/{dataset}', () => {
    expect(defaultExportDirectory('/x/out/data/en/task/topiocqa', 'lhotse')).toBe('/x/out/exports/lhotse/en/topiocqa');
  });
  it('refuse a folder that holds files but is not an export, and leave no .partial behind on failure', async () => {
    const foreign = path.join(scratch, 'foreign');
    await mkdir(foreign, { recursive: true });
    await writeFile(path.join(foreign, 'notes.txt'), 'mine');
    await expect(exportDataset(dataset, 'rttm', foreign)).rejects.toThrow(/not a duplexsynth export/);
    const broken = path.join(scratch, 'broken-audio');
    await cp(dataset, broken, { recursive: true });
    await writeFile(path.join(broken, 'audio', 'tiny_0002.wav'), 'not a wav');
    const target = path.join(scratch, 'broken-export');
    await expect(exportDataset(broken, 'lhotse', target)).rejects.toThrow(/tiny_0002\.wav/);
    expect((await readdir(scratch)).filter((name) => name.startsWith('broken-export'))).toEqual([]);
  });
  it('refuse a folder holding an export of another format with one line, leaving it as it is; the same format is replaced', async () => {
    const target = path.join(scratch, 'one-folder');
    await exportDataset(dataset, 'rttm', target);
    const before = await readFile(path.join(target, EXPORT_MANIFEST_FILE), 'utf8');
    const refusal = exportDataset(dataset, 'textgrid', target);
    await expect(refusal).rejects.toThrow(/one-folder: holds a rttm export, not textgrid; it was left as it is/);
    await refusal.catch((error: Error) => expect(error.message).not.toContain('\n'));
    expect(await readFile(path.join(target, EXPORT_MANIFEST_FILE), 'utf8')).toBe(before);
    await exportDataset(dataset, 'rttm', target);
    expect((await readdir(target)).sort()).toEqual([EXPORT_MANIFEST_FILE, 'tiny_0001.rttm', 'tiny_0002.rttm']);
  });
  it('lists every format in the registry', () => {
    expect(EXPORT_FORMAT_NAMES).toEqual([
      'lhotse',
      'lhotse-shar',
      'moshi-finetune',
      'huggingface',
      'rttm',
      'textgrid',
      'audacity',
    ]);
  });
});
