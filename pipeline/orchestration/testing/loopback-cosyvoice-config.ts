/**
 * The build config the whole-build tests of synthesis checks share: the first two demo dialogues in
 * English, CosyVoice2 on a loopback server at `url`, one utterance synthesized at a time (so the last
 * request is the one a loopback transcription service hears), output and cache under `scratch/name`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_CONFIG_FILE, loadConfigFile, resolveConfig, type BuildConfig } from '../../config.ts';

/** What a test sets beside the shared settings: the voices and the quality section. */
export interface LoopbackCosyVoiceSettings {
  /** Build name; also the folder under `scratch` that holds `out/` and `cache/`. */
  name: string;
  /** Folder of the test's files; relative paths of the config resolve from it. */
  scratch: string;
  /** Base URL of the loopback CosyVoice2 server. */
  url: string;
  /** `tts.en.voices` or `tts.en.speakerPrompts` (a manifest of voice prompts). */
  voices: { voices: Record<string, Record<string, string>> } | { speakerPrompts: { manifest: string } };
  /** The config's `quality` section. */
  quality: Record<string, unknown>;
}

/**
 * The resolved config of {@link LoopbackCosyVoiceSettings}, seed 5, at most 2 retries 10–50 ms apart.
 * @throws the config loader's errors for a bad default config or settings
 */
export async function loopbackCosyVoiceConfig(settings: LoopbackCosyVoiceSettings): Promise<BuildConfig> {
  const { name, scratch, url, voices, quality } = settings;
  const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
  return resolveConfig(
    {
      name,
      seed: 5,
      languages: ['en'],
      corpus: { path: base.corpus.path, limit: 2 },
      output: { directory: path.join(scratch, name, 'out'), cacheDirectory: path.join(scratch, name, 'cache') },
      tts: {
        en: {
          backend: 'cosyvoice2',
          service: {
            urls: [url],
            sampleRate: 24000,
            retry: { maxRetries: 2, initialDelaySeconds: 0.01, maxDelaySeconds: 0.05 },
          },
          ...voices,
        },
      },
      synthesis: { concurrency: 1 },
      quality,
    },
    `${name} (test)`,
    scratch,
  );
}

/**
 * A finished build's summaries: `summary.json` parsed and `summary.md` as text.
 * @param outputDirectory the build's `output.directory`
 * @throws the file system's error when either file is missing; SyntaxError for a summary.json that is not JSON
 */
export async function readBuildSummaries(outputDirectory: string): Promise<{ summary: SummaryJson; markdown: string }> {
  const summary = JSON.parse(await readFile(path.join(outputDirectory, 'summary.json'), 'utf8')) as SummaryJson;
  const markdown = await readFile(path.join(outputDirectory, 'summary.md'), 'utf8');
  return { summary, markdown };
}

/** summary.json as these tests read it: untyped beyond its datasets list. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type SummaryJson = any;
