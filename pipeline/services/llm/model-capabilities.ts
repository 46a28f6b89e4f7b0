/**
 * What a hosted model accepts, and how a request is adapted when it does not.
 *
 * Sources (docs/services.md, "Language model backends"): Gemma 3 on the Gemini API rejects both a
 * system instruction (HTTP 400 `Developer instruction is not enabled for models/gemma-3-…`) and JSON
 * mode (HTTP 400 `JSON mode is not enabled for models/gemma-3-…`); Gemma 4 (`gemma-4-31b-it`) accepts
 * system instructions but its JSON mode is unconfirmed, so it is off; Gemini models accept both.
 *
 * Without a capability the request goes the prompt-only way ({@link adaptRequestToCapabilities}): the
 * system text is put before the user prompt, and instead of JSON mode the prompt asks for JSON (the
 * templates already do; the response schema is appended) and the text layer extracts it from the reply.
 */
import type { JsonSchema } from './language-model.ts';

/** What a model accepts. */
export interface ModelCapabilities {
  /** A separate system instruction (Gemini `systemInstruction`, OpenAI `system` message). */
  systemInstruction: boolean;
  /** Structured output (Gemini `responseMimeType: application/json` + `responseSchema`, OpenAI `response_format: json_schema`). */
  jsonMode: boolean;
}

/** One row of {@link GEMINI_MODEL_CAPABILITIES}. */
export interface ModelCapabilityRule {
  /** Matched against the model name without a `models/` prefix. */
  pattern: RegExp;
  capabilities: ModelCapabilities;
  /** Where the row comes from. */
  note: string;
}

/** The Gemini API capability table, first match wins. */
export const GEMINI_MODEL_CAPABILITIES: readonly ModelCapabilityRule[] = [
  {
    pattern: /^gemma-3n?-/,
    capabilities: { systemInstruction: false, jsonMode: false },
    note: 'Gemma 3 on the Gemini API: HTTP 400 for systemInstruction and for JSON mode',
  },
  {
    pattern: /^gemma-4-/,
    capabilities: { systemInstruction: true, jsonMode: false },
    note: 'Gemma 4 accepts system instructions; JSON mode unconfirmed, so off',
  },
  {
    pattern: /^gemini-/,
    capabilities: { systemInstruction: true, jsonMode: true },
    note: 'Gemini models accept both',
  },
];

/** Capabilities assumed for a Gemini API model that no row matches: the prompt-only way, which always works. */
export const UNKNOWN_GEMINI_MODEL_CAPABILITIES: ModelCapabilities = { systemInstruction: false, jsonMode: false };

/**
 * OpenAI-compatible servers (vLLM, SGLang, llama.cpp server, Ollama) take a `system` message and
 * `response_format: json_schema`; a server that does not is configured with `capabilities`.
 */
export const OPENAI_COMPATIBLE_DEFAULT_CAPABILITIES: ModelCapabilities = { systemInstruction: true, jsonMode: true };

/**
 * The capabilities of a Gemini API model: the first matching row of {@link GEMINI_MODEL_CAPABILITIES}
 * (else {@link UNKNOWN_GEMINI_MODEL_CAPABILITIES}), with `overrides` from the settings on top.
 *
 * @param model model name, with or without the `models/` prefix, e.g. `gemma-4-31b-it`.
 * @param overrides values set in the settings (`capabilities:`), which win over the table.
 * @returns the resolved capabilities.
 */
export function geminiModelCapabilities(model: string, overrides: Partial<ModelCapabilities> = {}): ModelCapabilities {
  const name = model.replace(/^models\//, '');
  const rule = GEMINI_MODEL_CAPABILITIES.find((candidate) => candidate.pattern.test(name));
  return { ...(rule?.capabilities ?? UNKNOWN_GEMINI_MODEL_CAPABILITIES), ...definedOnly(overrides) };
}

/** The texts and schema a client actually sends after adapting a request to the model. */
export interface AdaptedRequest {
  /** System instruction to send separately; undefined when none or when folded into the prompt. */
  system: string | undefined;
  /** The user prompt to send. */
  prompt: string;
  /** Schema to send in JSON mode; undefined when none or when the model has no JSON mode. */
  responseSchema: JsonSchema | undefined;
}

/**
 * Adapts a request to a model's capabilities (the prompt-only way, see the file header):
 * - no system instruction: the system text, a blank line, then the prompt;
 * - no JSON mode but a response schema: the schema is dropped from the request and the prompt ends with
 *   a paragraph asking for one JSON object following that schema (given as compact JSON).
 * The `$schema` member is removed from a schema that is sent (provider JSON modes do not want it).
 *
 * @param request the request's system text, prompt and optional response schema.
 * @param capabilities what the model accepts.
 * @returns what to send.
 */
export function adaptRequestToCapabilities(
  request: { system?: string | undefined; prompt: string; responseSchema?: JsonSchema | undefined },
  capabilities: ModelCapabilities,
): AdaptedRequest {
  const system = request.system !== undefined && request.system.trim() !== '' ? request.system : undefined;
  let prompt = request.prompt;
  let responseSchema: JsonSchema | undefined;
  if (request.responseSchema !== undefined) {
    const { $schema: _schemaVersion, ...schema } = request.responseSchema;
    if (capabilities.jsonMode) {
      responseSchema = schema;
    } else {
      prompt = `${prompt}\n\nReply with one JSON object only, no other text, following this JSON schema:\n${JSON.stringify(schema)}`;
    }
  }
  if (system !== undefined && !capabilities.systemInstruction) {
    return { system: undefined, prompt: `${system}\n\n${prompt}`, responseSchema };
  }
  return { system, prompt, responseSchema };
}

function definedOnly<T extends object>(value: Partial<T>): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as Partial<T>;
}
