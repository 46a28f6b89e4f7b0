/**
 * The Gemini API client (`gemini` backend) over `@google/genai` 2.32 (the supported SDK; the old
 * `@google/generative-ai` is deprecated). Default model `gemma-4-31b-it`, as in the paper.
 *
 * Wire contract (docs/services.md): `POST {base}/v1beta/models/{model}:generateContent`, header
 * `x-goog-api-key`, body `{contents, systemInstruction?, generationConfig: {temperature, seed,
 * responseMimeType?, responseSchema?, maxOutputTokens?}}`; response `candidates[0].content.parts[*].text`,
 * `finishReason`, `usageMetadata`.
 *
 * How @google/genai 2.32 surfaces failures (read in node_modules/@google/genai/dist/node/index.mjs):
 * - a non-2xx response becomes `ApiError {status, message}` whose message is the JSON text of the
 *   error body, `{"error": {"code", "message", "status", "details": [...]}}` (`throwErrorIfNotOK`);
 * - `httpOptions.timeout` arms an AbortController per attempt, so a timeout rejects with the fetch
 *   `AbortError` (a DOMException), also while the body is read;
 * - connection failures are fetch `TypeError`s (`fetch failed`);
 * - the SDK retries only when `httpOptions.retryOptions` is set: it is not, so {@link RetryingModel}
 *   (./retrying-model.ts) is the only retry policy.
 * Automatic continuation is switched off (`automaticContinuation: false`) so one call is one request.
 */
import { ApiError, GoogleGenAI, type GenerateContentConfig, type GenerateContentResponse } from '@google/genai';
import { LanguageModelCallError, LanguageModelError, ModelCapabilityError, isRetryableStatusCode } from './errors.ts';
import type { FinishReason, GenerationRequest, GenerationResult, LanguageModel } from './language-model.ts';
import { adaptRequestToCapabilities, geminiModelCapabilities, type ModelCapabilities } from './model-capabilities.ts';
import { serviceAddress } from '../service-address.ts';
import { describeReply } from '../reply-excerpt.ts';

/** The paper's model. */
export const DEFAULT_GEMINI_MODEL = 'gemma-4-31b-it';
/** The public Gemini API. */
export const DEFAULT_GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';
/** Environment variables read for the key when the settings name none, in order. */
export const DEFAULT_GEMINI_API_KEY_VARIABLES: readonly string[] = ['GEMINI_API_KEY', 'GOOGLE_API_KEY'];
/** Client-side timeout of one request, milliseconds. */
export const DEFAULT_GEMINI_TIMEOUT_MILLISECONDS = 120_000;

/** Options of a {@link GeminiModel}. */
export interface GeminiModelOptions {
  /** The API key, or a function returning it (called on the first request; may throw MissingApiKeyError). */
  apiKey: string | (() => string);
  /** Default {@link DEFAULT_GEMINI_BASE_URL}; tests point it at a loopback server. */
  baseUrl?: string;
  /** Default `v1beta` (the SDK's default). */
  apiVersion?: string;
  /** Client-side timeout per request, milliseconds; default {@link DEFAULT_GEMINI_TIMEOUT_MILLISECONDS}. */
  timeoutMilliseconds?: number;
  /** Overrides of the capability table (./model-capabilities.ts). */
  capabilities?: Partial<ModelCapabilities>;
  /** `generationConfig.maxOutputTokens`; undefined = the model's limit. */
  maxOutputTokens?: number;
  /** Injectable fetch (default the global one). */
  fetch?: typeof fetch;
}

/** A Google RPC error body as the Gemini API sends it. */
export interface GoogleRpcError {
  code: number | undefined;
  message: string;
  /** e.g. `RESOURCE_EXHAUSTED`, `UNAVAILABLE`, `INVALID_ARGUMENT`. */
  status: string | undefined;
  /** From a `google.rpc.RetryInfo` detail, milliseconds. */
  retryDelayMilliseconds: number | undefined;
}

/** A {@link LanguageModel} calling the Gemini API. Its id is `gemini`. */
export class GeminiModel implements LanguageModel {
  readonly id = 'gemini';
  readonly baseUrl: string;
  readonly timeoutMilliseconds: number;
  private client: GoogleGenAI | undefined;

  /** @param options key (or its resolver), base URL, timeout, capability overrides, output limit. */
  constructor(private readonly options: GeminiModelOptions) {
    this.baseUrl = options.baseUrl ?? DEFAULT_GEMINI_BASE_URL;
    this.timeoutMilliseconds = options.timeoutMilliseconds ?? DEFAULT_GEMINI_TIMEOUT_MILLISECONDS;
  }

  /**
   * The capabilities used for a model: the table plus this client's overrides.
   *
   * @param model model name, e.g. `gemma-3-27b-it`.
   * @returns the resolved capabilities.
   */
  capabilitiesOf(model: string): ModelCapabilities {
    return geminiModelCapabilities(model, this.options.capabilities);
  }

  /**
   * Sends one `generateContent` request (system text and JSON mode adapted to the model's
   * capabilities) and maps the reply.
   *
   * @param request the generation request.
   * @returns all non-thought text parts of the first candidate joined, the mapped finish reason
   *   (`STOP` → stop, `MAX_TOKENS` → max-tokens, `SAFETY`/`RECITATION`/`BLOCKLIST`/
   *   `PROHIBITED_CONTENT`/`SPII`/`IMAGE_SAFETY` or a blocked prompt → safety, anything else → other),
   *   and the token counts.
   * @throws MissingApiKeyError when the key resolver finds no key; ModelCapabilityError (HTTP 400 for a
   *   system instruction or JSON mode the model lacks; not retryable); LanguageModelCallError for every
   *   other failure: HTTP status (retryable for 408, 409, 429, ≥ 500; 429 carries the RetryInfo delay),
   *   timeout and network failures (retryable), an unreadable success body or one with neither a
   *   candidate nor a blocked prompt (retryable; the message names the address, content type and body start).
   */
  async generate(request: GenerationRequest): Promise<GenerationResult> {
    const capabilities = this.capabilitiesOf(request.model);
    const adapted = adaptRequestToCapabilities(request, capabilities);
    const config: GenerateContentConfig = {
      temperature: request.temperature,
      seed: request.seed,
      automaticContinuation: false,
    };
    if (adapted.system !== undefined) config.systemInstruction = { parts: [{ text: adapted.system }] };
    if (adapted.responseSchema !== undefined) {
      config.responseMimeType = 'application/json';
      config.responseSchema = adapted.responseSchema;
    }
    if (this.options.maxOutputTokens !== undefined) config.maxOutputTokens = this.options.maxOutputTokens;
    const client = this.getClient();
    let response: GenerateContentResponse;
    try {
      response = await client.models.generateContent({
        model: request.model,
        contents: [{ role: 'user', parts: [{ text: adapted.prompt }] }],
        config,
      });
    } catch (error) {
      throw geminiCallError(error, request.model, this.timeoutMilliseconds, this.baseUrl);
    }
    if ((response.candidates ?? []).length === 0 && response.promptFeedback?.blockReason === undefined) {
      // neither a candidate nor a blocked prompt: not a reply of the Gemini API (a proxy's page, another service)
      const reply = describeReply(response.sdkHttpResponse?.headers?.['content-type'], {
        ...response,
        sdkHttpResponse: undefined,
      });
      throw new LanguageModelCallError(
        `Gemini ${request.model}: the response from ${serviceAddress(this.baseUrl)} has no candidates (${reply})`,
        { failure: 'malformed-response', isRetryable: true, responseBody: JSON.stringify(response).slice(0, 2000) },
      );
    }
    return geminiGenerationResult(response);
  }

  private getClient(): GoogleGenAI {
    if (this.client !== undefined) return this.client;
    const apiKey = typeof this.options.apiKey === 'function' ? this.options.apiKey() : this.options.apiKey;
    this.client = new GoogleGenAI({
      vertexai: false,
      apiKey,
      httpOptions: {
        baseUrl: this.baseUrl,
        apiVersion: this.options.apiVersion ?? 'v1beta',
        timeout: this.timeoutMilliseconds,
        ...(this.options.fetch !== undefined ? { fetch: this.options.fetch } : {}),
      },
    });
    return this.client;
  }
}

const SAFETY_REASONS = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
]);

/**
 * Maps a Gemini `finishReason` to ours.
 *
 * @param finishReason the API's value (e.g. `STOP`, `MAX_TOKENS`, `SAFETY`), or undefined.
 * @returns `stop`, `max-tokens`, `safety` or `other` (also for a missing value).
 */
export function mapGeminiFinishReason(finishReason: string | undefined): FinishReason {
  if (finishReason === 'STOP') return 'stop';
  if (finishReason === 'MAX_TOKENS') return 'max-tokens';
  if (finishReason !== undefined && SAFETY_REASONS.has(finishReason)) return 'safety';
  return 'other';
}

/**
 * Maps a `generateContent` response: joins the text parts of the first candidate (thought parts
 * left out), maps the finish reason and token counts.
 *
 * @param response the SDK's response object.
 * @returns the generation result; `{text: '', finishReason: 'safety'}` when the prompt was blocked
 *   (`promptFeedback.blockReason`, no candidates), `other` when there is no candidate at all.
 */
export function geminiGenerationResult(response: GenerateContentResponse): GenerationResult {
  const candidate = response.candidates?.[0];
  const usageMetadata = response.usageMetadata;
  const usage =
    usageMetadata === undefined
      ? undefined
      : definedOnly({
          inputTokens: usageMetadata.promptTokenCount,
          outputTokens: usageMetadata.candidatesTokenCount,
          totalTokens: usageMetadata.totalTokenCount,
        });
  if (candidate === undefined) {
    const blocked = response.promptFeedback?.blockReason !== undefined;
    return { text: '', finishReason: blocked ? 'safety' : 'other', ...(usage !== undefined ? { usage } : {}) };
  }
  const text = (candidate.content?.parts ?? [])
    .filter((part) => typeof part.text === 'string' && part.thought !== true)
    .map((part) => part.text)
    .join('');
  return {
    text,
    finishReason: mapGeminiFinishReason(candidate.finishReason),
    ...(usage !== undefined ? { usage } : {}),
  };
}

/**
 * Reads a Google RPC error body: `{"error": {"code", "message", "status", "details": [{"@type":
 * "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "58s"}]}}`.
 *
 * @param text the body text (for @google/genai's ApiError: its message).
 * @returns the fields found, or undefined when the text is not such a body.
 */
export function parseGoogleRpcError(text: string): GoogleRpcError | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const error = isRecord(value) && isRecord(value.error) ? value.error : undefined;
  if (error === undefined) return undefined;
  const details = Array.isArray(error.details) ? error.details : [];
  let retryDelayMilliseconds: number | undefined;
  for (const detail of details) {
    if (isRecord(detail) && typeof detail['@type'] === 'string' && detail['@type'].endsWith('google.rpc.RetryInfo')) {
      retryDelayMilliseconds = parseProtobufDurationMilliseconds(detail.retryDelay);
    }
  }
  return {
    code: typeof error.code === 'number' ? error.code : undefined,
    message: typeof error.message === 'string' ? error.message : JSON.stringify(error.message ?? ''),
    status: typeof error.status === 'string' ? error.status : undefined,
    retryDelayMilliseconds,
  };
}

/**
 * Parses a protobuf JSON Duration (`"58s"`, `"0.2s"`, `"1.500s"`) or a `{seconds, nanos}` object.
 *
 * @param value the duration as found in the body.
 * @returns milliseconds, or undefined when it is not a duration.
 */
export function parseProtobufDurationMilliseconds(value: unknown): number | undefined {
  if (typeof value === 'string') {
    const match = /^\s*(\d+(?:\.\d+)?)s\s*$/.exec(value);
    return match === null ? undefined : Math.round(Number(match[1]) * 1000);
  }
  if (isRecord(value)) {
    const seconds = Number(value.seconds ?? 0);
    const nanos = Number(value.nanos ?? 0);
    return Number.isFinite(seconds) && Number.isFinite(nanos) ? Math.round(seconds * 1000 + nanos / 1e6) : undefined;
  }
  return undefined;
}

/**
 * Turns whatever @google/genai threw into a typed error (see the file header for what it throws).
 *
 * @param error the thrown value.
 * @param model the model name, for messages.
 * @param timeoutMilliseconds the client timeout, for the timeout message.
 * @returns ModelCapabilityError for a capability 400, else a LanguageModelCallError (or the error
 *   itself when it already is a LanguageModelError).
 */
export function geminiCallError(
  error: unknown,
  model: string,
  timeoutMilliseconds: number,
  url?: string,
): LanguageModelError {
  const address = url === undefined ? undefined : serviceAddress(url); // a dead or silent service is named by its address (never a key written into it)
  const at = address === undefined ? '' : ` to ${address}`;
  if (error instanceof LanguageModelError) return error;
  if (error instanceof ApiError) {
    const rpc = parseGoogleRpcError(error.message);
    const statusName = rpc?.status !== undefined ? ` ${rpc.status}` : '';
    const detail = rpc?.message ?? error.message;
    const message = `Gemini ${model}: HTTP ${error.status}${statusName}: ${detail}`;
    const capability = /developer instruction is not enabled/i.test(detail)
      ? 'systemInstruction'
      : /json mode is not enabled/i.test(detail)
        ? 'jsonMode'
        : undefined;
    if (error.status === 400 && capability !== undefined) {
      const what =
        capability === 'systemInstruction' ? 'a system instruction' : 'JSON mode (responseMimeType application/json)';
      return new ModelCapabilityError(
        `${message} — ${model} does not accept ${what}; switch it off in the llm settings: capabilities: {${capability}: false}`,
        { capability, model, statusCode: error.status, responseBody: error.message, cause: error },
      );
    }
    return new LanguageModelCallError(message, {
      statusCode: error.status,
      retryAfterMilliseconds: rpc?.retryDelayMilliseconds,
      responseBody: error.message,
      isRetryable: isRetryableStatusCode(error.status),
      cause: error,
    });
  }
  if (isAbort(error)) {
    return new LanguageModelCallError(
      `Gemini ${model}: no response${address === undefined ? '' : ` from ${address}`} within the ${timeoutMilliseconds / 1000} s timeout`,
      {
        failure: 'timeout',
        isRetryable: true,
        cause: error,
      },
    );
  }
  if (error instanceof SyntaxError) {
    return new LanguageModelCallError(
      `Gemini ${model}: the response body${address === undefined ? '' : ` from ${address}`} is not valid JSON (${error.message})`,
      {
        failure: 'malformed-response',
        isRetryable: true,
        cause: error,
      },
    );
  }
  if (error instanceof TypeError && /fetch failed|terminated|network|socket/i.test(error.message)) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return new LanguageModelCallError(`Gemini ${model}: connection failed${at} (${error.message}${cause})`, {
      failure: 'network',
      isRetryable: true,
      cause: error,
    });
  }
  const text = error instanceof Error ? error.message : String(error);
  return new LanguageModelCallError(`Gemini ${model}: ${text}`, {
    failure: 'network',
    isRetryable: false,
    cause: error,
  });
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as T;
}
