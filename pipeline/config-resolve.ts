/**
 * From a parsed configuration document to a complete `BuildConfig`: validation against the schema
 * (config-schema.ts), the defaults that depend on the language packs (the speech engine, dataset name
 * and backchannel phrases of each language), and every relative path made absolute. Errors name the
 * file and the YAML path of the offending value.
 */
import path from 'node:path';
import type { z } from 'zod';
import { REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS } from './services/tts/synthesizer-registry.ts';
import { describeIssues } from './model/validation.ts';
import {
  findLanguagePack,
  knownLanguageCodes,
  languagePackOf,
  LanguagePackError,
  registerLanguagePacks,
  parseLanguagePack,
  readLanguagePackFile,
  type LanguagePack,
} from './model/language-pack.ts';
import { buildConfigInputSchema } from './config-schema.ts';
import type { ResolvedTtsLanguage } from './config-schema-speech.ts';

type ParsedConfig = z.output<typeof buildConfigInputSchema>;

/** A build configuration with every default resolved and every path absolute. */
export interface BuildConfig extends Omit<
  ParsedConfig,
  'corpus' | 'output' | 'llm' | 'timeline' | 'tts' | 'datasets' | 'languagePacks'
> {
  /** The added language packs, read and validated (the build registers them before any work). */
  languagePacks: LanguagePack[];
  /** The corpus; `path` is '' when the file names none (`--corpus FILE` gives it; a build without one stops). */
  corpus: Omit<ParsedConfig['corpus'], 'path'> & { path: string };
  output: ParsedConfig['output'];
  llm: ParsedConfig['llm'];
  /** Dataset folder name per language code (every language built has one), and whether the barge-in variant is written. */
  datasets: { bargeIn: boolean } & { [language: string]: string | boolean };
  /** Speech engine per language code: one for every language built (and for en and ja always). */
  tts: Record<string, ResolvedTtsLanguage>;
  timeline: ParsedConfig['timeline'];
  /** Folder relative paths were resolved against (the config file's folder, or the project root). */
  baseDirectory: string;
}

/** Error in a configuration file; the message names the file and the YAML path of the bad value. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Default backchannel phrases: every known language pack's (`phrases.backchannels`). */
function defaultBackchannelPhrases(): Record<string, [string, ...string[]]> {
  return Object.fromEntries(
    knownLanguageCodes().map((code): [string, [string, ...string[]]] => [
      code,
      languagePackOf(code).phrases.backchannels as [string, ...string[]],
    ]),
  );
}

/** The offline speech engine of a language when the config names none: its pack's `offlineVoice.engine` (espeak-ng without a pack). */
function defaultTts(language: string): ResolvedTtsLanguage {
  return { backend: findLanguagePack(language)?.offlineVoice.engine ?? 'espeak-ng' };
}

/**
 * The default dataset folder name of a language: `topiocqa` for English (the benchmark's name),
 * `topiocqa_{lang}` for any other (`topiocqa_ja`, `topiocqa_zh`).
 */
export function defaultDatasetName(language: string): string {
  return language === 'en' ? 'topiocqa' : `topiocqa_${language}`;
}

/**
 * `config` with the default dataset name and speech engine of every language it builds that has
 * none yet (after `languages` was changed, e.g. by `--lang`).
 */
export function withLanguageDefaults(config: BuildConfig): BuildConfig {
  const datasets = { ...config.datasets };
  const tts = { ...config.tts };
  for (const language of config.languages) {
    if (typeof datasets[language] !== 'string') datasets[language] = defaultDatasetName(language);
    tts[language] ??= defaultTts(language);
  }
  const next = { ...config, datasets, tts };
  keepConfigSource(config, next);
  return next;
}

/**
 * The dataset folder name of `language` in a resolved config.
 * @throws Error when the config has none (resolveConfig gives every language built one)
 */
export function datasetNameOf(config: Pick<BuildConfig, 'datasets'>, language: string): string {
  const name = config.datasets[language];
  if (typeof name !== 'string') throw new Error(`datasets.${language}: no dataset name for ${language}`);
  return name;
}

/**
 * The speech engine settings of `language` in a resolved config.
 * @throws ConfigError when the config has none (resolveConfig gives every language built one)
 */
export function ttsOf(config: Pick<BuildConfig, 'tts'>, language: string): BuildConfig['tts'][string] {
  const tts = config.tts[language];
  if (!tts) throw new ConfigError(`tts.${language}: no speech engine for ${language}`);
  return tts;
}

/**
 * Validate a parsed YAML/JSON value and resolve every default and relative path.
 * @param value the parsed document
 * @param source file name used in error messages
 * @param baseDirectory folder relative paths are resolved against
 * @throws ConfigError naming `source` and the YAML path (e.g. `audio.sampleRate`) of each problem
 */
export function resolveConfig(value: unknown, source: string, baseDirectory: string): BuildConfig {
  const resolved = resolveConfigValue(value, source, baseDirectory);
  configSources.set(resolved, source);
  return resolved;
}

const configSources = new WeakMap<BuildConfig, string>();

/** The file a config was read from (for messages naming the file and field), or undefined. */
export function configSourceOf(config: BuildConfig): string | undefined {
  return configSources.get(config);
}

/** Records that `next` (a changed copy of `config`) still takes `languages` from `config`'s file. */
export function keepConfigSource(config: BuildConfig, next: BuildConfig): void {
  const source = configSources.get(config);
  if (source !== undefined) configSources.set(next, source);
}

function resolveConfigValue(value: unknown, source: string, baseDirectory: string): BuildConfig {
  const result = buildConfigInputSchema.safeParse(value ?? {});
  if (!result.success) {
    throw new ConfigError(`${source}: invalid configuration: ${describeIssues(result.error.issues)}`);
  }
  const parsed = result.data;
  const resolvePath = (p: string) => path.resolve(baseDirectory, p);
  let languagePacks: LanguagePack[];
  try {
    languagePacks = parsed.languagePacks.map((pack, index) =>
      typeof pack === 'string'
        ? readLanguagePackFile(resolvePath(pack))
        : parseLanguagePack(pack, `${source}: languagePacks.${index}`),
    );
  } catch (error) {
    if (error instanceof LanguagePackError) throw new ConfigError(error.message);
    throw error;
  }
  // the config's packs are known to the process from here on (every stage looks languages up by code)
  registerLanguagePacks(languagePacks);
  // the resolved config keeps each service block as written: the engine applies its defaults when created
  const writtenTts = ((value ?? {}) as { tts?: Record<string, { service?: Record<string, unknown> }> }).tts ?? {};
  const asWritten = (language: string, tts: ParsedConfig['tts'][string]): ResolvedTtsLanguage =>
    'service' in tts && tts.service !== undefined ? { ...tts, service: writtenTts[language]!.service! } : tts;
  const resolveTts = (language: string, tts: ResolvedTtsLanguage): ResolvedTtsLanguage => {
    const remote = (REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS as Record<string, z.ZodType>)[tts.backend];
    if (remote && tts.service === undefined) {
      // the schema checks a service block that is there; one that is missing lacks at least `urls`
      const checked = remote.safeParse({});
      if (!checked.success) {
        throw new ConfigError(
          `${source}: invalid configuration: ${describeIssues(checked.error.issues, { prefix: `tts.${language}.service` })}`,
        );
      }
    }
    const resolveVoice = (voice: Record<string, string | number>) =>
      typeof voice.promptWav === 'string' ? { ...voice, promptWav: resolvePath(voice.promptWav) } : voice;
    return {
      ...tts,
      ...(tts.voices
        ? { voices: { user: resolveVoice(tts.voices.user), system: resolveVoice(tts.voices.system) } }
        : {}),
      ...(tts.speakerPrompts
        ? { speakerPrompts: { ...tts.speakerPrompts, manifest: resolvePath(tts.speakerPrompts.manifest) } }
        : {}),
    };
  };
  const { maximumPhrases } = parsed.timeline.backchannels;
  for (const [lang, phrases] of Object.entries(parsed.timeline.backchannels.phrases)) {
    if ((phrases?.length ?? 0) > maximumPhrases) {
      throw new ConfigError(
        `${source}: timeline.backchannels.phrases.${lang}: ${phrases!.length} phrases, more than the ${maximumPhrases} allowed (timeline.backchannels.maximumPhrases; each is synthesized in every user voice)`,
      );
    }
  }
  const statistics: Record<string, string | null> = {};
  for (const [lang, file] of Object.entries(parsed.timeline.statistics))
    statistics[lang] = file ? resolvePath(file) : null;
  const resolveBackend = <T extends { backend: string }>(backend: T): T =>
    'file' in backend && typeof backend.file === 'string' ? { ...backend, file: resolvePath(backend.file) } : backend;
  return {
    ...parsed,
    languagePacks,
    datasets: Object.fromEntries([
      ...[...new Set(['en', 'ja', ...parsed.languages])].map((lang) => [lang, defaultDatasetName(lang)]),
      ...Object.entries(parsed.datasets),
    ]) as BuildConfig['datasets'],
    corpus: { ...parsed.corpus, path: parsed.corpus.path === undefined ? '' : resolvePath(parsed.corpus.path) },
    output: {
      ...parsed.output,
      directory: resolvePath(parsed.output.directory),
      cacheDirectory: resolvePath(parsed.output.cacheDirectory),
    },
    llm: { rewrite: resolveBackend(parsed.llm.rewrite), translate: resolveBackend(parsed.llm.translate) },
    tts: Object.fromEntries(
      [...new Set(['en', 'ja', ...parsed.languages, ...Object.keys(parsed.tts)])].map((lang) => [
        lang,
        resolveTts(lang, parsed.tts[lang] ? asWritten(lang, parsed.tts[lang]) : defaultTts(lang)),
      ]),
    ),
    timeline: {
      ...parsed.timeline,
      statistics,
      // default phrases: each known language pack's backchannels
      backchannels: {
        ...parsed.timeline.backchannels,
        phrases: { ...defaultBackchannelPhrases(), ...parsed.timeline.backchannels.phrases },
      },
    },
    quality: {
      ...parsed.quality,
      dnsmosModelDirectory: parsed.quality.dnsmosModelDirectory
        ? resolvePath(parsed.quality.dnsmosModelDirectory)
        : null,
    },
    baseDirectory,
  };
}
