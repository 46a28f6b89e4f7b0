/**
 * `duplexsynth languages` and `duplexsynth doctor`: the packs listed from their files, the set-up's
 * tools found on PATH, a missing tool and an unreachable service reported with their fix, and the
 * exit code of `doctor` (a real child process).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../pipeline/storage/package-files.ts';
import { TEST_CLI } from '../testing/cli-command.ts';
import { formatDoctor, runDoctor } from './doctor.ts';
import { formatLanguages, listLanguages } from './languages.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-setup-commands-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A loopback port nothing listens on (a server's port, once the server is closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('duplexsynth languages', () => {
  it('lists every built-in pack with its voice, CosyVoice support and the source of its timing statistics', async () => {
    const listings = await listLanguages();
    expect(listings.map((language) => language.code)).toEqual(['de', 'en', 'es', 'fr', 'ja', 'ko', 'zh']);
    const ja = listings.find((language) => language.code === 'ja')!;
    expect(ja).toMatchObject({
      name: 'Japanese',
      offlineVoice: { engine: 'open-jtalk', voice: 'nitech-m001' },
      cosyVoice: { cosyvoice2: true, cosyvoice3: true },
      timing: { file: 'pipeline/timeline/defaults/ja.timing.json', prior: false },
      source: 'pipeline/model/language-packs/ja.yaml',
    });
    expect(ja.timing.corpus).toMatch(/CallFriend Japanese/);
    // a pack without measured statistics builds with the cross-language prior
    expect(listings.find((language) => language.code === 'es')!.timing).toMatchObject({
      file: 'pipeline/timeline/defaults/prior.timing.json',
      prior: true,
    });
    expect(formatLanguages(listings)).toMatch(/^zh {2}Mandarin Chinese\n {2}script: +Han/m);
  });

  it('adds a --language-pack file, replacing the built-in pack of its code', async () => {
    const file = path.join(scratch, 'de.yaml');
    const builtIn = await readFile(path.join(PACKAGE_ROOT, 'pipeline/model/language-packs/de.yaml'), 'utf8');
    await writeFile(file, builtIn.replace('name: German', 'name: Deutsch'));
    const de = (await listLanguages([file])).find((language) => language.code === 'de')!;
    expect(de.name).toBe('Deutsch');
    expect(de.source).toBe(file);
  });
});

describe('duplexsynth doctor', () => {
  it('finds the Debian tools on PATH and the DNSMOS models', async () => {
    const checks = await runDoctor();
    for (const tool of ['ffmpeg', 'sox', 'espeak-ng', 'open_jtalk'])
      expect(
        checks.find((check) => check.name === tool),
        tool,
      ).toMatchObject({ ok: true, group: 'tool' });
    expect(checks.find((check) => check.name === 'DNSMOS models')).toMatchObject({ ok: true });
    expect(checks.find((check) => check.name === 'open-jtalk voice nitech-m001 (ja)')).toMatchObject({ ok: true });
    expect(checks.find((check) => check.name === 'espeak-ng voice cmn (zh)')).toMatchObject({ ok: true });
  });

  it('a PATH without the tools: each reported missing with its fix, the voices too', async () => {
    const checks = await runDoctor({ environment: { ...process.env, PATH: path.join(scratch, 'empty') } });
    const ffmpeg = checks.find((check) => check.name === 'ffmpeg')!;
    expect(ffmpeg).toMatchObject({ ok: false, detail: expect.stringMatching(/^not on PATH/) });
    expect(ffmpeg.fix).toMatch(/npm run setup/);
    expect(checks.find((check) => check.name === 'espeak-ng voice de (de)')).toMatchObject({
      ok: false,
      detail: 'espeak-ng is not installed',
    });
    expect(formatDoctor(checks)).toMatch(/^MISSING ffmpeg: not on PATH .*\n {8}fix: npm run setup/m);
  });

  it('--config: an LLM endpoint and a speech server with nothing listening, a Redis that is not there; a live endpoint is reachable', async () => {
    const dead = await closedPort();
    const live: Server = createServer((_request, response) => response.writeHead(404).end());
    await new Promise<void>((resolve) => live.listen(0, '127.0.0.1', resolve));
    try {
      const config = path.join(scratch, 'services.yaml');
      await writeFile(
        config,
        [
          `corpus: { path: ${path.join(scratch, 'corpus.json')} }`,
          `output: { directory: ${path.join(scratch, 'out')} }`,
          'languages: [en]',
          'llm:',
          `  rewrite: { backend: openai-compatible, baseUrl: 'http://127.0.0.1:${dead}/v1', model: m }`,
          `  translate: { backend: openai-compatible, baseUrl: 'http://127.0.0.1:${(live.address() as AddressInfo).port}/v1', model: m }`,
          'tts:',
          `  en: { backend: cosyvoice2, service: { urls: ['http://127.0.0.1:${dead}'] } }`,
          `queue: redis://127.0.0.1:${dead}/0`,
          '',
        ].join('\n'),
      );
      const checks = (await runDoctor({ config, timeoutMilliseconds: 2000 })).filter(
        (check) => check.group === 'service',
      );
      expect(checks.map((check) => [check.name, check.ok])).toEqual([
        ['llm.rewrite openai-compatible', false],
        ['llm.translate openai-compatible', true],
        [`tts.en cosyvoice2 http://127.0.0.1:${dead}`, false],
        [`queue 127.0.0.1:${dead}`, false],
      ]);
      expect(checks[0]!.detail).toMatch(/unreachable: .*ECONNREFUSED/);
      expect(checks[0]!.fix).toBe(`start the server or fix llm.rewrite.baseUrl in ${config}`);
      expect(checks[1]!.detail).toMatch(/answered \(HTTP 404\)/);
      expect(checks[2]!.fix).toMatch(/tts\.en\.service\.urls/);
      expect(checks[3]!.fix).toMatch(/redis-server/);
    } finally {
      await new Promise((resolve) => live.close(resolve));
    }
  });

  it('the command: exit code 1 and --json naming what is missing, with a PATH without the tools', async () => {
    const result = await new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile(
        process.execPath,
        [TEST_CLI, 'doctor', '--json'],
        { cwd: PACKAGE_ROOT, env: { ...process.env, PATH: path.join(scratch, 'empty') } },
        (error, stdout) => resolve({ code: error ? Number((error as { code?: number }).code) : 0, stdout }),
      ),
    );
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { ok: boolean; checks: { name: string; ok: boolean; fix?: string }[] };
    expect(report.ok).toBe(false);
    expect(report.checks.find((check) => check.name === 'sox')).toMatchObject({ ok: false, fix: expect.any(String) });
  });
});
