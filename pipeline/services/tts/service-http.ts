/**
 * HTTP for the remote speech services: one request with a timeout, the whole (possibly streamed)
 * response body, and every way it can fail turned into a typed {@link SpeechServiceError} that says
 * whether trying again may help (`isRetryable`, the Vercel AI SDK convention: 408, 409, 429, >= 500,
 * timeouts, network failures, streams cut short).
 *
 * Uses Node's `http`/`https` clients with keep-alive agents of their own (a form body is encoded by
 * form-data-encoder, {@link encodeMultipartForm}). `fetch` cost about 1 ms more CPU
 * per request in web streams (2.1-2.5 against 1.4-1.5 ms for a CosyVoice2-sized exchange on this
 * 2-core machine): half a second of a 20-dialogue build's 528 requests, on the thread that feeds the
 * servers. Unlike `fetch`, redirects are not followed (a 3xx is a `service-error`) and no compressed
 * encoding is asked for. No retries here: retry-with-backoff lives in pipeline/services/retry.ts and is
 * applied by remote-synthesizer.ts around the endpoint pool.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { FormDataEncoder } from 'form-data-encoder';
import { SYSTEM_CLOCK, type Clock } from '../clock.ts';
import { SpeechSynthesisError, type SpeechSynthesisFailure } from './speech-synthesizer.ts';
import { serviceAddress } from '../service-address.ts';

/** Characters of an error response body quoted in messages. */
const RESPONSE_EXCERPT_LENGTH = 300;

/** One failed request to a speech service. */
export class SpeechServiceError extends SpeechSynthesisError {
  /** Whether sending the same request again may succeed. */
  readonly isRetryable: boolean;
  /** Base URL of the endpoint that failed. */
  readonly endpoint: string;
  /** Route or path requested, e.g. `/inference_zero_shot`. */
  readonly route: string;
  /** HTTP status when the service answered, else undefined. */
  readonly statusCode: number | undefined;
  /** Delay the service asked for (`Retry-After`), milliseconds. */
  readonly retryAfterMilliseconds: number | undefined;
  /** Start of the error response body, when there was one. */
  readonly responseExcerpt: string | undefined;

  constructor(
    engine: string,
    text: string,
    failure: SpeechSynthesisFailure,
    detail: string,
    options: {
      endpoint: string;
      route: string;
      isRetryable: boolean;
      statusCode?: number;
      retryAfterMilliseconds?: number;
      responseExcerpt?: string;
      cause?: unknown;
    },
  ) {
    // the service named by its address, without credentials or a query a user may have put in the URL
    super(
      engine,
      text,
      failure,
      `${detail} [${serviceAddress(options.endpoint)}${options.route}]`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.isRetryable = options.isRetryable;
    this.endpoint = options.endpoint;
    this.route = options.route;
    this.statusCode = options.statusCode;
    this.retryAfterMilliseconds = options.retryAfterMilliseconds;
    this.responseExcerpt = options.responseExcerpt;
  }
}

/**
 * Whether an HTTP status is worth retrying: 408, 409, 429 and every 5xx.
 *
 * @param statusCode HTTP status.
 */
export function isRetryableStatusCode(statusCode: number): boolean {
  return statusCode === 408 || statusCode === 409 || statusCode === 429 || statusCode >= 500;
}

/**
 * Reads an HTTP `Retry-After` header: delay-seconds (`120`) or an HTTP date.
 *
 * @param value the header value, or null.
 * @param now current time, milliseconds since the epoch (for dates).
 * @returns milliseconds to wait (>= 0), or undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Where and what one request is about (for errors). */
export interface ServiceRequestContext {
  /** Engine id, e.g. `cosyvoice2`. */
  engine: string;
  /** The utterance text (quoted in errors). */
  text: string;
  /** Base URL of the endpoint, without a trailing slash. */
  endpoint: string;
  /** Path appended to the endpoint, e.g. `/inference_zero_shot`. */
  route: string;
}

/** Limits of one request. */
export interface ServiceRequestLimits {
  /** Whole request, response body included, milliseconds. */
  timeoutMilliseconds: number;
  /** Caller's cancellation. */
  signal?: AbortSignal;
  /** The timeout is waited on it; default {@link SYSTEM_CLOCK} (vitest's fake timers drive it). */
  clock?: Clock;
}

/** A successful response with its whole body. */
export interface ServiceResponse {
  status: number;
  headers: Headers;
  /**
   * The body as received, one array per network read, in order: a protocol that decodes as it goes
   * (raw PCM) reads these and never needs the joined copy.
   */
  chunks: readonly Uint8Array[];
  /** The body chunks joined into one array (made on first use, then kept). */
  readonly body: Uint8Array;
}

/** A {@link ServiceResponse} over `chunks`, the joined `body` made only when read. */
export function serviceResponse(status: number, headers: Headers, chunks: readonly Uint8Array[]): ServiceResponse {
  let joined: Uint8Array | undefined;
  return {
    status,
    headers,
    chunks,
    get body() {
      joined ??= chunks.length === 1 ? chunks[0]! : concatenateBytes(chunks);
      return joined;
    },
  };
}

/**
 * Sends one request and reads the whole response body (streams included), all within the timeout.
 *
 * @param context engine, text, endpoint and route (the URL is `endpoint + route`).
 * @param init method, headers and body of the request.
 * @param limits timeout (milliseconds) and caller signal.
 * @returns the 2xx response with its body.
 * @throws SpeechServiceError: `service-unreachable` (no answer: refused, reset, DNS; retryable),
 *   `timeout` (retryable), `service-error` with the status (retryable for 408, 409, 429, 5xx; the
 *   `Retry-After` delay is kept), `truncated-audio` when the body stream breaks after the headers
 *   (retryable). A caller abort rethrows the signal's reason.
 */
export async function requestService(
  context: ServiceRequestContext,
  init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string | FormData | Uint8Array },
  limits: ServiceRequestLimits,
): Promise<ServiceResponse> {
  // The timeout is a sleep on the clock, ended when the exchange is over.
  const timeout = new AbortController();
  const exchangeOver = new AbortController();
  (limits.clock ?? SYSTEM_CLOCK).sleep(limits.timeoutMilliseconds, exchangeOver.signal).then(
    () => timeout.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    () => undefined,
  );
  try {
    return await exchange(context, init, limits, timeout.signal);
  } finally {
    exchangeOver.abort();
  }
}

/** {@link requestService} once its timeout signal is made. */
async function exchange(
  context: ServiceRequestContext,
  init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string | FormData | Uint8Array },
  limits: ServiceRequestLimits,
  timeoutSignal: AbortSignal,
): Promise<ServiceResponse> {
  const signal = limits.signal ? AbortSignal.any([timeoutSignal, limits.signal]) : timeoutSignal;
  const url = `${context.endpoint}${context.route}`;
  const fail = (
    failure: SpeechSynthesisFailure,
    detail: string,
    options: {
      isRetryable: boolean;
      statusCode?: number;
      retryAfterMilliseconds?: number;
      responseExcerpt?: string;
      cause?: unknown;
    },
  ): SpeechServiceError =>
    new SpeechServiceError(context.engine, context.text, failure, detail, {
      endpoint: context.endpoint,
      route: context.route,
      ...options,
    });
  /** The timeout error when the timeout fired; rethrows the caller's reason when the caller aborted; else undefined. */
  const abortError = (error: unknown, stage: string): SpeechServiceError | undefined => {
    if (limits.signal?.aborted && !timeoutSignal.aborted) throw limits.signal.reason;
    if (!timeoutSignal.aborted) return undefined;
    return fail('timeout', `no complete answer within ${(limits.timeoutMilliseconds / 1000).toFixed(1)} s (${stage})`, {
      isRetryable: true,
      cause: error,
    });
  };

  let response: IncomingMessage;
  try {
    response = await send(url, init, signal);
  } catch (error) {
    const timedOut = abortError(error, 'waiting for the response headers');
    if (timedOut) throw timedOut;
    throw fail('service-unreachable', `cannot reach the service: ${describeNetworkError(error)}`, {
      isRetryable: true,
      cause: error,
    });
  }
  const status = response.statusCode ?? 0;
  const headers = new Headers();
  for (let index = 0; index + 1 < response.rawHeaders.length; index += 2)
    headers.append(response.rawHeaders[index]!, response.rawHeaders[index + 1]!);

  if (status < 200 || status > 299) {
    let excerpt = '';
    try {
      const parts: Buffer[] = [];
      for await (const chunk of response) parts.push(chunk as Buffer);
      excerpt = Buffer.concat(parts).toString('utf8').slice(0, RESPONSE_EXCERPT_LENGTH);
    } catch {
      // the error body is only for the message
    }
    throw fail('service-error', `HTTP ${status}${excerpt ? `: ${excerpt.replace(/\s+/g, ' ').trim()}` : ''}`, {
      isRetryable: isRetryableStatusCode(status),
      statusCode: status,
      retryAfterMilliseconds: parseRetryAfter(headers.get('retry-after')),
      responseExcerpt: excerpt,
    });
  }

  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    for await (const chunk of response) {
      chunks.push(chunk as Buffer);
      received += (chunk as Buffer).length;
    }
  } catch (error) {
    const timedOut = abortError(error, `after ${received} bytes of the body`);
    if (timedOut) throw timedOut;
    throw fail('truncated-audio', `the response stream broke after ${received} bytes: ${describeNetworkError(error)}`, {
      isRetryable: true,
      statusCode: status,
      cause: error,
    });
  }
  return serviceResponse(status, headers, chunks);
}

/**
 * The multipart/form-data body of a form (RFC 7578), in one buffer, by form-data-encoder: its text
 * parts as the encoder writes them, each file part's bytes read once from its Blob. The platform's
 * `new Response(form).arrayBuffer()`, used before, goes through web streams: a CosyVoice2 exchange
 * with an 8 s prompt took 1.4-1.7 ms of CPU against 1.0-1.1 ms now (client and loopback server, 3
 * alternating rounds of 500 requests on this 2-core machine; the server's part is the same), on the
 * thread that feeds the servers. One difference from the platform's encoder: a lone CR or LF in a
 * field name is percent-escaped as it is, not first turned into CRLF (the names sent here are fixed
 * ASCII).
 * @returns the bytes, and the content type that names their boundary
 */
async function encodeMultipartForm(form: FormData): Promise<{ bytes: Buffer; contentType: string }> {
  const encoder = new FormDataEncoder(form);
  const parts: Uint8Array[] = [];
  for (const part of encoder.values()) {
    // a platform FormData holds strings (encoded by now) and Files, which are Blobs
    if (part instanceof Uint8Array) parts.push(part);
    else if (part instanceof Blob) parts.push(new Uint8Array(await part.arrayBuffer()));
    else throw new TypeError(`a form part is neither text nor a Blob: ${Object.prototype.toString.call(part)}`);
  }
  return { bytes: Buffer.concat(parts), contentType: encoder.contentType };
}

/**
 * Sends the request and resolves with the response once its headers are in (its body not yet read).
 * The body goes with a Content-Length, as `fetch` sends it: a string as UTF-8 (`text/plain;charset=UTF-8`
 * unless a content type is given, as `fetch` does), bytes as they are, a form as the multipart body
 * form-data-encoder writes (its boundary in the content type).
 * @throws the request's error (refused, reset, DNS, the signal's abort)
 */
async function send(
  url: string,
  init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string | FormData | Uint8Array },
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const headers: Record<string, string | number> = { ...init.headers };
  const named = (name: string) => Object.keys(headers).some((key) => key.toLowerCase() === name);
  let body: Uint8Array | undefined;
  if (typeof init.body === 'string') {
    body = Buffer.from(init.body, 'utf8');
    if (!named('content-type')) headers['content-type'] = 'text/plain;charset=UTF-8';
  } else if (init.body instanceof FormData) {
    const encoded = await encodeMultipartForm(init.body);
    body = encoded.bytes;
    if (!named('content-type')) headers['content-type'] = encoded.contentType;
  } else if (init.body !== undefined) {
    body = init.body;
  }
  if (body !== undefined) headers['content-length'] = body.length;
  signal.throwIfAborted();
  const secure = new URL(url).protocol === 'https:';
  const attempt = (again: boolean) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      let answered = false;
      const request = (secure ? https : http).request(
        url,
        { method: init.method, headers, signal, agent: secure ? HTTPS_AGENT : HTTP_AGENT },
        (response) => {
          answered = true;
          resolve(response);
        },
      );
      request.on('error', (error: NodeJS.ErrnoException) => {
        // a kept-alive socket the server closed just as this request went out on it (Node's documented
        // race, `request.reusedSocket`): sent once more, on a new connection, before any answer
        if (!answered && !again && request.reusedSocket && error.code === 'ECONNRESET' && !signal.aborted)
          resolve(attempt(true));
        else reject(error);
      });
      request.end(body);
    });
  return attempt(false);
}

/**
 * Idle connections are kept 4 s (as undici, behind `fetch`, keeps them), below the 5 s after which
 * uvicorn (CosyVoice2's FastAPI server) closes them, so a request rarely goes out on a connection the
 * server is closing; Node's global agent keeps them 5 s, the same as uvicorn.
 */
const KEEP_ALIVE = { keepAlive: true, timeout: 4_000, scheduling: 'lifo' } as const;
const HTTP_AGENT = new http.Agent(KEEP_ALIVE);
const HTTPS_AGENT = new https.Agent(KEEP_ALIVE);

/** Joins byte chunks into one array of `total` bytes. */
export function concatenateBytes(
  chunks: readonly Uint8Array[],
  total: number = chunks.reduce((sum, chunk) => sum + chunk.length, 0),
): Uint8Array {
  const joined = new Uint8Array(total);
  let position = 0;
  for (const chunk of chunks) {
    joined.set(chunk, position);
    position += chunk.length;
  }
  return joined;
}

/** The error and its causes as one line, e.g. `connect ECONNREFUSED 127.0.0.1:9`. */
export function describeNetworkError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    if (current instanceof Error) {
      const code = (current as { code?: unknown }).code;
      parts.push(
        `${current.message}${typeof code === 'string' && !current.message.includes(code) ? ` (${code})` : ''}`,
      );
      current = current.cause;
    } else {
      parts.push(String(current));
      break;
    }
  }
  return parts.join(': ');
}

/**
 * Removes trailing slashes from a base URL and checks it is http(s).
 *
 * @throws TypeError when the URL is not an absolute http or https URL.
 */
export function normalizeBaseUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new TypeError(`${url} is not an http or https URL`);
  return url.replace(/\/+$/u, '');
}
