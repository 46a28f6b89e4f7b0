/**
 * The exports in their real consumers that run as child processes for tens of seconds (end-to-end):
 * Hugging Face `datasets` loading the huggingface export (fixtures/datasets-load.py, in a venv outside
 * the project that scripts/setup-system.sh makes), and Audacity importing the audacity export's label
 * files headless (fixtures/audacity-import.py). Each skips, saying why, where its consumer is absent.
 * The quicker consumers (lhotse, moshi-finetune, SCTK, Praat) are in export.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav } from '../audio/wav.ts';
import { readExportDataset, type ExportDialogue } from './export-dataset.ts';
import { exportDataset } from './index.ts';
import { copyExportFixture } from './testing/export-fixture.ts';

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
const DATASETS_PYTHON = process.env.DUPLEXSYNTH_DATASETS_PYTHON ?? path.join(os.homedir(), '.cache', 'duplexsynth', 'python-consumers', 'bin', 'python');

/** Why `datasets` cannot run here, or undefined when it can (module lookup only). */
function datasetsSkipReason(): string | undefined {
  const probe = spawnSync(DATASETS_PYTHON, ['-c', "import importlib.util, sys; sys.exit(0 if all(importlib.util.find_spec(m) for m in ('datasets', 'pyarrow', 'soundfile')) else 1)"], { encoding: 'utf8' });
  if (probe.error) return `no ${DATASETS_PYTHON} (scripts/setup-system.sh makes it when pip can reach an index with datasets; or set DUPLEXSYNTH_DATASETS_PYTHON)`;
  if (probe.status !== 0) return `${DATASETS_PYTHON} cannot import datasets, pyarrow and soundfile`;
  return undefined;
}
const datasetsSkip = datasetsSkipReason();

describe.skipIf(datasetsSkip !== undefined)(`Hugging Face datasets loads the huggingface export${datasetsSkip ? ` (skipped: ${datasetsSkip})` : ''}`, () => {
  it('load_dataset(DIR) gives the splits test, test_small and validation from the card, the audiofolder loader test and validation, two-channel audio, and the card snippet runs (fixtures/datasets-load.py)', async () => {
    // the fixture with a test_small.jsonl (its first test dialogue), as `--test-small 1` writes it
    const withSmall = path.join(scratch, 'with-test-small');
    await cp(dataset, withSmall, { recursive: true });
    await writeFile(path.join(withSmall, 'test_small.jsonl'), (await readFile(path.join(withSmall, 'test.jsonl'), 'utf8')).split('\n')[0] + '\n');
    const out = path.join(scratch, 'huggingface-for-datasets');
    await exportDataset(withSmall, 'huggingface', out);
    const run = spawnSync(DATASETS_PYTHON, [path.join(import.meta.dirname, 'fixtures', 'datasets-load.py'), out], {
      encoding: 'utf8',
      // datasets' cache in the test's scratch; no Hub look-ups
      env: { ...process.env, HF_HOME: path.join(scratch, 'hf-home'), HF_HUB_OFFLINE: '1', HF_DATASETS_OFFLINE: '1' },
    });
    expect(run.stderr.split('\n').filter((line) => /Error|Traceback/.test(line))).toEqual([]);
    expect(run.status).toBe(0);
    const summary = JSON.parse(run.stdout.trim().split('\n').at(-1)!);

    const read = await readExportDataset(withSmall);
    const idsOf = (keep: (dialogue: ExportDialogue) => boolean) => read.dialogues.filter(keep).map((dialogue) => dialogue.id);
    const expected: Record<string, string[]> = {
      test: idsOf((dialogue) => dialogue.split === 'test'),
      test_small: idsOf((dialogue) => dialogue.testSmall),
      validation: idsOf((dialogue) => dialogue.split === 'dev'),
    };
    expect(expected.test_small).toHaveLength(1);
    const idsBySplit = (splits: Record<string, { ids: string[] }>) => Object.fromEntries(Object.entries(splits).map(([name, split]) => [name, split.ids]));
    expect(idsBySplit(summary.load_dataset_dir)).toEqual(expected);
    // the audiofolder loader ignores the card: folder keywords only, and test_small's rows are not in test twice
    expect(idsBySplit(summary.load_dataset_audiofolder)).toEqual({ test: expected.test, validation: expected.validation });
    expect(summary.card_snippet.splits).toEqual(['test', 'test_small', 'validation']);

    for (const [name, split] of Object.entries(summary.load_dataset_dir) as [string, Record<string, any>][]) {
      expect(split.columns).toEqual(expect.arrayContaining(['audio', 'id', 'duration', 'events', 'words', 'utterances', 'channel0_role', 'channel1_speaker', 'test_small', 'split']));
      expect(split.audio_feature).toBe('Audio');
      expect(split.features.duration).toMatch(/float64/);
      expect(split.split_column).toEqual(split.ids.map(() => name));
      expect(split.test_small_column).toEqual(split.ids.map((id: string) => expected.test_small!.includes(id)));
      for (const [index, id] of (split.ids as string[]).entries()) {
        const wav = decodeWav(await readFile(path.join(withSmall, 'audio', `${id}.wav`)), id);
        expect(split.audio[index]).toMatchObject({ channels: 2, sampling_rate: wav.sampleRate, frames: wav.channels[0]!.length });
      }
      const dialogue = read.dialogues.find((candidate) => candidate.id === split.ids[0])!;
      expect(split.first_utterances.map((utterance: { text: string }) => utterance.text)).toEqual(dialogue.utterances.slice(0, 2).map((utterance) => utterance.text));
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
  });
});


/** Why Audacity cannot run headless here, or undefined when it can. */
function audacitySkipReason(): string | undefined {
  const missing = ['audacity', 'Xvfb', 'xdotool'].filter((program) => spawnSync('sh', ['-c', `command -v ${program}`]).status !== 0);
  if (missing.length > 0) return `no ${missing.join(', ')} on PATH (Debian: apt-get install audacity xvfb xdotool)`;
  if (spawnSync('python3', ['--version']).status !== 0) return 'no python3 to run fixtures/audacity-import.py';
  return undefined;
}
const audacitySkip = audacitySkipReason();

describe.skipIf(audacitySkip !== undefined)(`Audacity imports the audacity export${audacitySkip ? ` (skipped: ${audacitySkip})` : ''}`, () => {
  // Audacity's own time limit is 300 s after the per-user lock (fixtures/audacity-import.py); another run may hold the lock first
  it('reads the two-channel WAV and every label of the three label files as written, UTF-8 text included (fixtures/audacity-import.py)', { timeout: 900_000 }, async () => {
    const out = path.join(scratch, 'audacity');
    await exportDataset(dataset, 'audacity', out);
    const id = 'tiny_0001';
    const tracks = ['system-words', 'user-words', 'events'];
    const work = path.join(scratch, 'audacity-home');
    const run = spawnSync('python3', [path.join(import.meta.dirname, 'fixtures', 'audacity-import.py'), work, path.join(dataset, 'audio', `${id}.wav`), ...tracks.map((track) => path.join(out, `${id}.${track}.txt`))], {
      encoding: 'utf8',
    });
    expect(run.stderr.split('\n').filter((line) => /Error|Traceback|audacity-import\.py: (?!Xvfb|plug-ins|connected|start \d|progress: )/.test(line))).toEqual([]);
    expect(run.status).toBe(0);
    const { tracks: read, labels } = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
      tracks: { name: string; kind: string; channels?: number; end?: number }[];
      labels: [number, [number, number, string][]][];
    };
    const wav = decodeWav(await readFile(path.join(dataset, 'audio', `${id}.wav`)), id);
    expect(read[0]).toMatchObject({ name: id, kind: 'wave', channels: 2 });
    expect(read[0]!.end).toBeCloseTo(wav.channels[0]!.length / wav.sampleRate, 6);
    expect(read.slice(1).map((track) => [track.name, track.kind])).toEqual(tracks.map((track) => [`${id}.${track}`, 'label']));
    // GetInfo: Type=Labels gives [track index, [[start, end, text], ...]] per label track
    expect(labels.map(([index]) => index)).toEqual([1, 2, 3]);
    for (const [position, track] of tracks.entries()) {
      const written = (await readFile(path.join(out, `${id}.${track}.txt`), 'utf8')).trimEnd().split('\n').map((line) => line.split('\t'));
      const audacity = labels[position]![1];
      expect(audacity.map((label) => label[2])).toEqual(written.map((fields) => fields[2]));
      for (const [index, [start, end]] of audacity.entries()) {
        expect(start).toBeCloseTo(Number(written[index]![0]), 6);
        expect(end).toBeCloseTo(Number(written[index]![1]), 6);
      }
    }
    expect(labels.flatMap(([, track]) => track.map((label) => label[2])).some((text) => /[…"]/.test(text))).toBe(true);
  });
});
