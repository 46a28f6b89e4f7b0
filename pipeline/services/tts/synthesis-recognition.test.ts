/**
 * What was spoken against what was meant: the CosyVoice2 client with a recognizer configured, against
 * loopback CosyVoice2 servers that speak the language tag or leak the voice prompt's transcript before
 * the text, and a loopback transcription service that returns what the loopback TTS really spoke (the
 * two share a record of each reply's words).
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCosyVoice2Synthesizer } from './cosyvoice2-fastapi.ts';
import { SpeechSynthesisQuarantineError } from './remote-synthesizer.ts';
import { startCosyVoiceLoopbackServer } from './testing/cosyvoice-loopback-server.ts';
import type { FaultScript, LoopbackServer } from './testing/loopback-speech.ts';
import { fixtureDirectory, writePromptFixture, type PromptFixture } from './testing/prompt-fixtures.ts';
import { OpenAITranscriber } from '../asr/openai-transcription.ts';
import {
  startTranscriptionLoopbackServer,
  type TranscriptionLoopbackServer,
} from '../asr/testing/transcription-loopback-server.ts';

const FAST_RETRY = { maxRetries: 2, initialDelaySeconds: 0.01, maxDelaySeconds: 0.05, jitter: 0 };
const QUESTION = 'Where is it?';
const ANSWER = 'It stands on the hill above the river, beside the old stone church and the market square.';

let directory: string;
let prompt: PromptFixture;
const servers: { close(): Promise<void> }[] = [];

/** What each reply of the TTS loopback really spoke, in order: the leading speech, then the text. */
const spoken: string[] = [];

/** A fault script that prepends `leading(index)` (none when null) and records what the reply says. */
function speaking(leading: (index: number) => string | null): FaultScript {
  return ({ index, text }) => {
    const extra = leading(index);
    spoken.push(extra === null ? text : `${extra} ${text}`);
    return extra === null ? null : { kind: 'leading-speech', text: extra };
  };
}

async function tts(faults: FaultScript): Promise<LoopbackServer> {
  const started = await startCosyVoiceLoopbackServer({ faults });
  servers.push(started);
  return started;
}

async function recognizer(): Promise<TranscriptionLoopbackServer> {
  const started = await startTranscriptionLoopbackServer({ responder: () => spoken[spoken.length - 1] ?? '' });
  servers.push(started);
  return started;
}

async function synthesizerFor(loopback: LoopbackServer, asr: TranscriptionLoopbackServer | null) {
  return createCosyVoice2Synthesizer(
    { urls: [loopback.url], retry: FAST_RETRY, endpointCooldown: { initialSeconds: 0.02, maximumSeconds: 0.1 } },
    asr
      ? {
          speechRecognition: {
            transcriber: new OpenAITranscriber({ baseUrl: `${asr.url}/v1`, retry: { maxRetries: 0 } }),
          },
        }
      : {},
  );
}

function zeroShot(): Record<string, string> {
  return { mode: 'zero-shot', promptWav: prompt.path, promptText: prompt.transcript };
}

async function quarantine(promise: Promise<unknown>): Promise<SpeechSynthesisQuarantineError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SpeechSynthesisQuarantineError);
  return error as SpeechSynthesisQuarantineError;
}

beforeAll(async () => {
  directory = await fixtureDirectory();
  prompt = await writePromptFixture(directory, 'This is the voice of the first speaker, reading a short sentence.');
});

afterAll(async () => {
  await Promise.all(servers.map((started) => started.close()));
  await rm(directory, { recursive: true, force: true });
});

describe('speech recognition of synthesized utterances', () => {
  it('accepts a reply that says the text and counts its error rate', async () => {
    const synthesizer = await synthesizerFor(await tts(speaking(() => null)), await recognizer());
    await synthesizer.synthesize({ text: QUESTION, language: 'en', voice: zeroShot() });
    expect(synthesizer.statistics().speechRecognition).toEqual({ utterances: 1, edits: 0, referenceTokens: 3 });
    expect(synthesizer.statistics().failures).toEqual({});
  });

  it('resynthesizes a reply with the language tag spoken before the text', async () => {
    const loopback = await tts(speaking((index) => (index === 0 ? 'en' : null)));
    const synthesizer = await synthesizerFor(loopback, await recognizer());
    await synthesizer.synthesize({ text: QUESTION, language: 'en', voice: zeroShot() });
    expect(loopback.requests).toHaveLength(2);
    expect(synthesizer.statistics().failures).toEqual({ 'misspoken-audio': 1 });
    expect(synthesizer.statistics().speechRecognition).toEqual({ utterances: 1, edits: 0, referenceTokens: 3 });
  });

  it('quarantines an utterance when every reply speaks the tag, naming the rate and what was heard', async () => {
    const loopback = await tts(speaking(() => 'en'));
    const synthesizer = await synthesizerFor(loopback, await recognizer());
    const error = await quarantine(synthesizer.synthesize({ text: QUESTION, language: 'en', voice: zeroShot() }));
    expect(error.failure).toBe('misspoken-audio');
    expect(error.attempts).toHaveLength(FAST_RETRY.maxRetries + 1);
    expect(error.detail).toContain('word error rate 0.33');
    expect(error.detail).toContain('heard "en Where is it?"');
    expect(synthesizer.statistics()).toMatchObject({ quarantined: 1, speechRecognition: { utterances: 0 } });
  });

  it("quarantines an utterance whose replies leak the voice prompt's transcript", async () => {
    const loopback = await tts(speaking(() => prompt.transcript));
    const synthesizer = await synthesizerFor(loopback, await recognizer());
    const error = await quarantine(synthesizer.synthesize({ text: ANSWER, language: 'en', voice: zeroShot() }));
    expect(error.failure).toBe('misspoken-audio');
    expect(error.detail).toContain(`heard "${prompt.transcript} ${ANSWER}"`);
  });

  it('quarantines an utterance when the transcription service fails, naming its address', async () => {
    const failing = await startTranscriptionLoopbackServer({
      responder: () => ({ kind: 'error', statusCode: 503, message: 'model is loading' }),
    });
    servers.push(failing);
    const loopback = await tts(speaking(() => null));
    const synthesizer = await synthesizerFor(loopback, failing);
    const error = await quarantine(synthesizer.synthesize({ text: QUESTION, language: 'en', voice: zeroShot() }));
    expect(error.failure).toBe('service-error');
    expect(error.detail).toContain(`speech recognition failed: transcription of utterance.wav at ${failing.url}`);
    expect(error.detail).toContain('503');
    // not resynthesized: the transcriber has used its own retries
    expect(loopback.requests).toHaveLength(1);
  });

  it('accepts the leaked prompt without a recognizer (what the recognition check is for)', async () => {
    const synthesizer = await synthesizerFor(await tts(speaking(() => 'en')), null);
    const output = await synthesizer.synthesize({ text: QUESTION, language: 'en', voice: zeroShot() });
    expect(output.audio.channels[0]!.length).toBeGreaterThan(0);
    expect(synthesizer.statistics().speechRecognition).toBeUndefined();
  });
});
