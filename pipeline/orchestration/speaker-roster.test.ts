import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../config.ts';
import type { SpeechSynthesizer } from '../services/tts/speech-synthesizer.ts';
import { speakerRoster } from './speaker-roster.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-roster-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const cosyvoice = { id: 'cosyvoice2' } as SpeechSynthesizer;
const service = { urls: ['http://127.0.0.1:1'], sampleRate: 24000, probe: false };

describe('speakerRoster: voice prompt files in speaker ids and records', () => {
  it('configured voices: recorded relative to the config folder with their sha256; the engine gets the absolute path', async () => {
    const folder = path.join(scratch, 'fixed');
    await mkdir(path.join(folder, 'voices'), { recursive: true });
    await writeFile(path.join(folder, 'voices', 'user.wav'), 'user bytes');
    await writeFile(path.join(folder, 'voices', 'system.wav'), 'system bytes');
    const config = resolveConfig(
      {
        languages: ['en'],
        corpus: { path: 'corpus' },
        output: { directory: 'out' },
        tts: {
          en: {
            backend: 'cosyvoice2',
            service,
            voices: {
              user: { mode: 'cross-lingual', promptWav: 'voices/user.wav' },
              system: { mode: 'cross-lingual', promptWav: './voices/../voices/system.wav' },
            },
          },
        },
      },
      'roster test',
      folder,
    );
    const roster = speakerRoster('en', config, cosyvoice);
    expect(roster.fixed?.user.voice.promptWav).toBe(path.join(folder, 'voices', 'user.wav'));
    expect(roster.fixed?.system.voiceRecord).toEqual({
      mode: 'cross-lingual',
      promptWav: 'voices/system.wav',
      promptWavSha256: sha256('system bytes'),
    });
    expect(roster.fixed?.user.speakerId).toBe(
      `cosyvoice2:mode=cross-lingual,promptWav=voices/user.wav,promptWavSha256=${sha256('user bytes')}`,
    );
  });

  it('a speaker prompt pool: each clip as its manifest names it, with its sha256; a missing clip is a config error', async () => {
    const pool = path.join(scratch, 'pool');
    await mkdir(path.join(pool, 'clips'), { recursive: true });
    const line = (id: string, speaker: string) =>
      JSON.stringify({ id, speaker, corpus: 'fixture', text: 'Hello.', path: `clips/${id}.wav`, durationSeconds: 4 });
    await writeFile(path.join(pool, 'manifest.jsonl'), `${line('a', 'one')}\n${line('b', 'two')}\n`);
    await writeFile(path.join(pool, 'clips', 'a.wav'), 'clip a');
    const config = resolveConfig(
      {
        languages: ['en'],
        corpus: { path: 'corpus' },
        output: { directory: 'out' },
        tts: { en: { backend: 'cosyvoice2', service, speakerPrompts: { manifest: 'pool/manifest.jsonl' } } },
      },
      'roster test',
      scratch,
    );
    expect(() => speakerRoster('en', config, cosyvoice)).toThrow(ConfigError);
    expect(() => speakerRoster('en', config, cosyvoice)).toThrow(/manifest\.jsonl: prompt b: .*b\.wav: voice prompt/);
    await writeFile(path.join(pool, 'clips', 'b.wav'), 'clip b');
    const [first, second] = speakerRoster('en', config, cosyvoice).identities;
    expect(first?.speakerId).toBe('fixture:one');
    expect(first?.voice.promptWav).toBe(path.join(pool, 'clips', 'a.wav'));
    expect(first?.voiceRecord).toMatchObject({ promptWav: 'clips/a.wav', promptWavSha256: sha256('clip a') });
    expect(second?.voiceRecord).toMatchObject({ promptWav: 'clips/b.wav', promptWavSha256: sha256('clip b') });
  });
});
