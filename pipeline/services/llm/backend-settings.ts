/**
 * Configuration of the dialogue text backends, as zod schemas the project config can embed
 * (`llm.rewrite` and `llm.translate`), and a registry that builds a backend from them.
 *
 * Backends: `rules` (rewrite only), `replay` (recorded responses), `gemini` (Gemini API, default
 * model gemma-4-31b-it) and `openai-compatible` (vLLM, SGLang, llama.cpp server, Ollama, …). The real
 * clients are stacked as
 * `RecordingModel? → RetryingModel → QueuedModel (one queue per endpoint, shared) → client`,
 * so a `record` file holds every request a build made (repair and split requests included) and
 * `replay` with the same generation and recovery settings rebuilds exactly.
 *
 * Units in settings are seconds (timeouts, delays, intervals); API keys are never in settings, only
 * the name of the environment variable holding them.
 */
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import type { DialogueTextRecovery, GenerationSettings } from './dialogue-text.ts';
import type { DialogueTextBackend } from './dialogue-text-backend.ts';
import { LanguageModelTextBackend } from './dialogue-text-backend.ts';
import { SHARED_ENDPOINT_POOLS, type EndpointPools, type EndpointThroughput } from '../endpoint-pool.ts';
import { QueuedModel } from './queued-model.ts';
import { MissingApiKeyError } from './errors.ts';
import { DEFAULT_GEMINI_API_KEY_VARIABLES, GeminiModel } from './gemini-model.ts';
import type { LanguageModel } from './language-model.ts';
import { OpenAICompatibleModel } from './openai-compatible-model.ts';
import { RecordingModel, ReplayModel } from './replay-model.ts';
import { RetryingModel, type RetryEvent, type RetryPolicy } from './retrying-model.ts';
import { RulesTextBackend } from './rules-backend.ts';
import { redactErrorInPlace, redactSecrets, registerSecret } from '../../storage/redact.ts';

import {
  dialogueTextBackendSettingsSchema,
  retrySettingsSchema,
  throughputSettingsSchema,
  type DialogueTextBackendName,
  type DialogueTextBackendSettings,
} from './backend-settings-schema.ts';

export * from './backend-settings-schema.ts';

/** What the factories need besides the settings. */
export interface BackendEnvironment {
  /** Where relative paths in settings resolve. */
  baseDirectory: string;
  /** Where API keys are read; default `process.env`. */
  environmentVariables?: Readonly<Record<string, string | undefined>>;
  /** Endpoint pools; default the process-wide {@link SHARED_ENDPOINT_POOLS}. */
  endpointPools?: EndpointPools;
  /** Told about every retry (e.g. the build log). */
  onRetry?: (event: RetryEvent) => void;
}

type Factory<Name extends DialogueTextBackendName> = (
  settings: Extract<DialogueTextBackendSettings, { backend: Name }>,
  environment: BackendEnvironment,
) => DialogueTextBackend;

/** One factory per backend name. */
export const DIALOGUE_TEXT_BACKEND_FACTORIES: { [Name in DialogueTextBackendName]: Factory<Name> } = {
  rules: () => new RulesTextBackend(),
  replay: (settings, environment) => textBackend(new ReplayModel(resolvePath(settings.file, environment)), settings),
  gemini: (settings, environment) => {
    const client = new GeminiModel({
      apiKey: () =>
        readApiKey(
          settings.apiKeyVariable !== undefined ? [settings.apiKeyVariable] : DEFAULT_GEMINI_API_KEY_VARIABLES,
          environment,
          'gemini',
        ),
      baseUrl: settings.baseUrl,
      timeoutMilliseconds: settings.timeoutSeconds * 1000,
      ...(settings.capabilities !== undefined ? { capabilities: settings.capabilities } : {}),
      ...(settings.maxOutputTokens !== undefined ? { maxOutputTokens: settings.maxOutputTokens } : {}),
    });
    const endpoint = `gemini ${settings.baseUrl.replace(/\/+$/, '')}/v1beta/models/${settings.model.replace(/^models\//, '')}`;
    return textBackend(serviceModel(client, endpoint, settings, environment), settings);
  },
  'openai-compatible': (settings, environment) => {
    const variable = settings.apiKeyVariable;
    const client = new OpenAICompatibleModel({
      baseUrl: settings.baseUrl,
      ...(variable !== undefined ? { apiKey: () => readApiKey([variable], environment, 'openai-compatible') } : {}),
      timeoutMilliseconds: settings.timeoutSeconds * 1000,
      ...(settings.capabilities !== undefined ? { capabilities: settings.capabilities } : {}),
      ...(settings.maxOutputTokens !== undefined ? { maxOutputTokens: settings.maxOutputTokens } : {}),
    });
    const endpoint = `openai-compatible ${settings.baseUrl.replace(/\/+$/, '')}`;
    return textBackend(serviceModel(client, endpoint, settings, environment), settings);
  },
};

/**
 * Builds a backend from (unvalidated) settings.
 *
 * @param settings e.g. `{backend: 'replay', file: 'corpora/demo/recorded-responses.jsonl', model: 'hand-written-demo'}`
 *   or `{backend: 'gemini', record: 'outputs/recorded/rewrite.jsonl'}`.
 * @param environment base directory for relative paths (default: the working directory), environment
 *   variables, endpoint queues, retry observer.
 * @returns the backend. Nothing is read or contacted yet: the replay file is read and the API key
 *   looked up on first use, so a build served from the cache needs neither.
 * @throws z.ZodError when the settings are malformed; Error when prompt templates cannot be loaded or
 *   an endpoint is configured twice with different throughput; RangeError for impossible throughput.
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

/**
 * The retry policy of settings, in milliseconds.
 *
 * @param retry the `retry` block (after defaults).
 * @returns the policy for {@link RetryingModel}.
 */
export function retryPolicyFromSettings(retry: z.output<typeof retrySettingsSchema>): RetryPolicy {
  return {
    maxRetries: retry.maxRetries,
    initialDelayMilliseconds: retry.initialDelaySeconds * 1000,
    maxDelayMilliseconds: retry.maxDelaySeconds * 1000,
    backoffFactor: retry.backoffFactor,
    jitter: retry.jitter,
  };
}

/**
 * The endpoint limits of settings, in milliseconds.
 *
 * @param throughput the `throughput` block (after defaults).
 * @returns the limits for an endpoint queue.
 */
export function throughputFromSettings(throughput: z.output<typeof throughputSettingsSchema>): EndpointThroughput {
  return {
    concurrency: throughput.concurrency,
    ...(throughput.requestsPerInterval !== undefined
      ? { requestsPerInterval: throughput.requestsPerInterval, intervalMilliseconds: throughput.intervalSeconds * 1000 }
      : {}),
  };
}

/**
 * Reads an API key from the first set variable.
 *
 * @param variableNames environment variables to look at, in order.
 * @param environment where to look (default `process.env`).
 * @param backend for the message.
 * @returns the key.
 * @throws MissingApiKeyError naming the variables when none is set.
 */
export function readApiKey(
  variableNames: readonly string[],
  environment: Pick<BackendEnvironment, 'environmentVariables'>,
  backend: string,
): string {
  const variables = environment.environmentVariables ?? process.env;
  for (const name of variableNames) {
    const value = variables[name];
    if (value !== undefined && value.trim() !== '') {
      registerSecret(value, name); // redacted from every message and file from now on
      return value.trim();
    }
  }
  throw new MissingApiKeyError(
    `the ${backend} backend needs an API key: set the environment variable ${variableNames.join(' or ')} ` +
      '(settings name the variable with apiKeyVariable, never the key)',
    { variableNames },
  );
}

function serviceModel(
  client: LanguageModel,
  endpoint: string,
  settings: Extract<DialogueTextBackendSettings, { backend: 'gemini' | 'openai-compatible' }>,
  environment: BackendEnvironment,
): LanguageModel {
  const policy = retryPolicyFromSettings(settings.retry);
  const queue = (environment.endpointPools ?? SHARED_ENDPOINT_POOLS).get(
    endpoint,
    throughputFromSettings(settings.throughput),
  );
  const retrying = new RetryingModel(
    new QueuedModel(new RedactingModel(client), queue, policy.maxDelayMilliseconds),
    policy,
    undefined,
    {
      ...(environment.onRetry !== undefined ? { onRetry: environment.onRetry } : {}),
    },
  );
  return settings.record !== undefined
    ? new RecordingModel(retrying, resolvePath(settings.record, environment))
    : retrying;
}

/**
 * A transparent wrapper that redacts every registered API key (../../run/redact.ts) from the errors
 * and texts of the model it wraps, before retry events, failure reasons or recordings see them
 * (some gateways echo the key in a 401 body).
 */
class RedactingModel implements LanguageModel {
  readonly id: string;

  constructor(private readonly inner: LanguageModel) {
    this.id = inner.id;
  }

  async generate(request: Parameters<LanguageModel['generate']>[0]): ReturnType<LanguageModel['generate']> {
    try {
      const result = await this.inner.generate(request);
      return { ...result, text: redactSecrets(result.text) };
    } catch (error) {
      throw redactErrorInPlace(error);
    }
  }
}

function textBackend(
  model: LanguageModel,
  settings: Extract<DialogueTextBackendSettings, { backend: 'replay' | 'gemini' | 'openai-compatible' }>,
): LanguageModelTextBackend {
  const generation: GenerationSettings = {
    model: settings.model,
    temperature: settings.temperature,
    seed: settings.seed,
    structuredOutput: settings.structuredOutput,
  };
  const recovery: DialogueTextRecovery = {
    repair: settings.recovery.repair,
    maximumSplitDepth: settings.recovery.maximumSplitDepth,
  };
  return new LanguageModelTextBackend(model, {
    settings: generation,
    validation: {
      allowedLatinWords: new Set(settings.allowedLatinWords),
      languageIdentification: settings.languageIdentification,
    },
    recovery,
  });
}

function resolvePath(file: string, environment: BackendEnvironment): string {
  return isAbsolute(file) ? file : resolve(environment.baseDirectory, file);
}
