/**
 * The real CosyVoice2 FastAPI client against loopback servers that speak the protocol (multipart in,
 * raw int16 PCM stream out) with scripted faults.
 */
import { readFile, rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCosyVoice2Synthesizer } from './cosyvoice2-fastapi.ts';
import { SpeechSynthesisQuarantineError } from './remote-synthesizer.ts';
import { SpeechSynthesisError } from './speech-synthesizer.ts';
import { loadJapaneseTokenizer } from '../../alignment/spoken-words.ts';
import { synthesizeUtterance } from './synthesize-utterance.ts';
import { languagePackOf, registerLanguagePacks } from '../../model/language-pack.ts';
import { cosyVoiceLanguageProblem, cosyVoiceLanguages } from './cosyvoice-languages.ts';
import { startCosyVoiceLoopbackServer } from './testing/cosyvoice-loopback-server.ts';
import { faultsByRequestIndex, type LoopbackServer } from './testing/loopback-speech.ts';
import { fixtureDirectory, writePromptFixture, type PromptFixture } from './testing/prompt-fixtures.ts';

const FAST_RETRY = { maxRetries: 3, initialDelaySeconds: 0.01, maxDelaySeconds: 0.05, jitter: 0 };
const FAST_COOLDOWN = { initialSeconds: 0.02, maximumSeconds: 0.1 };
const TEXT = 'Hello there, how are you today? I bought a stamp at the post office.';

let directory: string;
let prompt: PromptFixture;
const servers: LoopbackServer[] = [];

async function server(options: Parameters<typeof startCosyVoiceLoopbackServer>[0] = {}): Promise<LoopbackServer> {
  const started = await startCosyVoiceLoopbackServer(options);
  servers.push(started);
  return started;
}

function settings(urls: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { urls, retry: FAST_RETRY, endpointCooldown: FAST_COOLDOWN, ...extra };
}

function zeroShot(fixture: PromptFixture = prompt): Record<string, string> {
  return { mode: 'zero-shot', promptWav: fixture.path, promptText: fixture.transcript };
}

/** Lets real I/O (sockets, espeak-ng) run until `done()` holds; fake time does not move meanwhile. */
async function untilTrue(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
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
  await loadJapaneseTokenizer();
});

afterAll(async () => {
  await Promise.all(servers.map((started) => started.close()));
  await rm(directory, { recursive: true, force: true });
});

describe('cosyvoice2 FastAPI client: protocol', () => {
  it('posts zero-shot multipart fields with a 16 kHz mono prompt and reads the int16 stream at 24000 Hz', async () => {
    const loopback = await server();
    const synthesizer = await createCosyVoice2Synthesizer(settings([loopback.url]));
    const output = await synthesizer.synthesize({ text: TEXT, language: 'en', voice: zeroShot() });
    expect(output.audio.sampleRate).toBe(24000);
    const seconds = (output.audio.channels[0] as Float32Array).length / 24000;
    expect(seconds).toBeGreaterThan(3);
    expect(seconds).toBeLessThan(7);
    const request = loopback.requests[0];
    expect(request?.route).toBe('/inference_zero_shot');
    expect(request?.method).toBe('POST');
    expect(request?.fields).toEqual({ tts_text: TEXT, prompt_text: prompt.transcript });
    expect(request?.prompt).toMatchObject({ sampleRate: 16000, channels: 1 });
    expect(synthesizer.version).toContain('24000 Hz');
    expect(synthesizer.statistics()).toMatchObject({
      requested: 1,
      succeeded: 1,
      attempts: 1,
      retries: 0,
      quarantined: 0,
    });
  });

  it("speaks the languages of its model generation by the language packs, and sends a pack's tag before the text", async () => {
    // CosyVoice2: zh, en, ja, ko (yue has no built-in pack); CosyVoice3 adds de, es, fr
    expect(cosyVoiceLanguages('cosyvoice2')).toEqual(['en', 'ja', 'ko', 'zh']);
    expect(cosyVoiceLanguages('cosyvoice3')).toEqual(['de', 'en', 'es', 'fr', 'ja', 'ko', 'zh']);
    expect(cosyVoiceLanguageProblem('de', 'CosyVoice2-0.5B', 'tts.de.service.model')).toMatch(
      /^tts\.de\.service\.model: CosyVoice2-0\.5B \(CosyVoice2\) does not speak German \(.*de\.yaml cosyVoice\.cosyvoice2: false; CosyVoice2 speaks en, ja, ko, zh; CosyVoice3 does\)$/,
    );
    expect(cosyVoiceLanguageProblem('de', 'Fun-CosyVoice3-0.5B-2512', 'tts.de.service.model')).toBeNull();
    const loopback = await server();
    const cosyVoice2 = await createCosyVoice2Synthesizer(settings([loopback.url]));
    const refused = await cosyVoice2
      .synthesize({ text: 'Guten Tag, wie geht es Ihnen heute?', language: 'de', voice: zeroShot() })
      .catch((error: unknown) => error);
    expect((refused as SpeechSynthesisError).failure).toBe('unsupported-language');
    expect(loopback.requests).toHaveLength(0);
    const cosyVoice3 = await createCosyVoice2Synthesizer(
      settings([loopback.url], { model: 'Fun-CosyVoice3-0.5B-2512' }),
    );
    expect(cosyVoice3.languages).toContain('de');
    // a pack that asks for a tag (as CosyVoice 1's cross-lingual <|en|>) has it put before tts_text
    registerLanguagePacks([
      {
        ...languagePackOf('en'),
        code: 'en-GB',
        name: 'British English',
        cosyVoice: { cosyvoice2: true, cosyvoice3: true, tag: '<|en|>', note: '' },
      },
    ]);
    const tagged = await createCosyVoice2Synthesizer(settings([loopback.url]));
    await tagged.synthesize({
      text: TEXT,
      language: 'en-GB',
      voice: { mode: 'cross-lingual', promptWav: prompt.path },
    });
    await tagged.synthesize({ text: TEXT, language: 'en', voice: { mode: 'cross-lingual', promptWav: prompt.path } });
    expect(loopback.requests.map((request) => request.fields.tts_text)).toEqual([`<|en|>${TEXT}`, TEXT]);
  });

  it('sends cross-lingual without a transcript and instruct2 with its instruction', async () => {
    const loopback = await server();
    const synthesizer = await createCosyVoice2Synthesizer(settings([loopback.url]));
    await synthesizer.synthesize({
      text: TEXT,
      language: 'en',
      voice: { mode: 'cross-lingual', promptWav: prompt.path },
    });
    await synthesizer.synthesize({
      text: TEXT,
      language: 'en',
      voice: { mode: 'instruct2', promptWav: prompt.path, instructText: 'Speak slowly and calmly.' },
    });
    expect(loopback.requests.map((request) => [request.route, Object.keys(request.fields).sort()])).toEqual([
      ['/inference_cross_lingual', ['tts_text']],
      ['/inference_instruct2', ['instruct_text', 'tts_text']],
    ]);
  });

  it('reads the stream at the configured rate, and a rate set wrongly makes every clip slow until the tempo watch stops it', async () => {
    const at22050 = await server({ sampleRate: 22050 });
    const right = await createCosyVoice2Synthesizer(settings([at22050.url], { sampleRate: 22050 }));
    const output = await right.synthesize({ text: TEXT, language: 'en', voice: zeroShot() });
    expect(output.audio.sampleRate).toBe(22050);
    expect(right.version).toContain('22050 Hz');

    // The model speaks at 24000 Hz, the client is told 16000 Hz: each clip is 1.5 times too long.
    const model = await server({ sampleRate: 24000 });
    const wrong = await createCosyVoice2Synthesizer(
      settings([model.url], { sampleRate: 16000, checks: { speechRateMonitor: { windowSize: 3 } } }),
    );
    const correct = await createCosyVoice2Synthesizer(
      settings([model.url], { checks: { speechRateMonitor: { windowSize: 3 } } }),
    );
    const texts = [
      'Could you tell me more about its history, please?',
      'It was written by Jane Austen a long time ago.',
      'Sure, it started as a small village by the river.',
    ];
    for (const text of texts) {
      const slow = await wrong.synthesize({ text, language: 'en', voice: zeroShot() });
      const normal = await correct.synthesize({ text, language: 'en', voice: zeroShot() });
      expect(slow.audio.sampleRate).toBe(16000);
      const slowSeconds = (slow.audio.channels[0] as Float32Array).length / 16000;
      const normalSeconds = (normal.audio.channels[0] as Float32Array).length / 24000;
      expect(slowSeconds / normalSeconds).toBeGreaterThan(1.4);
    }
    expect(correct.statistics().speechRate?.plausible).toBe(true);
    expect(wrong.statistics().speechRate?.plausible).toBe(false);
    const error = await quarantine(wrong.synthesize({ text: TEXT, language: 'en', voice: zeroShot() }));
    expect(error.failure).toBe('implausible-speech-rate');
    expect(error.message).toMatch(/sampleRate 16000 Hz is probably not the model's/);
    expect(error.message).toMatch(/about 2\d{4} Hz/);
  });

  it('resamples a 48 kHz stereo prompt to 16 kHz mono and cuts a long cross-lingual prompt to 30 s', async () => {
    const loopback = await server();
    const synthesizer = await createCosyVoice2Synthesizer(settings([loopback.url]));
    const stereo = await writePromptFixture(directory, prompt.transcript, { sampleRate: 48000, channels: 2 });
    await synthesizer.synthesize({ text: TEXT, language: 'en', voice: zeroShot(stereo) });
    expect(loopback.requests[0]?.prompt).toMatchObject({ sampleRate: 16000, channels: 1 });
    const long = await writePromptFixture(directory, prompt.transcript, { minimumSeconds: 31 });
    await synthesizer.synthesize({
      text: TEXT,
      language: 'en',
      voice: { mode: 'cross-lingual', promptWav: long.path },
    });
    expect(loopback.requests[1]?.prompt?.durationSeconds).toBe(30);
    const rejected = await synthesizer
      .synthesize({ text: TEXT, language: 'en', voice: zeroShot(long) })
      .catch((error: unknown) => error);
    expect((rejected as SpeechSynthesisError).failure).toBe('invalid-voice');
    expect(loopback.requests).toHaveLength(2);
  });

  it('rejects bad voices before any request', async () => {
    const loopback = await server();
    const synthesizer = await createCosyVoice2Synthesizer(settings([loopback.url]));
    const narrow = await writePromptFixture(directory, prompt.transcript, { sampleRate: 8000 });
    const failures = await Promise.all(
      [
        { mode: 'zero-shot', promptWav: prompt.path },
        { mode: 'instruct2', promptWav: prompt.path },
        { mode: 'zero-shot', promptWav: `${directory}/missing.wav`, promptText: 'x' },
        zeroShot(narrow),
        { ...zeroShot(), pitch: 3 },
      ].map((voice) =>
        synthesizer
          .synthesize({ text: TEXT, language: 'en', voice })
          .catch((error: unknown) => (error as SpeechSynthesisError).failure),
      ),
    );
    expect(failures).toEqual(['invalid-voice', 'invalid-voice', 'invalid-voice', 'invalid-voice', 'invalid-voice']);
    expect(loopback.requests).toHaveLength(0);
  });

  it('answers like FastAPI: 422 for missing fields, 404 and 405 with detail, 500 for a prompt over 30 s', async () => {
    const loopback = await server();
    const partial = new FormData();
    partial.append('tts_text', 'hi');
    const missing = await fetch(`${loopback.url}/inference_zero_shot`, { method: 'POST', body: partial });
    expect(missing.status).toBe(422);
    expect(((await missing.json()) as { detail: { loc: string[] }[] }).detail.map((item) => item.loc[1])).toEqual([
      'prompt_text',
      'prompt_wav',
    ]);
    expect((await fetch(`${loopback.url}/inference_nothing`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${loopback.url}/inference_zero_shot`, { method: 'PUT' })).status).toBe(405);
    const long = await writePromptFixture(directory, prompt.transcript, { minimumSeconds: 31 });
    const form = new FormData();
    form.append('tts_text', 'hi');
    form.append('prompt_wav', new Blob([await readFile(long.path)]), 'prompt.wav');
    const tooLong = await fetch(`${loopback.url}/inference_cross_lingual`, { method: 'POST', body: form });
    expect(tooLong.status).toBe(500);
    expect(await tooLong.text()).toBe('Internal Server Error');
  });
});

describe('cosyvoice2 FastAPI client: faults', () => {
  it('retries HTTP 500 and succeeds on the next attempt', async () => {
    const loopback = await server({ faults: faultsByRequestIndex({ 0: { kind: 'http-error', status: 500 } }) });
    const synthesizer = await createCosyVoice2Synthesizer(settings([loopback.url]));
    await synthesizer.synthesize({ text: TEXT, language: 'en', voice: zeroShot() });
    expect(loopback.requests.map((request) => request.status)).toEqual([500, 200]);
    expect(synthesizer.statistics()).toMatchObject({ attempts: 2, retries: 1, failures: { 'service-error': 1 } });
  });

  it('quarantines after the retries with every attempt and the reason', async () => {
    const loopback = await server({ zeroShotAlwaysFails: true });
    const synthesizer = await createCosyVoice2Synthesizer(settings([loopback.url]));
    const error = await quarantine(synthesizer.synthesize({ text: TEXT, language: 'en', voice: zeroShot() }));
    expect(error.failure).toBe('service-error');
    expect(error.reason).toBe('retries-exhausted');
    expect(error.attempts).toHaveLength(FAST_RETRY.maxRetries + 1);
    expect(
      error.attempts.every(
        (attempt) => attempt.route === '/inference_zero_shot' && attempt.failure === 'service-error',
      ),
    ).toBe(true);
    expect(error.message).toMatch(/quarantined after 4 attempts \(retries-exhausted\)/);
    expect(synthesizer.statistics()).toMatchObject({ quarantined: 1, succeeded: 0 });
  });

  it('falls back from zero-shot to cross-lingual after HTTP 500 when configured', async () => {
    const loopback = await server({ zeroShotAlwaysFails: true });
    const synthesizer = await createCosyVoice2Synthesizer(
      settings([loopback.url], { zeroShotFallback: 'cross-lingual' }),
    );
    await synthesizer.synthesize({ text: TEXT, language: 'en', voice: zeroShot() });
    expect(loopback.requests.map((request) => `${request.route} ${request.status}`)).toEqual([
      '/inference_zero_shot 500',
      '/inference_cross_lingual 200',
    ]);
    expect(synthesizer.statistics().notes).toEqual({ 'zero-shot fell back to cross-lingual': 1 });
    expect(synthesizer.version).toContain('falls back to cross-lingual');
  });

  it('does not retry a client error (HTTP 422)', async () => {
    const loopback = await server({ faults: () => ({ kind: 'http-error', status: 422, body: '{"detail":[]}' }) });
    const synthesizer = await createCosyVoice2Synthesizer(settings([loopback.url]));
    const error = await quarantine(synthesizer.synthesize({ text: TEXT, language: 'en', voice: zeroShot() }));
    expect(error.reason).toBe('not-retryable');
    expect(loopback.requests).toHaveLength(1);
  });

  it('retries a connection reset mid-stream and a stream that ends cleanly halfway', async () => {
    const loopback = await server({
      faults: faultsByRequestIndex({
        0: { kind: 'cut-stream', fraction: 0.5, how: 'reset' },
        1: { kind: 'cut-stream', fraction: 0.45, how: 'end' },
      }),
    });
    const synthesizer = await createCosyVoice2Synthesizer(settings([loopback.url]));
    const output = await synthesizer.synthesize({ text: TEXT, language: 'en', voice: zeroShot() });
    expect((output.audio.channels[0] as Float32Array).length / 24000).toBeGreaterThan(3);
    expect(loopback.requests).toHaveLength(3);
    expect(synthesizer.statistics().failures).toEqual({ 'truncated-audio': 2 });
  });

  it('times out a slow server and retries', async () => {
    // The first request hangs far longer than the client's timeout; the client must give up on it and retry.
    // Fake timers (setImmediate stays real, so the sockets and espeak-ng keep working): the 1 s timeout,
    // the server's 3 s delay and the 4 s retry wait end at exact times; the clock moves only when advanced.
    const loopback = await server({ faults: faultsByRequestIndex({ 0: { kind: 'delay', milliseconds: 3_000 } }) });
    const synthesizer = await createCosyVoice2Synthesizer(
      settings([loopback.url], {
        timeoutSeconds: 1,
        retry: { maxRetries: 3, initialDelaySeconds: 4, maxDelaySeconds: 10, backoffFactor: 1, jitter: 0 },
        endpointCooldown: { initialSeconds: 0.05, maximumSeconds: 0.1 },
      }),
    );
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const synthesized = synthesizer.synthesize({ text: 'Yes, that is right.', language: 'en', voice: zeroShot() });
      // the server has read the request and waits out its delay
      await untilTrue(() => loopback.requests[0]?.faults.length === 1);
      await vi.advanceTimersByTimeAsync(999);
      expect(synthesizer.statistics()).toMatchObject({ attempts: 1, retries: 0, failures: {} });
      await vi.advanceTimersByTimeAsync(1);
      await untilTrue(() => synthesizer.statistics().retries === 1);
      expect(synthesizer.statistics().failures).toEqual({ timeout: 1 });
      // the server has seen the client hang up (its delay still runs, one request at a time)
      await untilTrue(() => loopback.requests[0]!.finishedAt > 0);
      await vi.advanceTimersByTimeAsync(3_999);
      expect(loopback.requests).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      await synthesized;
      expect(performance.now()).toBe(5_000);
      // the abandoned request was closed by the client at 1 s and never answered; the retry started at 5 s and was answered
      expect(loopback.requests.map((request) => [request.status, request.startedAt, request.finishedAt])).toEqual([
        [0, 0, 1_000],
        [200, 5_000, 5_000],
      ]);
      expect(synthesizer.statistics()).toMatchObject({
        attempts: 2,
        retries: 1,
        succeeded: 1,
        failures: { timeout: 1 },
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('trims silence, noise and hallucinated tails', async () => {
    const loopback = await server({
      faults: faultsByRequestIndex({
        0: { kind: 'silence-tail', seconds: 3 },
        1: { kind: 'noise-tail', seconds: 2, levelDbfs: -42 },
        2: { kind: 'hallucinated-tail', gapSeconds: 1.2, text: 'banana' },
        3: [],
      }),
    });
    const synthesizer = await createCosyVoice2Synthesizer(settings([loopback.url]));
    const lengths: number[] = [];
    for (let index = 0; index < 4; index++) {
      const output = await synthesizer.synthesize({ text: TEXT, language: 'en', voice: zeroShot() });
      lengths.push((output.audio.channels[0] as Float32Array).length / 24000);
    }
    const clean = lengths[3] as number;
    for (const length of lengths.slice(0, 3)) expect(Math.abs(length - clean)).toBeLessThan(0.1);
    expect(synthesizer.statistics().trimmedTails).toEqual({ silence: 2, noise: 1, hallucination: 1 });
  });

  it('retries runaway output that is far longer than the text', async () => {
    const loopback = await server({ faults: faultsByRequestIndex({ 0: { kind: 'runaway', repeat: 4 } }) });
    const synthesizer = await createCosyVoice2Synthesizer(settings([loopback.url]));
    await synthesizer.synthesize({ text: TEXT, language: 'en', voice: zeroShot() });
    expect(synthesizer.statistics().failures).toEqual({ 'runaway-audio': 1 });
  });

  it('honours Retry-After on 503', async () => {
    const loopback = await server({
      faults: faultsByRequestIndex({ 0: { kind: 'http-error', status: 503, body: 'busy', retryAfterSeconds: 0.3 } }),
    });
    const waits: number[] = [];
    const synthesizer = await createCosyVoice2Synthesizer(
      settings([loopback.url], { retry: { ...FAST_RETRY, maxDelaySeconds: 1 } }),
      {
        // the wait is recorded, not slept: the fault is scripted per request, not per time
        sleep: async (milliseconds) => void waits.push(milliseconds),
      },
    );
    await synthesizer.synthesize({ text: TEXT, language: 'en', voice: zeroShot() });
    expect(waits).toEqual([300]);
  });
});

describe('cosyvoice2 FastAPI client: several servers', () => {
  it('spreads requests over the least-busy servers, one request per server at a time', async () => {
    const pool = await Promise.all([0, 1, 2].map(() => server({ latencyMs: 80 })));
    const synthesizer = await createCosyVoice2Synthesizer(settings(pool.map((loopback) => loopback.url)));
    const texts = Array.from(
      { length: 12 },
      (_, index) => `Sentence number ${index + 1} is spoken here by the system.`,
    );
    await Promise.all(texts.map((text) => synthesizer.synthesize({ text, language: 'en', voice: zeroShot() })));
    // Each server gets work as soon as it is free; how much depends on its speed (espeak-ng time varies).
    for (const loopback of pool) {
      expect(loopback.peakOpenRequests()).toBe(1);
      expect(loopback.requests.length).toBeGreaterThanOrEqual(2);
    }
    const statistics = synthesizer.statistics();
    expect(statistics.pool.peakRunning).toBe(3);
    expect(statistics.pool.endpoints.reduce((sum, endpoint) => sum + endpoint.succeeded, 0)).toBe(12);
  });

  it('keeps working when one server is down (cool-down, retry elsewhere)', async () => {
    const alive = await server({ latencyMs: 20 });
    const dead = await server();
    await dead.close();
    const synthesizer = await createCosyVoice2Synthesizer(settings([dead.url, alive.url]));
    const texts = Array.from({ length: 6 }, (_, index) => `Reply number ${index + 1} comes back fine.`);
    await Promise.all(texts.map((text) => synthesizer.synthesize({ text, language: 'en', voice: zeroShot() })));
    const statistics = synthesizer.statistics();
    expect(statistics.succeeded).toBe(6);
    expect(statistics.failures['service-unreachable']).toBeGreaterThanOrEqual(1);
    expect(alive.requests).toHaveLength(6);
  });

  it('probes the servers when created', async () => {
    const dead = await server();
    await dead.close();
    const notCosyVoice = await server();
    await expect(createCosyVoice2Synthesizer(settings([dead.url]))).rejects.toMatchObject({
      failure: 'service-unreachable',
    });
    await expect(createCosyVoice2Synthesizer(settings([`${notCosyVoice.url}/wrong-prefix`]))).rejects.toMatchObject({
      failure: 'service-error',
    });
    await expect(createCosyVoice2Synthesizer({ urls: [] })).rejects.toThrow(/urls/);
    await expect(createCosyVoice2Synthesizer(settings([dead.url], { probe: false }))).resolves.toBeDefined();
  });
});

describe('cosyvoice2 FastAPI client: Japanese', () => {
  const KANJI_TEXT = '今日は東京で会議がありました。';

  it('sends a kana reading, keeps the original text for word alignment', async () => {
    const loopback = await server();
    const synthesizer = await createCosyVoice2Synthesizer(settings([loopback.url]));
    const japanesePrompt = await writePromptFixture(directory, 'わたしのなまえはたなかです。', { pitch: 40 });
    const voice = { mode: 'zero-shot', promptWav: japanesePrompt.path, promptText: '私の名前は田中です。' };
    const utterance = await synthesizeUtterance(
      synthesizer,
      { text: KANJI_TEXT, language: 'ja', voice },
      { sampleRate: 16000 },
    );
    const request = loopback.requests[0];
    expect(request?.fields.tts_text).toBe('きょうはとうきょうでかいぎがありました。');
    expect(request?.fields.prompt_text).toBe('わたしのなまえはたなかです。');
    expect(utterance.words.map((word) => word.word)).toEqual([
      '今日',
      'は',
      '東京',
      'で',
      '会議',
      'が',
      'あり',
      'まし',
      'た',
    ]);
    expect(utterance.durationCs).toBeGreaterThan(100);
  });

  it('sends the text as written when kana readings are off (the loopback, like CosyVoice, then misreads the kanji)', async () => {
    const loopback = await server();
    const synthesizer = await createCosyVoice2Synthesizer(
      settings([loopback.url], { kanaReading: { enabled: false }, retry: { ...FAST_RETRY, maxRetries: 0 } }),
    );
    expect(synthesizer.version).toContain('kana off');
    // espeak-ng spells each kanji out as "Chinese letter": far too long for the text, so it is rejected.
    const error = await quarantine(
      synthesizer.synthesize({
        text: KANJI_TEXT,
        language: 'ja',
        voice: { mode: 'cross-lingual', promptWav: prompt.path },
      }),
    );
    expect(loopback.requests[0]?.fields.tts_text).toBe(KANJI_TEXT);
    expect(error.failure).toBe('runaway-audio');
  });
});
