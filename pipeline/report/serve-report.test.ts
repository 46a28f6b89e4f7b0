/** The report server's sandbox: only regular files under report/ and data/, after resolving links. */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveBuildReport, type ReportServer } from './serve-report.ts';

let scratch: string;
let server: ReportServer;
let origin: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-serve-'));
  const out = path.join(scratch, 'out');
  await mkdir(path.join(out, 'report'), { recursive: true });
  await mkdir(path.join(out, 'data', 'en'), { recursive: true });
  await writeFile(path.join(out, 'report', 'index.html'), '<html>report</html>');
  await writeFile(path.join(out, 'data', 'en', 'a.wav'), 'RIFF');
  await writeFile(path.join(out, 'summary.json'), '{}');
  await writeFile(path.join(scratch, 'secret.txt'), 'outside');
  await symlink('/etc/passwd', path.join(out, 'report', 'leak.txt'));
  await symlink(path.join(scratch, 'secret.txt'), path.join(out, 'data', 'en', 'secret.wav'));
  await symlink(scratch, path.join(out, 'report', 'up'));
  await symlink(path.join(out, 'report', 'index.html'), path.join(out, 'report', 'alias.html'));
  server = await serveBuildReport(out);
  origin = new URL(server.url).origin;
});
afterAll(async () => {
  await server.close();
  await rm(scratch, { recursive: true, force: true });
});

const get = (urlPath: string) => fetch(`${origin}${urlPath}`);

describe('serveBuildReport', () => {
  it('binds the loopback interface and serves the report and its audio with CSP and nosniff', async () => {
    expect(new URL(server.url).hostname).toBe('127.0.0.1');
    const page = await get('/report/index.html');
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('<html>report</html>');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await get('/data/en/a.wav')).status).toBe(200);
    // a link that stays inside the report folder is served
    expect((await get('/report/alias.html')).status).toBe(200);
  });

  it('answers 404 to symlinks that lead out, to .. and to files outside report/ and data/', async () => {
    for (const urlPath of [
      '/report/leak.txt',
      '/data/en/secret.wav',
      '/report/up/secret.txt',
      '/report/%2e%2e/%2e%2e/secret.txt',
      '/report/..%2f..%2fsecret.txt',
      '/summary.json',
      '/report/',
    ]) {
      const answer = await get(urlPath);
      expect([urlPath, answer.status]).toEqual([urlPath, 404]);
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await answer.text()).not.toMatch(/root:|outside/);
    }
  });
});
