import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cosyVoiceVoiceSchema } from './cosyvoice2-fastapi.ts';
import { cosyVoiceTritonVoiceSchema } from './cosyvoice2-triton.ts';
import { drawDialogueSpeakers } from './offline-speaker-roster.ts';
import { fixtureDirectory, writePromptFixture } from './testing/prompt-fixtures.ts';
import {
  guessTranscriptLanguage,
  loadVoicePrompt,
  VoicePromptCache,
  voicePromptRoster,
  voicePromptTempo,
} from './voice-prompt.ts';
import type { SpeakerPromptLine } from '../../model/speaker-prompt.ts';

let directory: string;
beforeAll(async () => {
  directory = await fixtureDirectory();
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('loadVoicePrompt', () => {
  it('makes a 16 kHz mono PCM16 prompt and measures its speech and tempo', async () => {
    const transcript = 'This is the voice of the first speaker, reading a short sentence.';
    const fixture = await writePromptFixture(directory, transcript, { sampleRate: 44100, channels: 2 });
    const prompt = await loadVoicePrompt('test', fixture.path);
    expect(prompt).toMatchObject({ originalSampleRate: 44100, cut: false });
    expect(prompt.wavBytes.length).toBe(44 + prompt.samples.length * 2);
    expect(prompt.speechSeconds).toBeGreaterThan(2.5);
    expect(prompt.speechSeconds).toBeLessThanOrEqual(prompt.durationSeconds);
    const tempo = await voicePromptTempo(prompt, transcript, 'en');
    expect(tempo).toBeGreaterThan(0.8);
    expect(tempo).toBeLessThan(1.25);
  });

  it('cuts prompts to 30 s and says so', async () => {
    const fixture = await writePromptFixture(directory, 'Short words.', { minimumSeconds: 32 });
    const prompt = await loadVoicePrompt('test', fixture.path);
    expect(prompt.cut).toBe(true);
    expect(prompt.durationSeconds).toBe(30);
  });

  it('caches prompts by path', async () => {
    const fixture = await writePromptFixture(directory, 'Cached words.');
    const cache = new VoicePromptCache('test', 2);
    expect(await cache.get(fixture.path)).toBe(await cache.get(fixture.path));
    await expect(cache.get(path.join(directory, 'missing.wav'))).rejects.toMatchObject({ failure: 'invalid-voice' });
  });
});

describe('voicePromptRoster', () => {
  const entries: SpeakerPromptLine[] = [
    {
      id: 'candor-a-1',
      speaker: 'a',
      corpus: 'candor',
      text: 'first clip of a',
      path: 'clips/candor-a-1.wav',
      durationSeconds: 4,
    },
    {
      id: 'candor-a-2',
      speaker: 'a',
      corpus: 'candor',
      text: 'longer clip of a',
      path: 'clips/candor-a-2.wav',
      durationSeconds: 7.5,
    },
    {
      id: 'candor-b-1',
      speaker: 'b',
      corpus: 'candor',
      text: 'clip of b',
      path: 'clips/candor-b-1.wav',
      durationSeconds: 5,
    },
    {
      id: 'magic-c-1',
      speaker: 'c',
      corpus: 'magicdata',
      text: 'clip of c',
      path: '/abs/magic-c-1.wav',
      durationSeconds: 3,
    },
    {
      id: 'magic-d-1',
      speaker: 'd',
      corpus: 'magicdata',
      text: 'clip of d',
      path: 'clips/magic-d-1.wav',
      durationSeconds: 6,
    },
  ];

  it('takes each speaker longest clip as a CosyVoice voice', () => {
    const roster = voicePromptRoster(entries, '/pool');
    expect(roster.map((identity) => identity.speakerId)).toEqual([
      'candor:a',
      'candor:b',
      'magicdata:c',
      'magicdata:d',
    ]);
    expect(roster[0]?.voice).toEqual({
      mode: 'zero-shot',
      promptWav: '/pool/clips/candor-a-2.wav',
      promptText: 'longer clip of a',
      promptId: 'candor-a-2',
      speaker: 'candor:a',
    });
    expect(roster[2]?.voice.promptWav).toBe('/abs/magic-c-1.wav');
    for (const identity of roster) expect(cosyVoiceVoiceSchema.safeParse(identity.voice).success).toBe(true);
    for (const identity of voicePromptRoster(entries, '/pool', { engine: 'cosyvoice2-triton' }))
      expect(cosyVoiceTritonVoiceSchema.safeParse(identity.voice).success).toBe(true);
  });

  it('gives each dialogue two distinct speakers through drawDialogueSpeakers', () => {
    const roster = voicePromptRoster(entries, '/pool');
    const speakers = drawDialogueSpeakers(roster, 7, 'topiocqa_dev_0001');
    expect(speakers.user.speakerId).not.toBe(speakers.system.speakerId);
  });
});

describe('guessTranscriptLanguage', () => {
  it('tells Japanese (kana) from Mandarin (Chinese characters only), Korean and English', () => {
    expect(guessTranscriptLanguage('今日はいい天気ですね。')).toBe('ja');
    expect(guessTranscriptLanguage('希望你以后能够做的比我还好呦。')).toBe('zh');
    expect(guessTranscriptLanguage('앞으로 더 멋진 사람이 되길 바랄게.')).toBe('ko');
    expect(guessTranscriptLanguage('This is the voice of the first speaker.')).toBe('en');
  });
});
