/**
 * The machinery shared by the loopback model servers (./gemini-loopback-server.ts,
 * ./openai-loopback-server.ts): an HTTP server on 127.0.0.1 with a capacity limit (requests served at
 * once; extra ones wait in arrival order or are refused), a fixed service latency, JSON body reading,
 * and a close that ends open connections and pending timers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SYSTEM_CLOCK, type Clock } from '../../clock.ts';

/** What to do with a request that arrives while `capacity` requests are being served. */
export type OverCapacityPolicy = 'queue' | 'reject';

/** Options of {@link startLoopbackHttpServer}. */
export interface LoopbackHttpOptions {
  /** Requests served at once; default unlimited. */
  capacity?: number;
  /** `queue` (default): wait for a free slot, in arrival order; `reject`: answer via `reject` at once. */
  overCapacity?: OverCapacityPolicy;
  /** Port; default 0 (any free port). */
  port?: number;
  /** The service latency waits on it; default {@link SYSTEM_CLOCK} (which vitest's fake timers drive). */
  clock?: Clock;
}

/** A response the handler wants written. */
export interface LoopbackHttpReply {
  statusCode: number;
  headers?: Record<string, string>;
  body: string;
  /** Extra service time for this request, milliseconds (on top of the server latency). */
  delayMilliseconds?: number;
}

/** Counters of a loopback server. */
export interface LoopbackHttpStatistics {
  /** Requests received. */
  received: number;
  /** Requests refused because the server was at capacity (`overCapacity: reject`). */
  rejectedOverCapacity: number;
  /** Most requests served at once. */
  peakConcurrency: number;
  /** Requests whose client went away before the reply was written (e.g. a client timeout). */
  abandoned: number;
}

/** Handlers of {@link startLoopbackHttpServer}. */
export interface LoopbackHttpHandlers {
  /** Service time of every request, milliseconds, spent holding a capacity slot. */
  latencyMilliseconds: number;
  /** Produces the reply of a request (runs inside a capacity slot, before the latency). */
  handle(request: IncomingMessage, body: string): Promise<LoopbackHttpReply>;
  /** The reply to a request refused over capacity. */
  reject(): LoopbackHttpReply;
}

/** A running loopback HTTP server. */
export interface LoopbackHttpServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  statistics: LoopbackHttpStatistics;
  /** Stops listening, ends open connections and pending replies. */
  close(): Promise<void>;
}

/**
 * Starts an HTTP server on 127.0.0.1.
 *
 * @param handlers how to answer (see {@link LoopbackHttpHandlers}).
 * @param options capacity, over-capacity policy, port.
 * @returns the server's URL, counters and `close`.
 * @throws the listen error (e.g. EADDRINUSE for a fixed port).
 */
export async function startLoopbackHttpServer(
  handlers: LoopbackHttpHandlers,
  options: LoopbackHttpOptions = {},
): Promise<LoopbackHttpServer> {
  const capacity = options.capacity ?? Number.POSITIVE_INFINITY;
  const overCapacity = options.overCapacity ?? 'queue';
  const statistics: LoopbackHttpStatistics = { received: 0, rejectedOverCapacity: 0, peakConcurrency: 0, abandoned: 0 };
  const waiting: Array<() => void> = [];
  const clock = options.clock ?? SYSTEM_CLOCK;
  /** Aborted by `close`: ends the pending latency waits (their replies are not written). */
  const closing = new AbortController();
  let serving = 0;
  let closed = false;

  const wait = (milliseconds: number): Promise<void> =>
    milliseconds <= 0 || closed ? Promise.resolve() : clock.sleep(milliseconds, closing.signal).catch(() => undefined);

  const acquire = async (): Promise<void> => {
    if (serving < capacity) {
      serving += 1;
    } else {
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    statistics.peakConcurrency = Math.max(statistics.peakConcurrency, serving);
  };
  const release = (): void => {
    const next = waiting.shift();
    if (next !== undefined) next();
    else serving -= 1;
  };

  const write = (response: ServerResponse, reply: LoopbackHttpReply): void => {
    if (response.destroyed || response.writableEnded) {
      statistics.abandoned += 1;
      return;
    }
    response.writeHead(reply.statusCode, { 'content-type': 'application/json; charset=UTF-8', ...reply.headers });
    response.end(reply.body);
  };

  const server: Server = createServer((request, response) => {
    statistics.received += 1;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (serving >= capacity && overCapacity === 'reject') {
          statistics.rejectedOverCapacity += 1;
          write(response, handlers.reject());
          return;
        }
        await acquire();
        try {
          const reply = await handlers.handle(request, body);
          await wait(handlers.latencyMilliseconds + (reply.delayMilliseconds ?? 0));
          if (!closed) write(response, reply);
        } catch (error) {
          write(response, {
            statusCode: 500,
            body: JSON.stringify({
              error: { code: 500, message: `loopback handler failed: ${(error as Error).message}`, status: 'INTERNAL' },
            }),
          });
        } finally {
          release();
        }
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    statistics,
    close: async () => {
      closed = true;
      closing.abort();
      for (const resolve of waiting.splice(0)) resolve();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Rough token count of a text for `usage` fields: one token per four characters, at least one for
 * non-empty text.
 *
 * @param text the text.
 * @returns the count.
 */
export function approximateTokenCount(text: string): number {
  return text === '' ? 0 : Math.max(1, Math.ceil(text.length / 4));
}
