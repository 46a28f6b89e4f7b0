/**
 * `duplexsynth prompts --format stereo-wav` on the shared real Japanese recordings (J-Moshi demo audio,
 * no transcript): clips of clean single-speaker speech found by Silero VAD, their texts from an
 * OpenAI-compatible ASR service (the real client against a loopback `/v1/audio/transcriptions`
 * server) or from the transcripts TSV a person fills in; a clip without a text never enters the
 * manifest, and the build's manifest reader refuses a line without one.
 */
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedDirectory } from '../../pipeline/config.ts';
import { readSpeakerPromptManifest } from '../../pipeline/orchestration/speaker-roster.ts';
import {
  startTranscriptionLoopbackServer,
  transcriptionReplies,
  type TranscriptionLoopbackServer,
} from '../../pipeline/services/asr/testing/transcription-loopback-server.ts';
import { PROMPT_TRANSCRIPTS_FILE } from './prompt-transcripts.ts';
import { PROMPT_POOL_SUMMARY, runPrompts, type PromptsOptions } from './prompts.ts';
import { TEST_CLI } from '../testing/cli-command.ts';

const AUDIO = path.join(sharedDirectory(), 'corpora', 'reference-audio', 'ja');
/** The two clean single-speaker stretches of the shared recordings (the annotated TextGrid of prompts.test.ts has the same spans). */
const CLIP_159 = 'stereo-wav-prompt-159-0-474-826';
const CLIP_62 = 'stereo-wav-prompt-62-1-129-524';

let scratch: string;
let server: TranscriptionLoopbackServer | undefined;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-prompts-asr-'));
});
afterAll(async () => {
  await server?.close();
  await rm(scratch, { recursive: true, force: true });
});

const options = (out: string, extra: Partial<PromptsOptions> = {}): PromptsOptions => ({
  format: 'stereo-wav',
  out: path.join(scratch, out),
  perSpeaker: 3,
  seed: 0,
  minSeconds: 3,
  maxSeconds: 10,
  loudness: -23,
  vad: 'silero',
  minSnr: 10,
  ...extra,
});

const readManifest = async (file: string) =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
/** The TSV's data rows as arrays of cells (header and comments left out). */
const tsvRows = async (pool: string) =>
  (await readFile(path.join(scratch, pool, PROMPT_TRANSCRIPTS_FILE), 'utf8'))
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .slice(1)
    .map((line) => line.split('\t'));

describe('duplexsynth prompts on stereo recordings without a transcript', () => {
  it('without a transcriber cuts the clips, lists them in transcripts.tsv to fill in, and keeps them out of the manifest', async () => {
    const result = await runPrompts([AUDIO], options('pool-fill'));
    expect(result.summary.clips).toBe(0);
    expect(await readManifest(result.manifestPath)).toEqual([]);
    expect(result.summary.untranscribedSpeech).toEqual({
      transcriptsFile: PROMPT_TRANSCRIPTS_FILE,
      transcriber: null,
      transcribed: 0,
      awaitingText: [CLIP_159, CLIP_62].map((id) => ({
        id,
        path: `clips/${id}.wav`,
        reason: 'no text yet (fill in the transcripts TSV or give --asr-url)',
      })),
    });
    expect(await tsvRows('pool-fill')).toEqual([
      [CLIP_159, 'prompt-159:0', 'prompt-159', '0', '4.74', '8.26', `clips/${CLIP_159}.wav`, ''],
      [CLIP_62, 'prompt-62:1', 'prompt-62', '1', '1.29', '5.24', `clips/${CLIP_62}.wav`, ''],
    ]);
    expect((await readdir(path.join(scratch, 'pool-fill', 'clips'))).sort()).toEqual([
      `${CLIP_159}.wav`,
      `${CLIP_62}.wav`,
    ]);
    const clip159 = await readFile(path.join(scratch, 'pool-fill', 'clips', `${CLIP_159}.wav`));

    // A person fills in one text in the pool's own TSV and runs the same command with --transcripts.
    const tsv = path.join(scratch, 'pool-fill', PROMPT_TRANSCRIPTS_FILE);
    await writeFile(
      tsv,
      (await readFile(tsv, 'utf8')).replace(`${CLIP_159}.wav\t\n`, `${CLIP_159}.wav\tそうなんですね\n`),
    );
    const filled = await runPrompts([AUDIO], options('pool-fill', { transcripts: tsv }));
    const manifest = await readManifest(filled.manifestPath);
    expect(manifest).toEqual([
      expect.objectContaining({
        id: CLIP_159,
        speaker: 'prompt-159:0',
        text: 'そうなんですね',
        transcribedBy: `filled-in ${PROMPT_TRANSCRIPTS_FILE}`,
        start: 4.74,
        end: 8.26,
      }),
    ]);
    expect(manifest[0].snrDb).toBeGreaterThan(10);
    // The same clip, the same bytes: the TSV's id names the same cut.
    expect((await readFile(path.join(scratch, 'pool-fill', 'clips', `${CLIP_159}.wav`))).equals(clip159)).toBe(true);
    expect(filled.summary.untranscribedSpeech?.awaitingText.map((item) => item.id)).toEqual([CLIP_62]);
    expect(await tsvRows('pool-fill')).toEqual([
      expect.arrayContaining([CLIP_159, 'そうなんですね']),
      expect.arrayContaining([CLIP_62, '']),
    ]);

    // A row naming a clip this run did not cut is said, not silently dropped.
    const stale = path.join(scratch, 'stale.tsv');
    await writeFile(stale, `id\ttext\n${CLIP_159}\tそうなんですね\nstereo-wav-prompt-62-0-100-500\tはい\n`);
    const withStale = await runPrompts([AUDIO], options('pool-stale', { transcripts: stale }));
    expect(withStale.summary.skipped).toEqual([
      `${stale}:3: clip stereo-wav-prompt-62-0-100-500 was not cut in this run (other input or options than when the file was written); its text is unused`,
    ]);
  }, 180_000);

  it('takes the texts from an OpenAI-compatible ASR service given the clips as written; a clip it hears nothing in awaits its text; corrections in the TSV win', async () => {
    server = await startTranscriptionLoopbackServer({
      responder: (request) => (request.fileName === `${CLIP_159}.wav` ? 'そうなんですね。' : ''),
    });
    const result = await runPrompts([AUDIO], options('pool-asr', { asrUrl: `${server.url}/v1`, asrLanguage: 'ja' }));
    expect(
      server.requests.map((request) => [request.fileName, request.model, request.language, request.responseFormat]),
    ).toEqual([
      [`${CLIP_159}.wav`, 'whisper-1', 'ja', 'json'],
      [`${CLIP_62}.wav`, 'whisper-1', 'ja', 'json'],
    ]);
    // The service heard exactly the clip the voice prompt is (16 kHz mono, loudness-normalized).
    for (const request of server.requests) {
      expect(
        Buffer.from(request.file).equals(await readFile(path.join(scratch, 'pool-asr', 'clips', request.fileName))),
      ).toBe(true);
      expect(request.audio).toMatchObject({ sampleRate: 16000, channels: 1 });
    }
    expect(await readManifest(result.manifestPath)).toEqual([
      expect.objectContaining({
        id: CLIP_159,
        text: 'そうなんですね。',
        transcribedBy: 'asr openai-transcriptions whisper-1',
      }),
    ]);
    expect(result.summary.untranscribedSpeech).toMatchObject({
      transcriber: 'asr openai-transcriptions whisper-1',
      transcribed: 1,
      awaitingText: [{ id: CLIP_62, reason: 'the ASR service heard no words' }],
    });
    const summaryFile = JSON.parse(await readFile(path.join(scratch, 'pool-asr', PROMPT_POOL_SUMMARY), 'utf8'));
    expect(summaryFile.untranscribedSpeech.transcribed).toBe(1);

    // Corrected and completed in the TSV, run again with the service still configured: the TSV wins, no request is sent.
    const tsv = path.join(scratch, 'pool-asr', PROMPT_TRANSCRIPTS_FILE);
    const corrected = (await readFile(tsv, 'utf8'))
      .replace('そうなんですね。', 'そうなんですよね。')
      .replace(`${CLIP_62}.wav\t\n`, `${CLIP_62}.wav\tうん、行った行った\n`);
    await writeFile(tsv, corrected);
    const before = server.requests.length;
    const again = await runPrompts([AUDIO], options('pool-asr', { asrUrl: `${server.url}/v1`, transcripts: tsv }));
    expect(server.requests.length).toBe(before);
    expect(
      (await readManifest(again.manifestPath)).map((entry) => [entry.id, entry.text, entry.transcribedBy]),
    ).toEqual([
      [CLIP_159, 'そうなんですよね。', `filled-in ${PROMPT_TRANSCRIPTS_FILE}`],
      [CLIP_62, 'うん、行った行った', `filled-in ${PROMPT_TRANSCRIPTS_FILE}`],
    ]);
    await server.close();
    server = undefined;
  }, 180_000);

  it('a clip the service refuses (HTTP 400) awaits its text with the reason; the others are kept', async () => {
    server = await startTranscriptionLoopbackServer({
      responder: (request) =>
        request.fileName === `${CLIP_62}.wav` ? transcriptionReplies.badAudio() : 'そうなんですね',
    });
    const result = await runPrompts([AUDIO], options('pool-400', { asrUrl: `${server.url}/v1` }));
    expect(result.summary.clips).toBe(1);
    expect(result.summary.untranscribedSpeech?.awaitingText).toEqual([
      {
        id: CLIP_62,
        path: `clips/${CLIP_62}.wav`,
        reason: expect.stringMatching(
          /^the ASR service failed: transcription of stereo-wav-prompt-62-1-129-524\.wav at http:\/\/127\.0\.0\.1:\d+\/v1: HTTP 400 .*corrupted or unsupported/,
        ),
      },
    ]);
    await server.close();
    server = undefined;
  }, 180_000);

  it('a service that refuses the key ends the run with one line, keeps the previous pool and leaves no partial one; the key is never shown', async () => {
    server = await startTranscriptionLoopbackServer({ apiKey: 'sk-loopback-right' });
    const out = path.join(scratch, 'pool-key');
    const first = await runPrompts([AUDIO], options('pool-key'));
    const before = await readFile(path.join(out, PROMPT_TRANSCRIPTS_FILE));
    const run = execa(
      process.execPath,
      [
        TEST_CLI,
        'prompts',
        '--format',
        'stereo-wav',
        '--out',
        out,
        '--asr-url',
        `${server.url}/v1`,
        '--asr-key-variable',
        'TEST_ASR_KEY',
        AUDIO,
      ],
      {
        reject: false,
        env: { TEST_ASR_KEY: 'sk-loopback-wrong' },
      },
    );
    const { exitCode, stderr, stdout } = await run;
    expect(exitCode).toBe(2);
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^duplexsynth: transcription of stereo-wav-prompt-159-0-474-826\.wav at http:\/\/127\.0\.0\.1:\d+\/v1: HTTP 401 Incorrect API key provided\.$/,
      ),
    ]);
    expect(`${stdout}${stderr}`).not.toContain('sk-loopback-wrong');
    expect(await readFile(path.join(out, PROMPT_TRANSCRIPTS_FILE))).toEqual(before);
    expect(await readManifest(first.manifestPath)).toEqual([]);
    await expect(access(`${out}.partial`)).rejects.toThrow();
    // The key variable named but not set: one line before any work.
    await expect(
      runPrompts(
        [AUDIO],
        options('pool-nokey', { asrUrl: `${server.url}/v1`, asrKeyVariable: 'DUPLEXSYNTH_TEST_UNSET_KEY' }),
      ),
    ).rejects.toThrow(/^--asr-key-variable DUPLEXSYNTH_TEST_UNSET_KEY: the environment variable is not set$/);
    await server.close();
    server = undefined;
  }, 180_000);

  it('RTTM turns with --audio: a third speaker is refused unless --speakers picks two; the turns give clips that await their text', async () => {
    const folder = path.join(scratch, 'rttm');
    await mkdir(path.join(folder, 'audio'), { recursive: true });
    await execa('sox', [
      path.join(AUDIO, 'prompt-62.wav'),
      path.join(AUDIO, 'prompt-159.wav'),
      path.join(folder, 'audio', 'call.wav'),
    ]);
    const turns = [
      ['A', 0.5, 3.5],
      ['B', 5.0, 3.5],
      ['C', 9.0, 0.5],
      ['A', 10.5, 3.5],
    ] as const;
    await writeFile(
      path.join(folder, 'call.rttm'),
      turns
        .map(
          ([speaker, onset, duration]) =>
            `SPEAKER call 1 ${onset.toFixed(2)} ${duration.toFixed(2)} <NA> <NA> ${speaker} <NA> <NA>\n`,
        )
        .join(''),
    );
    const rttm = (extra: Partial<PromptsOptions>) =>
      runPrompts(
        [path.join(folder, 'call.rttm')],
        options('pool-rttm', {
          format: 'rttm',
          audio: path.join(folder, 'audio'),
          minSnr: undefined,
          loudness: false,
          ...extra,
        }),
      );
    await expect(rttm({})).rejects.toThrow(
      /\/rttm\/call\.rttm: has 3 speakers \(A, B, C\), a two-party recording has 2: pick the two with --speakers A,B/,
    );
    const result = await rttm({ speakers: ['A', 'B'] });
    expect(result.summary.clips).toBe(0);
    expect(result.summary.untranscribedSpeech?.awaitingText.map((item) => item.id)).toEqual([
      'rttm-call-0-50-400',
      'rttm-call-0-1050-1400',
      'rttm-call-1-500-850',
    ]);
    expect(await tsvRows('pool-rttm')).toContainEqual([
      'rttm-call-1-500-850',
      'call:B',
      'call',
      '1',
      '5.00',
      '8.50',
      'clips/rttm-call-1-500-850.wav',
      '',
    ]);
  }, 120_000);

  it('the build never takes a voice prompt without its text: a manifest line with an empty text is refused', async () => {
    const manifest = path.join(scratch, 'hand-made.jsonl');
    await writeFile(
      manifest,
      `${JSON.stringify({ id: 'c1', speaker: 's1', corpus: 'stereo-wav', text: '  ', path: 'clips/c1.wav', durationSeconds: 3 })}\n`,
    );
    expect(() => readSpeakerPromptManifest(manifest)).toThrow(
      /hand-made\.jsonl:1.*text.*a clip without its transcript is no voice prompt/,
    );
  });
});
