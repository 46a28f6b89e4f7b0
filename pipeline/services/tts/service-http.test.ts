import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePcm16LittleEndian } from '../../audio/wav.ts';
import { parseRetryAfter, requestService, SpeechServiceError } from './service-http.ts';

let url = '';
let hanging = 0;
const server = createServer((request, response) => {
  if (request.url === '/busy') {
    response.writeHead(429, { 'retry-after': '2' });
    response.end('slow down');
  } else if (request.url === '/bad') {
    response.writeHead(400, { 'content-type': 'application/json' });
    response.end('{"detail":"nope"}');
  } else if (request.url === '/hang') {
    // headers and a first chunk, then nothing: only the client's timeout ends it
    hanging += 1;
    response.writeHead(200);
    response.write(new Uint8Array(10));
  } else if (request.url === '/form') {
    // what arrived: the framing headers and the form as the platform's multipart parser reads it
    const parts: Buffer[] = [];
    request.on('data', (chunk: Buffer) => parts.push(chunk));
    request.on('end', () => {
      void new Request('http://loopback/', {
        method: 'POST',
        headers: { 'content-type': request.headers['content-type']! },
        body: Buffer.concat(parts),
      })
        .formData()
        .then(async (form) => {
          const file = form.get('prompt_wav') as File;
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(
            JSON.stringify({
              contentLength: request.headers['content-length'] ?? null,
              transferEncoding: request.headers['transfer-encoding'] ?? null,
              received: Buffer.concat(parts).length,
              text: form.get('tts_text'),
              file: { name: file.name, bytes: Array.from(new Uint8Array(await file.arrayBuffer())) },
            }),
          );
        });
    });
  } else if (request.url === '/short' || request.url === '/chunked-cut') {
    // a body cut short by a clean close (FIN, no reset): fewer bytes than the Content-Length
    // declares, or a chunked body without its last chunk
    response.writeHead(200, request.url === '/short' ? { 'content-length': '1000' } : {});
    response.write(new Uint8Array(500));
    setTimeout(() => response.socket?.end(), 20);
  } else if (request.url === '/broken') {
    response.writeHead(200);
    response.write(new Uint8Array(1000));
    setTimeout(() => response.socket?.destroy(), 20);
  } else {
    response.writeHead(200);
    response.write(new Uint8Array([1, 0, 2]));
    setTimeout(() => response.end(new Uint8Array([0])), 10);
  }
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Timeout of the requests that are meant to be answered: far above any stall of a machine whose cores are shared. */
const ANSWER_TIMEOUT = 60_000;
const context = (route: string) => ({ engine: 'test', text: 'hello', endpoint: url, route });
const failure = (promise: Promise<unknown>): Promise<SpeechServiceError> =>
  promise.then(
    () => Promise.reject(new Error('expected a failure')),
    (error: unknown) => error as SpeechServiceError,
  );

describe('requestService', () => {
  it('reads a chunked body to its end', async () => {
    const response = await requestService(
      context('/ok'),
      { method: 'POST', body: 'x' },
      { timeoutMilliseconds: ANSWER_TIMEOUT },
    );
    expect(Array.from(response.body)).toEqual([1, 0, 2, 0]);
    expect(Array.from(decodePcm16LittleEndian(response.body), (sample) => sample * 32768)).toEqual([1, 2]);
  });

  it('sends a form as one multipart body with its Content-Length (not chunked) that a multipart parser reads back', async () => {
    const form = new FormData();
    form.append('tts_text', 'hello, “world”');
    form.append(
      'prompt_wav',
      new Blob([new Uint8Array([82, 73, 70, 70, 0, 255])], { type: 'audio/wav' }),
      'prompt.wav',
    );
    const response = await requestService(
      context('/form'),
      { method: 'POST', body: form },
      { timeoutMilliseconds: ANSWER_TIMEOUT },
    );
    expect(response.headers.get('content-type')).toBe('application/json');
    const echoed = JSON.parse(Buffer.from(response.body).toString('utf8')) as {
      contentLength: string;
      transferEncoding: string | null;
      received: number;
      text: string;
      file: { name: string; bytes: number[] };
    };
    expect(echoed.transferEncoding).toBeNull();
    expect(Number(echoed.contentLength)).toBe(echoed.received);
    expect(echoed.text).toBe('hello, “world”');
    expect(echoed.file).toEqual({ name: 'prompt.wav', bytes: [82, 73, 70, 70, 0, 255] });
  });

  it('sends a request once more on a new connection when the kept-alive one it went out on is reset before any answer (and only then)', async () => {
    // a server that closes a connection when a second request arrives on it: as uvicorn does when its
    // idle timeout and the next request cross
    const connections: number[] = [];
    const closing = createServer((request, response) => {
      const socket = request.socket as typeof request.socket & { served?: number };
      socket.served = (socket.served ?? 0) + 1;
      if (socket.served === 1) connections.push(0);
      connections[connections.length - 1]! += 1;
      if (socket.served > 1 || request.url === '/always-reset') {
        socket.destroy();
        return;
      }
      response.end('ok');
    });
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(closing.address() as AddressInfo).port}`;
    try {
      const first = await requestService(
        { ...context('/a'), endpoint },
        { method: 'POST', body: 'x' },
        { timeoutMilliseconds: ANSWER_TIMEOUT },
      );
      const second = await requestService(
        { ...context('/b'), endpoint },
        { method: 'POST', body: 'y' },
        { timeoutMilliseconds: ANSWER_TIMEOUT },
      );
      expect([Buffer.from(first.body).toString(), Buffer.from(second.body).toString()]).toEqual(['ok', 'ok']);
      // the second went out on the first's connection, was reset there, and was sent again on a new one
      expect(connections).toEqual([2, 1]);
      // a reset on a new connection is not sent again
      const reset = await failure(
        requestService(
          { ...context('/always-reset'), endpoint },
          { method: 'POST' },
          { timeoutMilliseconds: ANSWER_TIMEOUT },
        ),
      );
      expect(reset).toMatchObject({ failure: 'service-unreachable', isRetryable: true });
    } finally {
      closing.closeAllConnections();
      await new Promise((resolve) => closing.close(resolve));
    }
  });

  it('speaks TLS to an https endpoint whatever the case of its scheme', async () => {
    // the loopback server speaks plain HTTP: a TLS client fails its handshake (not "protocol not supported")
    for (const scheme of ['https', 'HTTPS', 'Https']) {
      const error = await failure(
        requestService(
          { ...context('/ok'), endpoint: url.replace('http', scheme) },
          { method: 'POST' },
          { timeoutMilliseconds: ANSWER_TIMEOUT },
        ),
      );
      expect(error).toMatchObject({ failure: 'service-unreachable' });
      expect(error.message).not.toMatch(/ERR_INVALID_PROTOCOL|not supported/);
      expect(error.message).toMatch(/EPROTO|SSL|TLS|wrong version/i);
    }
  });

  it('types every failure and says whether to retry', async () => {
    const busy = await failure(
      requestService(context('/busy'), { method: 'POST' }, { timeoutMilliseconds: ANSWER_TIMEOUT }),
    );
    expect(busy).toMatchObject({
      failure: 'service-error',
      statusCode: 429,
      isRetryable: true,
      retryAfterMilliseconds: 2_000,
      responseExcerpt: 'slow down',
    });
    const bad = await failure(
      requestService(context('/bad'), { method: 'POST' }, { timeoutMilliseconds: ANSWER_TIMEOUT }),
    );
    expect(bad).toMatchObject({ failure: 'service-error', statusCode: 400, isRetryable: false });
    expect(bad.message).toContain('{"detail":"nope"}');
    const broken = await failure(
      requestService(context('/broken'), { method: 'POST' }, { timeoutMilliseconds: ANSWER_TIMEOUT }),
    );
    expect(broken).toMatchObject({ failure: 'truncated-audio', isRetryable: true });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    for (const route of ['/short', '/chunked-cut']) {
      const cut = await failure(
        requestService(context(route), { method: 'POST' }, { timeoutMilliseconds: ANSWER_TIMEOUT }),
      );
      expect(cut).toMatchObject({ failure: 'truncated-audio', isRetryable: true });
      expect(cut.message).toContain('after 500 bytes');
    }
    const refused = await failure(
      requestService(
        { ...context('/ok'), endpoint: `http://127.0.0.1:${closedPort}` },
        { method: 'POST' },
        { timeoutMilliseconds: ANSWER_TIMEOUT },
      ),
    );
    expect(refused).toMatchObject({ failure: 'service-unreachable', isRetryable: true });
    expect(refused.message).toMatch(/ECONNREFUSED/);
  });

  it('waits the timeout on its clock: the timeout fires when that sleep ends, and the sleep is ended with the exchange', async () => {
    const sleeps: number[] = [];
    const ended: number[] = [];
    let fire = (): void => undefined;
    const clock = {
      now: () => 0,
      sleep: (milliseconds: number, signal?: AbortSignal) =>
        new Promise<void>((resolve, reject) => {
          sleeps.push(milliseconds);
          fire = resolve;
          signal?.addEventListener('abort', () => {
            ended.push(milliseconds);
            reject(signal.reason);
          });
        }),
    };
    const answered = await requestService(
      context('/ok'),
      { method: 'POST', body: 'x' },
      { timeoutMilliseconds: 45_000, clock },
    );
    expect(Array.from(answered.body)).toEqual([1, 0, 2, 0]);
    expect([sleeps, ended]).toEqual([[45_000], [45_000]]);

    const timedOut = failure(
      requestService(context('/hang'), { method: 'POST' }, { timeoutMilliseconds: 60_000, clock }),
    );
    while (hanging === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(sleeps).toEqual([45_000, 60_000]);
    fire();
    const error = await timedOut;
    expect(error).toMatchObject({ failure: 'timeout', isRetryable: true });
    expect(error.message).toMatch(/no complete answer within 60\.0 s/);
  });

  it('rethrows the caller abort reason', async () => {
    const controller = new AbortController();
    const pending = requestService(
      context('/ok'),
      { method: 'POST' },
      { timeoutMilliseconds: ANSWER_TIMEOUT, signal: controller.signal },
    );
    controller.abort(new Error('caller gave up'));
    await expect(pending).rejects.toThrow('caller gave up');
  });
});

describe('decoding', () => {
  it('reads Retry-After seconds and dates', () => {
    expect(parseRetryAfter('120')).toBe(120_000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});
