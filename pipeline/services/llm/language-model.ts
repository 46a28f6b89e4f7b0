/**
 * The LLM seam: a tiny spec interface in the spirit of the Vercel AI SDK's `doGenerate`.
 *
 * Every text-generating backend (replay of recorded responses, recording wrapper, test fake, and the
 * real Gemini / OpenAI-compatible clients of a later issue) implements {@link LanguageModel}. Callers
 * build a {@link GenerationRequest}; its {@link requestKey} (sha256 of a canonical JSON) is the key under
 * which responses are recorded and replayed.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../../storage/canonical-json.ts';

/** Why the model stopped. Anything but `stop` means the text is not to be trusted as complete. */
export type FinishReason = 'stop' | 'max-tokens' | 'safety' | 'other';

/** A JSON schema object (draft 2020-12 as produced by `z.toJSONSchema`); clients adapt it to their API. */
export type JsonSchema = { readonly [key: string]: unknown };

/**
 * What a request is for. Used in messages, logs and recordings only: it is NOT part of the request key,
 * because it does not change what the model is asked.
 */
export interface RequestTrace {
  dialogueId?: string;
  /** e.g. `rewrite-spoken`, `translate`. */
  task?: string;
  /** e.g. `rewrite-spoken.v2`. */
  promptVersion?: string;
}

/** One text generation request. Everything except `trace` takes part in {@link requestKey}. */
export interface GenerationRequest {
  /** Provider model name, e.g. `gemma-4-31b-it`. */
  model: string;
  /** System instruction; clients of models without system instructions prepend it to the prompt. */
  system?: string;
  prompt: string;
  temperature: number;
  seed: number;
  /** When set, the client asks for structured output (JSON mode) following this schema. */
  responseSchema?: JsonSchema;
  trace?: RequestTrace;
}

/** Token counts as the provider reports them. */
export interface GenerationUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

/** The result of one generation. */
export interface GenerationResult {
  /** All text parts joined. */
  text: string;
  finishReason: FinishReason;
  usage?: GenerationUsage;
}

/** A text-generating model. Implementations throw {@link import('./errors.ts').LanguageModelError}s. */
export interface LanguageModel {
  /** Identifies the implementation (transport), e.g. `replay`, `fake`, `gemini`. */
  readonly id: string;
  generate(request: GenerationRequest): Promise<GenerationResult>;
}

/** zod schema of {@link RequestTrace} (for reading recorded files). */
export const requestTraceSchema = z.object({
  dialogueId: z.string().optional(),
  task: z.string().optional(),
  promptVersion: z.string().optional(),
});

/** zod schema of {@link GenerationRequest} (for reading recorded files). */
export const generationRequestSchema = z.object({
  model: z.string().min(1),
  system: z.string().optional(),
  prompt: z.string(),
  temperature: z.number(),
  seed: z.number().int(),
  responseSchema: z.record(z.string(), z.unknown()).optional(),
  trace: requestTraceSchema.optional(),
});

/** zod schema of {@link GenerationResult} (for reading recorded files). */
export const generationResultSchema = z.object({
  text: z.string(),
  finishReason: z.enum(['stop', 'max-tokens', 'safety', 'other']),
  usage: z
    .object({
      inputTokens: z.number().optional(),
      outputTokens: z.number().optional(),
      totalTokens: z.number().optional(),
    })
    .optional(),
});

/**
 * The replay key of a request: sha256 (hex) of the canonical JSON of the request without `trace`.
 * Optional members that are `undefined` do not change the key, so adding optional request fields later
 * keeps existing recordings valid as long as they are not set.
 *
 * @param request the request to key.
 * @returns 64 lowercase hex characters.
 * @throws TypeError when the request holds values JSON cannot represent.
 */
export function requestKey(request: GenerationRequest): string {
  const { trace: _trace, ...keyed } = request;
  return createHash('sha256').update(canonicalJson(keyed)).digest('hex');
}

/**
 * Names a request for messages: `dialogue X (task)` when the trace says so, otherwise `this request`.
 *
 * @param request the request to describe.
 * @returns a short human-readable label.
 */
export function describeRequest(request: GenerationRequest): string {
  const dialogueId = request.trace?.dialogueId;
  const task = request.trace?.task;
  if (dialogueId !== undefined)
    return task !== undefined ? `dialogue ${dialogueId} (${task})` : `dialogue ${dialogueId}`;
  return task !== undefined ? `this ${task} request` : 'this request';
}
