/**
 * `duplexsynth report OUT --serve`: the build folder over HTTP on the loopback interface (sirv: range
 * requests, so the audio seeks; no directory listing). A page served this way may process its audio
 * with Web Audio (mute and solo per channel); a page opened from `file://` may not, because Chromium
 * and Firefox hand a `file://` page's audio graph only silence ("outputs zeroes due to CORS access
 * restrictions").
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import sirv from 'sirv';
import { REPORT_DIRECTORY } from './build-report.ts';

/** A running report server. */
export interface ReportServer {
  /** `http://127.0.0.1:{port}/report/index.html`. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the build folder `outputDirectory` (its `report/` and the `data/` the pages play).
 * @param options `port` (default 0: any free port), `host` (default 127.0.0.1: this machine only)
 * @throws Error when the port cannot be bound (e.g. EADDRINUSE)
 */
export async function serveBuildReport(
  outputDirectory: string,
  options: { port?: number; host?: string } = {},
): Promise<ReportServer> {
  const root = path.resolve(outputDirectory);
  const handler = sirv(root, { dev: true, dotfiles: false });
  const server: Server = createServer((request, response) =>
    handler(request, response, () => {
      response.statusCode = 404;
      response.end('not found');
    }),
  );
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/${REPORT_DIRECTORY}/index.html`,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
