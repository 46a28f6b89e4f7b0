/**
 * The zod schema of a build configuration file: the top-level keys, the `llm` section, and the
 * sections of config-schema-dataset.ts, config-schema-timeline.ts, config-schema-speech.ts and
 * config-schema-quality.ts. Every key carries a one-line `.describe()` (the JSON Schema's
 * `description`, docs/configuration.md) and every default is written here once (`.default()`, or
 * `.prefault({})` for a section whose keys hold their own defaults).
 */
import { z } from 'zod';
import {
  dialogueTextBackendSettingsSchema,
  TRANSLATION_BACKEND_SETTINGS_SCHEMAS,
} from './services/llm/backend-settings.ts';
import { languageCodeSchema } from './model/language-code.ts';
import {
  audioSchema,
  channelsSchema,
  corpusSchema,
  datasetsSchema,
  outputSchema,
  safeFolderNameSchema,
} from './config-schema-dataset.ts';
import { speechDetectionSchema, timelineSchema } from './config-schema-timeline.ts';
import { synthesisSchema, ttsSchema } from './config-schema-speech.ts';
import { qualitySchema } from './config-schema-quality.ts';

/**
 * `llm.translate`: `none` (no translation possible: non-English languages stop at once) or a backend;
 * the bare word `none` is short for `{backend: none}`.
 */
const translateBackendBlock = z.discriminatedUnion('backend', [
  z
    .object({
      backend: z.literal('none').describe('none: no translation; a build of a non-English language stops at once.'),
    })
    .strict()
    .describe('none: no translation; a build of a non-English language stops at once.'),
  ...TRANSLATION_BACKEND_SETTINGS_SCHEMAS,
]);
const translateBackend = z.union([
  z
    .literal('none')
    .transform(() => ({ backend: 'none' as const }))
    .describe('none: short for {backend: none}.'),
  translateBackendBlock,
]);

/** `llm`: the dialogue text backends (pipeline/services/llm/backend-settings.ts). */
const llmSchema = z
  .object({
    rewrite: z
      .union([
        z
          .literal('rules')
          .transform(() => ({ backend: 'rules' as const }))
          .describe('rules: short for {backend: rules}.'),
        dialogueTextBackendSettingsSchema,
      ])
      .default({ backend: 'rules' })
      .describe('Backend that rewrites the corpus text as spoken-style dialogue (rules: offline, English only).'),
    translate: translateBackend
      .default({ backend: 'none' })
      .describe('Backend that translates the dialogues into the other build languages (none: English only).'),
  })
  .strict()
  .prefault({})
  .describe('The language-model backends of the spoken-style rewrite and the translation.');

/** Input schema: what a YAML file may say. Every default is here; `resolveConfig` makes paths absolute. */
export const buildConfigInputSchema = z
  .object({
    name: safeFolderNameSchema.default('build').describe('Build name (one safe folder name).'),
    seed: z
      .number()
      .int()
      .nonnegative()
      .max(Number.MAX_SAFE_INTEGER)
      .default(0)
      .describe(
        "Build seed: each dialogue's speakers and timeline draws come from streams seeded by it and the dialogue id.",
      ),
    languages: z
      .array(
        languageCodeSchema.describe('A BCP-47 language code with a language pack (en, ja, zh, de, es, fr, ko, …).'),
      )
      .nonempty()
      .default(['en'])
      .describe('Languages built, as BCP-47 codes; each needs a language pack.'),
    languagePacks: z
      .array(
        z
          .union([z.string(), z.record(z.string(), z.unknown())])
          .describe('A language pack YAML file (relative to the config file) or the pack itself inline.')
          .meta({ examples: ['../packs/it.yaml'] }),
      )
      .default([])
      .describe('Language packs added to the built-in ones (docs/language-packs.md, docs/languages.md).'),
    queue: z
      .string()
      .min(1)
      .nullable()
      .optional()
      .describe(
        'Redis of a queued build (redis://HOST:PORT/DB): the dialogues are spread over duplexsynth worker processes through BullMQ; --queue overrides it; unset or null = a local build.',
      )
      .meta({ examples: ['redis://127.0.0.1:6379/0'] }),
    corpus: corpusSchema,
    output: outputSchema,
    datasets: datasetsSchema,
    channels: channelsSchema,
    audio: audioSchema,
    llm: llmSchema,
    tts: ttsSchema,
    speechDetection: speechDetectionSchema,
    timeline: timelineSchema,
    synthesis: synthesisSchema,
    quality: qualitySchema,
  })
  .strict()
  .describe('A duplexsynth build configuration.');

/** What a configuration file may say (every key optional that has a default). */
export type BuildConfigInput = z.input<typeof buildConfigInputSchema>;
