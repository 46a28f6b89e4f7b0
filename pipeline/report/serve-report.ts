/**
 * `duplexsynth report OUT --serve`: the build folder over HTTP on the loopback interface (sirv: range
 * requests, so the audio seeks; no directory listing). A page served this way may process its audio
 * with Web Audio (mute and solo per channel); a page opened from `file://` may not, because Chromium
 * and Firefox hand a `file://` page's audio graph only silence ("outputs zeroes due to CORS access
 * restrictions").
 *
 * Only regular files under the build's `report/` and `data/` folders are served, after resolving
 * links: a symlink (or `..`) that leads outside them answers 404, so a web page the user visits cannot
 * read other files of the machine through the server. Every answer carries a Content-Security-Policy
 * that allows the page's own scripts, styles, images and audio only, and `X-Content-Type-Options:
 * nosniff`.
 */
import { realpathSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import sirv from 'sirv';
import { isInsideFolder } from '../storage/contained-path.ts';
import { REPORT_DIRECTORY } from './build-report.ts';

/** A running report server. */
export interface ReportServer {
  /** `http://127.0.0.1:{port}/report/index.html`. */
  url: string;
  close(): Promise<void>;
}

/** The folders of the build folder the report's pages load from (pages, then the audio they play). */
const SERVED_FOLDERS = [REPORT_DIRECTORY, 'data'];

/**
 * The report pages load only their own files; inline scripts and styles are theirs (written by
 * pipeline/report/html.ts), so `'unsafe-inline'` stays, but nothing from another origin is fetched.
 */
export const REPORT_CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

/**
 * Whether the URL path `requestPath` names a regular file inside one of the served folders of `root`
 * after resolving links. `root` is already a real path.
 */
export function servedFile(root: string, requestPath: string): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(requestPath.split('?')[0]!.split('#')[0]!);
  } catch {
    return false;
  }
  if (decoded.includes('\0')) return false;
  const candidate = path.resolve(root, `.${path.posix.normalize(`/${decoded}`)}`);
  let real: string;
  try {
    real = realpathSync(candidate);
    if (!statSync(real).isFile()) return false;
  } catch {
    return false;
  }
  return SERVED_FOLDERS.some((folder) => {
    let base: string;
    try {
      base = realpathSync(path.join(root, folder));
    } catch {
      return false;
    }
    return isInsideFolder(base, real);
  });
}

function notFound(response: ServerResponse): void {
  response.statusCode = 404;
  response.setHeader('Content-Type', 'text/plain; charset=utf-8');
  response.end('not found');
}

/**
 * Serves the build folder `outputDirectory` (its `report/` and the `data/` the pages play).
 * @param options `port` (default 0: any free port), `host` (default 127.0.0.1: this machine only)
 * @throws Error when the port cannot be bound (e.g. EADDRINUSE) or the folder does not exist
 */
export async function serveBuildReport(
  outputDirectory: string,
  options: { port?: number; host?: string } = {},
): Promise<ReportServer> {
  const root = realpathSync(path.resolve(outputDirectory));
  const handler = sirv(root, { dev: true, dotfiles: false });
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    response.setHeader('Content-Security-Policy', REPORT_CONTENT_SECURITY_POLICY);
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.setHeader('Referrer-Policy', 'no-referrer');
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !servedFile(root, request.url ?? '/')) {
      notFound(response);
      return;
    }
    handler(request, response, () => notFound(response));
  });
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
