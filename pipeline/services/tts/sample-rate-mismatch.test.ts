/**
 * A CosyVoice 1 server (22050 Hz) behind the default `sampleRate: 24000`: every clip is read 9 % fast,
 * which the window over all utterances (0.75-1.4) lets through. The watch of each voice against its
 * own prompt catches it and names the likely rate; the same voices read at the server's own rate
 * stay plausible. The real CosyVoice2 FastAPI client against the loopback server.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCosyVoice2Synthesizer } from './cosyvoice2-fastapi.ts';
import { SpeechSynthesisQuarantineError } from './remote-synthesizer.ts';
import { likelySampleRate } from './synthesis-speech-rate.ts';
import { startCosyVoiceLoopbackServer } from './testing/cosyvoice-loopback-server.ts';
import type { LoopbackServer } from './testing/loopback-speech.ts';
import { fixtureDirectory, writePromptFixture, type PromptFixture } from './testing/prompt-fixtures.ts';

const TEXTS = [
  'Could you tell me more about its history, please?',
  'It was written by Jane Austen a long time ago.',
  'Sure, it started as a small village by the river.',
  'The tower was finished in the spring of that year.',
  'Many people visit the old castle during the summer.',
  'I think the museum opens at nine in the morning.',
  'They built the bridge over the river in two years.',
  'The lake is frozen for most of the winter months.',
];

let directory: string;
let prompts: PromptFixture[];
const servers: LoopbackServer[] = [];

beforeAll(async () => {
  directory = await fixtureDirectory();
  prompts = [
    await writePromptFixture(directory, 'This is the voice of the first speaker, reading a short sentence.'),
    await writePromptFixture(directory, 'And this is the second speaker, who talks about the weather today.', {
      pitch: 30,
    }),
  ];
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await rm(directory, { recursive: true, force: true });
});

/** Synthesizes every text in every voice through a server at `serverRate`, the client set to `clientRate` (undefined: the default). */
async function synthesizeAll(serverRate: number, clientRate: number | undefined) {
  const server = await startCosyVoiceLoopbackServer({ sampleRate: serverRate });
  servers.push(server);
  const synthesizer = await createCosyVoice2Synthesizer({
    urls: [server.url],
    ...(clientRate === undefined ? {} : { sampleRate: clientRate }),
  });
  for (const text of TEXTS)
    for (const prompt of prompts)
      await synthesizer.synthesize({
        text,
        language: 'en',
        voice: { mode: 'zero-shot', promptWav: prompt.path, promptText: prompt.transcript },
      });
  return synthesizer;
}

describe('a sample rate that does not match the model', () => {
  it('22050 Hz read as the default 24000 Hz: quarantined once every voice runs fast, naming 22050 Hz', async () => {
    const synthesizer = await synthesizeAll(22050, undefined);
    const assessment = synthesizer.statistics().speechRate;
    expect(assessment).toMatchObject({ plausible: false, voices: 2 });
    expect(assessment!.medianTempoRatio).toBeGreaterThan(1.045);
    const error = await synthesizer
      .synthesize({
        text: TEXTS[0]!,
        language: 'en',
        voice: { mode: 'zero-shot', promptWav: prompts[0]!.path, promptText: prompts[0]!.transcript },
      })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(SpeechSynthesisQuarantineError);
    expect((error as SpeechSynthesisQuarantineError).failure).toBe('implausible-speech-rate');
    expect((error as Error).message).toMatch(
      /each of the 2 voices watched speaks 1\.\d\d times the tempo of its own prompt .*the configured sampleRate 24000 Hz is probably not the model's \(the tempo suggests about 2\d{4} Hz, likely 22050 Hz: set sampleRate: 22050;/,
    );
  });

  it('the same voices at the server rate stay plausible (24000 and 22050 Hz)', async () => {
    expect((await synthesizeAll(24000, undefined)).statistics().speechRate).toMatchObject({ plausible: true });
    expect((await synthesizeAll(22050, 22050)).statistics().speechRate).toMatchObject({ plausible: true });
  });

  it('the likely rate is the nearest model rate other than the configured one', () => {
    expect(likelySampleRate(24000, 24000 / 22050)).toEqual({ estimate: 22050, likely: 22050 });
    expect(likelySampleRate(24000, 1.06)).toEqual({ estimate: 22642, likely: 22050 });
    expect(likelySampleRate(16000, 16000 / 24000)).toEqual({ estimate: 24000, likely: 24000 });
    expect(likelySampleRate(24000, 0.5)).toEqual({ estimate: 48000, likely: 48000 });
  });
});
