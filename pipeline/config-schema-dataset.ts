/**
 * The build configuration's sections about what is read and written: `corpus` (the TopiOCQA input),
 * `output` (folders), `datasets` (dataset folder names), `channels` and `audio` (the WAV layout).
 * Every default is written here once; `resolveConfig` (config-resolve.ts) makes paths absolute.
 */
import { z } from 'zod';
import { languageCodeSchema } from './model/language-code.ts';

/**
 * A build or dataset name that is safe as one folder name: letters, digits, `.`, `_`, `-`, starting
 * with a letter or digit (so never `.` or `..`).
 */
export const SAFE_FOLDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Endings a build gives its own folders beside a dataset or report: `.partial` (one being written),
 * `.previous` (the old one kept aside while a commit replaces it), `.lock` (the output folder's lock).
 * A build or dataset named with one of them would be taken for a build's own leftover.
 */
export const RESERVED_FOLDER_SUFFIXES = ['.partial', '.previous', '.lock'] as const;

/** The reserved ending `name` ends in ({@link RESERVED_FOLDER_SUFFIXES}), or undefined. */
export function reservedSuffixOf(name: string): string | undefined {
  return RESERVED_FOLDER_SUFFIXES.find((suffix) => name.endsWith(suffix));
}

/** Why a name with a reserved ending is refused, e.g. `must not end in ".previous" (…)`. */
export function reservedSuffixMessage(suffix: string): string {
  return `must not end in "${suffix}": a build names its own folders so (".partial" while writing, ".previous" for the old one kept during a commit, ".lock")`;
}

/** A name that is one safe folder name and does not end in a reserved ending. */
export const safeFolderNameSchema = z
  .string()
  .regex(SAFE_FOLDER_NAME, 'letters, digits, dot, dash and underscore only, starting with a letter or digit')
  .superRefine((value, context) => {
    const suffix = reservedSuffixOf(value);
    if (suffix !== undefined) context.addIssue({ code: 'custom', message: reservedSuffixMessage(suffix) });
  });

/** `corpus`: the TopiOCQA release read and the limits checked before any service is called. */
export const corpusSchema = z
  .object({
    format: z.literal('topiocqa').default('topiocqa').describe('Corpus file format (TopiOCQA raw release JSON).'),
    language: languageCodeSchema
      .default('en')
      .describe('Language the corpus is written in (TopiOCQA: English); other build languages are translated from it.'),
    path: z
      .string()
      .optional()
      .describe('TopiOCQA raw-release JSON file, relative to the config file; required unless --corpus FILE gives it.')
      .meta({ examples: ['../corpora/demo/demo_topiocqa.json'] }),
    limit: z
      .number()
      .int()
      .positive()
      .nullable()
      .default(null)
      .describe('Build only the first N conversations by number; null = all.'),
    unanswerable: z
      .enum(['keep', 'drop-turn', 'drop-conversation'])
      .default('keep')
      .describe('What to do with turns whose answer is UNANSWERABLE.'),
    controlCharacters: z
      .enum(['remove', 'reject'])
      .default('remove')
      .describe(
        'Control characters in the text (NUL, ESC, terminal escape sequences, C1, bidi overrides): removed (noted per turn) or the conversation rejected.',
      ),
    maximumUtteranceCharacters: z
      .number()
      .int()
      .positive()
      .default(2000)
      .describe(
        'Longest question or answer, characters; a longer one rejects its conversation before any service is called (the longest TopiOCQA dev answer has 474).',
      ),
    maximumTurnsPerConversation: z
      .number()
      .int()
      .positive()
      .default(100)
      .describe(
        "Most turns in one conversation; a longer one is rejected before any service is called (TopiOCQA's longest has 25).",
      ),
    maximumFileBytes: z
      .number()
      .int()
      .positive()
      .default(256_000_000)
      .describe(
        'Largest corpus file, bytes; a larger one stops the build before it is read (the file is parsed as one string; V8 holds at most 2^29 characters).',
      ),
  })
  .strict()
  .describe('The TopiOCQA corpus the dialogues are built from.');

/** `output`: the build folder and the content-addressed cache. */
export const outputSchema = z
  .object({
    directory: z.string().default('outputs/build').describe('Build output folder, relative to the config file.'),
    cacheDirectory: z
      .string()
      .default('outputs/.cache')
      .describe('Content-addressed cache shared between builds, relative to the config file.'),
    // With links, a program that rewrites a dataset WAV in place also changes the cache's copy and any
    // other dataset linked to it; false gives every dataset WAV a file of its own. The bytes are the same.
    linkAudioToCache: z
      .boolean()
      .optional()
      .describe(
        "Put each dataset WAV in place as a hard link to the rendering's cache file where both share a filesystem (DVC's cache.type: hardlink), else copy it; unset = true.",
      ),
  })
  .strict()
  .prefault({})
  .describe('Where the build writes its datasets and its cache.');

/**
 * `datasets`: the dataset folder name per language code (`data/{lang}/task/{dataset}/`,
 * docs/dataset-format.md) and whether the barge-in variant is written. A language without a name gets
 * `topiocqa` (English) or `topiocqa_{lang}` (config-resolve.ts `defaultDatasetName`).
 */
export const datasetsSchema = z
  .object({
    // The benchmark's `*_bargein` datasets: scripts/pipe.sh evaluates them with
    // `--ignored-events TURN_SHIFT,TURN_HOLD,BC`.
    bargeIn: z
      .boolean()
      .default(true)
      .describe(
        'Also write {dataset}_bargein per language: the same dialogues and audio, the user barging in on every answer long enough to hold it.',
      ),
  })
  .catchall(
    z
      .union([safeFolderNameSchema, z.boolean()])
      .describe('Dataset folder name of this language code; default topiocqa for en, topiocqa_{lang} otherwise.')
      .meta({ examples: ['topiocqa_demo'] }),
  )
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
  .prefault({})
  .describe('Dataset folder name per language code (data/{lang}/task/{dataset}/) and the barge-in variant.');

const channel = z.union([z.literal(0), z.literal(1)]);

/** `channels`: the WAV channel of each role (docs/dataset-format.md: user 1, system 0). */
export const channelsSchema = z
  .object({
    user: channel.describe("Channel of the user's speech (0 or 1)."),
    system: channel.describe("Channel of the system's speech (0 or 1)."),
  })
  .strict()
  .refine((value) => value.user !== value.system, 'user and system must be on different channels')
  .default({ user: 1, system: 0 })
  .describe('WAV channel of each role; the benchmark reads the user on 1 and the system on 0.');

/** `audio`: sample rate and the full-band copy of the dialogue WAVs. */
export const audioSchema = z
  .object({
    sampleRate: z
      .number()
      .int()
      .min(8000)
      .max(48000)
      .refine((rate) => rate % 100 === 0, 'must be a multiple of 100 Hz (10 ms analysis frames)')
      .default(16000)
      .describe('Output sample rate, Hz; a multiple of 100 so that 10 ms frames are whole samples.'),
    fullBandMaster: z
      .boolean()
      .default(true)
      .describe(
        "Also write each dialogue at the TTS engine's own rate when above sampleRate (24000 Hz CosyVoice2, 22050 Hz espeak-ng, 48000 Hz Open JTalk) as audio_fullband/{id}.wav, for training data.",
      ),
    // 0 by default: a render thread takes CPU from the main thread but does not keep the speech servers
    // any busier, which is what bounds a build (docs/performance.md, the bench's saturation section)
    renderThreads: z
      .number()
      .int()
      .nonnegative()
      .max(64)
      .default(0)
      .describe(
        "Worker threads that master each placed dialogue (true-peak limiting, WAV encoding); 0 = the build's thread. The bytes are the same either way.",
      ),
  })
  .strict()
  .prefault({})
  .describe('Sample rate and layout of the dialogue WAV files.');
