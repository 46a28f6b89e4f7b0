/**
 * Configuration of the dialogue text backends, as a zod schema the project config can embed
 * (`llm.rewrite` and `llm.translate`), and a registry that builds a backend from it.
 *
 * Backends now: `rules` (rewrite only) and `replay` (recorded responses). The real clients of a later
 * issue (`gemini`, `openai-compatible`) add an entry to {@link DIALOGUE_TEXT_BACKEND_FACTORIES} and an
 * option block here; `record` (a file path) will then wrap them in a `RecordingModel`.
 */
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import type { DialogueTextBackend } from './dialogue-text-backend.ts';
import { LanguageModelTextBackend } from './dialogue-text-backend.ts';
import { ReplayModel } from './replay-model.ts';
import { RulesTextBackend } from './rules-backend.ts';

/** Default seed of every generation request. */
export const DEFAULT_SEED = 1234;

const generationFields = {
  /** Provider model name, the `model` of every request (part of the replay key). */
  model: z.string().min(1),
  temperature: z.number().min(0).default(0),
  seed: z.number().int().default(DEFAULT_SEED),
  /** Send a response JSON schema (JSON mode). */
  structuredOutput: z.boolean().default(false),
  /** Latin words allowed in Japanese output besides short all-capital acronyms. */
  allowedLatinWords: z.array(z.string()).default([]),
};

/** `{backend: 'rules'}`: offline English rewrite; cannot translate. */
export const rulesBackendSettingsSchema = z.object({ backend: z.literal('rules') });

/** `{backend: 'replay', file, model, temperature?, seed?, structuredOutput?, allowedLatinWords?}`: recorded responses. */
export const replayBackendSettingsSchema = z.object({
  backend: z.literal('replay'),
  /** Recorded-response JSONL file (relative paths resolve against the base directory). */
  file: z.string().min(1),
  ...generationFields,
});

/** Settings of one dialogue text backend (`llm.rewrite` or `llm.translate`), discriminated by `backend`. */
export const dialogueTextBackendSettingsSchema = z.discriminatedUnion('backend', [rulesBackendSettingsSchema, replayBackendSettingsSchema]);

/** Settings of one backend, after defaults. */
export type DialogueTextBackendSettings = z.output<typeof dialogueTextBackendSettingsSchema>;
/** Backend names. */
export type DialogueTextBackendName = DialogueTextBackendSettings['backend'];

/** Where relative paths in settings resolve. */
export interface BackendEnvironment {
  baseDirectory: string;
}

type Factory<Name extends DialogueTextBackendName> = (
  settings: Extract<DialogueTextBackendSettings, { backend: Name }>,
  environment: BackendEnvironment,
) => DialogueTextBackend;

/** One factory per backend name. */
export const DIALOGUE_TEXT_BACKEND_FACTORIES: { [Name in DialogueTextBackendName]: Factory<Name> } = {
  rules: () => new RulesTextBackend(),
  replay: (settings, environment) => {
    const file = isAbsolute(settings.file) ? settings.file : resolve(environment.baseDirectory, settings.file);
    return new LanguageModelTextBackend(new ReplayModel(file), {
      settings: {
        model: settings.model,
        temperature: settings.temperature,
        seed: settings.seed,
        structuredOutput: settings.structuredOutput,
      },
      validation: { allowedLatinWords: new Set(settings.allowedLatinWords) },
    });
  },
};

/**
 * Builds a backend from (unvalidated) settings.
 *
 * @param settings e.g. `{backend: 'replay', file: 'corpora/demo/recorded-responses.jsonl', model: 'hand-written-demo'}`.
 * @param environment base directory for relative paths (default: the working directory).
 * @returns the backend (the replay file is read on first use).
 * @throws z.ZodError when the settings are malformed; Error when prompt templates cannot be loaded.
 */
export function createDialogueTextBackend(
  settings: z.input<typeof dialogueTextBackendSettingsSchema>,
  environment: BackendEnvironment = { baseDirectory: process.cwd() },
): DialogueTextBackend {
  const parsed = dialogueTextBackendSettingsSchema.parse(settings);
  // The registry is keyed by the discriminant, so each factory gets its own settings shape.
  const factory = DIALOGUE_TEXT_BACKEND_FACTORIES[parsed.backend] as (
    settings: DialogueTextBackendSettings,
    environment: BackendEnvironment,
  ) => DialogueTextBackend;
  return factory(parsed, environment);
}
