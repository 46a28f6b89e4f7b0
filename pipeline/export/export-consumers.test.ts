/**
 * The exports in their real consumers that run as child processes for tens of seconds (end-to-end):
 * Hugging Face `datasets` and pyarrow loading the huggingface export, Parquet and AudioFolder
 * (fixtures/datasets-load.py, in a venv outside the project that scripts/setup-system.sh makes), and Audacity importing the audacity export's label
 * files headless (fixtures/audacity-import.py). Each skips, saying why, where its consumer is absent.
 * The quicker consumers (lhotse, moshi-finetune, SCTK, Praat) are in export.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav, encodeWavPcm16 } from '../audio/wav.ts';
import { readExportDataset, type ExportDataset, type ExportDialogue } from './export-dataset.ts';
import {
  datasetsFeatures,
  HUGGING_FACE_COLUMNS,
  parquetShardPath,
  type HuggingFaceColumn,
} from './huggingface-parquet.ts';
import { exportDataset } from './index.ts';
import { copyExportFixture, cutTiny0002Answer } from './testing/export-fixture.ts';

let scratch: string;
let dataset: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-export-consumers-'));
  dataset = await copyExportFixture(scratch);
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The Python with Hugging Face `datasets` (scripts/setup-system.sh makes this venv, outside the project, from the pip index when one is reachable). */
const DATASETS_PYTHON =
  process.env.DUPLEXSYNTH_DATASETS_PYTHON ??
  path.join(os.homedir(), '.cache', 'duplexsynth', 'python-consumers', 'bin', 'python');

/** Why `datasets` cannot run here, or undefined when it can (module lookup only). */
function datasetsSkipReason(): string | undefined {
  const probe = spawnSync(
    DATASETS_PYTHON,
    [
      '-c',
      "import importlib.util, sys; sys.exit(0 if all(importlib.util.find_spec(m) for m in ('datasets', 'pyarrow', 'soundfile')) else 1)",
    ],
    { encoding: 'utf8' },
  );
  if (probe.error)
    return `no ${DATASETS_PYTHON} (scripts/setup-system.sh makes it when pip can reach an index with datasets; or set DUPLEXSYNTH_DATASETS_PYTHON)`;
  if (probe.status !== 0) return `${DATASETS_PYTHON} cannot import datasets, pyarrow and soundfile`;
  return undefined;
}
const datasetsSkip = datasetsSkipReason();

/** What fixtures/datasets-load.py prints for one export folder (its last stdout line). */
function runDatasetsLoad(out: string): any {
  const run = spawnSync(DATASETS_PYTHON, [path.join(import.meta.dirname, 'fixtures', 'datasets-load.py'), out], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    // datasets' cache in the test's scratch; no Hub look-ups
    env: { ...process.env, HF_HOME: path.join(scratch, 'hf-home'), HF_HUB_OFFLINE: '1', HF_DATASETS_OFFLINE: '1' },
  });
  expect(run.stderr.split('\n').filter((line) => /Error|Traceback/.test(line))).toEqual([]);
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!);
}

/** Channels, rate, frames and the sha256 of each channel's 16-bit samples of a WAV, as datasets-load.py reports them. */
function wavFacts(bytes: Uint8Array, source: string) {
  const wav = decodeWav(bytes, source);
  const channelSha256 = wav.channels.map((channel) => {
    const samples = Int16Array.from(channel, (sample) => Math.max(-32768, Math.min(32767, Math.round(sample * 32768))));
    return createHash('sha256').update(new Uint8Array(samples.buffer)).digest('hex');
  });
  return {
    channels: wav.channels.length,
    sampling_rate: wav.sampleRate,
    frames: wav.channels[0]!.length,
    channel_sha256: channelSha256,
  };
}

/** The nested columns of a dialogue, from what readExportDataset read of the dataset (times in seconds). */
function nestedColumns(dialogue: ExportDialogue, withCutAt: boolean) {
  const seconds = (centiseconds: number) => centiseconds / 100;
  return {
    utterances: dialogue.utterances.map((utterance) => ({
      channel: utterance.channel,
      role: utterance.role,
      kind: utterance.kind,
      start: seconds(utterance.start),
      end: seconds(utterance.end),
      text: utterance.text,
      cut_off: utterance.cutOff !== undefined,
      ...(withCutAt ? { cut_at: utterance.cutOff ? seconds(utterance.end) : null } : {}),
      planned_text: utterance.cutOff?.plannedText ?? utterance.text,
    })),
    events: ([0, 1] as const).flatMap((channel) =>
      dialogue.events[channel].map((event) => ({
        channel,
        event: event.event,
        start: seconds(event.start),
        end: seconds(event.end),
      })),
    ),
    words: dialogue.words.map((word) => ({
      channel: word.channel,
      start: seconds(word.start),
      end: seconds(word.end),
      word: word.word,
    })),
  };
}

/** pyarrow's name of a column's type, from our column description. */
function arrowType(column: HuggingFaceColumn): string {
  const scalar = { string: 'string', int64: 'int64', float64: 'double', bool: 'bool' } as const;
  if (column.type === 'audio') return 'struct<bytes: binary, path: string>';
  if (column.type === 'list')
    return `list<element: struct<${column.fields.map((field) => `${field.name}: ${scalar[field.type]}`).join(', ')}>>`;
  return scalar[column.type];
}

describe.skipIf(datasetsSkip !== undefined)(
  `Hugging Face datasets loads the huggingface export${datasetsSkip ? ` (skipped: ${datasetsSkip})` : ''}`,
  () => {
    let withSmall: string;
    let read: ExportDataset;
    let expected: Record<string, string[]>;
    beforeAll(async () => {
      // the fixture with a test_small.jsonl (its first test dialogue), as `--test-small 1` writes it;
      // tiny_0002 (validation) a barge-in variant whose answer is cut after "Austen", with its own audio (the fixture's two WAVs are otherwise the same)
      withSmall = path.join(scratch, 'with-test-small');
      await cp(dataset, withSmall, { recursive: true });
      await writeFile(
        path.join(withSmall, 'test_small.jsonl'),
        (await readFile(path.join(withSmall, 'test.jsonl'), 'utf8')).split('\n')[0] + '\n',
      );
      await cutTiny0002Answer(withSmall);
      const wavFile = path.join(withSmall, 'audio', 'tiny_0002.wav');
      const wav = decodeWav(await readFile(wavFile), wavFile);
      await writeFile(
        wavFile,
        encodeWavPcm16({
          channels: wav.channels.map((channel) => channel.map((sample) => sample * 0.5)),
          sampleRate: wav.sampleRate,
        }),
      );

      read = await readExportDataset(withSmall);
      const idsOf = (keep: (dialogue: ExportDialogue) => boolean) =>
        read.dialogues.filter(keep).map((dialogue) => dialogue.id);
      expected = {
        test: idsOf((dialogue) => dialogue.split === 'test'),
        test_small: idsOf((dialogue) => dialogue.testSmall),
        validation: idsOf((dialogue) => dialogue.split === 'dev'),
      };
      expect(expected.test_small).toHaveLength(1);
      expect(read.dialogues.some((dialogue) => dialogue.utterances.some((utterance) => utterance.cutOff))).toBe(true);
    });

    const idsBySplit = (splits: Record<string, { ids: string[] }>) =>
      Object.fromEntries(Object.entries(splits).map(([name, split]) => [name, split.ids]));

    /** The checks of `load_dataset(DIR)` both layouts share: splits, columns, nested columns equal to our metadata, two-channel audio with the WAV's samples, the card's snippet. */
    async function expectLoadDatasetDir(summary: any, withCutAt: boolean) {
      expect(idsBySplit(summary.load_dataset_dir)).toEqual(expected);
      expect(summary.card_snippet.splits).toEqual(['test', 'test_small', 'validation']);
      for (const [name, split] of Object.entries(summary.load_dataset_dir) as [string, Record<string, any>][]) {
        expect(split.columns).toEqual(
          expect.arrayContaining([
            'audio',
            'id',
            'duration',
            'events',
            'words',
            'utterances',
            'channel0_role',
            'channel1_speaker',
            'test_small',
            'split',
          ]),
        );
        expect(split.audio_feature).toBe('Audio');
        expect(split.features.duration).toMatch(/float64/);
        expect(split.split_column).toEqual(split.ids.map(() => name));
        expect(split.test_small_column).toEqual(split.ids.map((id: string) => expected.test_small!.includes(id)));
        for (const [index, id] of (split.ids as string[]).entries()) {
          const dialogue = read.dialogues.find((candidate) => candidate.id === id)!;
          // the samples datasets hands over are the WAV's, both channels
          expect(split.audio[index]).toMatchObject(wavFacts(await readFile(dialogue.audioFile), id));
          const nested = nestedColumns(dialogue, withCutAt);
          expect(split.utterances[index]).toEqual(nested.utterances);
          expect(split.events[index]).toEqual(nested.events);
          expect(split.words[index]).toEqual(nested.words);
        }
      }
      // datasets 4 and later keep the file's channels by default (num_channels=None) and have no `mono`;
      // before 4 the card casts Audio(mono=False)
      const major = Number(summary.datasets_version.split('.')[0]);
      if (major >= 4) {
        expect(summary.load_dataset_dir.test.audio_num_channels).toBeNull();
        expect(summary.card_snippet.audio_feature).toMatch(/num_channels=None/);
      } else {
        expect(summary.card_snippet.audio_feature).toMatch(/mono=False/);
      }
    }

    it('Parquet (the default): pyarrow reads each split file with the schema we describe and the rows we wrote; load_dataset(DIR) gives test, test_small and validation with the same features, two-channel audio with the WAV samples, the nested columns of our metadata (fixtures/datasets-load.py)', async () => {
      const out = path.join(scratch, 'huggingface-parquet-for-datasets');
      await exportDataset(withSmall, 'huggingface', out);
      const summary = runDatasetsLoad(out);
      expect(summary.layout).toBe('parquet');
      await expectLoadDatasetDir(summary, true);
      for (const split of Object.values(summary.load_dataset_dir) as Record<string, any>[])
        expect(split.audio.every((audio: { embedded: boolean }) => audio.embedded)).toBe(true);

      const files = summary.parquet_files as Record<string, any>;
      expect(Object.keys(files).sort()).toEqual(
        Object.keys(expected)
          .map((split) => parquetShardPath(split, 0, 1))
          .sort(),
      );
      for (const [split, ids] of Object.entries(expected)) {
        const file = files[parquetShardPath(split, 0, 1)];
        expect(file.schema).toEqual(
          Object.fromEntries(HUGGING_FACE_COLUMNS.map((column) => [column.name, arrowType(column)])),
        );
        expect(file.metadata_features).toEqual(datasetsFeatures());
        expect(file.features_equal_load_dataset).toBe(true);
        expect(file.num_row_groups).toBe(1);
        expect(file.rows.map((row: { id: string }) => row.id)).toEqual(ids);
        for (const row of file.rows) {
          const dialogue = read.dialogues.find((candidate) => candidate.id === row.id)!;
          const wav = await readFile(dialogue.audioFile);
          expect(row.audio).toEqual({
            path: `${dialogue.id}.wav`,
            sha256: createHash('sha256').update(wav).digest('hex'),
            ...wavFacts(wav, dialogue.id),
          });
          expect(row).toMatchObject({
            ...nestedColumns(dialogue, true),
            split,
            test_small: dialogue.testSmall,
            duration: dialogue.durationSeconds,
            channel0_speaker: dialogue.speakers[0],
            channel1_speaker: dialogue.speakers[1],
            channel0_role: read.roles[0],
            language: read.language,
          });
        }
      }
      // the cut-off answer: spoken text, cut time, planned text; null cut_at elsewhere (one schema for every split)
      const cut = files[parquetShardPath('validation', 0, 1)].rows[0].utterances.find(
        (utterance: { cut_off: boolean }) => utterance.cut_off,
      );
      expect(cut).toMatchObject({ text: 'Jane Austen', cut_at: 2.9, planned_text: 'Jane Austen did…' });
    });

    it('AudioFolder (--layout audiofolder): load_dataset(DIR) gives the same splits from the card, the audiofolder loader test and validation, two-channel audio, and the card snippet runs', async () => {
      const out = path.join(scratch, 'huggingface-audiofolder-for-datasets');
      await exportDataset(withSmall, 'huggingface', out, { huggingFaceLayout: 'audiofolder' });
      const summary = runDatasetsLoad(out);
      expect(summary.layout).toBe('audiofolder');
      await expectLoadDatasetDir(summary, false);
      // the audiofolder loader ignores the card: folder keywords only, and test_small's rows are not in test twice
      expect(idsBySplit(summary.load_dataset_audiofolder)).toEqual({
        test: expected.test,
        validation: expected.validation,
      });
      for (const [name, split] of Object.entries(summary.load_dataset_dir) as [string, Record<string, any>][]) {
        const dialogue = read.dialogues.find((candidate) => candidate.id === split.ids[0])!;
        expect(
          split.first_utterances.map((utterance: { text: string }) => utterance.text),
          name,
        ).toEqual(dialogue.utterances.slice(0, 2).map((utterance) => utterance.text));
      }
    });
  },
);

/** Why Audacity cannot run headless here, or undefined when it can. */
function audacitySkipReason(): string | undefined {
  const missing = ['audacity', 'Xvfb', 'xdotool'].filter(
    (program) => spawnSync('sh', ['-c', `command -v ${program}`]).status !== 0,
  );
  if (missing.length > 0) return `no ${missing.join(', ')} on PATH (Debian: apt-get install audacity xvfb xdotool)`;
  if (spawnSync('python3', ['--version']).status !== 0) return 'no python3 to run fixtures/audacity-import.py';
  return undefined;
}
const audacitySkip = audacitySkipReason();

describe.skipIf(audacitySkip !== undefined)(
  `Audacity imports the audacity export${audacitySkip ? ` (skipped: ${audacitySkip})` : ''}`,
  () => {
    // Audacity's own time limit is 300 s after the per-user lock (fixtures/audacity-import.py); another run may hold the lock first.
    // One retry: a GUI program started under Xvfb can fail to answer in time when the machine is slow, where
    // the next start does (the failed try's stderr names its last step and keeps Audacity's log).
    it(
      'reads the two-channel WAV and every label of the three label files as written, UTF-8 text included (fixtures/audacity-import.py)',
      { timeout: 1_200_000, retry: 1 },
      async () => {
        const out = path.join(await mkdtemp(path.join(scratch, 'audacity-try-')), 'audacity');
        await exportDataset(dataset, 'audacity', out);
        const id = 'tiny_0001';
        const tracks = ['system-words', 'user-words', 'events'];
        const work = await mkdtemp(path.join(scratch, 'audacity-home-')); // a fresh Audacity home per try (a failed try's autosave would bring up the recovery dialog)
        const run = spawnSync(
          'python3',
          [
            path.join(import.meta.dirname, 'fixtures', 'audacity-import.py'),
            work,
            path.join(dataset, 'audio', `${id}.wav`),
            ...tracks.map((track) => path.join(out, `${id}.${track}.txt`)),
          ],
          {
            encoding: 'utf8',
          },
        );
        expect(
          run.stderr
            .split('\n')
            .filter((line) =>
              /Error|Traceback|audacity-import\.py: (?!Xvfb|plug-ins|connected|start \d|progress: )/.test(line),
            ),
        ).toEqual([]);
        expect(run.status).toBe(0);
        const { tracks: read, labels } = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
          tracks: { name: string; kind: string; channels?: number; end?: number }[];
          labels: [number, [number, number, string][]][];
        };
        const wav = decodeWav(await readFile(path.join(dataset, 'audio', `${id}.wav`)), id);
        expect(read[0]).toMatchObject({ name: id, kind: 'wave', channels: 2 });
        expect(read[0]!.end).toBeCloseTo(wav.channels[0]!.length / wav.sampleRate, 6);
        expect(read.slice(1).map((track) => [track.name, track.kind])).toEqual(
          tracks.map((track) => [`${id}.${track}`, 'label']),
        );
        // GetInfo: Type=Labels gives [track index, [[start, end, text], ...]] per label track
        expect(labels.map(([index]) => index)).toEqual([1, 2, 3]);
        for (const [position, track] of tracks.entries()) {
          const written = (await readFile(path.join(out, `${id}.${track}.txt`), 'utf8'))
            .trimEnd()
            .split('\n')
            .map((line) => line.split('\t'));
          const audacity = labels[position]![1];
          expect(audacity.map((label) => label[2])).toEqual(written.map((fields) => fields[2]));
          for (const [index, [start, end]] of audacity.entries()) {
            expect(start).toBeCloseTo(Number(written[index]![0]), 6);
            expect(end).toBeCloseTo(Number(written[index]![1]), 6);
          }
        }
        expect(labels.flatMap(([, track]) => track.map((label) => label[2])).some((text) => /[…"]/.test(text))).toBe(
          true,
        );
      },
    );
  },
);
