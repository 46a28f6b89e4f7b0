/**
 * A loopback server speaking the OpenAI chat-completions protocol (as vLLM, SGLang, llama.cpp server
 * and Ollama serve it), scriptable per request. Point the `openai` client (or the
 * `openai-compatible` backend's `baseUrl`) at `${url}/v1`.
 *
 * Protocol:
 * - `POST /v1/chat/completions` with `{model, messages, temperature?, seed?, max_tokens?,
 *   response_format?}`; anything else is 404.
 * - Success: `{id, object: "chat.completion", created, model, choices: [{index: 0, message: {role:
 *   "assistant", content}, logprobs: null, finish_reason}], usage: {prompt_tokens, completion_tokens,
 *   total_tokens}}`.
 * - Errors: `{error: {message, type, param: null, code}}`; a 429 may carry `retry-after` (seconds).
 * - With `apiKey` set, a request without `Authorization: Bearer <key>` gets 401.
 * - `rejectSystemRole: true` answers 400 "System role not supported" to a `system` message, as vLLM
 *   does with chat templates that have no system role (Gemma's).
 *
 * Capacity as the Gemini server: `capacity` requests served at once, each for `latencyMs` (+ the
 * reply's `delayMilliseconds`); extra requests wait (`overCapacity: 'queue'`, default) or get 429 with
 * `retry-after: 1` (`'reject'`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  approximateTokenCount,
  startLoopbackHttpServer,
  type LoopbackHttpReply,
  type OverCapacityPolicy,
} from './loopback-http.ts';
import type { Clock } from '../../clock.ts';
import { readDialogueRequest, validDialogueReply } from './dialogue-replies.ts';

/** The request body fields the server reads. */
export interface ChatCompletionRequestBody {
  model?: string;
  messages?: Array<{ role: string; content: string | Array<{ type: string; text?: string }> }>;
  temperature?: number;
  seed?: number;
  max_tokens?: number;
  response_format?: { type: string; json_schema?: { name?: string; schema?: unknown } };
  [field: string]: unknown;
}

/** One request as received. */
export interface OpenAILoopbackRequest {
  /** 0-based arrival order among requests that reached the responder. */
  index: number;
  model: string;
  headers: IncomingHttpHeaders;
  body: ChatCompletionRequestBody;
  /** Joined `system` messages, or undefined when none. */
  system: string | undefined;
  /** Joined `user` messages. */
  prompt: string;
  /** Milliseconds since the server started. */
  receivedAtMilliseconds: number;
}

/** A scripted reply. */
export type OpenAILoopbackReply =
  | {
      kind: 'text';
      text: string;
      finishReason?: 'stop' | 'length' | 'content_filter' | (string & {});
      delayMilliseconds?: number;
    }
  | {
      kind: 'error';
      statusCode: number;
      message: string;
      type?: string;
      retryAfterSeconds?: number;
      delayMilliseconds?: number;
    }
  | { kind: 'raw'; statusCode: number; body: string; contentType?: string; delayMilliseconds?: number };

/** Produces the reply of one request; a string is a `stop` text reply. */
export type OpenAILoopbackResponder = (
  request: OpenAILoopbackRequest,
) => OpenAILoopbackReply | string | Promise<OpenAILoopbackReply | string>;

/** Options of {@link startOpenAILoopbackServer}. */
export interface OpenAILoopbackOptions {
  /** Default {@link openAIDialogueResponder}. */
  responder?: OpenAILoopbackResponder;
  /** Service time of every request, milliseconds. Default 0. */
  latencyMs?: number;
  /** Requests served at once; default unlimited. */
  capacity?: number;
  overCapacity?: OverCapacityPolicy;
  /** When set, requests must send `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Answer 400 to a `system` message. Default false. */
  rejectSystemRole?: boolean;
  port?: number;
  /** The service latency and reply delays wait on it; default the system clock (vitest's fake timers drive it). */
  clock?: Clock;
}

/** A running OpenAI-compatible loopback server. */
export interface OpenAILoopbackServer {
  /** `http://127.0.0.1:<port>`; the client's base URL is `${url}/v1`. */
  url: string;
  requests: OpenAILoopbackRequest[];
  statistics: { received: number; rejectedOverCapacity: number; peakConcurrency: number; abandoned: number };
  close(): Promise<void>;
}

/** Reply builders for scripts. */
export const openAIReplies = {
  text: (text: string): OpenAILoopbackReply => ({ kind: 'text', text }),
  /** `finish_reason: length` with the partial text. */
  length: (partialText = '{"turns": [{"question": "'): OpenAILoopbackReply => ({
    kind: 'text',
    text: partialText,
    finishReason: 'length',
  }),
  rateLimited: (retryAfterSeconds = 1): OpenAILoopbackReply => ({
    kind: 'error',
    statusCode: 429,
    message: 'Rate limit reached',
    type: 'rate_limit_error',
    retryAfterSeconds,
  }),
  unavailable: (): OpenAILoopbackReply => ({
    kind: 'error',
    statusCode: 503,
    message: 'Service Unavailable',
    type: 'server_error',
  }),
  internalError: (): OpenAILoopbackReply => ({
    kind: 'error',
    statusCode: 500,
    message: 'Internal Server Error',
    type: 'server_error',
  }),
  slow: (delayMilliseconds: number, text = '{"turns": []}'): OpenAILoopbackReply => ({
    kind: 'text',
    text,
    delayMilliseconds,
  }),
};

/**
 * The default responder: a correct JSON reply to any dialogue text request, 400 for anything else.
 *
 * @returns the responder.
 */
export function openAIDialogueResponder(): OpenAILoopbackResponder {
  return (request) => {
    const dialogue = readDialogueRequest(request.system, request.prompt);
    if (dialogue === undefined)
      return {
        kind: 'error',
        statusCode: 400,
        message: 'loopback: not a dialogue text request',
        type: 'invalid_request_error',
      };
    return validDialogueReply(dialogue);
  };
}

/**
 * Starts an OpenAI-compatible server on 127.0.0.1 (see the file header).
 *
 * @param options responder, latency (`latencyMs`, milliseconds), capacity, key, system-role quirk.
 * @returns `{url, requests, statistics, close}`.
 * @throws the listen error.
 */
export async function startOpenAILoopbackServer(options: OpenAILoopbackOptions = {}): Promise<OpenAILoopbackServer> {
  const responder = options.responder ?? openAIDialogueResponder();
  const requests: OpenAILoopbackRequest[] = [];
  const started = performance.now();
  const http = await startLoopbackHttpServer(
    {
      latencyMilliseconds: options.latencyMs ?? 0,
      reject: () =>
        errorReply({
          kind: 'error',
          statusCode: 429,
          message: 'loopback: over capacity',
          type: 'rate_limit_error',
          retryAfterSeconds: 1,
        }),
      handle: async (incoming, text) => {
        if (incoming.method !== 'POST' || !/^\/v1\/chat\/completions(?:\?.*)?$/.test(incoming.url ?? '')) {
          return errorReply({
            kind: 'error',
            statusCode: 404,
            message: `loopback: no route ${incoming.method} ${incoming.url}`,
            type: 'not_found_error',
          });
        }
        if (options.apiKey !== undefined && incoming.headers.authorization !== `Bearer ${options.apiKey}`) {
          return errorReply({
            kind: 'error',
            statusCode: 401,
            message: 'Incorrect API key provided.',
            type: 'invalid_request_error',
          });
        }
        let body: ChatCompletionRequestBody;
        try {
          body = JSON.parse(text) as ChatCompletionRequestBody;
        } catch {
          return errorReply({
            kind: 'error',
            statusCode: 400,
            message: 'Invalid JSON body',
            type: 'invalid_request_error',
          });
        }
        const messages = body.messages ?? [];
        const textOf = (role: string): string[] =>
          messages
            .filter((message) => message.role === role)
            .map((message) =>
              typeof message.content === 'string'
                ? message.content
                : message.content.map((part) => part.text ?? '').join(''),
            );
        const systemTexts = textOf('system');
        const request: OpenAILoopbackRequest = {
          index: requests.length,
          model: body.model ?? '',
          headers: incoming.headers,
          body,
          system: systemTexts.length > 0 ? systemTexts.join('\n') : undefined,
          prompt: textOf('user').join('\n'),
          receivedAtMilliseconds: performance.now() - started,
        };
        requests.push(request);
        if (options.rejectSystemRole === true && request.system !== undefined) {
          return errorReply({
            kind: 'error',
            statusCode: 400,
            message: 'System role not supported',
            type: 'BadRequestError',
          });
        }
        const scripted = await responder(request);
        const reply: OpenAILoopbackReply = typeof scripted === 'string' ? { kind: 'text', text: scripted } : scripted;
        return toHttpReply(reply, request);
      },
    },
    {
      ...(options.capacity !== undefined ? { capacity: options.capacity } : {}),
      ...(options.overCapacity !== undefined ? { overCapacity: options.overCapacity } : {}),
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.clock !== undefined ? { clock: options.clock } : {}),
    },
  );
  return { url: http.url, requests, statistics: http.statistics, close: http.close };
}

function toHttpReply(reply: OpenAILoopbackReply, request: OpenAILoopbackRequest): LoopbackHttpReply {
  const delay = reply.delayMilliseconds !== undefined ? { delayMilliseconds: reply.delayMilliseconds } : {};
  if (reply.kind === 'error') return { ...errorReply(reply), ...delay };
  if (reply.kind === 'raw')
    return {
      statusCode: reply.statusCode,
      body: reply.body,
      headers: { 'content-type': reply.contentType ?? 'application/json' },
      ...delay,
    };
  const promptTokens = approximateTokenCount(`${request.system ?? ''}${request.prompt}`);
  const completionTokens = approximateTokenCount(reply.text);
  return {
    statusCode: 200,
    body: JSON.stringify({
      id: `chatcmpl-loopback-${request.index}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: reply.text },
          logprobs: null,
          finish_reason: reply.finishReason ?? 'stop',
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    }),
    ...delay,
  };
}

function errorReply(reply: Extract<OpenAILoopbackReply, { kind: 'error' }>): LoopbackHttpReply {
  return {
    statusCode: reply.statusCode,
    headers: reply.retryAfterSeconds !== undefined ? { 'retry-after': String(reply.retryAfterSeconds) } : {},
    body: JSON.stringify({ error: { message: reply.message, type: reply.type ?? 'error', param: null, code: null } }),
  };
}
