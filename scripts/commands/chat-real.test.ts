/**
 * `duplexsynth chat` and `verify` on real speech: the shared Japanese two-party recordings (J-Moshi
 * demo audio, 32 kHz stereo) joined into one long recording by sox at test time
 * (testing/real-recordings.ts), and sox-made variants of them for each refusal.
 */
import { access, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryFolder } from '../../corpora/reference-test-audio.ts';
import { decodeWav } from '../../pipeline/audio/wav.ts';
import { verifyDataset } from '../../pipeline/run/verify-dataset.ts';
import { runChat, type ChatOptions } from './chat.ts';
import { runPrompts } from './prompts.ts';
import { joinSharedJapaneseRecordings, sharedJapaneseRecordings, soxConvert } from './testing/real-recordings.ts';
import { TEST_CLI } from '../testing/cli-command.ts';

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
  it('builds a dataset of a 300 s recording that verify passes by the detector and thresholds recorded in its manifest', async () => {
    // 15 times the two recordings end to end: two segments of about 120 s, the 60 s tail left out
    const long = await joinSharedJapaneseRecordings(path.join(scratch.folder, 'recordings', 'ja-long.wav'), 15);
    const result = await runChat([long], chatOptions(path.join(scratch.folder, 'vad')));
    expect(result.failed).toEqual([]);
    expect(result.segments.map((segment) => segment.id)).toEqual(['ja-long.0.0-119.7', 'ja-long.119.7-239.7']);
    for (const segment of result.segments) expect(segment.durationSeconds).toBeGreaterThanOrEqual(100);
    const manifest = JSON.parse(await readFile(path.join(result.directory, 'manifest.json'), 'utf8'));
    expect(manifest.eventDerivation).toMatchObject({
      from: 'voice-activity',
      hasWords: false,
      thresholds: { maxPauseInIpu: 50, maxBackchannel: 80, bargeInOverlap: 40 },
      voiceActivity: { engine: 'silero' },
    });
    // No words: the txt_align files are empty and the metadata says so.
    for (const name of await readdir(path.join(result.directory, 'txt_align')))
      expect(await readFile(path.join(result.directory, 'txt_align', name), 'utf8')).toBe('');
    const metadata = JSON.parse(
      await readFile(path.join(result.directory, 'metadata', `${result.segments[0]?.id}.json`), 'utf8'),
    );
    expect(metadata.alignment).toBe('none');
    expect(metadata.utterances.length).toBeGreaterThan(20);

    const verified = await verifyDataset(result.directory);
    expect(verified.dialogues).toBe(2);
    expect(verified.problems).toEqual([]);

    // The check is real: with another detector threshold recorded, the re-derived events differ.
    manifest.eventDerivation.voiceActivity.options.threshold = 0.95;
    manifest.eventDerivation.voiceActivity.options.negativeThreshold = 0.9;
    await writeFile(path.join(result.directory, 'manifest.json'), JSON.stringify(manifest));
    const tampered = await verifyDataset(result.directory);
    expect(tampered.problems).toEqual([
      expect.stringMatching(
        /ja-long\.0\.0-119\.7.*events re-derived from the audio with the recorded detector \(silero\) differ/,
      ),
      expect.stringMatching(
        /ja-long\.119\.7-239\.7.*events re-derived from the audio with the recorded detector \(silero\) differ/,
      ),
    ]);
  }, 900_000);
});

/** CTM words for `call`: channel A and B take turns of 2 s every 5 s over `seconds` (one word per 0.5 s). */
function turnTakingCtm(id: string, seconds: number): string {
  const lines: string[] = [];
  for (let turn = 0; turn * 5 + 3 <= seconds; turn += 1) {
    const channel = turn % 2 === 0 ? 'A' : 'B';
    for (let word = 0; word < 4; word += 1)
      lines.push(`${id} ${channel} ${(turn * 5 + 0.5 + word * 0.5).toFixed(2)} 0.50 はい`);
  }
  return `${lines.join('\n')}\n`;
}

/** A folder holding `call.ctm` (10 s of turns) and the audio files sox makes from prompt-62.wav. */
async function callFolder(
  name: string,
  audio: (source: string, folder: string) => Promise<unknown>,
  seconds = 10,
): Promise<string> {
  const folder = path.join(scratch.folder, name);
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, 'call.ctm'), turnTakingCtm('call', seconds));
  await audio(sharedJapaneseRecordings()[0], folder);
  return folder;
}

const ctmOptions = (name: string, extra: Partial<ChatOptions> = {}) =>
  chatOptions(path.join(scratch.folder, `out-${name}`), { format: 'ctm', ...extra });

describe('duplexsynth chat refuses what it cannot make a two-channel dataset of (one line, exit code 2)', () => {
  it('refuses a mono mix (one channel for both speakers), writing nothing', async () => {
    const folder = await callFolder('mono', (source, target) =>
      soxConvert(source, path.join(target, 'call.wav'), ['-c', '1']),
    );
    const run = runChat([folder], ctmOptions('mono'));
    await expect(run).rejects.toThrow(
      /^chat: recording call: .*call\.wav is a mono mix \(1 channel for both speakers\)/,
    );
    await expect(run).rejects.toMatchObject({ exitCode: 2 });
    await expect(access(path.join(scratch.folder, 'out-mono', 'data'))).rejects.toThrow();
  });

  it('refuses a stereo file whose channels hold the same samples, and leaves no partial dataset', async () => {
    const folder = await callFolder('dual-mono', (source, target) =>
      soxConvert(source, path.join(target, 'call.wav'), [], ['remix', '1', '1']),
    );
    await expect(runChat([folder], ctmOptions('dual-mono'))).rejects.toThrow(
      /both channels of .*call\.wav hold the same samples/,
    );
    const datasets = path.join(scratch.folder, 'out-dual-mono', 'data', 'ja', 'chat');
    expect((await readdir(datasets)).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it('refuses one speaker file without the other (a missing channel)', async () => {
    const folder = await callFolder('missing', (source, target) =>
      soxConvert(source, path.join(target, 'call_0.wav'), [], ['remix', '1']),
    );
    await expect(runChat([folder], ctmOptions('missing'))).rejects.toThrow(
      /call_0\.wav: has no partner: call_1\.wav \(the other speaker's channel\) is missing/,
    );
  });

  it('refuses speaker files that do not match in sample rate or length', async () => {
    const rates = await callFolder('rates', async (source, target) => {
      await soxConvert(source, path.join(target, 'call_0.wav'), [], ['remix', '1']);
      await soxConvert(source, path.join(target, 'call_1.wav'), ['-r', '16000'], ['remix', '2']);
    });
    await expect(runChat([rates], ctmOptions('rates'))).rejects.toThrow(
      /the speakers' files do not match: call_0\.wav is 32000 Hz, call_1\.wav 16000 Hz/,
    );
    const lengths = await callFolder('lengths', async (source, target) => {
      await soxConvert(source, path.join(target, 'call_0.wav'), [], ['remix', '1']);
      await soxConvert(source, path.join(target, 'call_1.wav'), [], ['remix', '2', 'trim', '0', '5']);
    });
    await expect(runChat([lengths], ctmOptions('lengths'))).rejects.toThrow(
      /call_0\.wav lasts 10\.00 s, call_1\.wav 5\.00 s/,
    );
  });

  it('refuses 8 kHz telephone audio for chat and for prompts unless --allow-upsample', async () => {
    const folder = await callFolder('narrowband', (source, target) =>
      soxConvert(source, path.join(target, 'call.wav'), ['-r', '8000']),
    );
    await expect(runChat([folder], ctmOptions('narrowband'))).rejects.toThrow(
      /call\.wav is 8000 Hz, below 16000 Hz .*pass --allow-upsample/,
    );
    const prompts = runPrompts([folder], {
      format: 'ctm',
      out: path.join(scratch.folder, 'pool-narrowband'),
      perSpeaker: 1,
      seed: 0,
      minSeconds: 1,
      maxSeconds: 10,
      loudness: false,
      vad: 'silero',
    });
    await expect(prompts).rejects.toThrow(/^prompts: recording call: .*call\.wav is 8000 Hz, below 16000 Hz/);
  });

  it('with --allow-upsample takes 8 kHz audio, writes 16 kHz and records it in the summary; verify passes by the words', async () => {
    const folder = path.join(scratch.folder, 'upsample');
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, 'call.ctm'), turnTakingCtm('call', 120));
    await soxConvert(joined, path.join(folder, 'call.wav'), ['-r', '8000']);
    const result = await runChat([folder], ctmOptions('upsample', { allowUpsample: true }));
    expect(result.segments).toHaveLength(1);
    const summary = JSON.parse(await readFile(path.join(result.directory, 'summary.json'), 'utf8'));
    expect(summary.upsampled).toEqual([{ file: 'call.wav', sampleRate: 8000, to: 16000 }]);
    const file = path.join(result.directory, 'audio', `${result.segments[0]?.id}.wav`);
    expect(decodeWav(await readFile(file), file).sampleRate).toBe(16000);
    expect((await verifyDataset(result.directory)).problems).toEqual([]);
  }, 120_000);

  it('says per recording on stderr why nothing was built', async () => {
    const folder = await callFolder('short', (source, target) => soxConvert(source, path.join(target, 'call.wav'), []));
    const lines: string[] = [];
    await expect(runChat([folder], ctmOptions('short', { log: (line) => lines.push(line) }))).rejects.toThrow(
      /no dialogue was built.*the last 10\.00 s \(0\.00-10\.00 s\) are shorter than 100 s/,
    );
    expect(lines).toContain(
      'nothing built from recording call: the last 10.00 s (0.00-10.00 s) are shorter than 100 s: left out',
    );
  });

  it('ends with one line and exit code 2 on the command line', async () => {
    const folder = await callFolder('cli-mono', (source, target) =>
      soxConvert(source, path.join(target, 'call.wav'), ['-c', '1']),
    );
    const run = await execa(
      process.execPath,
      [
        TEST_CLI,
        'chat',
        '--format',
        'ctm',
        '--language',
        'ja',
        '--no-score',
        '--out',
        path.join(scratch.folder, 'out-cli'),
        folder,
      ],
      { reject: false },
    );
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^duplexsynth: chat: recording call: .*is a mono mix/),
    ]);
  }, 120_000);
});

/** RTTM turns of `call`: A and B take turns of 2 s every 5 s over `seconds`; C says one thing at 50 s. */
function turnTakingRttm(id: string, seconds: number, third = true): string {
  const lines: string[] = [];
  for (let turn = 0; turn * 5 + 3 <= seconds; turn += 1)
    lines.push(`SPEAKER ${id} 1 ${(turn * 5 + 0.5).toFixed(2)} 2.00 <NA> <NA> ${turn % 2 === 0 ? 'A' : 'B'} <NA> <NA>`);
  if (third) lines.push(`SPEAKER ${id} 1 53.00 1.00 <NA> <NA> C <NA> <NA>`);
  return `${lines.join('\n')}\n`;
}

describe('duplexsynth chat --format rttm --audio, --speakers, --speaker-map', () => {
  it('refuses a third speaker; with --speakers A,B and --audio builds a dataset from the turns that verify passes', async () => {
    const folder = path.join(scratch.folder, 'rttm');
    await mkdir(path.join(folder, 'audio'), { recursive: true });
    await writeFile(path.join(folder, 'call.rttm'), turnTakingRttm('call', 120));
    await soxConvert(joined, path.join(folder, 'audio', 'call.wav'), []);
    const options = (extra: Partial<ChatOptions>) =>
      chatOptions(path.join(scratch.folder, 'out-rttm'), {
        format: 'rttm',
        audio: path.join(folder, 'audio'),
        ...extra,
      });
    await expect(runChat([path.join(folder, 'call.rttm')], options({}))).rejects.toThrow(
      /call\.rttm: has 3 speakers \(A, B, C\), a two-party recording has 2: pick the two with --speakers A,B/,
    );

    const map = path.join(folder, 'speakers.tsv');
    await writeFile(map, '# recording\tchannel\tspeaker\ncall\tB\tspk-bea\n');
    const result = await runChat([path.join(folder, 'call.rttm')], options({ speakers: ['A', 'B'], speakerMap: map }));
    expect(result.segments).toHaveLength(1);
    expect(result.notes).toContain('call: speakers C left out (--speakers A,B)');
    const manifest = JSON.parse(await readFile(path.join(result.directory, 'manifest.json'), 'utf8'));
    expect(manifest.eventDerivation).toMatchObject({ from: 'turns', hasWords: false });
    const metadata = JSON.parse(
      await readFile(path.join(result.directory, 'metadata', `${result.segments[0]?.id}.json`), 'utf8'),
    );
    expect(metadata.speakers).toEqual({
      channel0: { speakerId: 'rttm:call:A', channel: 0 },
      channel1: { speakerId: 'rttm:spk-bea', channel: 1 },
    });
    expect(metadata.speech.channel0[0]).toEqual([0.5, 2.5]);
    expect(metadata.speech.channel1[0]).toEqual([5.5, 7.5]);
    expect((await verifyDataset(result.directory)).problems).toEqual([]);
    // The turns are what verify checks: a changed speech segment is found.
    metadata.speech.channel1[0] = [5.5, 9.5];
    await writeFile(
      path.join(result.directory, 'metadata', `${result.segments[0]?.id}.json`),
      JSON.stringify(metadata),
    );
    expect((await verifyDataset(result.directory)).problems).toEqual([
      expect.stringMatching(/events re-derived from the speech segments of the metadata differ/),
    ]);
  }, 120_000);

  it('--speaker-map gives one person one id across recordings, so the per-speaker prompt limit holds', async () => {
    const folder = path.join(scratch.folder, 'mapped');
    await mkdir(folder, { recursive: true });
    for (const id of ['call1', 'call2']) {
      await writeFile(path.join(folder, `${id}.ctm`), turnTakingCtm(id, 10));
      await soxConvert(sharedJapaneseRecordings()[0], path.join(folder, `${id}.wav`), []);
    }
    const base = {
      format: 'ctm' as const,
      perSpeaker: 1,
      seed: 0,
      minSeconds: 1,
      maxSeconds: 10,
      loudness: false as const,
      vad: 'silero' as const,
    };
    const unmapped = await runPrompts([folder], { ...base, out: path.join(scratch.folder, 'pool-unmapped') });
    expect(unmapped.summary.speakers.filter((speaker) => speaker.clips > 0).map((speaker) => speaker.speaker)).toEqual([
      'call1:A',
      'call1:B',
      'call2:A',
      'call2:B',
    ]);
    const map = path.join(folder, 'speakers.tsv');
    await writeFile(map, 'call1\t0\tami\ncall2\tA\tami\ncall1\t1\tbo\ncall2\t1\tbo\n');
    const mapped = await runPrompts([folder], {
      ...base,
      out: path.join(scratch.folder, 'pool-mapped'),
      speakerMap: map,
    });
    expect(mapped.summary.speakers.map((speaker) => [speaker.speaker, speaker.clips])).toEqual([
      ['ami', 1],
      ['bo', 1],
    ]);
    await writeFile(map, 'call1\t0\tami\ncall3\t1\tbo\n');
    await expect(
      runPrompts([folder], { ...base, out: path.join(scratch.folder, 'pool-bad'), speakerMap: map }),
    ).rejects.toThrow(/speakers\.tsv:2: no recording "call3" among the 2 read/);
  }, 120_000);
});
