/**
 * The build config of `duplexsynth build`, `demo` and `worker`: the `--config` file (or the built-in
 * default) with the command-line overrides applied. The config and language-pack modules load when a
 * command runs, so the CLI starts fast.
 */
import path from 'node:path';
import type { BuildConfig } from '../../pipeline/config.ts';
import { DEFAULT_SPLIT_UNIT } from '../../pipeline/model/split-report.ts';
import { BuildInputError } from '../../pipeline/model/build-errors.ts';

/** The config and language-pack modules, loaded when a build runs. */
export interface ConfigModules {
  config: typeof import('../../pipeline/config.ts');
  languagePack: typeof import('../../pipeline/model/language-pack.ts');
}

/** Loads the config and language-pack modules. */
export async function configModules(): Promise<ConfigModules> {
  const [config, languagePack] = await Promise.all([
    import('../../pipeline/config.ts'),
    import('../../pipeline/model/language-pack.ts'),
  ]);
  return { config, languagePack };
}

/** The options of `build` and `demo` (commander's attribute names). */
export interface BuildOptions {
  config?: string;
  corpus?: string;
  /** `--corpus-language`: corpus.language. */
  corpusLanguage?: string;
  limit?: number;
  /** `--language` (alias `--lang`): the languages to build. */
  language?: string[];
  languagePack?: string[];
  out?: string;
  seed?: number;
  quiet?: boolean;
  allowShrink?: boolean;
  json?: boolean;
  plain?: boolean;
  dryRun?: boolean;
  /** `--no-score`: false skips quality scoring and the split. */
  score?: boolean;
  testHours?: number;
  testSmall?: number;
  splitUnit?: 'dialogue' | 'speaker-group';
  /** `--dnsmos-hop`: quality.dnsmos.hopSeconds. */
  dnsmosHop?: number;
  queue?: string;
  giveUpSeconds?: number;
  idleSeconds?: number;
}

/**
 * The build config: the `--config` file (or the built-in default) read and checked first, so a bad file
 * is named by its reader, then the command-line overrides applied.
 */
export async function loadBuildConfig(options: BuildOptions, modules: ConfigModules): Promise<BuildConfig> {
  const { DEFAULT_CONFIG_FILE, loadConfigFile, configFileSetsCacheDirectory } = modules.config;
  const loaded = await loadConfigFile(options.config ?? DEFAULT_CONFIG_FILE);
  const configSetsCache = options.config !== undefined && (await configFileSetsCacheDirectory(options.config));
  return applyOverrides(loaded, options, modules, configSetsCache);
}

/**
 * Apply command-line overrides to a resolved config (paths relative to the working directory).
 * A real corpus given without `--config` is built as the benchmark reads it: rules rewrite, in its
 * `--corpus-language` (default English) with no translation,
 * scored and split (test, test_small with `--test-small`, test_other and its `dev` alias) with the
 * config's split defaults. With `--config`, scoring follows the file's `quality.enabled`; `--no-score`
 * turns it off in every case. The cache goes beside the output folder (`{out}/../.cache`) unless a
 * `--config` file sets `output.cacheDirectory`.
 * @param modules the config and language-pack modules (loaded when a command runs: the CLI starts fast)
 * @param configSetsCache whether the `--config` file sets `output.cacheDirectory` itself
 * @throws BuildInputError for a `--language-pack` file that cannot be used or a corpus file name that
 *   gives no safe build name
 */
export function applyOverrides(
  config: BuildConfig,
  options: BuildOptions,
  modules: ConfigModules,
  configSetsCache = false,
): BuildConfig {
  const { defaultDatasetName, withLanguageDefaults } = modules.config;
  const { LanguagePackError, readLanguagePackFile, registerLanguagePacks } = modules.languagePack;
  const next: BuildConfig = structuredClone(config);
  next.languagePacks = [...config.languagePacks]; // the same pack records: messages name the file each was read from
  if (options.corpus) next.corpus.path = path.resolve(options.corpus);
  if (options.corpusLanguage) next.corpus.language = options.corpusLanguage as BuildConfig['corpus']['language'];
  if (options.limit !== undefined) next.corpus.limit = options.limit;
  if (options.languagePack) {
    // language packs from files (pipeline/model/language-pack.ts): validated here, before any work
    try {
      next.languagePacks = [
        ...next.languagePacks,
        ...options.languagePack.map((file) => readLanguagePackFile(path.resolve(file))),
      ];
    } catch (error) {
      if (error instanceof LanguagePackError) throw new BuildInputError(`--language-pack ${error.message}`);
      throw error;
    }
    registerLanguagePacks(next.languagePacks);
  }
  if (options.language) next.languages = options.language as BuildConfig['languages'];
  else if (options.config) modules.config.keepConfigSource(config, next); // messages about languages name the file
  if (options.out) next.output.directory = path.resolve(options.out);
  if (options.seed !== undefined) next.seed = options.seed;
  // A real corpus given on the command line is not the demo corpus: the demo's recorded responses
  // cannot answer for it, so the English rewrite falls back to the offline rules backend.
  if (options.corpus && !options.config) {
    next.llm = { rewrite: { backend: 'rules' }, translate: { backend: 'none' } };
    if (!options.language) next.languages = [next.corpus.language];
    // scored and split by default, so pipe.sh's --split test|test_small|test_other finds its files
    next.quality = {
      ...next.quality,
      enabled: true,
      testHours: 1,
      testSmall: null,
      splitUnit: DEFAULT_SPLIT_UNIT,
      devAlias: true,
    };
    next.name = buildNameOfCorpus(options.corpus, modules.config.SAFE_FOLDER_NAME);
    next.datasets = {
      ...next.datasets,
      en: defaultDatasetName('en'),
      ja: defaultDatasetName('ja'),
      ...Object.fromEntries(next.languages.map((language) => [language, defaultDatasetName(language)])),
    };
    if (!options.out) next.output.directory = path.resolve('outputs', next.name);
  }
  if (options.score === false) next.quality = { ...next.quality, enabled: false };
  if (options.testHours !== undefined) next.quality = { ...next.quality, testHours: options.testHours };
  if (options.testSmall !== undefined) next.quality = { ...next.quality, testSmall: options.testSmall };
  if (options.splitUnit !== undefined) next.quality = { ...next.quality, splitUnit: options.splitUnit };
  if (options.dnsmosHop !== undefined)
    next.quality = { ...next.quality, dnsmos: { ...next.quality.dnsmos, hopSeconds: options.dnsmosHop } };
  // the cache beside the output folder, unless the user's config names it
  if (next.output.directory !== config.output.directory && !configSetsCache) {
    next.output.cacheDirectory = path.join(path.dirname(next.output.directory), '.cache');
  }
  return withLanguageDefaults(next);
}

/**
 * The build name (and default output folder `outputs/{name}`) of a corpus file: its name without
 * `.json`. @throws BuildInputError when that is not a safe folder name (`..json` would make `outputs/` itself the output)
 */
function buildNameOfCorpus(corpus: string, safeFolderName: RegExp): string {
  const name = path.basename(corpus).replace(/\.json$/, '');
  if (!safeFolderName.test(name)) {
    throw new BuildInputError(
      `--corpus ${corpus}: the file name gives no safe build name ("${name}"); rename the file or pass --out`,
    );
  }
  return name;
}
