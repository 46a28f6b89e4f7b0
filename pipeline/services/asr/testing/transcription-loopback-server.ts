/**
 * A loopback server speaking the OpenAI transcription protocol as OpenAI, faster-whisper-server
 * (speaches) and vLLM serve it, scriptable per request, with the faults they show. Point the client at
 * `${url}/v1`.
 *
 * Protocol:
 * - `POST /v1/audio/transcriptions`, `multipart/form-data` (parsed by Node's own `Request.formData()`,
 *   undici's multipart parser) with `file` (a WAV file: it is decoded, a file that is not one gets 400
 *   as from a server whose decoder fails), `model` (required; a name outside `models` gets 404
 *   `model_not_found`), `language?`, `response_format?` (`json` or absent: `{"text": ...}`; `text`:
 *   the text as text/plain), `temperature?`. Anything else is 404.
 * - Errors: `{error: {message, type, param: null, code}}`; a 429 may carry `retry-after` (seconds).
 * - With `apiKey` set, a request without `Authorization: Bearer <key>` gets 401.
 * - Scripted faults (the responder's reply): an HTTP error status, a delay (past the client's timeout),
 *   a raw body (malformed JSON, an HTML error page from a proxy, JSON without `text`), a connection
 *   closed without an answer.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeWav } from '../../../audio/wav.ts';

/** One transcription request as received. */
export interface TranscriptionLoopbackRequest {
  /** 0-based arrival order among requests that reached the responder. */
  index: number;
  model: string;
  language: string | undefined;
  responseFormat: string | undefined;
  temperature: string | undefined;
  fileName: string;
  /** The uploaded file, bytes as received. */
  file: Uint8Array;
  /** The decoded WAV: rate (Hz), channels, seconds. */
  audio: { sampleRate: number; channels: number; durationSeconds: number };
  headers: IncomingHttpHeaders;
}

/** A scripted reply. */
export type TranscriptionLoopbackReply =
  | { kind: 'text'; text: string; delayMilliseconds?: number }
  | {
      kind: 'error';
      statusCode: number;
      message: string;
      type?: string;
      code?: string;
      retryAfterSeconds?: number;
      delayMilliseconds?: number;
    }
  | { kind: 'raw'; statusCode: number; body: string; contentType?: string; delayMilliseconds?: number }
  /** The server closes the connection without answering (a crashed worker behind a proxy). */
  | { kind: 'hang-up' };

/** Produces the reply of one request; a string is a text reply. */
export type TranscriptionLoopbackResponder = (
  request: TranscriptionLoopbackRequest,
) => TranscriptionLoopbackReply | string | Promise<TranscriptionLoopbackReply | string>;

/** Options of {@link startTranscriptionLoopbackServer}. */
export interface TranscriptionLoopbackOptions {
  /** Default: the text `clip of <seconds> s` (two decimals) for every clip. */
  responder?: TranscriptionLoopbackResponder;
  /** Model names served; default `['whisper-1']`. */
  models?: readonly string[];
  /** When set, requests must send `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
}

/** A running transcription loopback server. */
export interface TranscriptionLoopbackServer {
  /** `http://127.0.0.1:<port>`; the client's base URL is `${url}/v1`. */
  url: string;
  /** Every request that reached the responder, in order. */
  requests: TranscriptionLoopbackRequest[];
  /** Requests received, answered or not (refused ones included). */
  received: number;
  close(): Promise<void>;
}

/** Reply builders for scripts. */
export const transcriptionReplies = {
  text: (text: string): TranscriptionLoopbackReply => ({ kind: 'text', text }),
  rateLimited: (retryAfterSeconds = 0): TranscriptionLoopbackReply => ({
    kind: 'error',
    statusCode: 429,
    message: 'Rate limit reached for requests',
    type: 'requests',
    code: 'rate_limit_exceeded',
    retryAfterSeconds,
  }),
  unavailable: (): TranscriptionLoopbackReply => ({
    kind: 'error',
    statusCode: 503,
    message: 'Service Unavailable',
    type: 'server_error',
  }),
  internalError: (): TranscriptionLoopbackReply => ({
    kind: 'error',
    statusCode: 500,
    message: 'Internal Server Error',
    type: 'server_error',
  }),
  /** A 400 for audio the server's decoder rejects. */
  badAudio: (): TranscriptionLoopbackReply => ({
    kind: 'error',
    statusCode: 400,
    message: 'Audio file might be corrupted or unsupported',
    type: 'invalid_request_error',
    code: 'invalid_value',
  }),
  malformedJson: (): TranscriptionLoopbackReply => ({ kind: 'raw', statusCode: 200, body: '{"text": "cut off' }),
  htmlPage: (): TranscriptionLoopbackReply => ({
    kind: 'raw',
    statusCode: 200,
    body: '<html><body>502 Bad Gateway</body></html>',
    contentType: 'text/html',
  }),
  withoutText: (): TranscriptionLoopbackReply => ({ kind: 'raw', statusCode: 200, body: '{"segments": []}' }),
  slow: (delayMilliseconds: number, text = 'late'): TranscriptionLoopbackReply => ({
    kind: 'text',
    text,
    delayMilliseconds,
  }),
  hangUp: (): TranscriptionLoopbackReply => ({ kind: 'hang-up' }),
};

function errorBody(message: string, type: string, code: string | null): string {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

/**
 * Starts the server on 127.0.0.1 (see the file header).
 * @returns `{url, requests, received, close}`.
 * @throws the listen error.
 */
export async function startTranscriptionLoopbackServer(
  options: TranscriptionLoopbackOptions = {},
): Promise<TranscriptionLoopbackServer> {
  const responder = options.responder ?? ((request) => `clip of ${request.audio.durationSeconds.toFixed(2)} s`);
  const models = new Set(options.models ?? ['whisper-1']);
  const requests: TranscriptionLoopbackRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const state = { received: 0 };

  const send = (
    response: ServerResponse,
    statusCode: number,
    body: string,
    headers: Record<string, string> = {},
  ): void => {
    if (response.destroyed || response.writableEnded) return;
    response.writeHead(statusCode, { 'content-type': 'application/json', ...headers });
    response.end(body);
  };

  const server = createServer((incoming, response) => {
    state.received += 1;
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      void (async () => {
        if (incoming.method !== 'POST' || !/^\/v1\/audio\/transcriptions(?:\?.*)?$/.test(incoming.url ?? '')) {
          send(
            response,
            404,
            errorBody(`Invalid URL (${incoming.method} ${incoming.url})`, 'invalid_request_error', null),
          );
          return;
        }
        if (options.apiKey !== undefined && incoming.headers.authorization !== `Bearer ${options.apiKey}`) {
          send(response, 401, errorBody('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));
          return;
        }
        let form: FormData;
        try {
          form = await new Request('http://loopback/', {
            method: 'POST',
            headers: { 'content-type': incoming.headers['content-type'] ?? '' },
            body: Buffer.concat(chunks),
          }).formData();
        } catch (error) {
          send(
            response,
            400,
            errorBody(`could not parse multipart form (${(error as Error).message})`, 'invalid_request_error', null),
          );
          return;
        }
        const file = form.get('file');
        const model = form.get('model');
        if (!(file instanceof Blob) || typeof model !== 'string') {
          send(
            response,
            400,
            errorBody(
              `${!(file instanceof Blob) ? 'file' : 'model'} is a required field`,
              'invalid_request_error',
              null,
            ),
          );
          return;
        }
        if (!models.has(model)) {
          send(
            response,
            404,
            errorBody(
              `The model \`${model}\` does not exist or you do not have access to it.`,
              'invalid_request_error',
              'model_not_found',
            ),
          );
          return;
        }
        const bytes = new Uint8Array(await file.arrayBuffer());
        let audio: TranscriptionLoopbackRequest['audio'];
        try {
          const decoded = decodeWav(bytes, 'upload');
          audio = {
            sampleRate: decoded.sampleRate,
            channels: decoded.channels.length,
            durationSeconds: (decoded.channels[0]?.length ?? 0) / decoded.sampleRate,
          };
        } catch (error) {
          send(
            response,
            400,
            errorBody(
              `Audio file might be corrupted or unsupported (${(error as Error).message})`,
              'invalid_request_error',
              'invalid_value',
            ),
          );
          return;
        }
        const field = (name: string): string | undefined => {
          const value = form.get(name);
          return typeof value === 'string' ? value : undefined;
        };
        const request: TranscriptionLoopbackRequest = {
          index: requests.length,
          model,
          language: field('language'),
          responseFormat: field('response_format'),
          temperature: field('temperature'),
          fileName: file instanceof File ? file.name : 'blob',
          file: bytes,
          audio,
          headers: incoming.headers,
        };
        requests.push(request);
        let scripted: TranscriptionLoopbackReply | string;
        try {
          scripted = await responder(request);
        } catch (error) {
          send(
            response,
            500,
            errorBody(`loopback responder failed: ${(error as Error).message}`, 'server_error', null),
          );
          return;
        }
        const reply: TranscriptionLoopbackReply =
          typeof scripted === 'string' ? { kind: 'text', text: scripted } : scripted;
        if (reply.kind === 'hang-up') {
          incoming.socket.destroy();
          return;
        }
        const answer = (): void => {
          if (reply.kind === 'error') {
            send(
              response,
              reply.statusCode,
              errorBody(reply.message, reply.type ?? 'error', reply.code ?? null),
              reply.retryAfterSeconds === undefined ? {} : { 'retry-after': String(reply.retryAfterSeconds) },
            );
          } else if (reply.kind === 'raw') {
            send(response, reply.statusCode, reply.body, { 'content-type': reply.contentType ?? 'application/json' });
          } else if (request.responseFormat === 'text') {
            send(response, 200, reply.text, { 'content-type': 'text/plain; charset=utf-8' });
          } else {
            send(response, 200, JSON.stringify({ text: reply.text }));
          }
        };
        if ((reply.delayMilliseconds ?? 0) <= 0) answer();
        else {
          const timer = setTimeout(() => {
            timers.delete(timer);
            answer();
          }, reply.delayMilliseconds);
          timers.add(timer);
        }
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    get received() {
      return state.received;
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
