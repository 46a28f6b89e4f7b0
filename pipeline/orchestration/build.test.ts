/**
 * End-to-end build of the demo config (both languages, recorded responses), the run's shared cold
 * build (./testing/shared-build.ts), checked the way the benchmark's loader reads it, and a second
 * run over its cache. Its other tests are in their own files, so that the two end-to-end workers run
 * them side by side: build-fresh-cache.test.ts (the same seed from an empty cache, another seed) and
 * build-input.test.ts (the real TopiOCQA dev set and bad input, which need no demo build).
 */
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import FFT from 'fft.js';
import { decodeWav } from '../audio/wav.ts';
import type { BuildConfig } from '../config.ts';
import { parseEventsLine } from '../events/index.ts';
import { readExportDataset } from '../export/export-dataset.ts';
import { runBuild, type BuildReport } from './build.ts';
import {
  copySharedBuild,
  DEMO_BUILD_TIMEOUT,
  hashTree,
  sharedDemoBuild,
  type SharedBuild,
} from './testing/shared-build.ts';
import { verifyDataset } from '../run/verify-dataset.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-build-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('demo build (both languages, recorded responses)', () => {
  let shared: SharedBuild;
  let demo: BuildConfig;
  let first: BuildReport;
  beforeAll(async () => {
    // the demo as shipped: quality scoring and the dev/test split included (read-only: copied before a rebuild)
    shared = await sharedDemoBuild();
    ({ config: demo, report: first } = shared);
  }, DEMO_BUILD_TIMEOUT);

  it('writes both datasets in the benchmark layout, and they verify', async () => {
    expect(first.failedDialogues).toBe(0);
    const renderings = path.join(demo.output.cacheDirectory, 'place-timeline');
    const renderingInodes = new Set<number>();
    for (const folder of await readdir(renderings))
      for (const name of await readdir(path.join(renderings, folder)))
        if (name.endsWith('.wav')) renderingInodes.add((await stat(path.join(renderings, folder, name))).ino);
    expect(first.datasets.map((dataset) => [dataset.language, dataset.dataset, dataset.dialogues])).toEqual([
      ['en', 'topiocqa_demo', 2],
      ['en', 'topiocqa_demo_bargein', 2],
      ['ja', 'topiocqa_ja_demo', 2],
      ['ja', 'topiocqa_ja_demo_bargein', 2],
    ]);
    for (const [language, dataset] of [
      ['en', 'topiocqa_demo'],
      ['ja', 'topiocqa_ja_demo'],
      ['en', 'topiocqa_demo_bargein'],
      ['ja', 'topiocqa_ja_demo_bargein'],
    ] as const) {
      const directory = path.join(demo.output.directory, 'data', language, 'task', dataset);
      const verification = await verifyDataset(directory);
      expect(verification.problems).toEqual([]);
      expect(verification.dialogues).toBe(2);
      const lines = (await readFile(path.join(directory, 'all.jsonl'), 'utf8')).trim().split('\n');
      for (const line of lines) {
        const { id } = parseEventsLine(line, 'all.jsonl');
        const audio = decodeWav(await readFile(path.join(directory, 'audio', `${id}.wav`)), id);
        expect(audio.channels).toHaveLength(2);
        expect(audio.sampleRate).toBe(16000);
        // the WAV and its full-band master are the place-timeline cache entry's files, linked, not copied
        for (const wav of [
          path.join(directory, 'audio', `${id}.wav`),
          path.join(directory, 'audio_fullband', `${id}.wav`),
        ])
          expect(renderingInodes.has((await stat(wav)).ino), wav).toBe(true);
        const metadata = JSON.parse(await readFile(path.join(directory, 'metadata', `${id}.json`), 'utf8'));
        expect(metadata.speakers.user.channel).toBe(1);
        expect(metadata.speakers.system.channel).toBe(0);
        expect(metadata.speakers.user.speakerId).not.toBe(metadata.speakers.system.speakerId);
      }
    }
  });

  it('benchmark profile: every system TURN_SHIFT is evaluable, questions are held, the barge-in variants are all evaluable barge-ins', async () => {
    for (const summary of first.datasets) {
      const [withoutContext, withContext] = summary.evaluableEvents;
      const shifts = withContext!.byType.TURN_SHIFT;
      // TURN_SHIFTs listed on the system channel (0) evaluate the user channel: all of them are samples
      if (summary.variant === 'default') {
        expect(shifts.samples).toBe(shifts.inFile - (shifts.dropped['channel-not-evaluated'] ?? 0));
        expect(shifts.samples).toBeGreaterThan(10);
        expect(withoutContext!.byType.TURN_SHIFT.samples).toBe(shifts.samples);
        expect(summary.splitQuestions).toBeGreaterThan(0);
        expect(withContext!.byType.TURN_HOLD.samples).toBeGreaterThan(0);
      } else {
        const bargeIns = withContext!.byType.BARGE_IN;
        expect(bargeIns.samples).toBe(bargeIns.inFile);
        expect(bargeIns.samples).toBeGreaterThanOrEqual(summary.dialogues);
        expect(summary.bargeIns!.placed).toBeGreaterThanOrEqual(summary.dialogues);
        expect(withoutContext!.byType.BARGE_IN.samples).toBe(0);
      }
      expect(withContext!.dialoguesWithDrops).toEqual([]);
    }
    const variantMetadata = JSON.parse(
      await readFile(
        path.join(demo.output.directory, 'data/en/task/topiocqa_demo_bargein/metadata/demo_topiocqa_0001.json'),
        'utf8',
      ),
    );
    expect(variantMetadata.variant.kind).toBe('barge-in');
    expect(variantMetadata.variant.bargeIns.length).toBeGreaterThan(0);
    for (const bargeIn of variantMetadata.variant.bargeIns) expect(bargeIn.overlapSeconds).toBeGreaterThan(0.4);
    const summaryMarkdown = await readFile(first.summaryMarkdownPath, 'utf8');
    expect(summaryMarkdown).toContain('## Statistics per split (Table 3');
    expect(summaryMarkdown).toMatch(/\| topiocqa_demo_bargein \(en\) \| test \| /);
  });

  it('scores quality and writes a speaker-disjoint dev/test split with both tables', async () => {
    for (const [language, dataset] of [
      ['en', 'topiocqa_demo'],
      ['ja', 'topiocqa_ja_demo'],
    ] as const) {
      const directory = path.join(demo.output.directory, 'data', language, 'task', dataset);
      for (const file of [
        'quality.json',
        'split.json',
        'tables.md',
        'tables.json',
        'test.jsonl',
        'test_other.jsonl',
        'dev.jsonl',
      ])
        expect(existsSync(path.join(directory, file)), file).toBe(true);
      // the barge-in variant has the same split
      const variantSplit = JSON.parse(await readFile(path.join(`${directory}_bargein`, 'split.json'), 'utf8'));
      expect(variantSplit.splits.test.ids).toEqual(
        JSON.parse(await readFile(path.join(directory, 'split.json'), 'utf8')).splits.test.ids,
      );
      const split = JSON.parse(await readFile(path.join(directory, 'split.json'), 'utf8'));
      const speakersOf = async (id: string) => {
        const metadata = JSON.parse(await readFile(path.join(directory, 'metadata', `${id}.json`), 'utf8'));
        return [metadata.speakers.user.speakerId, metadata.speakers.system.speakerId];
      };
      const testSpeakers = new Set((await Promise.all(split.splits.test.ids.map(speakersOf))).flat());
      for (const id of split.splits.dev?.ids ?? [])
        for (const speaker of await speakersOf(id)) expect(testSpeakers.has(speaker)).toBe(false);
      const quality = JSON.parse(await readFile(path.join(directory, 'quality.json'), 'utf8'));
      expect(JSON.stringify(quality)).toMatch(/ovrl/i);
    }
  });

  it('the barge-in variants: a cut answer says the words before the cut (planned text, cut time, unspoken words kept) and is quality-scored; every dialogue has a full-band master above 8 kHz', async () => {
    /** Share of the power above 8 kHz (Hann-windowed 4096-sample frames), over both channels. */
    const highBandShare = (audio: { channels: Float32Array[]; sampleRate: number }) => {
      const size = 4096;
      const fft = new FFT(size);
      const [input, spectrum] = [new Array<number>(size), fft.createComplexArray() as number[]];
      let [high, total] = [0, 0];
      for (const channel of audio.channels) {
        for (let offset = 0; offset + size <= channel.length; offset += size) {
          for (let index = 0; index < size; index++)
            input[index] = channel[offset + index]! * (0.5 - 0.5 * Math.cos((2 * Math.PI * index) / size));
          fft.realTransform(spectrum, input);
          for (let bin = 1; bin <= size / 2; bin++) {
            const power = spectrum[2 * bin]! ** 2 + spectrum[2 * bin + 1]! ** 2;
            total += power;
            if ((bin * audio.sampleRate) / size > 8000) high += power;
          }
        }
      }
      return high / total;
    };
    let cutAnswers = 0;
    for (const language of ['en', 'ja'] as const) {
      const base = path.join(
        demo.output.directory,
        'data',
        language,
        'task',
        language === 'en' ? 'topiocqa_demo' : 'topiocqa_ja_demo',
      );
      const variant = `${base}_bargein`;
      // scored like the base: quality and the tables per split
      for (const file of ['quality.json', 'tables.md', 'tables.json'])
        expect(existsSync(path.join(variant, file)), `${variant}/${file}`).toBe(true);
      const [baseRead, variantRead] = [await readExportDataset(base), await readExportDataset(variant)];
      for (const dialogue of variantRead.dialogues) {
        const metadata = JSON.parse(await readFile(path.join(variant, 'metadata', `${dialogue.id}.json`), 'utf8'));
        const baseDialogue = baseRead.dialogues.find((candidate) => candidate.id === dialogue.id)!;
        for (const utterance of metadata.utterances) {
          const read = dialogue.utterances.find(
            (candidate) =>
              candidate.channel === utterance.channel && candidate.start === Math.round(utterance.start * 100),
          )!;
          // what every export writes as the utterance's text is what was spoken
          expect(read.text).toBe(utterance.text.transcript);
          if (!utterance.cutOff) continue;
          cutAnswers += 1;
          const { plannedText, atSeconds, unspokenWords } = utterance.cutOff;
          expect(atSeconds).toBe(utterance.end);
          expect(unspokenWords.length).toBeGreaterThan(0);
          expect(plannedText.startsWith(utterance.text.transcript)).toBe(true);
          expect(utterance.text.transcript.length).toBeLessThan(plannedText.length);
          // the aligned words of the cut answer and its unspoken words are the words of the whole answer in the base dataset
          const wordsIn = (words: typeof dialogue.words, channel: number, start: number, end: number) =>
            words
              .filter((word) => word.channel === channel && word.start >= start && word.end <= end)
              .map((word) => word.word);
          const whole = baseDialogue.utterances.find(
            (candidate) => candidate.kind === 'answer' && candidate.turnNumber === read.turnNumber,
          )!;
          expect([...wordsIn(dialogue.words, read.channel, read.start, read.end), ...unspokenWords]).toEqual(
            wordsIn(baseDialogue.words, whole.channel, whole.start, whole.end),
          );
        }
      }
      // the full-band masters: the TTS engine's rate, the 16 kHz file's length, energy above 8 kHz (the 16 kHz file has none)
      for (const directory of [base, variant]) {
        const manifest = JSON.parse(await readFile(path.join(directory, 'manifest.json'), 'utf8'));
        expect(manifest.fullBand).toMatchObject({ directory: 'audio_fullband', dialogues: 2 });
        for (const id of manifest.dialogues) {
          const metadata = JSON.parse(await readFile(path.join(directory, 'metadata', `${id}.json`), 'utf8'));
          const master = decodeWav(await readFile(path.join(directory, 'audio_fullband', `${id}.wav`)), id);
          const benchmark = decodeWav(await readFile(path.join(directory, 'audio', `${id}.wav`)), id);
          expect(master.sampleRate).toBe(metadata.fullBandSampleRate);
          expect(manifest.fullBand.sampleRates).toContain(master.sampleRate);
          expect(master.sampleRate).toBeGreaterThan(16000);
          expect(master.channels).toHaveLength(2);
          expect(
            Math.abs(
              master.channels[0]!.length / master.sampleRate - benchmark.channels[0]!.length / benchmark.sampleRate,
            ),
          ).toBeLessThan(0.01);
          expect(highBandShare(master)).toBeGreaterThan(1e-4);
        }
      }
    }
    expect(cutAnswers).toBeGreaterThanOrEqual(4);
  });

  it('verify reports a missing WAV and a broken word alignment per dialogue, and checks the others', async () => {
    const directory = path.join(demo.output.directory, 'data/en/task/topiocqa_demo');
    const copy = path.join(scratch, 'verify-damaged');
    await cp(directory, copy, { recursive: true });
    await rm(path.join(copy, 'audio/demo_topiocqa_0001.wav'));
    await writeFile(path.join(copy, 'txt_align/demo_topiocqa_0002.txt'), 'not an alignment\n');
    const verification = await verifyDataset(copy);
    expect(verification.dialogues).toBe(2);
    expect(verification.problems).toHaveLength(2);
    expect(verification.problems[0]).toMatch(
      /audio\/demo_topiocqa_0001\.wav: cannot be read: does not exist \(ENOENT\); check the path; dialogue demo_topiocqa_0001/,
    );
    expect(verification.problems[1]).toContain('txt_align/demo_topiocqa_0002.txt');
  });

  it('Japanese text is the translation and English the spoken rewrite, both kept in the metadata', async () => {
    const directory = path.join(demo.output.directory, 'data', 'ja', 'task', 'topiocqa_ja_demo', 'metadata');
    const metadata = JSON.parse(await readFile(path.join(directory, 'demo_topiocqa_0001.json'), 'utf8'));
    const first = metadata.utterances[0];
    expect(first.text.final).toMatch(/[\u3040-\u30ff\u4e00-\u9fff]/);
    expect(first.text.spoken).toMatch(/[a-z]/);
    expect(first.text.source).toMatch(/[a-z]/);
    expect(metadata.text.translatedBy).toBeTruthy();
  });

  it('a second run gives byte-identical files and synthesizes nothing', async () => {
    const before = await hashTree(demo.output.directory);
    const again = await copySharedBuild(shared, path.join(scratch, 'demo-again'));
    const second = await runBuild(again);
    expect(second.cache['synthesize-speech']?.misses ?? 0).toBe(0);
    expect(second.cache['synthesize-speech']?.hits).toBeGreaterThan(0);
    expect(second.cache['translate']?.misses ?? 0).toBe(0);
    expect(await hashTree(again.output.directory)).toEqual(before);
  });
});
