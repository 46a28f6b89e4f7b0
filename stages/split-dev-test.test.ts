import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  aggregateQuality,
  type DatasetQualityReport,
  type DialogueQuality,
} from '../pipeline/quality/quality-report.ts';
import { DEFAULT_QUALITY_THRESHOLDS } from '../pipeline/quality/thresholds.ts';
import { applySplitToVariant, excludedDialogues, splitDatasets, SplitError } from './split-dev-test.ts';
import { rankByDnsmos, selectSplits, speakerGroups, type SplitCandidate } from '../pipeline/quality/split-selection.ts';
import { type SplitReport } from '../pipeline/model/split-report.ts';
import type { Language } from '../pipeline/model/types.ts';

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), state | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const next = random(seed);
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(next() * (index + 1));
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}

/**
 * 40 dialogues from a roster of 10 speaker pairs (user u{k} with system s{k}, k drawn pseudo-randomly);
 * OVRL 2..4 in steps of 0.05, so there are ties.
 */
function pooledCandidates(): SplitCandidate[] {
  const next = random(7);
  return Array.from({ length: 40 }, (_, index) => {
    const pair = Math.floor(next() * 10);
    return {
      id: `dlg_${String(index + 1).padStart(4, '0')}`,
      durationSeconds: 60 + Math.round(next() * 60),
      ovrl: 2 + Math.round(next() * 40) * 0.05,
      speakerIds: [`user:u${pair}`, `system:s${pair}`],
    };
  });
}

describe('selectSplits', () => {
  const candidates = pooledCandidates();
  const target = 10 * 60;

  it('keeps dev speaker-disjoint from test and accounts for every dialogue', () => {
    const selection = selectSplits(candidates, { testSeconds: target });
    const speakersOf = new Map(candidates.map((candidate) => [candidate.id, candidate.speakerIds]));
    const testSpeakers = new Set(selection.test.flatMap((id) => speakersOf.get(id)!));
    for (const id of selection.dev)
      for (const speaker of speakersOf.get(id)!) expect(testSpeakers.has(speaker)).toBe(false);
    for (const item of selection.excludedForSpeakerOverlap)
      expect(item.sharedSpeakers.every((speaker) => testSpeakers.has(speaker))).toBe(true);
    const all = [
      ...selection.test,
      ...selection.dev,
      ...selection.excludedForSpeakerOverlap.map((item) => item.id),
    ].sort();
    expect(all).toEqual(candidates.map((candidate) => candidate.id).sort());
    expect(selection.dev.length).toBeGreaterThan(0);
    expect(selection.excludedForSpeakerOverlap.length).toBeGreaterThan(0);
    expect(selection.testSpeakers).toEqual([...testSpeakers].sort());
  });

  it('takes the best-ranked dialogues until the target duration is reached, no more', () => {
    const selection = selectSplits(candidates, { testSeconds: target });
    const byId = new Map(candidates.map((candidate) => [candidate.id, candidate]));
    expect(selection.test).toEqual(selection.ranking.slice(0, selection.test.length));
    const seconds = selection.test.reduce((sum, id) => sum + byId.get(id)!.durationSeconds, 0);
    const last = byId.get(selection.test[selection.test.length - 1]!)!.durationSeconds;
    expect(seconds).toBe(selection.testSeconds);
    expect(seconds).toBeGreaterThanOrEqual(target);
    expect(seconds - last).toBeLessThan(target);
    expect(selection.targetReached).toBe(true);
    const worstTest = Math.min(...selection.test.map((id) => byId.get(id)!.ovrl!));
    const bestOther = Math.max(
      ...candidates.filter((candidate) => !selection.test.includes(candidate.id)).map((candidate) => candidate.ovrl!),
    );
    expect(worstTest).toBeGreaterThanOrEqual(bestOther);
  });

  it('is deterministic: same result on re-run and for any input order; ties go by id', () => {
    const first = selectSplits(candidates, { testSeconds: target, testSmallCount: 3 });
    expect(selectSplits(candidates, { testSeconds: target, testSmallCount: 3 })).toEqual(first);
    for (const seed of [1, 2, 3])
      expect(selectSplits(shuffled(candidates, seed), { testSeconds: target, testSmallCount: 3 })).toEqual(first);
    const tied = [
      { id: 'b', ovrl: 3.1 },
      { id: 'c', ovrl: null },
      { id: 'a', ovrl: 3.1 },
      { id: 'd', ovrl: 3.5 },
      { id: 'aa', ovrl: 3.1 },
    ];
    expect(rankByDnsmos(tied).map((item) => item.id)).toEqual(['d', 'a', 'aa', 'b', 'c']);
    expect(first.testSmall).toEqual(first.test.slice(0, 3));
  });

  it('reports an empty dev when every dialogue shares the same two speakers, or keeps them when asked', () => {
    const same = candidates.map((candidate) => ({
      ...candidate,
      speakerIds: ['espeak-ng:user:{}', 'espeak-ng:system:{}'],
    }));
    const disjoint = selectSplits(same, { testSeconds: target });
    expect(disjoint.dev).toEqual([]);
    expect(disjoint.devEmptyBecauseOfSpeakerOverlap).toBe(true);
    expect(disjoint.excludedForSpeakerOverlap).toHaveLength(candidates.length - disjoint.test.length);
    expect(disjoint.warnings.join('\n')).toMatch(
      /dev is empty: all \d+ dialogue\(s\) outside test share a speaker with test \(espeak-ng:system:\{\}, espeak-ng:user:\{\}\)/,
    );
    const overlapping = selectSplits(same, { testSeconds: target, speakerDisjoint: false });
    expect(overlapping.test).toEqual(disjoint.test);
    expect(overlapping.dev).toHaveLength(candidates.length - disjoint.test.length);
    expect(overlapping.devSharingSpeakersWithTest).toEqual(overlapping.dev);
    expect(overlapping.devEmptyBecauseOfSpeakerOverlap).toBe(false);
  });

  it('can fill test with whole speaker groups, excluding nothing', () => {
    const selection = selectSplits(candidates, { testSeconds: target, unit: 'speaker-group' });
    expect(selection.excludedForSpeakerOverlap).toEqual([]);
    expect(selection.test.length + selection.dev.length).toBe(candidates.length);
    const speakersOf = new Map(candidates.map((candidate) => [candidate.id, candidate.speakerIds]));
    const testSpeakers = new Set(selection.test.flatMap((id) => speakersOf.get(id)!));
    for (const id of selection.dev)
      for (const speaker of speakersOf.get(id)!) expect(testSpeakers.has(speaker)).toBe(false);
    expect(selection.testSeconds).toBeGreaterThanOrEqual(target);
    expect(selection.speakerGroups.count).toBe(speakerGroups(candidates).length);
    expect(selectSplits(shuffled(candidates, 9), { testSeconds: target, unit: 'speaker-group' })).toEqual(selection);
  });

  it('warns when a roster paired freely connects (nearly) every dialogue through shared speakers', () => {
    const next = random(11);
    const roster = Array.from({ length: 24 }, (_, index) => `espeak-ng:voice${index}`);
    const free = candidates.map((candidate) => {
      const user = Math.floor(next() * 24);
      const system = (user + 1 + Math.floor(next() * 23)) % 24;
      return { ...candidate, speakerIds: [roster[user]!, roster[system]!] };
    });
    const selection = selectSplits(free, { testSeconds: target });
    expect(selection.speakerGroups.largest).toBeGreaterThan(free.length / 2);
    expect(selection.warnings.join('\n')).toMatch(/shared speakers connect \d+ of 40 dialogues into one group/);
  });

  it('keeps dialogues without DNSMOS out of test, and puts a too-short dataset in test whole', () => {
    const small: SplitCandidate[] = [
      { id: 'x1', durationSeconds: 100, ovrl: 3, speakerIds: ['a'] },
      { id: 'x2', durationSeconds: 100, ovrl: null, speakerIds: ['b'] },
      { id: 'x3', durationSeconds: 100, ovrl: 2, speakerIds: ['c'] },
    ];
    const selection = selectSplits(small, { testSeconds: 3600, testSmallCount: 5 });
    expect(selection).toMatchObject({
      test: ['x1', 'x3'],
      dev: ['x2'],
      withoutDnsmos: ['x2'],
      targetReached: false,
      testSmall: ['x1', 'x3'],
    });
    expect(selection.warnings).toHaveLength(3);
    expect(() => selectSplits(small, { testSeconds: 0 })).toThrow(RangeError);
    expect(() => selectSplits(small, { testSeconds: 10, testSmallCount: 0 })).toThrow(RangeError);
    expect(() => selectSplits([...small, small[0]!], { testSeconds: 10 })).toThrow(RangeError);
  });
});

// ---- splitDatasets on constructed dataset folders ----

/** A stand-in audio SHA-256 (hex, as manifest.json holds it) derived from a name. */
const fakeSha = (name: string): string => createHash('sha256').update(name).digest('hex');

function dialogueQuality(id: string, ovrl: number, speakerIds: string[], durationSeconds: number): DialogueQuality {
  return {
    id,
    durationSeconds,
    audioSha256: fakeSha(id),
    speakerIds,
    sourceConversation: `TopiOCQA/dev.json#${id}`,
    dnsmos: { dialogue: { ovrl, sig: ovrl + 0.3, bak: 3.9, p808: 3.5 }, channels: [] },
    cometKiwi: null,
    signal: {
      durationSeconds,
      mutualSilenceRatio: 0.2,
      channels: [],
      programmeLoudness: null,
      utterances: [],
      speechRateByRole: { user: { units: 40, speechSeconds: 10, speechRate: 4 } },
      unitCounter: 'test',
      flagCounts: {},
    },
  };
}

async function writeDataset(
  directory: string,
  language: Language,
  dialogues: { id: string; ovrl: number; speakers: [string, string]; seconds: number }[],
): Promise<void> {
  await mkdir(path.join(directory, 'metadata'), { recursive: true });
  const files: Record<string, string> = {};
  let jsonl = '';
  for (const dialogue of dialogues) {
    // Lines exactly as render-dataset writes them, with a float time to check byte-exact copies.
    jsonl += `{"id": "${dialogue.id}", "events": {"0": [{"event": "TURN", "time": [0.5, 3.0]}, {"event": "TURN_SHIFT", "time": [3.0, 3.25]}], "1": [{"event": "TURN", "time": [3.25, 9.1]}, {"event": "BC", "time": [1.0, 1.4]}]}}\n`;
    files[`audio/${dialogue.id}.wav`] = fakeSha(dialogue.id);
    const metadata = {
      id: dialogue.id,
      language,
      source: { corpus: 'TopiOCQA', file: 'dev.json', conversationNumber: Number(dialogue.id.replace(/\D/g, '')) },
      speakers: { user: { speakerId: dialogue.speakers[0] }, system: { speakerId: dialogue.speakers[1] } },
      durationSeconds: dialogue.seconds,
      utterances: [],
    };
    await writeFile(path.join(directory, 'metadata', `${dialogue.id}.json`), JSON.stringify(metadata));
  }
  await writeFile(path.join(directory, 'all.jsonl'), jsonl);
  await writeFile(
    path.join(directory, 'manifest.json'),
    JSON.stringify({ language, dataset: path.basename(directory), domain: 'task', files }),
  );
  const qualities = dialogues.map((dialogue) => {
    const quality = dialogueQuality(dialogue.id, dialogue.ovrl, [...dialogue.speakers].sort(), dialogue.seconds);
    quality.sourceConversation = `TopiOCQA/dev.json#${Number(dialogue.id.replace(/\D/g, ''))}`;
    return quality;
  });
  const report: DatasetQualityReport = {
    format: 'duplexsynth-quality',
    version: 1,
    language,
    dataset: path.basename(directory),
    methods: { dnsmos: '', cometKiwi: '', loudness: '', speechRate: '' },
    thresholds: DEFAULT_QUALITY_THRESHOLDS,
    cometKiwi: null,
    aggregates: aggregateQuality(qualities, language === 'ja' ? 'mora' : 'syllable'),
    quarantined: [],
    dialogues: qualities,
  };
  await writeFile(path.join(directory, 'quality.json'), JSON.stringify(report));
}

describe('splitDatasets', () => {
  let root: string;
  let english: string;
  let japanese: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'split-test-'));
    english = path.join(root, 'data', 'en', 'task', 'topiocqa');
    japanese = path.join(root, 'data', 'ja', 'task', 'topiocqa_ja');
    const ids = Array.from({ length: 10 }, (_, index) => `topiocqa_dev_${String(index + 1).padStart(4, '0')}`);
    // Speaker roster of three voices per role, assigned by index; OVRL differs per language.
    await writeDataset(
      english,
      'en',
      ids.map((id, index) => ({
        id,
        ovrl: 3 + ((index * 7) % 10) / 20,
        speakers: [`en:user:${index % 3}`, `en:system:${index % 3}`],
        seconds: 100,
      })),
    );
    await writeDataset(
      japanese,
      'ja',
      ids.map((id, index) => ({
        id,
        ovrl: 3 + ((index * 3) % 10) / 20,
        speakers: [`ja:user:${index % 3}`, `ja:system:${index % 3}`],
        seconds: 100,
      })),
    );
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('writes byte-exact split files, split.json, tables, and the test ids shared between languages; re-runs identically', async () => {
    const options = { testHours: 250 / 3600, testSmall: 2, unit: 'dialogue' as const };
    const results = await splitDatasets([english, japanese], options);
    const all = await readFile(path.join(english, 'all.jsonl'), 'utf8');
    const lines = new Map(
      all
        .split('\n')
        .filter(Boolean)
        .map((line) => [JSON.parse(line).id as string, `${line}\n`]),
    );
    const report = JSON.parse(await readFile(path.join(english, 'split.json'), 'utf8')) as SplitReport;
    expect(report.splits.test!.dialogues).toBe(3);
    expect(report.splits.test!.hours).toBeCloseTo(300 / 3600, 4);
    for (const [split, ids] of [
      ['test', report.splits.test!.ids],
      ['test_other', report.splits.dev!.ids],
      ['dev', report.splits.dev!.ids],
      ['test_small', report.splits.test_small!.ids],
    ] as const) {
      expect(await readFile(path.join(english, `${split}.jsonl`), 'utf8')).toBe(
        ids.map((id) => lines.get(id)!).join(''),
      );
    }
    expect(report.ranking.slice(0, 3).map((item) => item.id)).toEqual(
      report.splits
        .test!.ids.slice()
        .sort((a, b) => report.ranking.findIndex((r) => r.id === a) - report.ranking.findIndex((r) => r.id === b)),
    );
    const testSpeakers = new Set(report.testSpeakers);
    const metadataSpeakers = async (id: string) =>
      Object.values(
        (
          JSON.parse(await readFile(path.join(english, 'metadata', `${id}.json`), 'utf8')) as {
            speakers: Record<string, { speakerId: string }>;
          }
        ).speakers,
      ).map((speaker) => speaker.speakerId);
    for (const id of report.splits.dev!.ids)
      for (const speaker of await metadataSpeakers(id)) expect(testSpeakers.has(speaker)).toBe(false);
    // dialogue by dialogue, the rest sharing a speaker with test is in neither split: each listed with its reason
    const inSplits = new Set([...report.splits.test!.ids, ...report.splits.dev!.ids]);
    const outside = [...lines.keys()].filter((id) => !inSplits.has(id));
    expect(report.excluded.map((item) => item.id)).toEqual(outside);
    expect(report.excluded.map((item) => item.id).sort()).toEqual(
      report.excludedForSpeakerOverlap.map((item) => item.id).sort(),
    );
    for (const item of report.excluded)
      expect(item.reason).toMatch(/^shares speaker\(s\) en:(user|system):\d.* with test$/);
    const japaneseReport = results[1]!.report;
    const sharedExpected = report.splits.test!.ids.filter((id) => japaneseReport.splits.test!.ids.includes(id));
    expect(report.sharedTestWithOtherLanguages).toEqual([
      { language: 'ja', dataset: 'topiocqa_ja', ids: sharedExpected },
    ]);
    expect(japaneseReport.sharedTestWithOtherLanguages[0]!.ids).toEqual(sharedExpected);
    const tables = await readFile(path.join(english, 'tables.md'), 'utf8');
    expect(tables).toContain('| test | 3 | 0.08 | 100.0 | 3 | 0 | 3 | 0 |');
    expect(tables).toMatch(/\| test_other \| \d+ \|/);

    const snapshot = async () =>
      Promise.all(
        ['test.jsonl', 'dev.jsonl', 'test_small.jsonl', 'split.json', 'tables.md', 'tables.json'].map((name) =>
          readFile(path.join(english, name), 'utf8'),
        ),
      );
    const before = await snapshot();
    await splitDatasets([english, japanese], options);
    expect(await snapshot()).toEqual(before);

    await splitDatasets([english], { testHours: 250 / 3600, devAlias: false });
    await expect(readFile(path.join(english, 'test_small.jsonl'), 'utf8')).rejects.toThrow(/ENOENT/);
    await expect(readFile(path.join(english, 'dev.jsonl'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect((await readFile(path.join(english, 'test_other.jsonl'), 'utf8')).length).toBeGreaterThan(0);
  });

  it('lists every dialogue in neither split with its reason (excludedDialogues)', () => {
    const reasons = new Map([['b', 'shares speaker(s) s1 with test']]);
    expect(excludedDialogues(['a', 'b', 'c', 'd'], ['a', 'd'], reasons)).toEqual([
      { id: 'b', reason: 'shares speaker(s) s1 with test' },
      { id: 'c', reason: 'in no split (unexpected: please report it)' },
    ]);
    expect(excludedDialogues(['a'], ['a'], reasons)).toEqual([]);
  });

  it('by default fills test with whole speaker groups, as the config does: every dialogue is in test or test_other', async () => {
    const [result] = await splitDatasets([english], { testHours: 250 / 3600 });
    const report = result!.report;
    expect(report.settings.unit).toBe('speaker-group');
    expect(report.excluded).toEqual([]);
    expect(report.splits.test!.dialogues + report.splits.dev!.dialogues).toBe(10);
    expect(report.splits.dev!.dialogues).toBeGreaterThan(0);
  });

  it('a variant takes the split of the dataset it varies (same ids), and names ids it lacks', async () => {
    const [base] = await splitDatasets([english], { testHours: 250 / 3600, testSmall: 1, unit: 'dialogue' });
    const variant = path.join(root, 'data', 'en', 'task', 'topiocqa_bargein');
    const ids = Array.from({ length: 9 }, (_, index) => `topiocqa_dev_${String(index + 1).padStart(4, '0')}`); // 0010 failed in the variant
    await writeDataset(
      variant,
      'en',
      ids.map((id, index) => ({
        id,
        ovrl: 2,
        speakers: [`en:user:${index % 3}`, `en:system:${index % 3}`],
        seconds: 90,
      })),
    );
    const report = await applySplitToVariant(base!.report, variant);
    expect(report.dataset).toBe('topiocqa_bargein');
    expect(report.splits.test!.ids).toEqual(base!.report.splits.test!.ids.filter((id) => ids.includes(id)));
    expect(report.splits.dev!.ids).toEqual(base!.report.splits.dev!.ids.filter((id) => ids.includes(id)));
    expect(report.splits.test_small!.ids).toEqual(base!.report.splits.test_small!.ids.filter((id) => ids.includes(id)));
    const inBase = [...base!.report.splits.test!.ids, ...base!.report.splits.dev!.ids];
    if (inBase.includes('topiocqa_dev_0010')) expect(report.warnings.at(-1)).toMatch(/topiocqa_dev_0010/);
    const lines = (name: string) =>
      readFile(path.join(variant, name), 'utf8').then((text) =>
        text
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line).id as string),
      );
    expect(await lines('test.jsonl')).toEqual(report.splits.test!.ids);
    expect(await lines('test_other.jsonl')).toEqual(report.splits.dev!.ids);
    expect(await lines('dev.jsonl')).toEqual(report.splits.dev!.ids);
    expect(JSON.parse(await readFile(path.join(variant, 'split.json'), 'utf8')).settings.rankedBy).toMatch(
      /^the split of topiocqa /,
    );
    // the base's exclusions carry over with their reason, naming the base
    expect(report.excluded.map((item) => item.id)).toEqual(
      base!.report.excluded.map((item) => item.id).filter((id) => ids.includes(id)),
    );
    for (const item of report.excluded) expect(item.reason).toMatch(/with test \(in topiocqa\)$/);
  });

  it('refuses a missing or stale quality.json', async () => {
    const quality = path.join(japanese, 'quality.json');
    const text = await readFile(quality, 'utf8');
    await writeFile(quality, text.replace(`"${fakeSha('topiocqa_dev_0003')}"`, `"${fakeSha('changed')}"`));
    await expect(splitDatasets([japanese])).rejects.toThrow(
      /audio of topiocqa_dev_0003 changed since quality.json was written/,
    );
    await rm(quality);
    await expect(splitDatasets([japanese])).rejects.toThrow(SplitError);
    await writeFile(quality, text);
  });

  it('refuses audio changed after the build (its SHA-256 differs from manifest.json), naming the file', async () => {
    const audio = path.join(japanese, 'audio', 'topiocqa_dev_0002.wav');
    await mkdir(path.dirname(audio), { recursive: true });
    await writeFile(audio, 'edited by hand');
    await expect(splitDatasets([japanese])).rejects.toThrow(
      /audio\/topiocqa_dev_0002\.wav: the audio of topiocqa_dev_0002 differs from the SHA-256 in manifest\.json/,
    );
    await rm(audio);
  });
});
