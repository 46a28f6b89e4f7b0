/**
 * Build configuration: one YAML file per build, validated with zod, defaults resolved once into a
 * complete `BuildConfig` (every field present). Errors name the YAML path of the offending value.
 *
 * `npx duplexsynth schema` writes the JSON Schema (from `z.toJSONSchema`) for editor completion.
 */
import { readFile, stat } from 'node:fs/promises';
import { describeFileSystemError } from './storage/file-system-errors.ts';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import {
  dialogueTextBackendSettingsSchema,
  TRANSLATION_BACKEND_SETTINGS_SCHEMAS,
} from './services/llm/backend-settings.ts';
import { REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS } from './services/tts/synthesizer-registry.ts';
import { describeIssues } from './model/validation.ts';
import { DEFAULT_SPLIT_UNIT, SPLIT_UNITS } from './model/split-report.ts';
import { languageCodeSchema } from './model/language-code.ts';
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
import { PACKAGE_ROOT } from './storage/package-files.ts';
import { yamlErrorLine } from './storage/yaml-error.ts';

/** Project root (the folder holding package.json), the same from the sources and from dist/ (storage/package-files.ts). */
export const PROJECT_ROOT = PACKAGE_ROOT;

/**
 * Folder of the shared read-only material: `DUPLEXSYNTH_SHARED` (absolute, or relative to the project
 * root) when set, else `../shared` beside the project.
 */
export function sharedDirectory(): string {
  return path.resolve(PROJECT_ROOT, process.env.DUPLEXSYNTH_SHARED ?? '../shared');
}

const language = languageCodeSchema;

/**
 * A build or dataset name that is safe as one folder name: letters, digits, `.`, `_`, `-`, starting
 * with a letter or digit (so never `.` or `..`).
 */
export const SAFE_FOLDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const safeFolderName = z
  .string()
  .regex(SAFE_FOLDER_NAME, 'letters, digits, dot, dash and underscore only, starting with a letter or digit')
  .refine((value) => !value.endsWith('.partial'), 'must not end in ".partial" (the name of an unfinished dataset)');
const channel = z.union([z.literal(0), z.literal(1)]);

const voiceSettings = z.record(z.string(), z.union([z.string(), z.number()]));

/** `llm.rewrite`: one of the dialogue text backends (pipeline/services/llm/backend-settings.ts). */
const rewriteBackend = dialogueTextBackendSettingsSchema;

/** `llm.translate`: `none` (no translation possible: non-English languages stop at once) or a backend. */
const translateBackend = z.discriminatedUnion('backend', [
  z.object({ backend: z.literal('none') }).strict(),
  ...TRANSLATION_BACKEND_SETTINGS_SCHEMAS,
]);

const ttsLanguageConfig = z
  .object({
    /** Offline engines (espeak-ng, open-jtalk) or a voice-prompted service (cosyvoice2, cosyvoice2-triton, openai-speech). */
    backend: z.enum(['espeak-ng', 'open-jtalk', 'cosyvoice2', 'cosyvoice2-triton', 'openai-speech']),
    /** Voice settings of the two speaker identities; engine-specific keys (see pipeline/services/tts). */
    voices: z.object({ user: voiceSettings, system: voiceSettings }).strict().optional(),
    /** Service settings of a remote backend (urls, sampleRate, retries, …; validated by the engine's schema). */
    service: z.record(z.string(), z.unknown()).optional(),
    /** Voice prompts for a remote backend: a speaker prompt pool manifest (corpora/speaker-prompts.ts). */
    speakerPrompts: z
      .object({
        manifest: z.string(),
        mode: z.enum(['zero-shot', 'cross-lingual']).default('zero-shot'),
        /** How far a clip's WAV may last from its manifest's durationSeconds, as a fraction (checked before any request). */
        durationTolerance: z.number().min(0).max(1).default(0.05),
      })
      .strict()
      .optional(),
  })
  .strict();

/** Input schema: what a YAML file may say. Everything optional has a default in `resolveConfig`. */
export const buildConfigInputSchema = z
  .object({
    name: safeFolderName.default('build'),
    seed: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).default(0),
    languages: z.array(language).nonempty().default(['en']),
    /**
     * Language packs added to the built-in ones (en, ja, zh, de, es, fr, ko): each a YAML file (relative
     * to the config file) or the pack itself inline (pipeline/model/language-pack.ts; README "Adding a language").
     */
    languagePacks: z.array(z.union([z.string(), z.record(z.string(), z.unknown())])).default([]),
    /**
     * The Redis of a queued build (`redis://HOST:PORT/DB`): `build` then spreads its dialogues over
     * `duplexsynth worker` processes through BullMQ (README "Running on many machines"); `--queue`
     * overrides it. Absent or null: a local build.
     */
    queue: z.string().min(1).nullable().optional(),
    corpus: z
      .object({
        format: z.literal('topiocqa').default('topiocqa'),
        /** Language the corpus is written in (TopiOCQA: English); other build languages are translated from it. */
        language: language.default('en'),
        /** TopiOCQA raw-release JSON, relative to the config file. */
        path: z.string(),
        /** First N conversations by number; null = all. */
        limit: z.number().int().positive().nullable().default(null),
        /** What to do with turns whose answer is UNANSWERABLE. */
        unanswerable: z.enum(['keep', 'drop-turn', 'drop-conversation']).default('keep'),
        /** Control characters in the text (NUL, ESC and terminal escape sequences, C1, bidi overrides): removed (noted per turn) or the conversation rejected. */
        controlCharacters: z.enum(['remove', 'reject']).default('remove'),
        /** Longest question or answer, characters; a longer one rejects its conversation before any service is called (the longest real TopiOCQA dev answer has 474). */
        maximumUtteranceCharacters: z.number().int().positive().default(2000),
        /** Most turns in one conversation; a longer one is rejected before any service is called (TopiOCQA's longest has 25). */
        maximumTurnsPerConversation: z.number().int().positive().default(100),
        /** Largest corpus file, bytes; a larger one stops the build before it is read (the file is parsed as one string; V8 holds at most 2^29 characters). */
        maximumFileBytes: z.number().int().positive().default(256_000_000),
      })
      .strict(),
    output: z
      .object({
        /** Build output folder, relative to the config file. */
        directory: z.string().default('outputs/build'),
        /** Content-addressed cache shared between builds. */
        cacheDirectory: z.string().default('outputs/.cache'),
        /**
         * Put each dataset WAV in place as a hard link to the rendering's cache file (the audio on disk
         * once; DVC's `cache.type: hardlink`) where the cache and the output share a filesystem, else
         * write it. Default true. false: every dataset WAV is a file of its own, so a program that
         * rewrites one in place changes nothing else (with links it also changes the cache's copy and
         * any other dataset linked to it). The bytes are the same either way.
         */
        linkAudioToCache: z.boolean().optional(),
      })
      .strict()
      .default({ directory: 'outputs/build', cacheDirectory: 'outputs/.cache' }),
    /**
     * Dataset folder name per language code: data/{lang}/task/{dataset}/ (m3-format.md); default
     * `topiocqa` for English, `topiocqa_{lang}` for any other language.
     */
    datasets: z
      .object({
        /**
         * Also write `{dataset}_bargein` per language: the same dialogues and synthesized audio, with
         * the user barging in on every answer long enough to hold it (the benchmark's `*_bargein`
         * datasets, scripts/pipe.sh evaluates them with `--ignored-events TURN_SHIFT,TURN_HOLD,BC`).
         */
        bargeIn: z.boolean().default(true),
      })
      .catchall(z.union([safeFolderName, z.boolean()]))
      .superRefine((value, context) => {
        for (const [key, name] of Object.entries(value)) {
          if (key === 'bargeIn') continue;
          if (!languageCodeSchema.safeParse(key).success) {
            context.addIssue({
              code: 'custom',
              path: [key],
              message: 'not a language code (a BCP-47 tag such as en, ja, zh) nor bargeIn',
            });
          } else if (typeof name !== 'string') {
            context.addIssue({ code: 'custom', path: [key], message: 'a dataset folder name, not a boolean' });
          }
        }
      })
      .default({ bargeIn: true }),
    /** Channel of each role; m3-format.md default: user 1, system 0. */
    channels: z
      .object({ user: channel, system: channel })
      .strict()
      .refine((value) => value.user !== value.system, 'user and system must be on different channels')
      .default({ user: 1, system: 0 }),
    audio: z
      .object({
        /** Output sample rate in Hz; a multiple of 100 so that 10 ms frames are whole samples. */
        sampleRate: z
          .number()
          .int()
          .min(8000)
          .max(48000)
          .refine((rate) => rate % 100 === 0, 'must be a multiple of 100 Hz (10 ms analysis frames)')
          .default(16000),
        /**
         * Also write each dialogue at the TTS engine's own rate when it is above `sampleRate` (24000 Hz
         * CosyVoice2, 22050 Hz espeak-ng, 48000 Hz Open JTalk): `audio_fullband/{id}.wav` beside the
         * benchmark's `audio/`, for training data (moshi-finetune, lhotse Shar). Default true.
         */
        fullBandMaster: z.boolean().default(true),
        /**
         * Worker threads that master each placed dialogue (true-peak limiting and WAV encoding,
         * pipeline/audio/render-pool.ts), so the build's thread goes on with the next dialogues; 0 = the
         * build's thread does it. The bytes are the same either way. Default 0: on a 2-core machine
         * beside 4 loopback servers one thread freed the build's thread of about 2 of its 12 CPU s per 20
         * dialogues but kept the servers no busier (README "Throughput").
         */
        renderThreads: z.number().int().nonnegative().max(64).default(0),
      })
      .strict()
      .default({ sampleRate: 16000, fullBandMaster: true, renderThreads: 0 }),
    llm: z
      .object({
        rewrite: rewriteBackend.default({ backend: 'rules' }),
        translate: translateBackend.default({ backend: 'none' }),
      })
      .strict()
      .default({ rewrite: { backend: 'rules' }, translate: { backend: 'none' } }),
    /** Speech engine per language code (default: Open JTalk for Japanese, espeak-ng otherwise). */
    tts: z.record(language, ttsLanguageConfig).default({}),
    speechDetection: z
      .object({
        /** Frame RMS threshold in dBFS above which a 10 ms frame is speech. */
        thresholdDbfs: z.number().max(0).optional(),
        /** Silences shorter than this (seconds) are bridged. */
        minimumSilenceSeconds: z.number().positive().optional(),
        /** Speech shorter than this (seconds) is dropped. */
        minimumSpeechSeconds: z.number().positive().optional(),
      })
      .strict()
      .default({}),
    timeline: z
      .object({
        /** Timing-statistics JSON per language; null = the shipped default derived from real calls. */
        statistics: z.record(language, z.string().nullable()).default({}),
        leadingSilenceSeconds: z.number().nonnegative().default(0.5),
        trailingSilenceSeconds: z.number().nonnegative().default(0.5),
        /**
         * Longest silence a speaker change may get (seconds; null = no limit). Telephone calls hold rare
         * silences of 10–20 s (a topic runs out); in a question/answer exchange they read as a broken
         * recording. Longer draws are redrawn, never clipped.
         */
        maximumGapSeconds: z.number().positive().nullable().default(5),
        /**
         * `benchmark` (default): the system answers after a gap drawn from the positive part of the
         * measured user→system offsets, never overlapping the user (the benchmark evaluates a system
         * TURN_SHIFT only when the system is silent at the user's TURN end), and a share of the
         * questions is spoken in two parts with a TURN_HOLD pause; `natural`: both speakers draw the
         * measured offsets in both signs and no question is split (training data).
         */
        profile: z.enum(['benchmark', 'natural']).default('benchmark'),
        /** Share of questions spoken in two parts with a pause > 0.5 s (a user TURN_HOLD); null = the profile's (benchmark 0.15, natural 0). */
        turnHoldShare: z.number().min(0).max(1).nullable().default(null),
        /** The barge-in variant (`datasets.bargeIn`): where the interrupted system stops. */
        bargeIn: z
          .object({
            /** `next-word-boundary`: at the first word end after the drawn overlap; `runs-on`: the answer plays to its end. */
            systemYields: z.enum(['next-word-boundary', 'runs-on']).default('next-word-boundary'),
            /**
             * `next-word-boundary`: a barge-in must leave at least this much of the answer unspoken
             * (either suffices), else the answer keeps its ordinary transition: a barge-in the system
             * need not stop for tests little (issue 19).
             */
            minimumUnspoken: z
              .object({
                seconds: z.number().nonnegative().default(1),
                words: z.number().int().nonnegative().default(3),
              })
              .strict()
              .default({ seconds: 1, words: 3 }),
          })
          .strict()
          .default({ systemYields: 'next-word-boundary', minimumUnspoken: { seconds: 1, words: 3 } }),
        /** The user's backchannels inside the system's answers, at the measured rate and positions. */
        backchannels: z
          .object({
            enabled: z.boolean().default(true),
            /** Phrases per language, synthesized with the user's voice; those longer than 0.8 s are not used. */
            phrases: z.record(language, z.array(z.string().min(1)).nonempty()).default({}),
            /** Most phrases per language (each one is synthesized for every dialogue's user voice). */
            maximumPhrases: z.number().int().positive().default(100),
          })
          .strict()
          .default({ enabled: true, phrases: {}, maximumPhrases: 100 }),
      })
      .strict()
      .default({
        statistics: {},
        leadingSilenceSeconds: 0.5,
        trailingSilenceSeconds: 0.5,
        maximumGapSeconds: 5,
        profile: 'benchmark',
        turnHoldShare: null,
        bargeIn: { systemYields: 'next-word-boundary', minimumUnspoken: { seconds: 1, words: 3 } },
        backchannels: { enabled: true, phrases: {}, maximumPhrases: 100 },
      }),
    synthesis: z
      .object({
        /**
         * A question or answer whose speech lasts at most this long is re-synthesized with padded
         * phrasing, since an IPU of <= 0.8 s is labelled BC (events.md rule 2); 1.0 s leaves a margin.
         */
        minimumUtteranceSeconds: z.number().positive().default(1.0),
        /**
         * Silences inside one synthesized utterance longer than this are shortened to it (null: keep).
         * 0.4 s stays below the 0.5 s IPU rule (events.md rule 1) with a margin for the detector, and
         * above the median SHORTPAUSE of real calls (0.17 s en, 0.33 s ja; pipeline/timeline/defaults).
         */
        maximumInternalPauseSeconds: z.number().positive().nullable().default(0.4),
        /** Parallel TTS processes. */
        concurrency: z.number().int().positive().default(2),
        /**
         * Resampler from the engine's rate to audio.sampleRate: 'speex' (default: SpeexDSP quality 7,
         * about 3000 s of audio per CPU second at 24 -> 16 kHz, in-band error below -110 dB on tones,
         * written samples within two 16-bit steps of 'best') or libsamplerate 'best' (its sinc filter
         * costs about 100 times more, 35 s of audio per CPU second, and bounds a build against fast
         * TTS servers to one core; it was the default before, and its cache entries keep their keys).
         * 'medium' and 'fastest' are libsamplerate's other sinc converters.
         */
        resampleQuality: z.enum(['best', 'medium', 'fastest', 'speex']).default('speex'),
        /**
         * Worker threads that resample (pipeline/audio/resample-pool.ts); 0 (default) = on the build's
         * thread. The samples are the same. With 'best' and both cores of a 2-core machine free, 2
         * threads resample 1.7 x as much audio per second as the build's thread alone; no gain when
         * the other core is busy.
         */
        resampleThreads: z.number().int().nonnegative().max(64).default(0),
      })
      .strict()
      .default({
        minimumUtteranceSeconds: 1.0,
        maximumInternalPauseSeconds: 0.4,
        concurrency: 2,
        resampleQuality: 'speex',
        resampleThreads: 0,
      }),
    /** Quality scoring (DNSMOS, COMETKiwi, signal checks) and the dev/test split, after rendering. */
    quality: z
      .object({
        /** Score and split at the end of the build. */
        enabled: z.boolean().default(false),
        /** DNSMOS model folder; null = DUPLEXSYNTH_DNSMOS_DIR, then ../shared/models/dnsmos, the user cache, a download. */
        dnsmosModelDirectory: z.string().nullable().default(null),
        /**
         * How DNSMOS runs (pipeline/services/mos/dnsmos.ts): onnxruntime execution provider ('cpu';
         * 'cuda' needs onnxruntime-node's CUDA binaries and a GPU; 'auto' tries CUDA, then the CPU),
         * intra-op threads (null: one per core), windows per model run, dialogues scored at once
         * (their signal checks and ffmpeg loudness overlap the next one's model runs). Scores do not
         * depend on these (to float32 rounding of the model outputs), except `hopSeconds`: seconds
         * between the 9.01 s windows, 1 as the reference (DNS-Challenge dnsmos_local.py, the published
         * numbers); 9.01 scores non-overlapping windows, about 1/9 of the model runs, for training data
         * at scale where the reference average is not needed (dnsmos-windows.ts `hopSeconds`).
         */
        dnsmos: z
          .object({
            executionProvider: z.enum(['cpu', 'cuda', 'auto']).default('cpu'),
            intraOpThreads: z.number().int().positive().nullable().default(null),
            batchWindows: z.number().int().positive().default(4),
            concurrentDialogues: z.number().int().positive().default(2),
            hopSeconds: z
              .number()
              .min(1 / 16000)
              .max(3600)
              .default(1),
          })
          .strict()
          .default({
            executionProvider: 'cpu',
            intraOpThreads: null,
            batchWindows: 4,
            concurrentDialogues: 2,
            hopSeconds: 1,
          }),
        /** Target test duration per language in hours (m3-format.md: about one hour). */
        testHours: z.number().positive().default(1),
        /** Size of the optional test_small split (the best N of test); null = none. */
        testSmall: z.number().int().positive().nullable().default(null),
        /**
         * `speaker-group`: test takes whole groups of dialogues that share speakers, best mean DNSMOS
         * first, so dev stays speaker-disjoint and non-empty; `dialogue`: best dialogues one by one, as the
         * paper describes, then dev drops every dialogue sharing a speaker with test.
         */
        splitUnit: z.enum(SPLIT_UNITS).default(DEFAULT_SPLIT_UNIT),
        /**
         * The dialogues not in test are written as `test_other.jsonl` (a split name the benchmark's
         * scripts accept); with `devAlias` also as `dev.jsonl` (same lines), the usual name for users' own use.
         */
        devAlias: z.boolean().default(true),
        /** COMETKiwi for translated datasets: an HTTP scorer or the `comet-score` command (see README). */
        cometKiwi: z
          .object({
            httpUrl: z.string().url().nullable().default(null),
            command: z.string().default('comet-score'),
            gpus: z.number().int().nonnegative().nullable().default(null),
            batchSize: z.number().int().positive().nullable().default(null),
          })
          .strict()
          .default({ httpUrl: null, command: 'comet-score', gpus: null, batchSize: null }),
      })
      .strict()
      .default({
        enabled: false,
        dnsmosModelDirectory: null,
        dnsmos: {
          executionProvider: 'cpu',
          intraOpThreads: null,
          batchWindows: 4,
          concurrentDialogues: 2,
          hopSeconds: 1,
        },
        testHours: 1,
        testSmall: null,
        splitUnit: DEFAULT_SPLIT_UNIT,
        devAlias: true,
        cometKiwi: { httpUrl: null, command: 'comet-score', gpus: null, batchSize: null },
      }),
  })
  .strict();

export type BuildConfigInput = z.input<typeof buildConfigInputSchema>;
type ParsedConfig = z.output<typeof buildConfigInputSchema>;

/** A build configuration with every default resolved and every path absolute. */
export interface BuildConfig extends Omit<
  ParsedConfig,
  'corpus' | 'output' | 'llm' | 'timeline' | 'tts' | 'datasets' | 'languagePacks'
> {
  /** The added language packs, read and validated (the build registers them before any work). */
  languagePacks: LanguagePack[];
  corpus: ParsedConfig['corpus'];
  output: ParsedConfig['output'];
  llm: ParsedConfig['llm'];
  /** Dataset folder name per language code (every language built has one), and whether the barge-in variant is written. */
  datasets: { bargeIn: boolean } & { [language: string]: string | boolean };
  /** Speech engine per language code: one for every language built (and for en and ja always). */
  tts: Record<string, z.output<typeof ttsLanguageConfig>>;
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
function defaultTts(language: string): z.output<typeof ttsLanguageConfig> {
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
  const resolveTts = (
    language: string,
    tts: z.output<typeof ttsLanguageConfig>,
  ): z.output<typeof ttsLanguageConfig> => {
    const remote = (REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS as Record<string, z.ZodType>)[tts.backend];
    if (remote) {
      const checked = remote.safeParse(tts.service ?? {});
      if (!checked.success) {
        throw new ConfigError(
          `${source}: invalid configuration: ${describeIssues(checked.error.issues, { prefix: `tts.${language}.service` })}`,
        );
      }
    } else if (tts.service || tts.speakerPrompts) {
      throw new ConfigError(
        `${source}: tts.${language}: service and speakerPrompts are for remote backends, not ${tts.backend}`,
      );
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
    corpus: { ...parsed.corpus, path: resolvePath(parsed.corpus.path) },
    output: {
      ...parsed.output,
      directory: resolvePath(parsed.output.directory),
      cacheDirectory: resolvePath(parsed.output.cacheDirectory),
    },
    llm: { rewrite: resolveBackend(parsed.llm.rewrite), translate: resolveBackend(parsed.llm.translate) },
    tts: Object.fromEntries(
      [...new Set(['en', 'ja', ...parsed.languages, ...Object.keys(parsed.tts)])].map((lang) => [
        lang,
        resolveTts(lang, parsed.tts[lang] ?? defaultTts(lang)),
      ]),
    ),
    timeline: {
      ...parsed.timeline,
      statistics,
      // default phrases: each language pack's listener tokens (for every known language, as the former en/ja table)
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

/**
 * Read and resolve a YAML build configuration.
 * @throws ConfigError when the file is missing, not YAML, or invalid (message names the file and YAML path)
 */
export async function loadConfigFile(file: string): Promise<BuildConfig> {
  let text: string;
  const limit = maximumConfigFileBytes();
  try {
    const { size } = await stat(file);
    if (size > limit) {
      throw new ConfigError(
        `${file}: ${size} bytes, more than the ${limit} allowed for a configuration file (${MAXIMUM_CONFIG_BYTES_VARIABLE}); a build config is a few kB`,
      );
    }
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(describeFileSystemError(error, file, 'configuration file'));
  }
  const document = parseDocument(text);
  if (document.errors.length > 0) {
    throw new ConfigError(`${file}: not valid YAML: ${yamlErrorLine(document.errors[0]!)}`);
  }
  let value: unknown;
  try {
    value = document.toJS(); // yaml's default alias limit (maxAliasCount 100) refuses an alias bomb here
  } catch (error) {
    throw new ConfigError(
      `${file}: not usable YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
    );
  }
  return resolveConfig(value, file, path.dirname(path.resolve(file)));
}

/** The environment variable that overrides {@link DEFAULT_MAXIMUM_CONFIG_BYTES}. */
export const MAXIMUM_CONFIG_BYTES_VARIABLE = 'DUPLEXSYNTH_MAXIMUM_CONFIG_BYTES';
/** Largest configuration file read, bytes (a real build config is 1–3 kB; the limit is checked before the file is read, so it is not a config key). */
export const DEFAULT_MAXIMUM_CONFIG_BYTES = 1_000_000;

/** {@link DEFAULT_MAXIMUM_CONFIG_BYTES}, or the positive integer in `DUPLEXSYNTH_MAXIMUM_CONFIG_BYTES`. @throws ConfigError when that variable is set to something else */
function maximumConfigFileBytes(): number {
  const value = process.env[MAXIMUM_CONFIG_BYTES_VARIABLE];
  if (value === undefined || value === '') return DEFAULT_MAXIMUM_CONFIG_BYTES;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed <= 0)
    throw new ConfigError(`${MAXIMUM_CONFIG_BYTES_VARIABLE}: "${value}" is not a positive whole number of bytes`);
  return parsed;
}

/**
 * Whether a YAML build configuration sets `output.cacheDirectory` itself (else a command-line `--out`
 * puts the cache beside the output folder).
 * @throws ConfigError as {@link loadConfigFile} when the file cannot be read or is not YAML
 */
export async function configFileSetsCacheDirectory(file: string): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`${file}: cannot read configuration: ${(error as Error).message}`);
  }
  const document = parseDocument(text);
  if (document.errors.length > 0)
    throw new ConfigError(`${file}: not valid YAML: ${yamlErrorLine(document.errors[0]!)}`);
  return document.hasIn(['output', 'cacheDirectory']);
}

/** Path of the built-in offline default configuration (the demo corpus, both languages). */
export const DEFAULT_CONFIG_FILE = path.join(PROJECT_ROOT, 'pipeline', 'default-config.yaml');

/** JSON Schema of the configuration file, for editors (`yaml-language-server: $schema=...`). */
export function configJsonSchema(): unknown {
  return z.toJSONSchema(buildConfigInputSchema, { io: 'input' });
}
