/**
 * The score stage end to end: a real (tiny) English build scored with the real DNSMOS models and
 * ffmpeg, scored again (DNSMOS from the cache) for determinism, then split; and a constructed
 * translated dataset scored through a fake `comet-score` on PATH and without any COMETKiwi scorer
 * (with a stand-in DNSMOS scorer). Dialogues are a few seconds long so DNSMOS stays quick (about
 * 0.3 s per 9 s window on an idle 2-core machine).
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWavPcm16 } from '../pipeline/audio/wav.ts';
import { DEFAULT_CONFIG_FILE, loadConfigFile, sharedDirectory } from '../pipeline/config.ts';
import type { DatasetQualityReport } from '../pipeline/quality/quality-report.ts';
import { bytesHash } from '../pipeline/storage/content-cache.ts';
import { runBuild } from '../pipeline/orchestration/build.ts';
import { FakeMosScorer } from '../pipeline/services/mos/fake-mos-scorer.ts';
import { scoreDatasetQuality, scoreQualityStage } from './score-quality.ts';
import { languagePackOf, registerLanguagePacks } from '../pipeline/model/language-pack.ts';
import type { ProgressEvent } from '../pipeline/run/progress.ts';
import { splitDatasets } from './split-dev-test.ts';

const DNSMOS_DIRECTORY = path.join(sharedDirectory(), 'models', 'dnsmos');

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'score-quality-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A TopiOCQA raw-release corpus of two short conversations (one question and answer each). */
function tinyCorpus(): unknown[] {
  const turn = (conversation: number, question: string, answer: string, topic: string) => ({
    Context: [],
    Conversation_no: conversation,
    Turn_no: 1,
    Question: question,
    is_nq: true,
    Answer: answer,
    Topic: topic,
    Topic_section: 'Introduction',
  });
  return [
    turn(1, 'where is the eiffel tower', 'In Paris, on the Champ de Mars', 'Eiffel Tower'),
    turn(2, 'who wrote hamlet', 'William Shakespeare wrote it around 1600', 'Hamlet'),
  ];
}

describe('score stage on a real build', () => {
  let dataset: string;
  let first: DatasetQualityReport;
  const firstProgress: ProgressEvent[] = [];
  const buildProgress: ProgressEvent[] = [];
  beforeAll(async () => {
    const corpus = path.join(scratch, 'tiny_topiocqa.json');
    await writeFile(corpus, JSON.stringify(tinyCorpus()));
    const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
    const output = path.join(scratch, 'build');
    await runBuild(
      {
        ...base,
        name: 'tiny',
        languages: ['en'],
        corpus: { ...base.corpus, path: corpus, limit: null },
        output: { directory: output, cacheDirectory: path.join(scratch, 'cache') },
        datasets: { en: 'tiny_en', bargeIn: false },
        llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
      },
      { progress: (event) => buildProgress.push(event) },
    );
    dataset = path.join(output, 'data', 'en', 'task', 'tiny_en');
    first = await scoreDatasetQuality(dataset, {
      dnsmosModels: { modelDirectory: DNSMOS_DIRECTORY },
      cacheDirectory: path.join(scratch, 'cache'),
      progress: (event) => firstProgress.push(event),
    });
  });

  it('reports its progress in channel-seconds: each dialogue planned as 2 × its duration, DNSMOS advancing it per batch of windows to that amount', () => {
    // the build scored the dataset (DNSMOS computed); the score run after it found every dialogue in the cache
    const scoring = buildProgress.filter((event) => event.type !== 'log' && event.stage === 'score-quality');
    expect(scoring[0]).toEqual({
      type: 'stage-start',
      language: 'en',
      stage: 'score-quality',
      dataset: 'tiny_en',
      total: 2,
    });
    expect(
      firstProgress.filter((event) => event.type === 'item').map((event) => (event as { status: string }).status),
    ).toEqual(['cached', 'cached']);
    for (const dialogue of first.dialogues) {
      const of = (type: string) =>
        scoring.filter((event) => event.type === type && 'id' in event && event.id === dialogue.id);
      const planned = of('item-planned').map((event) => (event as { amount: number }).amount);
      expect(planned).toEqual([2 * dialogue.durationSeconds]);
      const advanced = of('item-advanced').map((event) => (event as { amount: number }).amount);
      // at least one call per batch of windows of each channel (these short dialogues: one batch each)
      expect(advanced.length).toBeGreaterThanOrEqual(2);
      expect(advanced.reduce((sum, amount) => sum + amount, 0)).toBeCloseTo(planned[0]!, 2);
      expect(of('item')).toEqual([
        { type: 'item', language: 'en', stage: 'score-quality', dataset: 'tiny_en', id: dialogue.id, status: 'done' },
      ]);
    }
  });

  it('writes quality.json with DNSMOS per channel and dialogue, loudness, speech rate, and no COMETKiwi', async () => {
    expect(first.language).toBe('en');
    expect(first.dialogues.map((dialogue) => dialogue.id)).toHaveLength(2);
    expect(first.cometKiwi).toBeNull();
    for (const dialogue of first.dialogues) {
      expect(dialogue.dnsmos.channels).toHaveLength(2);
      expect(dialogue.dnsmos.channels.every((channel) => channel.hasSpeech && channel.scores !== null)).toBe(true);
      expect(dialogue.dnsmos.dialogue!.ovrl).toBeGreaterThan(1);
      expect(dialogue.dnsmos.dialogue!.ovrl).toBeLessThan(5);
      expect(dialogue.dnsmos.dialogue!.ovrl).toBeCloseTo(
        (dialogue.dnsmos.channels[0]!.scores!.ovrl + dialogue.dnsmos.channels[1]!.scores!.ovrl) / 2,
        3,
      );
      expect(dialogue.speakerIds).toHaveLength(2);
      expect(dialogue.cometKiwi).toBeNull();
      for (const channel of dialogue.signal.channels) expect(channel.loudness!.integratedLufs).toBeLessThan(0);
      expect(dialogue.signal.utterances.map((utterance) => utterance.kind)).toEqual(['question', 'answer']);
      for (const utterance of dialogue.signal.utterances) {
        expect(utterance.speechSeconds).toBeGreaterThan(0);
        expect(utterance.speechRate).toBeGreaterThan(1);
      }
    }
    expect(first.aggregates.dialogues).toBe(2);
    expect(first.aggregates.dnsmos!.ovrl).toBeCloseTo(
      (first.dialogues[0]!.dnsmos.dialogue!.ovrl + first.dialogues[1]!.dnsmos.dialogue!.ovrl) / 2,
      3,
    );
    expect(first.aggregates.speechRateUnit).toBe('syllable');
    const tables = await readFile(path.join(dataset, 'tables.md'), 'utf8');
    expect(tables).toMatch(/^# MT-QA \(En\): tiny_en/);
    expect(tables).toMatch(/\| all \| 2 \| \d\.\d\d \| \d\.\d\d \| \d\.\d\d \| \d\.\d\d \| — \|/);
  });

  it('is deterministic: scoring again gives the same bytes (DNSMOS from the cache); then splits', async () => {
    const before = bytesHash(await readFile(path.join(dataset, 'quality.json')));
    const again: ProgressEvent[] = [];
    await scoreDatasetQuality(dataset, {
      dnsmosModels: { modelDirectory: DNSMOS_DIRECTORY },
      cacheDirectory: path.join(scratch, 'cache'),
      progress: (event) => again.push(event),
    });
    expect(bytesHash(await readFile(path.join(dataset, 'quality.json')))).toBe(before);
    expect(again.filter((event) => event.type === 'item').map((event) => (event as { status: string }).status)).toEqual(
      ['cached', 'cached'],
    );
    const [result] = await splitDatasets([dataset], { testHours: 1 / 3600, testSmall: 1 });
    const report = result!.report;
    expect(report.splits.test!.dialogues).toBe(1);
    const [testDialogue, otherDialogue] = [...first.dialogues].sort(
      (a, b) => b.dnsmos.dialogue!.ovrl - a.dnsmos.dialogue!.ovrl || (a.id < b.id ? -1 : 1),
    );
    expect(report.splits.test!.ids).toEqual([testDialogue!.id]);
    // Whether the two dialogues share a speaker depends on the voices the build assigned (one fixed
    // pair, or a roster); either way dev never shares a speaker with test, and an empty dev says why.
    const shared = otherDialogue!.speakerIds.some((speaker) => testDialogue!.speakerIds.includes(speaker));
    expect(report.splits.dev!.ids).toEqual(shared ? [] : [otherDialogue!.id]);
    expect(report.devEmptyBecauseOfSpeakerOverlap).toBe(shared);
    expect(report.excludedForSpeakerOverlap.map((item) => item.id)).toEqual(shared ? [otherDialogue!.id] : []);
  });

  it('quality.dnsmos.hopSeconds: another hop is scored anew under its own cache entries (never more windows) and says so in the methods; the reference hop keeps its entries', async () => {
    const cacheDirectory = path.join(scratch, 'cache');
    const keys = async (hopSeconds?: number) =>
      (
        await scoreQualityStage.cacheKeys!(
          { directory: dataset },
          { cacheDirectory, ...(hopSeconds === undefined ? {} : { dnsmos: { hopSeconds } }) },
        )
      ).map((key) => JSON.stringify(key));
    expect(await keys(1)).toEqual(await keys());
    const coarseKeys = await keys(9.01);
    expect(coarseKeys).toHaveLength(2);
    for (const key of coarseKeys) expect(await keys()).not.toContain(key);
    const events: ProgressEvent[] = [];
    const coarse = await scoreDatasetQuality(dataset, {
      dnsmosModels: { modelDirectory: DNSMOS_DIRECTORY },
      cacheDirectory,
      dnsmos: { hopSeconds: 9.01 },
      progress: (event) => events.push(event),
    });
    // computed, not read from the reference hop's entries
    expect(
      events.filter((event) => event.type === 'item').map((event) => (event as { status: string }).status),
    ).toEqual(['done', 'done']);
    expect(coarse.methods.dnsmos).toMatch(/9\.01 s windows every 9\.01 s/);
    expect(first.methods.dnsmos).not.toMatch(/every/);
    const windows = (report: DatasetQualityReport) =>
      report.dialogues.flatMap((dialogue) => dialogue.dnsmos.channels.map((channel) => channel.scores?.windows ?? 0));
    // these dialogues are about one window long, so the count may be the same (fewer windows on longer audio: dnsmos.test.ts)
    for (const [index, count] of windows(coarse).entries()) expect(count).toBeLessThanOrEqual(windows(first)[index]!);
    // the reference hop again: its entries are still there, and quality.json is the first one's
    const again: ProgressEvent[] = [];
    const reference = await scoreDatasetQuality(dataset, {
      dnsmosModels: { modelDirectory: DNSMOS_DIRECTORY },
      cacheDirectory,
      progress: (event) => again.push(event),
    });
    expect(again.filter((event) => event.type === 'item').map((event) => (event as { status: string }).status)).toEqual(
      ['cached', 'cached'],
    );
    expect(reference).toEqual(first);
  });
});

// ---- a translated dataset, constructed, with a fake comet-score ----

function tone(seconds: number, rate: number, start: number, end: number): Float32Array {
  const samples = new Float32Array(Math.round(seconds * rate));
  for (let index = Math.round(start * rate); index < Math.round(end * rate); index++)
    samples[index] =
      0.1 * Math.sin((2 * Math.PI * 220 * index) / rate) * (1 + 0.3 * Math.sin((2 * Math.PI * 3 * index) / rate));
  return samples;
}

async function writeTranslatedDataset(directory: string): Promise<void> {
  await mkdir(path.join(directory, 'metadata'), { recursive: true });
  await mkdir(path.join(directory, 'audio'), { recursive: true });
  const files: Record<string, string> = {};
  let jsonl = '';
  const texts = [
    [
      ['When was the Eiffel Tower built?', 'エッフェル塔はいつ建てられたのですか？'],
      [
        'It was built between eighteen eighty-seven and eighteen eighty-nine.',
        'エッフェル塔は千八百八十七年から千八百八十九年にかけて建てられました。',
      ],
    ],
    [
      ['Who designed it?', '誰が設計したのですか？'],
      ['Gustave Eiffel designed it.', 'ギュスターヴ・エッフェルが設計しました。'],
    ],
  ];
  for (const [index, pairs] of texts.entries()) {
    const id = `ja_${index + 1}`;
    const rate = 16000;
    const wav = encodeWavPcm16({ channels: [tone(6, rate, 2.5, 5.5), tone(6, rate, 0.5, 2.0)], sampleRate: rate });
    await writeFile(path.join(directory, 'audio', `${id}.wav`), wav);
    files[`audio/${id}.wav`] = bytesHash(wav);
    jsonl += `{"id": "${id}", "events": {"0": [{"event": "TURN_SHIFT", "time": [2.0, 2.5]}, {"event": "TURN", "time": [2.5, 5.5]}], "1": [{"event": "TURN", "time": [0.5, 2.0]}]}}\n`;
    await writeFile(
      path.join(directory, 'metadata', `${id}.json`),
      JSON.stringify({
        id,
        language: 'ja',
        source: { corpus: 'TopiOCQA', file: 'demo.json', conversationNumber: index + 1 },
        text: { rewrittenBy: 'test', translatedBy: 'test translation' },
        speakers: { user: { speakerId: 'open-jtalk:user' }, system: { speakerId: 'open-jtalk:system' } },
        durationSeconds: 6,
        utterances: [
          {
            index: 0,
            role: 'user',
            kind: 'question',
            channel: 1,
            start: 0.5,
            end: 2.0,
            text: { source: 'x', spoken: pairs[0]![0], final: pairs[0]![1], synthesized: pairs[0]![1] },
          },
          {
            index: 1,
            role: 'system',
            kind: 'answer',
            channel: 0,
            start: 2.5,
            end: 5.5,
            text: { source: 'y', spoken: pairs[1]![0], final: pairs[1]![1], synthesized: pairs[1]![1] },
          },
        ],
      }),
    );
  }
  await writeFile(path.join(directory, 'all.jsonl'), jsonl);
  await writeFile(
    path.join(directory, 'manifest.json'),
    JSON.stringify({ language: 'ja', dataset: 'topiocqa_ja_test', domain: 'task', files }),
  );
  await writeFile(
    path.join(directory, 'summary.json'),
    JSON.stringify({ failed: [{ id: 'ja_9', stage: 'synthesize-speech', reason: 'HTTP 500' }] }),
  );
}

/** A stand-in DNSMOS scorer (these tests are about COMETKiwi; the real scorer is exercised above). */
const stubScorer = new FakeMosScorer();

describe('score stage on a translated dataset', () => {
  let dataset: string;
  let bin: string;
  beforeAll(async () => {
    dataset = path.join(scratch, 'data', 'ja', 'task', 'topiocqa_ja_test');
    await writeTranslatedDataset(dataset);
    bin = path.join(scratch, 'bin');
    await mkdir(bin, { recursive: true });
    // A fake comet-score printing the real output format: score = 0.8 + 0.01 * segment index.
    await writeFile(
      path.join(bin, 'comet-score'),
      `#!${process.execPath}
const fs = require('node:fs');
const args = process.argv.slice(2);
const mt = args[args.indexOf('-t') + 1];
const lines = fs.readFileSync(mt, 'utf8').split('\\n').filter(Boolean);
process.stderr.write('Seed set to 1\\nEncoder model frozen.\\nGPU available: False, used: False\\n');
lines.forEach((_, i) => console.log(mt + '\\tSegment ' + i + '\\tscore: ' + (0.8 + 0.01 * i).toFixed(4)));
console.log(mt + '\\tscore: ' + (0.8 + 0.005 * (lines.length - 1)).toFixed(4));
`,
    );
    await chmod(path.join(bin, 'comet-score'), 0o755);
  });

  it('scores every translated utterance with comet-score and records quarantined dialogues', async () => {
    const report = await scoreDatasetQuality(dataset, {
      dnsmosScorer: stubScorer,
      cometKiwi: { environment: { PATH: bin } },
    });
    expect(report.cometKiwi).toEqual({
      computed: true,
      scorer: 'command',
      model: 'Unbabel/wmt22-cometkiwi-da',
      systemScore: 0.815,
      segments: 4,
    });
    expect(report.dialogues.map((dialogue) => dialogue.cometKiwi)).toEqual([
      {
        mean: 0.805,
        segments: [
          { utteranceIndex: 0, score: 0.8 },
          { utteranceIndex: 1, score: 0.81 },
        ],
      },
      {
        mean: 0.825,
        segments: [
          { utteranceIndex: 0, score: 0.82 },
          { utteranceIndex: 1, score: 0.83 },
        ],
      },
    ]);
    expect(report.aggregates.cometKiwi).toBe(0.815);
    expect(report.aggregates.speechRateUnit).toBe('mora');
    expect(report.quarantined).toEqual([{ id: 'ja_9', stage: 'synthesize-speech', reason: 'HTTP 500' }]);
    expect(await readFile(path.join(dataset, 'tables.md'), 'utf8')).toMatch(
      /\| all \| 2 \| [^|]+ \| [^|]+ \| [^|]+ \| [^|]+ \| 0\.815 \|/,
    );
  });

  it('records COMETKiwi as not computed, with the reason, when no scorer is available or it fails', async () => {
    const report = await scoreDatasetQuality(dataset, {
      dnsmosScorer: stubScorer,
      cometKiwi: { environment: { PATH: scratch } },
      measureLoudness: false,
    });
    expect(report.cometKiwi).toEqual({
      computed: false,
      reason: expect.stringContaining('"comet-score" is not on PATH'),
    });
    expect(report.dialogues[0]!.cometKiwi).toEqual({
      mean: null,
      segments: [
        { utteranceIndex: 0, score: null },
        { utteranceIndex: 1, score: null },
      ],
    });
    expect(report.aggregates.cometKiwi).toBeNull();
    expect(await readFile(path.join(dataset, 'tables.md'), 'utf8')).toContain('not computed: no COMETKiwi scorer');
    await expect(
      scoreDatasetQuality(dataset, {
        dnsmosScorer: stubScorer,
        cometKiwi: { environment: { PATH: scratch } },
        cometKiwiRequired: true,
      }),
    ).rejects.toThrow(/required but not available/);
    const failing = await scoreDatasetQuality(dataset, {
      dnsmosScorer: stubScorer,
      cometKiwi: { command: path.join(bin, 'missing-comet') },
      measureLoudness: false,
    });
    expect(failing.cometKiwi).toMatchObject({ computed: false });
  });

  it('scores en → target only when the language packs say COMETKiwi covers the target: else not computed, naming the pack, and the scorer is not run', async () => {
    const japanese = languagePackOf('ja');
    registerLanguagePacks([{ ...japanese, cometKiwi: { supported: false } }]);
    try {
      // the working fake scorer is on PATH: it would score if it were asked
      const report = await scoreDatasetQuality(dataset, {
        dnsmosScorer: stubScorer,
        cometKiwi: { environment: { PATH: bin } },
        measureLoudness: false,
      });
      expect(report.cometKiwi).toEqual({
        computed: false,
        reason: 'COMETKiwi does not cover Japanese (language pack ja cometKiwi.supported: false)',
      });
      expect(report.aggregates.cometKiwi).toBeNull();
    } finally {
      registerLanguagePacks([japanese]);
    }
  });
});
