/**
 * A loopback COMETKiwi HTTP scorer speaking the protocol ../cometkiwi.ts sends (`POST {model,
 * data: [{src, mt}]}` → `{scores: number[]}`), for tests of the real client. Every request body is
 * recorded; a reply can fail with a status code.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the server received. */
export interface CometKiwiLoopbackRequest {
  model: string;
  data: { src: string; mt: string }[];
}

/** How the server answers. */
export interface CometKiwiLoopbackOptions {
  /** The score of one pair. Default: a deterministic value from the translation's length. */
  score?: (item: { src: string; mt: string }) => number;
  /** A request answered with this HTTP status and body instead of scores (default: none fails). */
  fail?: (request: CometKiwiLoopbackRequest) => { status: number; body: string } | null;
}

/** A running loopback scorer. */
export interface CometKiwiLoopbackServer {
  /** The scorer's URL (`http://127.0.0.1:PORT/predict`). */
  url: string;
  readonly requests: CometKiwiLoopbackRequest[];
  close(): Promise<void>;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startCometKiwiLoopbackServer(
  options: CometKiwiLoopbackOptions = {},
): Promise<CometKiwiLoopbackServer> {
  const requests: CometKiwiLoopbackRequest[] = [];
  const score = options.score ?? ((item) => Math.round((0.5 + (item.mt.length % 40) / 100) * 10_000) / 10_000);
  const server = http.createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      let body: CometKiwiLoopbackRequest;
      try {
        body = JSON.parse(text) as CometKiwiLoopbackRequest;
      } catch {
        response.writeHead(400, { 'content-type': 'application/json' }).end('{"detail":"not JSON"}');
        return;
      }
      requests.push(body);
      const failure = options.fail?.(body) ?? null;
      if (failure) {
        response.writeHead(failure.status, { 'content-type': 'application/json' }).end(failure.body);
        return;
      }
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ scores: body.data.map(score) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/predict`;
  return {
    url,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
