/**
 * A loopback server speaking the Gemini API's `generateContent` protocol, scriptable per request, for
 * tests, the end-to-end build test and `npm run bench`. Point the real @google/genai client at
 * `url` (`httpOptions.baseUrl`, or `baseUrl:` in the `gemini` backend settings).
 *
 * Protocol (docs/services.md):
 * - `POST /v1beta/models/{model}:generateContent` with header `x-goog-api-key`; anything else is 404.
 * - Success: `{candidates: [{content: {parts: [{text}], role: "model"}, finishReason, index: 0}],
 *   usageMetadata: {promptTokenCount, candidatesTokenCount, totalTokenCount, promptTokensDetails},
 *   modelVersion, responseId}`; a blocked prompt has no candidates and `promptFeedback.blockReason`.
 * - Errors: `{error: {code, message, status, details?}}`, 429 `RESOURCE_EXHAUSTED` with
 *   `{"@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "2s"}`.
 * - Key checks as the real API: no key → 403 `PERMISSION_DENIED`; a wrong key → 400
 *   `INVALID_ARGUMENT` "API key not valid…" with an ErrorInfo `API_KEY_INVALID` detail.
 * - Model quirks (`emulateModelQuirks`, default on): a `gemma-3-*` model answers 400
 *   `Developer instruction is not enabled for models/<model>` to a `systemInstruction` and
 *   `JSON mode is not enabled for models/<model>` to `responseMimeType: application/json`.
 *
 * Capacity: at most `capacity` requests are served at once, each for `latencyMs` (+ the reply's own
 * `delayMilliseconds`). With `overCapacity: 'queue'` (default) extra requests wait in arrival order,
 * like a server with a request queue; with `'reject'` they are answered at once with 429
 * RESOURCE_EXHAUSTED carrying RetryInfo `overCapacityRetryDelay` (default "1s").
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

/** The key the server accepts unless told otherwise. */
export const GEMINI_LOOPBACK_API_KEY = 'loopback-test-key';

/** The request body fields the server reads (as @google/genai sends them). */
export interface GeminiRequestBody {
  contents?: Array<{ role?: string; parts?: Array<{ text?: string }> }>;
  systemInstruction?: { role?: string; parts?: Array<{ text?: string }> };
  generationConfig?: {
    temperature?: number;
    seed?: number;
    maxOutputTokens?: number;
    responseMimeType?: string;
    responseSchema?: unknown;
    responseJsonSchema?: unknown;
  };
  [field: string]: unknown;
}

/** One request as received. */
export interface GeminiLoopbackRequest {
  /** 0-based arrival order among requests that reached the responder. */
  index: number;
  /** Model from the path, without `models/`. */
  model: string;
  apiKey: string | undefined;
  headers: IncomingHttpHeaders;
  body: GeminiRequestBody;
  /** Joined text of `systemInstruction`, or undefined when absent. */
  system: string | undefined;
  /** Joined text of the user contents. */
  prompt: string;
  /** Milliseconds since the server started. */
  receivedAtMilliseconds: number;
}

/** A scripted reply. */
export type GeminiLoopbackReply =
  | {
      kind: 'text';
      /** One part, or several parts (the client must join them). */
      text: string | readonly string[];
      /** Default `STOP`. */
      finishReason?: 'STOP' | 'MAX_TOKENS' | 'SAFETY' | 'RECITATION' | 'OTHER' | (string & {});
      delayMilliseconds?: number;
    }
  | {
      kind: 'blocked';
      blockReason: 'SAFETY' | 'OTHER' | 'BLOCKLIST' | 'PROHIBITED_CONTENT';
      delayMilliseconds?: number;
    }
  | {
      kind: 'error';
      code: number;
      /** Google RPC status name, e.g. `RESOURCE_EXHAUSTED`, `UNAVAILABLE`, `INTERNAL`, `INVALID_ARGUMENT`. */
      status: string;
      message: string;
      /** Adds a google.rpc.RetryInfo detail, e.g. `"58s"`, `"0.2s"`. */
      retryDelay?: string;
      delayMilliseconds?: number;
    }
  | { kind: 'raw'; statusCode: number; body: string; contentType?: string; delayMilliseconds?: number };

/** Produces the reply of one request; a string is a `STOP` text reply. */
export type GeminiLoopbackResponder = (
  request: GeminiLoopbackRequest,
) => GeminiLoopbackReply | string | Promise<GeminiLoopbackReply | string>;

/** Options of {@link startGeminiLoopbackServer}. */
export interface GeminiLoopbackOptions {
  /** Default {@link geminiDialogueResponder}: correct replies to dialogue text requests. */
  responder?: GeminiLoopbackResponder;
  /** Service time of every request, milliseconds (the name the build and bench use). Default 0. */
  latencyMs?: number;
  /** Requests served at once; default unlimited. */
  capacity?: number;
  /** Over capacity: `queue` (default) or `reject` with 429. */
  overCapacity?: OverCapacityPolicy;
  /** RetryInfo delay of an over-capacity 429; default `"1s"`. */
  overCapacityRetryDelay?: string;
  /** The accepted key; default {@link GEMINI_LOOPBACK_API_KEY}. */
  apiKey?: string;
  /** Emulate Gemma 3's 400s for systemInstruction and JSON mode; default true. */
  emulateModelQuirks?: boolean;
  /** Port; default any free one. */
  port?: number;
  /** The service latency and reply delays wait on it; default the system clock (vitest's fake timers drive it). */
  clock?: Clock;
}

/** A running Gemini loopback server. */
export interface GeminiLoopbackServer {
  /** Base URL for the client, `http://127.0.0.1:<port>` (the client adds `/v1beta/...`). */
  url: string;
  /** Every request that reached the responder or a model quirk, in arrival order. */
  requests: GeminiLoopbackRequest[];
  /** Received, rejected over capacity, peak concurrency, abandoned (client gone). */
  statistics: { received: number; rejectedOverCapacity: number; peakConcurrency: number; abandoned: number };
  /** Stops the server and ends open connections. */
  close(): Promise<void>;
}

/** Reply builders for scripts. */
export const geminiReplies = {
  /** A `STOP` reply with this text. */
  text: (text: string | readonly string[]): GeminiLoopbackReply => ({ kind: 'text', text }),
  /** A reply cut at the output limit: `MAX_TOKENS` with the partial text. */
  maxTokens: (partialText = '{"turns": [{"question": "'): GeminiLoopbackReply => ({
    kind: 'text',
    text: partialText,
    finishReason: 'MAX_TOKENS',
  }),
  /** 429 RESOURCE_EXHAUSTED with RetryInfo. */
  rateLimited: (retryDelay = '58s'): GeminiLoopbackReply => ({
    kind: 'error',
    code: 429,
    status: 'RESOURCE_EXHAUSTED',
    message: 'You exceeded your current quota, please check your plan and billing details.',
    retryDelay,
  }),
  /** 503 UNAVAILABLE (overload). */
  unavailable: (): GeminiLoopbackReply => ({
    kind: 'error',
    code: 503,
    status: 'UNAVAILABLE',
    message: 'The model is overloaded. Please try again later.',
  }),
  /** 500 INTERNAL. */
  internalError: (): GeminiLoopbackReply => ({
    kind: 'error',
    code: 500,
    status: 'INTERNAL',
    message:
      'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  }),
  /** A text reply that takes this long (for client timeouts). */
  slow: (delayMilliseconds: number, text = '{"turns": []}'): GeminiLoopbackReply => ({
    kind: 'text',
    text,
    delayMilliseconds,
  }),
};

/**
 * The default responder: a correct JSON reply to any dialogue text request (./dialogue-replies.ts),
 * and a 400 INVALID_ARGUMENT for anything else.
 *
 * @returns the responder.
 */
export function geminiDialogueResponder(): GeminiLoopbackResponder {
  return (request) => {
    const dialogue = readDialogueRequest(request.system, request.prompt);
    if (dialogue === undefined) {
      return { kind: 'error', code: 400, status: 'INVALID_ARGUMENT', message: 'loopback: not a dialogue text request' };
    }
    return validDialogueReply(dialogue);
  };
}

/**
 * Starts a Gemini-protocol server on 127.0.0.1 (see the file header).
 *
 * @param options responder, latency (`latencyMs`, milliseconds), capacity, key, quirks.
 * @returns `{url, requests, statistics, close}`.
 * @throws the listen error.
 */
export async function startGeminiLoopbackServer(options: GeminiLoopbackOptions = {}): Promise<GeminiLoopbackServer> {
  const responder = options.responder ?? geminiDialogueResponder();
  const acceptedKey = options.apiKey ?? GEMINI_LOOPBACK_API_KEY;
  const emulateQuirks = options.emulateModelQuirks ?? true;
  const requests: GeminiLoopbackRequest[] = [];
  const started = performance.now();

  const http = await startLoopbackHttpServer(
    {
      latencyMilliseconds: options.latencyMs ?? 0,
      reject: () =>
        errorReply({
          kind: 'error',
          code: 429,
          status: 'RESOURCE_EXHAUSTED',
          message: 'loopback: over capacity',
          retryDelay: options.overCapacityRetryDelay ?? '1s',
        }),
      handle: async (incoming, text) => {
        const match = /^\/v1beta\/models\/([^/:]+):generateContent(?:\?.*)?$/.exec(incoming.url ?? '');
        if (incoming.method !== 'POST' || match === null) {
          return errorReply({
            kind: 'error',
            code: 404,
            status: 'NOT_FOUND',
            message: `loopback: no route ${incoming.method} ${incoming.url}`,
          });
        }
        const model = decodeURIComponent(match[1] ?? '');
        const headerKey = incoming.headers['x-goog-api-key'];
        const apiKey = Array.isArray(headerKey) ? headerKey[0] : headerKey;
        if (apiKey === undefined) {
          return errorReply({
            kind: 'error',
            code: 403,
            status: 'PERMISSION_DENIED',
            message:
              "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
          });
        }
        if (apiKey !== acceptedKey) {
          return {
            statusCode: 400,
            body: JSON.stringify({
              error: {
                code: 400,
                message: 'API key not valid. Please pass a valid API key.',
                status: 'INVALID_ARGUMENT',
                details: [
                  {
                    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
                    reason: 'API_KEY_INVALID',
                    domain: 'googleapis.com',
                  },
                ],
              },
            }),
          };
        }
        let body: GeminiRequestBody;
        try {
          body = JSON.parse(text) as GeminiRequestBody;
        } catch {
          return errorReply({
            kind: 'error',
            code: 400,
            status: 'INVALID_ARGUMENT',
            message: 'Invalid JSON payload received.',
          });
        }
        const request: GeminiLoopbackRequest = {
          index: requests.length,
          model,
          apiKey,
          headers: incoming.headers,
          body,
          system: body.systemInstruction === undefined ? undefined : joinParts(body.systemInstruction.parts),
          prompt: (body.contents ?? [])
            .filter((content) => content.role !== 'model')
            .map((content) => joinParts(content.parts))
            .join('\n'),
          receivedAtMilliseconds: performance.now() - started,
        };
        requests.push(request);
        if (emulateQuirks && /^gemma-3/.test(model)) {
          if (body.systemInstruction !== undefined) {
            return errorReply({
              kind: 'error',
              code: 400,
              status: 'INVALID_ARGUMENT',
              message: `Developer instruction is not enabled for models/${model}`,
            });
          }
          if (body.generationConfig?.responseMimeType === 'application/json') {
            return errorReply({
              kind: 'error',
              code: 400,
              status: 'INVALID_ARGUMENT',
              message: `JSON mode is not enabled for models/${model}`,
            });
          }
        }
        const scripted = await responder(request);
        const reply: GeminiLoopbackReply = typeof scripted === 'string' ? { kind: 'text', text: scripted } : scripted;
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

function toHttpReply(reply: GeminiLoopbackReply, request: GeminiLoopbackRequest): LoopbackHttpReply {
  const delay = reply.delayMilliseconds !== undefined ? { delayMilliseconds: reply.delayMilliseconds } : {};
  const promptTokenCount = approximateTokenCount(`${request.system ?? ''}${request.prompt}`);
  switch (reply.kind) {
    case 'error':
      return { ...errorReply(reply), ...delay };
    case 'raw':
      return {
        statusCode: reply.statusCode,
        body: reply.body,
        headers: { 'content-type': reply.contentType ?? 'application/json; charset=UTF-8' },
        ...delay,
      };
    case 'blocked':
      return {
        statusCode: 200,
        body: JSON.stringify({
          promptFeedback: { blockReason: reply.blockReason, safetyRatings: [] },
          usageMetadata: { promptTokenCount, totalTokenCount: promptTokenCount },
          modelVersion: request.model,
          responseId: `loopback-${request.index}`,
        }),
        ...delay,
      };
    case 'text': {
      const parts = typeof reply.text === 'string' ? [reply.text] : [...reply.text];
      const candidatesTokenCount = approximateTokenCount(parts.join(''));
      return {
        statusCode: 200,
        body: JSON.stringify({
          candidates: [
            {
              content: { parts: parts.map((text) => ({ text })), role: 'model' },
              finishReason: reply.finishReason ?? 'STOP',
              index: 0,
            },
          ],
          usageMetadata: {
            promptTokenCount,
            candidatesTokenCount,
            totalTokenCount: promptTokenCount + candidatesTokenCount,
            promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokenCount }],
          },
          modelVersion: request.model,
          responseId: `loopback-${request.index}`,
        }),
        ...delay,
      };
    }
  }
}

function errorReply(reply: Extract<GeminiLoopbackReply, { kind: 'error' }>): LoopbackHttpReply {
  const details =
    reply.retryDelay !== undefined
      ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: reply.retryDelay }]
      : undefined;
  return {
    statusCode: reply.code,
    body: JSON.stringify({
      error: {
        code: reply.code,
        message: reply.message,
        status: reply.status,
        ...(details !== undefined ? { details } : {}),
      },
    }),
  };
}

function joinParts(parts: ReadonlyArray<{ text?: string }> | undefined): string {
  return (parts ?? []).map((part) => part.text ?? '').join('');
}
