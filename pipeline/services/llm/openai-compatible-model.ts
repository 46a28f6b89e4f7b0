/**
 * The OpenAI-compatible client (`openai-compatible` backend) over the `openai` package 6.x, for
 * self-hosted servers (vLLM, SGLang, llama.cpp server, Ollama) and any chat-completions service.
 *
 * Wire contract (docs/services.md): `POST {baseURL}/chat/completions` with `{model, messages,
 * temperature, seed, max_tokens?, response_format?: {type: "json_schema", json_schema: {name,
 * schema}}}`; the reply is `choices[0].message.content`, `finish_reason` (`stop`, `length`,
 * `content_filter`, …), `usage`. vLLM removed the old `guided_json` field in v0.12; `response_format`
 * is what every current server reads.
 *
 * The package's own retries are off (`maxRetries: 0`), so {@link RetryingModel}
 * (./retrying-model.ts) is the only retry policy. Failures surface as `APIError` subclasses with
 * `status` and `headers` (`RateLimitError` 429, `InternalServerError` ≥ 500, …),
 * `APIConnectionTimeoutError` for the client timeout and `APIConnectionError` for connection failures.
 * Without an API key no `Authorization` header is sent (the package requires a key, so a placeholder
 * is given and the header removed).
 */
import OpenAI from 'openai';
import { LanguageModelCallError, LanguageModelError, isRetryableStatusCode } from './errors.ts';
import type { FinishReason, GenerationRequest, GenerationResult, LanguageModel } from './language-model.ts';
import {
  adaptRequestToCapabilities,
  OPENAI_COMPATIBLE_DEFAULT_CAPABILITIES,
  type ModelCapabilities,
} from './model-capabilities.ts';
import { serviceAddress } from '../service-address.ts';
import { describeReply } from '../reply-excerpt.ts';

/** Client-side timeout of one request, milliseconds. */
export const DEFAULT_OPENAI_COMPATIBLE_TIMEOUT_MILLISECONDS = 120_000;
/** `json_schema.name` sent with a response schema. */
export const RESPONSE_SCHEMA_NAME = 'dialogue_turns';

/** Options of an {@link OpenAICompatibleModel}. */
export interface OpenAICompatibleModelOptions {
  /** Base URL including the API prefix, e.g. `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  /** API key, a function returning it (called on the first request), or undefined for servers without auth. */
  apiKey?: string | (() => string | undefined);
  /** Client-side timeout per request, milliseconds; default {@link DEFAULT_OPENAI_COMPATIBLE_TIMEOUT_MILLISECONDS}. */
  timeoutMilliseconds?: number;
  /** What the server accepts; default {@link OPENAI_COMPATIBLE_DEFAULT_CAPABILITIES} (system message and json_schema). */
  capabilities?: Partial<ModelCapabilities>;
  /** `max_tokens`; undefined = the server's limit. */
  maxOutputTokens?: number;
  /** Injectable fetch (default the global one). */
  fetch?: typeof fetch;
}

/** A {@link LanguageModel} calling an OpenAI-compatible chat-completions server. Its id is `openai-compatible`. */
export class OpenAICompatibleModel implements LanguageModel {
  readonly id = 'openai-compatible';
  readonly capabilities: ModelCapabilities;
  readonly timeoutMilliseconds: number;
  private client: OpenAI | undefined;

  /** @param options base URL, key (or its resolver), timeout, capabilities, output limit. */
  constructor(private readonly options: OpenAICompatibleModelOptions) {
    this.capabilities = { ...OPENAI_COMPATIBLE_DEFAULT_CAPABILITIES, ...definedOnly(options.capabilities ?? {}) };
    this.timeoutMilliseconds = options.timeoutMilliseconds ?? DEFAULT_OPENAI_COMPATIBLE_TIMEOUT_MILLISECONDS;
  }

  /**
   * Sends one chat completion (system message and json_schema adapted to the capabilities) and maps
   * the reply.
   *
   * @param request the generation request.
   * @returns `choices[0].message.content` ('' when null), the finish reason (`stop` → stop,
   *   `length` → max-tokens, `content_filter` → safety, else other) and token counts.
   * @throws MissingApiKeyError when the key resolver throws it; LanguageModelCallError for HTTP errors
   *   (retryable for 408, 409, 429, ≥ 500, with the `retry-after-ms`/`retry-after` delay), timeouts and
   *   connection failures (retryable), a response without choices or an unreadable body (retryable).
   */
  async generate(request: GenerationRequest): Promise<GenerationResult> {
    const adapted = adaptRequestToCapabilities(request, this.capabilities);
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [];
    if (adapted.system !== undefined) messages.push({ role: 'system', content: adapted.system });
    messages.push({ role: 'user', content: adapted.prompt });
    const body: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = {
      model: request.model,
      messages,
      temperature: request.temperature,
      seed: request.seed,
    };
    if (this.options.maxOutputTokens !== undefined) body.max_tokens = this.options.maxOutputTokens;
    if (adapted.responseSchema !== undefined) {
      body.response_format = {
        type: 'json_schema',
        json_schema: { name: RESPONSE_SCHEMA_NAME, schema: adapted.responseSchema },
      };
    }
    const client = this.getClient();
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    let contentType: string | null = null;
    try {
      const answered = await client.chat.completions.create(body).withResponse();
      completion = answered.data;
      contentType = answered.response.headers.get('content-type');
    } catch (error) {
      throw openAICompatibleCallError(error, request.model, this.timeoutMilliseconds, this.options.baseUrl);
    }
    const choice = completion.choices?.[0];
    if (choice === undefined) {
      // the package returns a body that is not JSON (an HTML page answered with 200) as a string
      const what = typeof completion === 'string' ? 'is not a chat completion' : 'has no choices';
      const address = serviceAddress(this.options.baseUrl);
      const reply = describeReply(contentType, completion);
      throw new LanguageModelCallError(
        `OpenAI-compatible ${request.model}: the response from ${address} ${what} (${reply})`,
        {
          failure: 'malformed-response',
          isRetryable: true,
          responseBody: JSON.stringify(completion).slice(0, 2000),
        },
      );
    }
    const usage =
      completion.usage === undefined || completion.usage === null
        ? undefined
        : {
            inputTokens: completion.usage.prompt_tokens,
            outputTokens: completion.usage.completion_tokens,
            totalTokens: completion.usage.total_tokens,
          };
    return {
      text: choice.message?.content ?? '',
      finishReason: mapOpenAIFinishReason(choice.finish_reason),
      ...(usage !== undefined ? { usage } : {}),
    };
  }

  private getClient(): OpenAI {
    if (this.client !== undefined) return this.client;
    const apiKey = typeof this.options.apiKey === 'function' ? this.options.apiKey() : this.options.apiKey;
    this.client = new OpenAI({
      baseURL: this.options.baseUrl,
      apiKey: apiKey ?? 'no-api-key',
      organization: null,
      project: null,
      adminAPIKey: null,
      maxRetries: 0,
      timeout: this.timeoutMilliseconds,
      ...(apiKey === undefined ? { defaultHeaders: { Authorization: null } } : {}),
      ...(this.options.fetch !== undefined ? { fetch: this.options.fetch } : {}),
    });
    return this.client;
  }
}

/**
 * Maps an OpenAI `finish_reason`.
 *
 * @param finishReason e.g. `stop`, `length`, `content_filter`, `tool_calls`, or null/undefined.
 * @returns `stop`, `max-tokens`, `safety` or `other`.
 */
export function mapOpenAIFinishReason(finishReason: string | null | undefined): FinishReason {
  if (finishReason === 'stop') return 'stop';
  if (finishReason === 'length') return 'max-tokens';
  if (finishReason === 'content_filter') return 'safety';
  return 'other';
}

/**
 * Reads a server-given retry delay from response headers: `retry-after-ms` (milliseconds), else
 * `retry-after` (seconds, or an HTTP date).
 *
 * @param headers the response headers, or undefined.
 * @returns milliseconds, or undefined when absent or unreadable.
 */
export function retryAfterFromHeaders(headers: Headers | undefined): number | undefined {
  const milliseconds = headers?.get('retry-after-ms');
  if (milliseconds !== null && milliseconds !== undefined && Number.isFinite(Number(milliseconds)))
    return Math.max(0, Number(milliseconds));
  const retryAfter = headers?.get('retry-after');
  if (retryAfter === null || retryAfter === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(retryAfter)) return Math.round(Number(retryAfter) * 1000);
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * Turns whatever the `openai` package threw into a typed error (see the file header).
 *
 * @param error the thrown value.
 * @param model the model name, for messages.
 * @param timeoutMilliseconds the client timeout, for the timeout message.
 * @returns a LanguageModelCallError (or the error itself when it already is a LanguageModelError).
 */
export function openAICompatibleCallError(
  error: unknown,
  model: string,
  timeoutMilliseconds: number,
  url?: string,
): LanguageModelError {
  const address = url === undefined ? undefined : serviceAddress(url); // a dead or silent service is named by its address (never a key written into it)
  const at = address === undefined ? '' : ` to ${address}`;
  if (error instanceof LanguageModelError) return error;
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new LanguageModelCallError(
      `OpenAI-compatible ${model}: no response${address === undefined ? '' : ` from ${address}`} within the ${timeoutMilliseconds / 1000} s timeout`,
      {
        failure: 'timeout',
        isRetryable: true,
        cause: error,
      },
    );
  }
  if (error instanceof OpenAI.APIUserAbortError) {
    return new LanguageModelCallError(`OpenAI-compatible ${model}: the request was aborted`, {
      failure: 'network',
      isRetryable: false,
      cause: error,
    });
  }
  if (error instanceof OpenAI.APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return new LanguageModelCallError(`OpenAI-compatible ${model}: connection failed${at} (${error.message}${cause})`, {
      failure: 'network',
      isRetryable: true,
      cause: error,
    });
  }
  if (error instanceof OpenAI.APIError && error.status !== undefined) {
    return new LanguageModelCallError(`OpenAI-compatible ${model}: HTTP ${error.message}`, {
      statusCode: error.status,
      retryAfterMilliseconds: retryAfterFromHeaders(error.headers),
      responseBody: error.error === undefined ? undefined : JSON.stringify(error.error),
      isRetryable: isRetryableStatusCode(error.status),
      cause: error,
    });
  }
  if (error instanceof SyntaxError) {
    return new LanguageModelCallError(
      `OpenAI-compatible ${model}: the response body${address === undefined ? '' : ` from ${address}`} is not valid JSON (${error.message})`,
      {
        failure: 'malformed-response',
        isRetryable: true,
        cause: error,
      },
    );
  }
  const text = error instanceof Error ? error.message : String(error);
  return new LanguageModelCallError(`OpenAI-compatible ${model}: ${text}`, {
    failure: 'network',
    isRetryable: false,
    cause: error,
  });
}

function definedOnly<T extends object>(value: Partial<T>): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as Partial<T>;
}
