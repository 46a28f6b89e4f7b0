/**
 * Speech beyond the text without a recognizer: the CosyVoice2 client with the speech-length check,
 * against loopback CosyVoice2 servers that speak the voice prompt's transcript before the text (a
 * leaked prompt) and servers that speak only the text, short utterances included; and the judgement
 * itself on given seconds.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCosyVoice2Synthesizer } from './cosyvoice2-fastapi.ts';
import { SpeechSynthesisQuarantineError } from './remote-synthesizer.ts';
import { plausibleDurationRange, speechRateBoundsOf, spokenLength } from './synthesis-speech-rate.ts';
import { DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS, judgeSpeechLength } from './synthesis-speech-length.ts';
import { loadVoicePrompt, voicePromptTempo } from './voice-prompt.ts';
import { startCosyVoiceLoopbackServer } from './testing/cosyvoice-loopback-server.ts';
import type { FaultScript, LoopbackServer } from './testing/loopback-speech.ts';
import { fixtureDirectory, writePromptFixture, type PromptFixture } from './testing/prompt-fixtures.ts';

const FAST_RETRY = { maxRetries: 2, initialDelaySeconds: 0.01, maxDelaySeconds: 0.05, jitter: 0 };
const QUESTION = 'Where is it?';
/** Long enough that the leaked prompt stays within the runaway bound of synthesis-checks.ts. */
const ANSWER = 'It stands on the hill above the river, by the old church.';

let directory: string;
let prompt: PromptFixture;
let promptTempo: number;
const servers: LoopbackServer[] = [];

/** A fault script that speaks `leading(index)` before the text (nothing when null). */
function leading(extra: (index: number) => string | null): FaultScript {
  return ({ index }) => {
    const text = extra(index);
    return text === null ? null : { kind: 'leading-speech', text };
  };
}

async function tts(faults: FaultScript | undefined) {
  const loopback = await startCosyVoiceLoopbackServer(faults ? { faults } : {});
  servers.push(loopback);
  const synthesizer = await createCosyVoice2Synthesizer(
    { urls: [loopback.url], retry: FAST_RETRY, endpointCooldown: { initialSeconds: 0.02, maximumSeconds: 0.1 } },
    { speechLength: { ...DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS } },
  );
  return { loopback, synthesizer };
}

function zeroShot(): Record<string, string> {
  return { mode: 'zero-shot', promptWav: prompt.path, promptText: prompt.transcript };
}

/** The seconds `text` takes at the prompt's tempo, and the most accepted, as the check computes them. */
async function expectedSecondsOf(text: string): Promise<{ expected: number; allowed: number }> {
  const length = await spokenLength(text, 'en');
  const expected = plausibleDurationRange(length, speechRateBoundsOf('en')).typicalSeconds / promptTempo;
  const options = DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS;
  const allowed =
    expected * (1 + options.relativeMargin) + length.pauses * options.pauseSeconds + options.marginSeconds;
  return { expected, allowed };
}

beforeAll(async () => {
  directory = await fixtureDirectory();
  prompt = await writePromptFixture(directory, 'This is the voice of the first speaker, reading a short sentence.');
  promptTempo = (await voicePromptTempo(await loadVoicePrompt('test', prompt.path), prompt.transcript, 'en'))!;
});

afterAll(async () => {
  await Promise.all(servers.map((started) => started.close()));
  await rm(directory, { recursive: true, force: true });
});

describe('the speech-length check of synthesized utterances', () => {
  it('quarantines an utterance whose replies leak the voice prompt, after one resynthesis, with the seconds', async () => {
    const { loopback, synthesizer } = await tts(leading(() => prompt.transcript));
    const error = await synthesizer.synthesize({ text: ANSWER, language: 'en', voice: zeroShot() }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(SpeechSynthesisQuarantineError);
    const quarantine = error as SpeechSynthesisQuarantineError;
    // resynthesized once, then given up although the retry policy allows two retries
    expect(loopback.requests).toHaveLength(2);
    expect(quarantine.failure).toBe('extra-speech');
    expect(quarantine.reason).toBe('not-retryable');
    const { expected, allowed } = await expectedSecondsOf(ANSWER);
    const measured = /: (\d+\.\d\d) s of speech where/.exec(quarantine.message)?.[1];
    expect(Number(measured)).toBeGreaterThan(allowed + 1);
    const attempt = `${loopback.url}/inference_zero_shot: extra-speech`;
    expect(quarantine.message).toBe(
      `cosyvoice2: synthesis failed for "${ANSWER}" (extra-speech): quarantined after 2 attempts (not-retryable): ` +
        `${measured} s of speech where the text takes ${expected.toFixed(2)} s at the voice's tempo (${promptTempo.toFixed(2)}) ` +
        `(accepted up to ${allowed.toFixed(2)} s): ${(Number(measured) - expected).toFixed(2)} s of speech before its ` +
        `first or after its last word (a leaked voice prompt or a spoken tag) [${loopback.url}/inference_zero_shot]; ` +
        `attempts: #1 ${attempt}, #2 ${attempt}.`,
    );
    expect(synthesizer.statistics()).toMatchObject({ quarantined: 1, failures: { 'extra-speech': 2 } });
  });

  it('accepts the resynthesis when only the first reply leaks the prompt', async () => {
    const { loopback, synthesizer } = await tts(leading((index) => (index === 0 ? prompt.transcript : null)));
    const output = await synthesizer.synthesize({ text: ANSWER, language: 'en', voice: zeroShot() });
    expect(loopback.requests).toHaveLength(2);
    expect(synthesizer.statistics().failures).toEqual({ 'extra-speech': 1 });
    const { allowed } = await expectedSecondsOf(ANSWER);
    expect(output.audio.channels[0]!.length / output.audio.sampleRate).toBeLessThan(allowed);
  });

  it('accepts replies that speak only the text, short ones included', async () => {
    const { loopback, synthesizer } = await tts(undefined);
    for (const text of ['yes', 'Mm-hmm.', 'Yes, it was.', QUESTION, ANSWER, 'From 1972 to 1973.']) {
      await synthesizer.synthesize({ text, language: 'en', voice: zeroShot() });
    }
    expect(loopback.requests).toHaveLength(6);
    expect(synthesizer.statistics()).toMatchObject({ succeeded: 6, failures: {} });
  });

  it("measures a voice without a prompt transcript at the language's typical rate", async () => {
    const crossLingual = { mode: 'cross-lingual', promptWav: prompt.path };
    const { loopback, synthesizer } = await tts(leading(() => prompt.transcript));
    const error = await synthesizer.synthesize({ text: ANSWER, language: 'en', voice: crossLingual }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(SpeechSynthesisQuarantineError);
    expect(loopback.requests).toHaveLength(2);
    expect((error as SpeechSynthesisQuarantineError).failure).toBe('extra-speech');
    const typical = plausibleDurationRange(await spokenLength(ANSWER, 'en'), speechRateBoundsOf('en')).typicalSeconds;
    expect((error as SpeechSynthesisQuarantineError).message).toContain(
      `s of speech where the text takes ${typical.toFixed(2)} s at the language's typical rate (accepted up to`,
    );

    // the same voice on a server that speaks only the text: accepted at once
    const clean = await tts(undefined);
    for (const text of ['yes', QUESTION, ANSWER])
      await clean.synthesizer.synthesize({ text, language: 'en', voice: crossLingual });
    expect(clean.loopback.requests).toHaveLength(3);
    expect(clean.synthesizer.statistics()).toMatchObject({ succeeded: 3, failures: {} });
  });

  it('accepts a leaked prompt when the check is not configured', async () => {
    const loopback = await startCosyVoiceLoopbackServer({ faults: leading(() => prompt.transcript) });
    servers.push(loopback);
    const synthesizer = await createCosyVoice2Synthesizer({ urls: [loopback.url], retry: FAST_RETRY });
    await synthesizer.synthesize({ text: ANSWER, language: 'en', voice: zeroShot() });
    expect(synthesizer.statistics()).toMatchObject({ succeeded: 1, failures: {} });
  });
});

describe('judgeSpeechLength', () => {
  const check = { options: DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS, voiceTempo: null };

  it('accepts a short utterance spoken twice as long as predicted', () => {
    const judged = judgeSpeechLength(
      { text: 'yes', speech: { seconds: 0.45, pauses: 0 }, typicalSeconds: 0.22 },
      check,
    );
    expect(judged).toMatchObject({ overlong: false, reason: '' });
    expect(judged.allowedSeconds).toBeCloseTo(0.22 * 1.3 + 0.75, 10);
  });

  it('measures against the voice tempo and allows pauses and digits', () => {
    const clip = { text: 'In 1975, yes.', speech: { seconds: 3.6, pauses: 1 }, typicalSeconds: 1.5 };
    const slow = judgeSpeechLength(clip, { ...check, voiceTempo: 0.6 });
    expect(slow.expectedSeconds).toBeCloseTo(2.5, 10);
    expect(slow.allowedSeconds).toBeCloseTo(2.5 * 1.3 + 0.35 + 4 * 0.1 + 0.75, 10);
    expect(slow.overlong).toBe(false);
    // at the typical rate: 1.5 * 1.3 + 0.35 (the comma) + 4 * 0.1 (the digits) + 0.75 = 3.45 s
    const typical = judgeSpeechLength(clip, check);
    expect(typical.overlong).toBe(true);
    expect(typical.reason).toBe(
      "3.60 s of speech where the text takes 1.50 s at the language's typical rate (accepted up to 3.45 s): " +
        '2.10 s of speech before its first or after its last word (a leaked voice prompt or a spoken tag)',
    );
  });
});
