/**
 * The exports' test fixture: the hand-written two-dialogue dataset (fixtures/tiny-dataset) with
 * audio made from its word timings, shared by export.test.ts and export-consumers.test.ts.
 */
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { encodeWavPcm16 } from '../../audio/wav.ts';

/** The fixture build folder (data/en/task/tiny inside). */
export const FIXTURE = path.join(import.meta.dirname, '..', 'fixtures', 'tiny-dataset');
/** Rate of the fixture's benchmark WAVs, Hz. */
export const SAMPLE_RATE = 16_000;
/** Rate of the fixture's full-band masters (CosyVoice2's), Hz. */
export const FULL_BAND_RATE = 24_000;
/** A tone only the full-band masters have: above the 16 kHz files' 8 kHz band. */
export const HIGH_TONE_HZ = 10_000;

/**
 * A tone (channel 0: 220 Hz, channel 1: 330 Hz) inside every word of the fixture, silence elsewhere:
 * `audio/{id}.wav` at 16 kHz, and the full-band master `audio_fullband/{id}.wav` at 24 kHz with a
 * 10 kHz tone added (listed in manifest.json `fullBand`, as a build writes it).
 */
export async function writeFixtureAudio(directory: string): Promise<void> {
  const alignment = await readFile(path.join(directory, 'txt_align', 'tiny_0001.txt'), 'utf8');
  const render = (rate: number, high: number) => {
    const channels = [new Float32Array(4 * rate), new Float32Array(4 * rate)];
    for (const line of alignment.trim().split('\n')) {
      const [channel, start, end] = line.split('\t');
      const track = channels[Number(channel)]!;
      const frequency = channel === '0' ? 220 : 330;
      for (let index = Math.round(Number(start) * rate); index < Math.round(Number(end) * rate); index++) {
        track[index] =
          0.3 * Math.sin((2 * Math.PI * frequency * index) / rate) +
          high * Math.sin((2 * Math.PI * HIGH_TONE_HZ * index) / rate);
      }
    }
    return encodeWavPcm16({ channels, sampleRate: rate });
  };
  await mkdir(path.join(directory, 'audio'), { recursive: true });
  await mkdir(path.join(directory, 'audio_fullband'), { recursive: true });
  const [wav, fullBand] = [render(SAMPLE_RATE, 0), render(FULL_BAND_RATE, 0.1)];
  for (const id of ['tiny_0001', 'tiny_0002']) {
    await writeFile(path.join(directory, 'audio', `${id}.wav`), wav);
    await writeFile(path.join(directory, 'audio_fullband', `${id}.wav`), fullBand);
  }
  const manifestFile = path.join(directory, 'manifest.json');
  const manifest = JSON.parse(await readFile(manifestFile, 'utf8'));
  await writeFile(
    manifestFile,
    JSON.stringify({
      ...manifest,
      fullBand: { directory: 'audio_fullband', sampleRates: [FULL_BAND_RATE], dialogues: 2 },
    }),
  );
}

/**
 * Copies the fixture build into `scratch/build` and writes its audio; returns the dataset folder
 * (`scratch/build/data/en/task/tiny`).
 */
export async function copyExportFixture(scratch: string): Promise<string> {
  await cp(FIXTURE, path.join(scratch, 'build'), { recursive: true });
  const dataset = path.join(scratch, 'build', 'data', 'en', 'task', 'tiny');
  await writeFixtureAudio(dataset);
  return dataset;
}

/**
 * Makes the dataset folder `directory` (a copy of the fixture) a barge-in variant in place: tiny_0002's
 * answer stopped after "Austen" at 2.9 s, its metadata as the build writes it (the spoken text,
 * `cutOff` with the planned text), "did…" out of the alignment.
 */
export async function cutTiny0002Answer(directory: string): Promise<void> {
  const file = path.join(directory, 'metadata', 'tiny_0002.json');
  const metadata = JSON.parse(await readFile(file, 'utf8'));
  const answer = metadata.utterances[1];
  Object.assign(answer, {
    end: 2.9,
    text: { ...answer.text, transcript: 'Jane Austen' },
    cutOff: { plannedText: 'Jane Austen did…', atSeconds: 2.9, plannedDurationSeconds: 1.6, unspokenWords: ['did…'] },
  });
  await writeFile(file, JSON.stringify(metadata));
  const alignment = path.join(directory, 'txt_align', 'tiny_0002.txt');
  await writeFile(alignment, (await readFile(alignment, 'utf8')).replace('0\t3.10\t3.50\tdid…\n', ''));
}
