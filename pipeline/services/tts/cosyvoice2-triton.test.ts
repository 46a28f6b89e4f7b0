/**
 * The real CosyVoice2 Triton client against a loopback server that speaks KServe v2 JSON.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCosyVoice2TritonSynthesizer } from './cosyvoice2-triton.ts';
import { SpeechSynthesisQuarantineError } from './remote-synthesizer.ts';
import { faultsByRequestIndex, type LoopbackServer } from './testing/loopback-speech.ts';
import { fixtureDirectory, writePromptFixture, type PromptFixture } from './testing/prompt-fixtures.ts';
import { startTritonLoopbackServer } from './testing/triton-loopback-server.ts';

const FAST = { retry: { maxRetries: 3, initialDelaySeconds: 0.01, maxDelaySeconds: 0.05, jitter: 0 }, endpointCooldown: { initialSeconds: 0.02, maximumSeconds: 0.1 } };
const TEXT = 'Could you tell me more about the history of the tower, please?';

let directory: string;
let prompt: PromptFixture;
const servers: LoopbackServer[] = [];

async function server(options: Parameters<typeof startTritonLoopbackServer>[0] = {}): Promise<LoopbackServer> {
  const started = await startTritonLoopbackServer(options);
  servers.push(started);
  return started;
}

beforeAll(async () => {
  directory = await fixtureDirectory();
  prompt = await writePromptFixture(directory, 'This is the voice of the second speaker, reading a sentence.', { sampleRate: 24000 });
});

afterAll(async () => {
  await Promise.all(servers.map((started) => started.close()));
  await rm(directory, { recursive: true, force: true });
});

describe('cosyvoice2 Triton client', () => {
  it('sends the four KServe v2 inputs and reads the FP32 waveform at 24 kHz', async () => {
    const loopback = await server();
    const synthesizer = await createCosyVoice2TritonSynthesizer({ urls: [loopback.url], ...FAST });
    const output = await synthesizer.synthesize({ text: TEXT, language: 'en', voice: { promptWav: prompt.path, promptText: prompt.transcript } });
    expect(output.audio.sampleRate).toBe(24000);
    const seconds = (output.audio.channels[0] as Float32Array).length / 24000;
    expect(seconds).toBeGreaterThan(3);
    expect(seconds).toBeLessThan(7);
    const request = loopback.requests[0];
    expect(request?.route).toBe('/v2/models/cosyvoice2/infer');
    expect(request?.fields).toEqual({ reference_text: prompt.transcript, target_text: TEXT });
    // The 24 kHz prompt was resampled to 16 kHz before sending.
    expect(Math.abs((request?.prompt?.durationSeconds ?? 0) - (request?.prompt?.bytes ?? 0) / 4 / 16000)).toBe(0);
    expect(synthesizer.version).toMatch(/^cosyvoice2-triton Triton/);
  });

  it('answers invalid requests like Triton (400 with an error message)', async () => {
    const loopback = await server();
    const bad = await fetch(`${loopback.url}/v2/models/cosyvoice2/infer`, { method: 'POST', body: JSON.stringify({ inputs: [] }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/expected 4 inputs/);
    const unknown = await fetch(`${loopback.url}/v2/models/other/infer`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(400);
  });

  it('retries 500, a reset connection and a shortened waveform, then quarantines a persistent failure', async () => {
    const loopback = await server({
      faults: faultsByRequestIndex({
        0: { kind: 'http-error', status: 500, body: 'Failed to process the request(s) for model instance cosyvoice2_0' },
        1: { kind: 'cut-stream', fraction: 0.5, how: 'reset' },
        2: { kind: 'cut-stream', fraction: 0.4, how: 'end' },
      }),
    });
    const synthesizer = await createCosyVoice2TritonSynthesizer({ urls: [loopback.url], ...FAST });
    await synthesizer.synthesize({ text: TEXT, language: 'en', voice: { promptWav: prompt.path, promptText: prompt.transcript } });
    expect(loopback.requests.map((request) => request.status)).toEqual([500, 200, 200, 200]);
    expect(synthesizer.statistics().failures).toEqual({ 'service-error': 1, 'truncated-audio': 2 });

    const broken = await server({ faults: () => ({ kind: 'http-error', status: 400, body: 'in ensemble, unexpected shape' }) });
    const failing = await createCosyVoice2TritonSynthesizer({ urls: [broken.url], ...FAST });
    const error = await failing.synthesize({ text: TEXT, language: 'en', voice: { promptWav: prompt.path, promptText: prompt.transcript } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SpeechSynthesisQuarantineError);
    expect((error as SpeechSynthesisQuarantineError).reason).toBe('not-retryable');
    expect((error as Error).message).toMatch(/unexpected shape/);
  });

  it('sends Japanese target and reference texts as kana', async () => {
    const loopback = await server();
    const synthesizer = await createCosyVoice2TritonSynthesizer({ urls: [loopback.url], ...FAST });
    const japanese = await writePromptFixture(directory, 'わたしのなまえはたなかです。');
    await synthesizer.synthesize({ text: '東京は大きな都市です。', language: 'ja', voice: { promptWav: japanese.path, promptText: '私の名前は田中です。' } });
    expect(loopback.requests[0]?.fields).toEqual({ reference_text: 'わたしのなまえはたなかです。', target_text: 'とうきょうはおおきなとしです。' });
  });

  it('probes health and model metadata when created', async () => {
    const loopback = await server({ modelName: 'another_model' });
    await expect(createCosyVoice2TritonSynthesizer({ urls: [loopback.url], ...FAST })).rejects.toMatchObject({ failure: 'service-error' });
    await expect(createCosyVoice2TritonSynthesizer({ urls: [loopback.url], modelName: 'another_model', ...FAST })).resolves.toBeDefined();
  });
});
