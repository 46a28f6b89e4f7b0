import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSpeechSynthesizer } from '../pipeline/services/tts/fake-speech-synthesizer.ts';
import type { RecognizedClip } from '../pipeline/services/tts/recognition-tally.ts';
import {
  SpeechSynthesisError,
  type SynthesisOutput,
  type SynthesisRequest,
  type VoiceSettings,
} from '../pipeline/services/tts/speech-synthesizer.ts';
import { ContentCache, contentHash } from '../pipeline/storage/content-cache.ts';
import { synthesisCacheKey, synthesizeCached } from './synthesize-speech-cache.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-voice-key-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The synthesis settings both groups of cases share: English at 16 kHz, the default checks. */
const englishSettings = {
  language: 'en' as const,
  sampleRate: 16000,
  detector: {},
  minimumUtteranceSeconds: 0.5,
  maximumInternalPauseSeconds: null,
};

describe('synthesisCacheKey: a voice prompt enters by its bytes, not its path', () => {
  const synthesizer = new FakeSpeechSynthesizer();
  const settings = englishSettings;
  const voiceOf = (promptWav: string): VoiceSettings => ({
    mode: 'zero-shot',
    promptWav,
    promptText: 'I grew up near the sea.',
  });
  const keyOf = (user: VoiceSettings) => {
    const key = synthesisCacheKey(synthesizer, 'Hello there.', 'user', {
      ...settings,
      voices: { user, system: { voice: 'system' } },
    });
    return { hash: contentHash(key), material: key.keyMaterial as { voice: VoiceSettings } };
  };

  it('the same bytes at two paths name one entry; other bytes another; no path is in the key', async () => {
    const first = path.join(scratch, 'machine-a', 'pool', 'clip.wav');
    const second = path.join(scratch, 'machine-b', 'mounted', 'elsewhere', 'clip.wav');
    const other = path.join(scratch, 'machine-a', 'pool', 'other.wav');
    await mkdir(path.dirname(first), { recursive: true });
    await mkdir(path.dirname(second), { recursive: true });
    await writeFile(first, Buffer.from('RIFF one recording'));
    await copyFile(first, second);
    await writeFile(other, Buffer.from('RIFF another recording'));

    const atFirst = keyOf(voiceOf(first));
    expect(keyOf(voiceOf(second)).hash).toBe(atFirst.hash);
    expect(keyOf(voiceOf(other)).hash).not.toBe(atFirst.hash);
    expect(JSON.stringify(atFirst.material)).not.toContain(scratch);
    expect(atFirst.material.voice).toEqual({
      mode: 'zero-shot',
      promptText: 'I grew up near the sea.',
      // sha256sum of the file
      promptWavSha256: '9c2953ba1254a4dd7e73b8001028fb90761c8eb3349006f15495ae967da24735',
    });
    // a record (relative path and digest, as metadata holds it) keys as the file it names
    const record = { ...voiceOf('pool/clip.wav'), promptWavSha256: atFirst.material.voice.promptWavSha256! };
    expect(keyOf(record).hash).toBe(atFirst.hash);
    // the file rewritten in place: its new bytes are read again (size and modification time changed)
    await writeFile(second, Buffer.from('RIFF a third, longer recording'));
    expect(keyOf(voiceOf(second)).hash).not.toBe(atFirst.hash);
  });

  it('a voice without files keeps its key; an unreadable prompt is an invalid voice', () => {
    const offline = { voice: 'en-us+m3', pitch: 40, speed: 165 };
    expect(keyOf(offline).material.voice).toBe(offline);
    expect(() => keyOf(voiceOf(path.join(scratch, 'missing.wav')))).toThrow(SpeechSynthesisError);
    expect(() => keyOf(voiceOf(path.join(scratch, 'missing.wav')))).toThrow(
      /invalid-voice.*cannot read the voice prompt/,
    );
  });
});

describe('synthesizeCached: the speech recognition check’s counts live in the clip’s entry', () => {
  const settings = { ...englishSettings, voices: { user: { voice: 'user' }, system: { voice: 'system' } } };

  /** The fake engine, its answers carrying `recognized` when given; `answers` counts the requests. */
  class CheckedFake extends FakeSpeechSynthesizer {
    answers = 0;
    constructor(private readonly recognized?: RecognizedClip) {
      super();
    }
    override async synthesize(request: SynthesisRequest): Promise<SynthesisOutput> {
      this.answers += 1;
      const output = await super.synthesize(request);
      return this.recognized ? { ...output, recognized: this.recognized } : output;
    }
  }

  it('returns the counts of a fresh clip and of the same clip read from the cache', async () => {
    const cache = new ContentCache(path.join(scratch, 'checked-cache'));
    const fresh = await synthesizeCached(
      { cache, synthesizer: new CheckedFake({ edits: 1, referenceTokens: 4 }), settings },
      'Where was it built?',
      'user',
    );
    expect(fresh.recognized).toEqual({ edits: 1, referenceTokens: 4 });
    const again = new CheckedFake({ edits: 3, referenceTokens: 4 });
    const cached = await synthesizeCached({ cache, synthesizer: again, settings }, 'Where was it built?', 'user');
    expect(again.answers).toBe(0);
    expect(cached.recognized).toEqual({ edits: 1, referenceTokens: 4 });
  });

  it('an entry stored without counts is read without them', async () => {
    const cache = new ContentCache(path.join(scratch, 'unchecked-cache'));
    await synthesizeCached({ cache, synthesizer: new CheckedFake(), settings }, 'Who designed it?', 'user');
    const again = new CheckedFake({ edits: 0, referenceTokens: 3 });
    const cached = await synthesizeCached({ cache, synthesizer: again, settings }, 'Who designed it?', 'user');
    expect(again.answers).toBe(0);
    expect(cached.recognized).toBeUndefined();
  });
});
