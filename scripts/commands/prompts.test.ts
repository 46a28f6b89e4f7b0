/**
 * `duplexsynth prompts` on the real Japanese stereo audio of ../shared (two 10 s two-party
 * recordings, 32 kHz) with our own TextGrid annotation of it (corpora/fixtures/reference-audio-ja:
 * intervals placed with Silero VAD, texts are placeholders, see its README), then a CosyVoice2 build
 * against the loopback server that uses the pool.
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav } from '../../pipeline/audio/wav.ts';
import { DEFAULT_CONFIG_FILE, loadConfigFile, resolveConfig, sharedDirectory } from '../../pipeline/config.ts';
import { measureLoudness } from '../../pipeline/quality/loudness.ts';
import { runBuild } from '../../pipeline/orchestration/build.ts';
import { verifyDataset } from '../../pipeline/run/verify-dataset.ts';
import { startCosyVoiceLoopbackServer } from '../../pipeline/services/tts/testing/cosyvoice-loopback-server.ts';
import { FIXTURES } from '../../corpora/reference-test-audio.ts';
import { SPEAKER_PROMPT_MANIFEST } from '../../corpora/speaker-prompt-options.ts';
import { PROMPT_POOL_SUMMARY, runPrompts, type PromptsOptions } from './prompts.ts';

const AUDIO = path.join(sharedDirectory(), 'corpora', 'reference-audio', 'ja');
const ANNOTATION = path.join(FIXTURES, 'reference-audio-ja');

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-prompts-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const options = (out: string, extra: Partial<PromptsOptions> = {}): PromptsOptions => ({
  format: 'textgrid',
  out,
  perSpeaker: 3,
  seed: 0,
  minSeconds: 3,
  maxSeconds: 10,
  loudness: -23,
  audio: AUDIO,
  vad: 'silero',
  minSnr: 10,
  ...extra,
});

async function filesOf(folder: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const file = path.join(entry.parentPath, entry.name);
      files.set(path.relative(folder, file), await readFile(file));
    }
  }
  return files;
}

/**
 * An English CosyVoice2 build of one demo dialogue against a loopback server, its two speakers drawn
 * from the speaker prompt pool `manifest` in cross-lingual mode (the prompt audio without its
 * transcript, the mode for prompts in another language than the dialogue); output in `{folder}/out`,
 * cache in `cache` (default `{folder}/cache`).
 */
async function cosyVoiceBuildConfig(manifest: string, url: string, folder: string, cache = path.join(folder, 'cache')) {
  const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
  return resolveConfig(
    {
      name: 'prompts-build',
      seed: 5,
      languages: ['en'],
      corpus: { path: base.corpus.path, limit: 1 },
      output: { directory: path.join(folder, 'out'), cacheDirectory: cache },
      llm: base.llm,
      tts: {
        en: {
          backend: 'cosyvoice2',
          // The texts of our annotation are placeholders (fixture README), so the tempo measured from a
          // prompt and its text means nothing: the tempo watch is off, every other audio check stays on.
          service: {
            urls: [url],
            sampleRate: 24000,
            retry: { initialDelaySeconds: 0.05, maxDelaySeconds: 1 },
            checks: { speechRateMonitor: null },
          },
          speakerPrompts: { manifest, mode: 'cross-lingual' },
        },
      },
      synthesis: { concurrency: 2 },
      quality: { enabled: false },
    },
    'prompts build (test)',
    scratch,
  );
}

/** sha256 (hex) of every file under `folder`, by path relative to it. */
async function sha256Of(folder: string): Promise<Map<string, string>> {
  const digests = new Map<string, string>();
  for (const [name, bytes] of await filesOf(folder))
    digests.set(name, createHash('sha256').update(bytes).digest('hex'));
  return digests;
}

describe('duplexsynth prompts on the real Japanese stereo recordings', () => {
  it('cuts one-speaker clips with their transcripts, loudness-normalized, says what it rejected, the same bytes twice', async () => {
    const first = await runPrompts([ANNOTATION], options(path.join(scratch, 'pool-1')));
    const manifest = (await readFile(first.manifestPath, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    // prompt-62: the right speaker talks 1.29-5.24 s while the left is silent; prompt-159: the left speaker 4.74-8.26 s.
    expect(manifest.map((entry) => [entry.speaker, entry.recording, entry.start, entry.end])).toEqual([
      ['jmoshi159-left', 'prompt-159', 4.74, 8.26],
      ['jmoshi62-right', 'prompt-62', 1.29, 5.24],
    ]);
    for (const entry of manifest) {
      const file = path.join(path.dirname(first.manifestPath), entry.path);
      const audio = decodeWav(await readFile(file), file);
      expect(audio.sampleRate).toBe(16000);
      expect(audio.channels).toHaveLength(1);
      expect(audio.channels[0]?.length).toBe(Math.round(entry.durationSeconds * 16000));
      expect(entry.snrDb).toBeGreaterThan(10);
      // measured again by ffmpeg's ebur128 on the written file (16-bit rounding moves it by far less than 0.5 LU)
      const loudness = await measureLoudness(file);
      expect(loudness.integratedLufs).not.toBeNull();
      expect(Math.abs((loudness.integratedLufs as number) - -23)).toBeLessThan(0.5);
      expect(loudness.truePeakDbtp as number).toBeLessThanOrEqual(-0.9);
    }
    const summary = JSON.parse(
      await readFile(path.join(path.dirname(first.manifestPath), PROMPT_POOL_SUMMARY), 'utf8'),
    );
    expect(
      summary.speakers.map((speaker: { speaker: string; clips: number }) => [speaker.speaker, speaker.clips]),
    ).toEqual([
      ['jmoshi159-left', 1],
      ['jmoshi159-right', 0],
      ['jmoshi62-left', 0],
      ['jmoshi62-right', 1],
    ]);
    // The left speaker of prompt-62 only speaks while the right one does (5.58-5.86, 6.31-6.98 s).
    expect(summary.speakers[2].rejected['the other channel speaks within 0.1 s']).toBe(2);
    expect(summary.rejectedByReason['shorter than 3 s']).toBeGreaterThan(0);

    const second = await runPrompts([ANNOTATION], options(path.join(scratch, 'pool-2')));
    const [one, two] = [
      await filesOf(path.dirname(first.manifestPath)),
      await filesOf(path.dirname(second.manifestPath)),
    ];
    expect([...one.keys()].sort()).toEqual([...two.keys()].sort());
    for (const [name, bytes] of one) expect(bytes.equals(two.get(name) as Buffer), name).toBe(true);
  });

  it('rejects every clip under a signal-to-noise minimum it cannot meet, and names the reason', async () => {
    const result = await runPrompts([ANNOTATION], options(path.join(scratch, 'pool-strict'), { minSnr: 200 }));
    expect(result.summary.clips).toBe(0);
    expect(
      Object.keys(result.summary.rejectedByReason).some((reason) =>
        /signal-to-noise ratio [\d.]+ dB below 200 dB/.test(reason),
      ),
    ).toBe(true);
  });

  // English dialogue, Japanese voices: CosyVoice2's cross-lingual mode (the prompt audio without its
  // transcript), the mode for prompts in another language than the dialogue. (A Japanese build against
  // the loopback server is not used here: its espeak-ng `ja` voice reads kana at about 2.7 morae/s,
  // which the runaway check rightly rejects.)
  it('a CosyVoice2 build (loopback server) speaks the demo dialogue with the pool as voice prompts', async () => {
    const pool = await runPrompts([ANNOTATION], options(path.join(scratch, 'pool-build')));
    const manifest = (await readFile(pool.manifestPath, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const cosyvoice = await startCosyVoiceLoopbackServer({});
    try {
      const config = await cosyVoiceBuildConfig(pool.manifestPath, cosyvoice.url, path.join(scratch, 'build'));
      const report = await runBuild(config);
      expect(report.datasets[0]?.failed).toEqual([]);
      const requests = cosyvoice.requests.filter((request) => request.status === 200);
      expect(requests.length).toBeGreaterThan(4);
      // Every request uploaded one of the pool's clips: 16 kHz mono, the clip's length.
      const durations = manifest.map((entry) => entry.durationSeconds as number);
      for (const request of requests) {
        expect(request.route).toBe('/inference_cross_lingual');
        expect(request.prompt?.sampleRate).toBe(16000);
        expect(request.prompt?.channels).toBe(1);
        expect(durations.some((duration) => Math.abs(duration - (request.prompt?.durationSeconds ?? 0)) < 0.01)).toBe(
          true,
        );
      }
      // Both speakers of the pool were used, one per side.
      expect(new Set(requests.map((request) => request.prompt?.durationSeconds.toFixed(2))).size).toBe(2);
      const directory = path.join(
        config.output.directory,
        'data',
        'en',
        'task',
        String(config.datasets.en ?? 'topiocqa'),
      );
      expect(await verifyDataset(directory)).toMatchObject({ dialogues: 1, problems: [] });
      const [metadataFile] = await readdir(path.join(directory, 'metadata'));
      const metadata = JSON.parse(await readFile(path.join(directory, 'metadata', metadataFile as string), 'utf8'));
      expect([metadata.speakers.user.speakerId, metadata.speakers.system.speakerId].sort()).toEqual([
        'textgrid:jmoshi159-left',
        'textgrid:jmoshi62-right',
      ]);
      // The voices name their clips as the manifest does, relative to its folder, with the clips' sha256.
      for (const role of ['user', 'system']) {
        const voice = metadata.speakers[role].voice;
        const entry = manifest.find((line) => line.id === voice.promptId);
        expect(voice.promptWav).toBe(entry.path);
        const clip = await readFile(path.join(path.dirname(pool.manifestPath), entry.path));
        expect(voice.promptWavSha256).toBe(createHash('sha256').update(clip).digest('hex'));
      }
      expect(JSON.stringify(metadata)).not.toContain(scratch);
    } finally {
      await cosyvoice.close();
    }
  });

  it('the same pool copied to another folder: a second build into the same cache sends no request and writes the same bytes', async () => {
    const poolA = path.dirname((await runPrompts([ANNOTATION], options(path.join(scratch, 'pool-a')))).manifestPath);
    const poolB = path.join(scratch, 'elsewhere', 'pool-b');
    const cache = path.join(scratch, 'moved-cache');
    const build = async (pool: string, folder: string) => {
      const cosyvoice = await startCosyVoiceLoopbackServer({});
      try {
        const config = await cosyVoiceBuildConfig(
          path.join(pool, SPEAKER_PROMPT_MANIFEST),
          cosyvoice.url,
          folder,
          cache,
        );
        const report = await runBuild(config);
        expect(report.datasets[0]?.failed).toEqual([]);
        const syntheses = cosyvoice.requests.filter((request) => request.route.startsWith('/inference')).length;
        return { syntheses, cache: report.cache, data: await sha256Of(path.join(config.output.directory, 'data')) };
      } finally {
        await cosyvoice.close();
      }
    };
    const first = await build(poolA, path.join(scratch, 'moved-1'));
    expect(first.syntheses).toBeGreaterThan(4);
    // the manifest and its clips (at the paths it names) copied, the first pool gone
    await mkdir(poolB, { recursive: true });
    await copyFile(path.join(poolA, SPEAKER_PROMPT_MANIFEST), path.join(poolB, SPEAKER_PROMPT_MANIFEST));
    for (const line of (await readFile(path.join(poolA, SPEAKER_PROMPT_MANIFEST), 'utf8')).trimEnd().split('\n')) {
      const clip = (JSON.parse(line) as { path: string }).path;
      await mkdir(path.dirname(path.join(poolB, clip)), { recursive: true });
      await copyFile(path.join(poolA, clip), path.join(poolB, clip));
    }
    await rm(poolA, { recursive: true });
    const second = await build(poolB, path.join(scratch, 'moved-2'));
    expect(second.syntheses).toBe(0);
    // every synthesis and every placed timeline found under the keys the first build wrote
    expect(second.cache['synthesize-speech']?.misses).toBe(0);
    expect(second.cache['synthesize-speech']?.hits).toBeGreaterThan(4);
    expect(second.cache['place-timeline']?.misses).toBe(0);
    expect(first.data.size).toBeGreaterThan(5);
    expect(Object.fromEntries(second.data)).toEqual(Object.fromEntries(first.data));
  });
});
