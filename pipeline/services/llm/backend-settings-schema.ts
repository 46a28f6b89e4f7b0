/**
 * The zod schemas of the dialogue text backends' settings (`llm.rewrite`, `llm.translate`), which the
 * project config embeds: generation, recovery, throughput and retry settings, and one schema per
 * backend (`rules`, `replay`, `gemini`, `openai-compatible`). Units are seconds; API keys are never
 * settings, only the name of the environment variable holding them. ./backend-settings.ts builds a
 * backend from them.
 */
import { z } from 'zod';
import { DEFAULT_GEMINI_BASE_URL, DEFAULT_GEMINI_MODEL } from './gemini-model.ts';
import { DEFAULT_LANGUAGE_IDENTIFICATION } from '../../text/language-identification.ts';

/** Default seed of every generation request. */
export const DEFAULT_SEED = 1234;

const identificationDefaults = DEFAULT_LANGUAGE_IDENTIFICATION;

/**
 * `languageIdentification`: the language of every reply line checked against the target language
 * (pipeline/text/language-identification.ts, where the defaults are explained); a line in another
 * language is a problem of the reply (one repair request, then quarantine).
 */
export const languageIdentificationSettingsSchema = z
  .object({
    enabled: z
      .boolean()
      .default(identificationDefaults.enabled)
      .describe('Identify the language of every reply line and treat another language as a problem.'),
    minimumLetters: z
      .number()
      .int()
      .min(1)
      .default(identificationDefaults.minimumLetters)
      .describe('Lines with fewer letters (names left out) pass unidentified ("yes", a name).'),
    fullConfidenceLetters: z
      .number()
      .int()
      .min(1)
      .default(identificationDefaults.fullConfidenceLetters)
      .describe('Letters at which the length factor of the confidence reaches 1 (linear below).'),
    decisiveLead: z
      .number()
      .positive()
      .max(1)
      .default(identificationDefaults.decisiveLead)
      .describe("Relative lead of the detected language's score over the target's at which the lead factor is 1."),
    minimumConfidence: z
      .number()
      .min(0)
      .max(1)
      .default(identificationDefaults.minimumConfidence)
      .describe('Confidence (lead factor x length factor, 0..1) from which a line is in the wrong language.'),
  })
  .strict()
  .prefault({})
  .describe('Language identification of every reply line against the target language (npm eld).');

const generationFields = {
  model: z.string().min(1).describe('Provider model name, the model of every request (part of the replay key).'),
  temperature: z.number().min(0).default(0).describe('Sampling temperature of every request.'),
  seed: z.number().int().default(DEFAULT_SEED).describe('Seed of every generation request.'),
  structuredOutput: z
    .boolean()
    .default(false)
    .describe("Send a response JSON schema (JSON mode); without the model's capability it goes into the prompt."),
  allowedLatinWords: z
    .array(z.string())
    .default([])
    .describe('Latin words allowed in Japanese output besides short all-capital acronyms.'),
  languageIdentification: languageIdentificationSettingsSchema,
};

/** `recovery`: one repair request on an invalid reply; halving on MAX_TOKENS; then quarantine. */
export const recoverySettingsSchema = z
  .object({
    repair: z
      .boolean()
      .default(true)
      .describe('Send one repair request quoting the problems when a reply is unparseable or invalid.'),
    maximumSplitDepth: z
      .number()
      .int()
      .min(0)
      .max(8)
      .default(2)
      .describe('How many times a conversation cut at MAX_TOKENS may be halved (0 = never).'),
  })
  .strict()
  .prefault({})
  .describe('What happens to an invalid reply: one repair request, halving on MAX_TOKENS, then quarantine.');

/** `throughput`: limits of the endpoint's shared queue. */
export const throughputSettingsSchema = z
  .object({
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(1024)
      .default(4)
      .describe('Requests in flight at once per endpoint, across all dialogues and both tasks.'),
    requestsPerInterval: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('At most this many requests start per intervalSeconds (sliding window); unset = no rate limit.'),
    intervalSeconds: z.number().positive().default(60).describe('Length of the rate window, seconds.'),
  })
  .strict()
  .prefault({})
  .describe("Limits of the endpoint's shared request queue.");

/** `retry`: the one retry policy (5xx, 408, 409, 429, timeouts, network failures). */
export const retrySettingsSchema = z
  .object({
    maxRetries: z.number().int().min(0).max(20).default(4).describe('Retries after the first attempt.'),
    initialDelaySeconds: z.number().min(0).default(2).describe('Backoff before the first retry, seconds.'),
    maxDelaySeconds: z
      .number()
      .min(0)
      .default(120)
      .describe('Longest wait before one retry, seconds; a server asking for longer is not retried.'),
    backoffFactor: z.number().min(1).default(2).describe('Factor by which the delay grows per retry.'),
    jitter: z.number().min(0).max(1).default(0.2).describe('Relative jitter of the delays, 0..1.'),
  })
  .strict()
  .prefault({})
  .describe('The retry policy (5xx, 408, 409, 429, timeouts, network failures).');

const capabilitiesSchema = z
  .object({
    systemInstruction: z
      .boolean()
      .optional()
      .describe('Send the system text separately (else it is put before the prompt); unset = the capability table.'),
    jsonMode: z
      .boolean()
      .optional()
      .describe(
        "Use the provider's JSON mode for structuredOutput (else the schema goes into the prompt); unset = the capability table.",
      ),
  })
  .strict();

const environmentVariableName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name (the key itself never goes into settings)');

const clientFields = {
  timeoutSeconds: z.number().positive().default(120).describe('Client-side timeout of one request, seconds.'),
  maxOutputTokens: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Output token limit sent with every request; unset = the model's."),
  capabilities: capabilitiesSchema
    .optional()
    .describe('Overrides of the capability table (pipeline/services/llm/model-capabilities.ts).'),
  throughput: throughputSettingsSchema,
  retry: retrySettingsSchema,
  recovery: recoverySettingsSchema,
  record: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Recorded-response JSONL file every response is added to, for a later replay (relative to the config file).',
    ),
};

/** `{backend: 'rules'}`: offline English rewrite; cannot translate. */
export const rulesBackendSettingsSchema = z
  .object({ backend: z.literal('rules').describe('rules: the offline English rewrite (cannot translate).') })
  .strict()
  .describe('rules: the offline English rewrite (cannot translate).');

/** `{backend: 'replay', file, model, temperature?, seed?, structuredOutput?, allowedLatinWords?, recovery?}`: recorded responses. */
export const replayBackendSettingsSchema = z
  .object({
    backend: z.literal('replay').describe('replay: answers from a recorded-response file; no network.'),
    file: z
      .string()
      .min(1)
      .describe('Recorded-response JSONL file (relative to the config file).')
      .meta({ examples: ['../corpora/demo/recorded-responses.jsonl'] }),
    ...generationFields,
    recovery: recoverySettingsSchema,
  })
  .strict()
  .describe('replay: answers from a recorded-response file; no network.');

/** `{backend: 'gemini', model?, apiKeyVariable?, baseUrl?, …}`: the Gemini API through @google/genai. */
export const geminiBackendSettingsSchema = z
  .object({
    backend: z.literal('gemini').describe('gemini: the Gemini API through @google/genai.'),
    ...generationFields,
    model: z.string().min(1).default(DEFAULT_GEMINI_MODEL).describe('Gemini model name of every request.'),
    apiKeyVariable: environmentVariableName
      .optional()
      .describe('Environment variable with the API key; unset = GEMINI_API_KEY, then GOOGLE_API_KEY.'),
    baseUrl: z.url().default(DEFAULT_GEMINI_BASE_URL).describe('API base URL (without /v1beta).'),
    ...clientFields,
  })
  .strict()
  .describe('gemini: the Gemini API through @google/genai.');

/** `{backend: 'openai-compatible', baseUrl, model, apiKeyVariable?, …}`: a chat-completions server through the openai package. */
export const openAICompatibleBackendSettingsSchema = z
  .object({
    backend: z
      .literal('openai-compatible')
      .describe('openai-compatible: a chat-completions server (vLLM, SGLang, llama.cpp server, Ollama, …).'),
    ...generationFields,
    baseUrl: z
      .url()
      .describe('Base URL including the API prefix.')
      .meta({ examples: ['http://127.0.0.1:8000/v1'] }),
    apiKeyVariable: environmentVariableName
      .optional()
      .describe('Environment variable with the API key; unset = no Authorization header.'),
    ...clientFields,
  })
  .strict()
  .describe('openai-compatible: a chat-completions server (vLLM, SGLang, llama.cpp server, Ollama, …).');

/** Settings of one dialogue text backend (`llm.rewrite` or `llm.translate`), discriminated by `backend`. */
export const dialogueTextBackendSettingsSchema = z.discriminatedUnion('backend', [
  rulesBackendSettingsSchema,
  replayBackendSettingsSchema,
  geminiBackendSettingsSchema,
  openAICompatibleBackendSettingsSchema,
]);

/**
 * The backends that can translate (all but `rules`), for `llm.translate`:
 * `z.discriminatedUnion('backend', [noneSchema, ...TRANSLATION_BACKEND_SETTINGS_SCHEMAS])`.
 */
export const TRANSLATION_BACKEND_SETTINGS_SCHEMAS = [
  replayBackendSettingsSchema,
  geminiBackendSettingsSchema,
  openAICompatibleBackendSettingsSchema,
] as const;

/** Settings of one backend, after defaults. */
export type DialogueTextBackendSettings = z.output<typeof dialogueTextBackendSettingsSchema>;
/** Backend names. */
export type DialogueTextBackendName = DialogueTextBackendSettings['backend'];
