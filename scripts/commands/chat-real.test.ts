/**
 * `duplexsynth chat` and `verify` on real speech: the shared Japanese two-party recordings (J-Moshi
 * demo audio, 32 kHz stereo) joined into one long recording by sox at test time
 * (testing/real-recordings.ts), and sox-made variants of them for each refusal.
 */
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryFolder } from '../../corpora/reference-test-audio.ts';
import { verifyDataset } from '../../pipeline/run/verify-dataset.ts';
import { runChat, type ChatOptions } from './chat.ts';
import { joinSharedJapaneseRecordings } from './testing/real-recordings.ts';

let scratch: { folder: string; remove: () => Promise<void> };
let joined: string;

beforeAll(async () => {
  scratch = await temporaryFolder('chat-real');
  joined = await joinSharedJapaneseRecordings(path.join(scratch.folder, 'recordings', 'ja-joined.wav'), 6);
});

afterAll(async () => {
  await scratch.remove();
});

const chatOptions = (out: string, extra: Partial<ChatOptions> = {}): ChatOptions => ({
  format: 'stereo-wav',
  language: 'ja',
  out,
  dataset: 'jmoshi_demo',
  vad: 'silero',
  testHours: 1,
  score: false,
  ...extra,
});

describe('duplexsynth chat on real Japanese recordings (voice activity, no transcript)', () => {
  it('builds a dataset that verify passes by the detector and thresholds recorded in its manifest', async () => {
    const result = await runChat([joined], chatOptions(path.join(scratch.folder, 'vad')));
    expect(result.failed).toEqual([]);
    expect(result.segments.length).toBe(1);
    const manifest = JSON.parse(await readFile(path.join(result.directory, 'manifest.json'), 'utf8'));
    expect(manifest.eventDerivation).toMatchObject({ from: 'voice-activity', hasWords: false, thresholds: { maxPauseInIpu: 50, maxBackchannel: 80, bargeInOverlap: 40 }, voiceActivity: { engine: 'silero' } });
    // No words: the txt_align files are empty and the metadata says so.
    for (const name of await readdir(path.join(result.directory, 'txt_align'))) expect(await readFile(path.join(result.directory, 'txt_align', name), 'utf8')).toBe('');
    const metadata = JSON.parse(await readFile(path.join(result.directory, 'metadata', `${result.segments[0]?.id}.json`), 'utf8'));
    expect(metadata.alignment).toBe('none');
    expect(metadata.utterances.length).toBeGreaterThan(20);

    const verified = await verifyDataset(result.directory);
    expect(verified.dialogues).toBe(1);
    expect(verified.problems).toEqual([]);

    // The check is real: with another detector threshold recorded, the re-derived events differ.
    manifest.eventDerivation.voiceActivity.options.threshold = 0.95;
    manifest.eventDerivation.voiceActivity.options.negativeThreshold = 0.9;
    await writeFile(path.join(result.directory, 'manifest.json'), JSON.stringify(manifest));
    const tampered = await verifyDataset(result.directory);
    expect(tampered.problems).toEqual([expect.stringMatching(/events re-derived from the audio with the recorded detector \(silero\) differ/)]);
  }, 600_000);
});
