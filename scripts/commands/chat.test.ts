/**
 * `duplexsynth chat` end to end. Nothing in ../shared is long enough for 120 s chat segments, so the
 * "recordings" are our own synthesized dialogues: six TopiOCQA dev conversations built offline, joined
 * three by three (scripts/concatenate-dialogues.ts) into two stereo WAVs with CTM word timings.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav } from '../../pipeline/audio/wav.ts';
import { DEFAULT_CONFIG_FILE, loadConfigFile, resolveConfig, sharedDirectory } from '../../pipeline/config.ts';
import { parseEventsLine } from '../../pipeline/events/index.ts';
import { runBuild } from '../../pipeline/orchestration/build.ts';
import { verifyDataset } from '../../pipeline/run/verify-dataset.ts';
import type { RecordingMosScorer } from '../../pipeline/services/mos/mos-scorer.ts';
import { concatenateDialogues } from '../concatenate-dialogues.ts';
import { runChat, type ChatOptions } from './chat.ts';

let scratch: string;
let recordings: string;

/**
 * DNSMOS is exercised on real audio by stages/score-quality tests and the bench (about 0.4 s of CPU
 * per second of audio here: the real scorer on these 8 minutes would dominate the test). This one gives
 * each segment a different OVRL from its length, so the ranking (and with it the split) is decided.
 */
const lengthScorer: RecordingMosScorer = {
  async scoreRecording(audio) {
    const ovrl = 2 + ((audio.channels[0]?.length ?? 0) % 997) / 997;
    const scores = {
      ovrl,
      sig: 3,
      bak: 3,
      p808: 3,
      raw: { ovrl, sig: 3, bak: 3 },
      windows: 1,
      hopCount: 1,
      durationSeconds: 9.01,
    };
    return {
      channels: audio.channels.map((_, channel) => ({ channel, hasSpeech: true, scores })),
      dialogue: { ovrl, sig: 3, bak: 3, p808: 3, channelCount: 2 },
    };
  },
};

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-chat-'));
  const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
  const config = resolveConfig(
    {
      name: 'chat-source',
      seed: 3,
      languages: ['en'],
      corpus: { path: path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json'), limit: 6 },
      output: { directory: path.join(scratch, 'source'), cacheDirectory: path.join(scratch, 'cache') },
      llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
      datasets: { en: 'topiocqa' },
      quality: { ...base.quality, enabled: false },
    },
    'chat source (test)',
    scratch,
  );
  await runBuild(config);
  recordings = path.join(scratch, 'recordings');
  await concatenateDialogues(path.join(scratch, 'source', 'data', 'en', 'task', 'topiocqa'), recordings, {
    perRecording: 3,
    gapSeconds: 2,
  });
  // A cold 6-dialogue build: 20-40 s in an ordinary full-suite run, but past the suite's 3-minute
  // default when other builds share the cores; twenty minutes still ends a hang.
}, 1_200_000);

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** IPUs (words merged across silences of at most 0.50 s) per channel, read straight from a CTM file. */
async function ctmUtterances(file: string): Promise<{ start: number; end: number }[]> {
  const words = (await readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith(';;'))
    .map((line) => line.trim().split(/\s+/))
    .map(([, channel, begin, duration]) => ({
      channel,
      start: Math.round(Number(begin) * 100),
      end: Math.round((Number(begin) + Number(duration)) * 100),
    }));
  const utterances: { start: number; end: number }[] = [];
  for (const channel of ['A', 'B']) {
    let current: { start: number; end: number } | undefined;
    for (const word of words.filter((candidate) => candidate.channel === channel).sort((a, b) => a.start - b.start)) {
      if (current !== undefined && word.start - current.end <= 50) current.end = Math.max(current.end, word.end);
      else utterances.push((current = { start: word.start, end: word.end }));
    }
  }
  return utterances;
}

const chatOptions = (out: string, extra: Partial<ChatOptions> = {}): ChatOptions => ({
  format: 'ctm',
  language: 'en',
  out,
  dataset: 'synthetic_topiocqa',
  vad: 'silero',
  testHours: 0.04,
  score: true,
  dnsmosScorer: lengthScorer,
  ...extra,
});

describe('duplexsynth chat', () => {
  it('cuts 100-140 s segments at silences of both speakers, in the benchmark layout, split speaker-disjoint', async () => {
    const result = await runChat([recordings], chatOptions(path.join(scratch, 'chat-1')));
    expect(result.failed).toEqual([]);
    expect(result.segments.length).toBeGreaterThanOrEqual(3);
    expect(result.directory).toBe(path.join(scratch, 'chat-1', 'data', 'en', 'chat', 'synthetic_topiocqa'));
    for (const segment of result.segments) {
      expect(segment.durationSeconds).toBeGreaterThanOrEqual(100);
      expect(segment.durationSeconds).toBeLessThanOrEqual(140);
      // No utterance of either speaker runs across a cut.
      for (const utterance of await ctmUtterances(path.join(recordings, `${segment.recording}.ctm`))) {
        for (const cut of [Math.round(segment.start * 100), Math.round(segment.end * 100)])
          expect(utterance.start < cut && utterance.end > cut).toBe(false);
      }
      const file = path.join(result.directory, 'audio', `${segment.id}.wav`);
      const audio = decodeWav(await readFile(file), file);
      expect(audio.channels).toHaveLength(2);
      expect(audio.channels[0]?.length).toBe(Math.round(segment.durationSeconds * audio.sampleRate));
    }
    // Events re-derived from the words by the recorded rules, and the loader's lookups: no problem.
    const manifest = JSON.parse(await readFile(path.join(result.directory, 'manifest.json'), 'utf8'));
    expect(manifest.eventDerivation).toEqual({
      from: 'words',
      hasWords: true,
      thresholds: { maxPauseInIpu: 50, maxBackchannel: 80, bargeInOverlap: 40 },
    });
    const verified = await verifyDataset(result.directory);
    expect(verified.dialogues).toBe(result.segments.length);
    expect(verified.problems).toEqual([]);
    // Both channels carry turns (chat data evaluates channels 0 and 1).
    const lines = (await readFile(path.join(result.directory, 'all.jsonl'), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((line) => parseEventsLine(line, 'all.jsonl'));
    for (const line of lines)
      for (const channel of [0, 1] as const)
        expect(line.events[channel].some((event) => event.event === 'TURN')).toBe(true);
    // test and dev: both present, disjoint, and no speaker in both.
    const speakersOf = async (ids: readonly string[]) =>
      new Set(
        (
          await Promise.all(
            ids.map(async (id) =>
              JSON.parse(await readFile(path.join(result.directory, 'metadata', `${id}.json`), 'utf8')),
            ),
          )
        ).flatMap((metadata) => [metadata.speakers.channel0.speakerId, metadata.speakers.channel1.speakerId]),
      );
    const test = result.splits.test ?? [];
    const dev = result.splits.dev ?? [];
    expect(test.length).toBeGreaterThan(0);
    expect(dev.length).toBeGreaterThan(0);
    const testSpeakers = await speakersOf(test);
    for (const speaker of await speakersOf(dev)) expect(testSpeakers.has(speaker)).toBe(false);
    expect((await readdir(result.directory)).filter((name) => name.endsWith('.jsonl')).sort()).toEqual(
      expect.arrayContaining(['all.jsonl', 'test.jsonl']),
    );
  });

  it('writes the same bytes again from the same recordings', async () => {
    const first = await runChat([recordings], chatOptions(path.join(scratch, 'chat-a'), { score: false }));
    const second = await runChat([recordings], chatOptions(path.join(scratch, 'chat-b'), { score: false }));
    const names = (await readdir(first.directory, { recursive: true }))
      .filter((name) => /\.(wav|txt|jsonl|json)$/.test(name))
      .sort();
    expect(names.length).toBeGreaterThan(10);
    for (const name of names)
      expect(
        (await readFile(path.join(first.directory, name))).equals(await readFile(path.join(second.directory, name))),
        name,
      ).toBe(true);
  });

  it('lists a recording without audio as failed and goes on with the others', async () => {
    const { copyFile, mkdir } = await import('node:fs/promises');
    const mixed = path.join(scratch, 'mixed');
    await mkdir(mixed, { recursive: true });
    for (const name of ['synthetic-1.wav', 'synthetic-1.ctm', 'synthetic-2.ctm'])
      await copyFile(path.join(recordings, name), path.join(mixed, name));
    const result = await runChat([mixed], chatOptions(path.join(scratch, 'chat-mixed'), { score: false }));
    expect(result.failed).toEqual([{ id: 'synthetic-2', stage: 'read-audio', reason: 'no audio for both channels' }]);
    expect(result.segments.every((segment) => segment.recording === 'synthetic-1')).toBe(true);
    const summary = JSON.parse(await readFile(path.join(result.directory, 'summary.json'), 'utf8'));
    expect(summary.failed).toEqual(result.failed);
  });

  it('skips a corrupt word line, names it once and counts it in the summary; --strict stops at it', async () => {
    const { copyFile, mkdir, writeFile } = await import('node:fs/promises');
    const corrupt = path.join(scratch, 'corrupt');
    await mkdir(corrupt, { recursive: true });
    await copyFile(path.join(recordings, 'synthetic-1.wav'), path.join(corrupt, 'synthetic-1.wav'));
    const lines = (await readFile(path.join(recordings, 'synthetic-1.ctm'), 'utf8')).split('\n');
    const index = lines.findIndex((line) => line.trim() !== '' && !line.startsWith(';;'));
    const fields = lines[index]!.trim().split(/\s+/);
    fields[3] = `-${fields[3]}`;
    lines[index] = fields.join(' ');
    const input = path.join(corrupt, 'synthetic-1.ctm');
    await writeFile(input, lines.join('\n'));
    const expected = `${input}:${index + 1}: column "duration": "${fields[3]}" is not a non-negative decimal number of seconds`;
    const result = await runChat([corrupt], chatOptions(path.join(scratch, 'chat-corrupt'), { score: false }));
    expect(result.skippedRecords).toEqual([expected]);
    expect(result.segments.length).toBeGreaterThan(0);
    const summary = JSON.parse(await readFile(path.join(result.directory, 'summary.json'), 'utf8'));
    expect(summary.notes.filter((note: string) => note.includes(expected))).toEqual([`skipped ${expected}`]);
    expect(summary.notes).toContain('1 malformed corpus records skipped by the reader (--strict stops at the first)');
    await expect(
      runChat([corrupt], chatOptions(path.join(scratch, 'chat-corrupt-strict'), { score: false, strict: true })),
    ).rejects.toThrow(expected);
  });
});
