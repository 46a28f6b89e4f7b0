import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { DnsmosScorer } from './dnsmos.ts';
import {
  DNSMOS_MODEL_SOURCES,
  DnsmosModelFileError,
  defaultDnsmosCacheDirectory,
  parseSha256Sums,
  resolveDnsmosModelDirectory,
  sha256OfFile,
  type DnsmosModelFileName,
} from './dnsmos-model-files.ts';
import { sharedDnsmosModelDirectory } from './testing/test-support.ts';

const SHARED = sharedDnsmosModelDirectory();
const temporaryDirectories: string[] = [];

async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-dnsmos-'));
  temporaryDirectories.push(directory);
  return directory;
}

/** A folder whose model files are symbolic links to the shared (read-only) ones. */
async function linkedModelDirectory(files: DnsmosModelFileName[], sums?: string): Promise<string> {
  const directory = await temporaryDirectory();
  for (const file of files) await symlink(path.join(SHARED, file), path.join(directory, file));
  if (sums !== undefined) await writeFile(path.join(directory, 'SHA256SUMS'), sums);
  return directory;
}

afterEach(async () => {
  while (temporaryDirectories.length > 0) await rm(temporaryDirectories.pop()!, { recursive: true, force: true });
});

describe('SHA256SUMS and model folder checks', () => {
  test('the shared model files match the pinned digests', async () => {
    const sums = parseSha256Sums(await readFile(path.join(SHARED, 'SHA256SUMS'), 'utf8'));
    for (const [file, source] of Object.entries(DNSMOS_MODEL_SOURCES)) {
      expect(sums.get(file)).toBe(source.sha256);
      expect(await sha256OfFile(path.join(SHARED, file))).toBe(source.sha256);
    }
  });

  test('parseSha256Sums reads text and binary markers, rejects malformed lines', () => {
    const digest = 'a'.repeat(64);
    expect(parseSha256Sums(`${digest}  one.onnx\n${digest.toUpperCase()} *two.onnx\n\n# comment\n`)).toEqual(
      new Map([
        ['one.onnx', digest],
        ['two.onnx', digest],
      ]),
    );
    expect(() => parseSha256Sums('nonsense line')).toThrow(/line 1/);
  });

  test('load names a missing model file', async () => {
    const directory = await linkedModelDirectory(['sig_bak_ovr.onnx']);
    const error = await DnsmosScorer.load(directory).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DnsmosModelFileError);
    expect((error as DnsmosModelFileError).file).toBe(path.join(directory, 'model_v8.onnx'));
    expect((error as Error).message).toMatch(/missing: .*model_v8\.onnx/);
  });

  test('load names a file that does not match SHA256SUMS', async () => {
    const sums = `${DNSMOS_MODEL_SOURCES['sig_bak_ovr.onnx'].sha256}  sig_bak_ovr.onnx\n${'0'.repeat(64)}  model_v8.onnx\n`;
    const directory = await linkedModelDirectory(['sig_bak_ovr.onnx', 'model_v8.onnx'], sums);
    await expect(DnsmosScorer.load(directory)).rejects.toThrow(
      /model_v8\.onnx does not match .*SHA256SUMS: expected sha256 0{64}, got 9246480c/,
    );
  });

  test('personalized load needs p_sig_bak_ovr.onnx', async () => {
    const directory = await linkedModelDirectory(['sig_bak_ovr.onnx', 'model_v8.onnx']);
    await expect(DnsmosScorer.load(directory, { personalized: true })).rejects.toThrow(/p_sig_bak_ovr\.onnx/);
  });

  test('default cache folder honours XDG_CACHE_HOME, else ~/.cache', () => {
    expect(defaultDnsmosCacheDirectory({ XDG_CACHE_HOME: '/x/cache' })).toBe('/x/cache/duplexsynth/dnsmos');
    expect(defaultDnsmosCacheDirectory({})).toBe(path.join(os.homedir(), '.cache', 'duplexsynth', 'dnsmos'));
  });
});

/**
 * A loopback stand-in for github.com: `GET /microsoft/DNS-Challenge/raw/master/DNSMOS/<upstream
 * path>` answers with a redirect (as GitHub's raw links do) to `/media/<upstream path>`, which serves
 * the shared model bytes. `corrupt` makes one file's bytes wrong; `missing` answers 404 for one file.
 */
interface FakeRepository {
  baseUrl: string;
  requests: string[];
  corrupt: string | null;
  missing: string | null;
}

describe('resolveDnsmosModelDirectory', () => {
  let server: Server;
  const repository: FakeRepository = { baseUrl: '', requests: [], corrupt: null, missing: null };
  const noNetwork: typeof fetch = async () => {
    throw new Error('network must not be used');
  };

  beforeAll(async () => {
    const upstreamToLocal = new Map(
      Object.entries(DNSMOS_MODEL_SOURCES).map(([file, source]) => [source.upstreamPath, file]),
    );
    server = createServer((request, response) => {
      const url = request.url ?? '';
      repository.requests.push(url);
      const prefix = '/microsoft/DNS-Challenge/raw/master/DNSMOS/';
      if (url.startsWith(prefix)) {
        response.writeHead(302, { location: `/media/${url.slice(prefix.length)}` }).end();
        return;
      }
      const upstreamPath = url.startsWith('/media/') ? url.slice('/media/'.length) : '';
      const file = upstreamToLocal.get(upstreamPath);
      if (file === undefined || upstreamPath === repository.missing) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
        return;
      }
      void readFile(path.join(SHARED, file)).then((bytes) => {
        if (upstreamPath === repository.corrupt) bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0xff;
        response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
        // Two writes, so the client sees more than one chunk.
        response.write(bytes.subarray(0, bytes.length >> 1));
        response.end(bytes.subarray(bytes.length >> 1));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    repository.baseUrl = `http://127.0.0.1:${port}/microsoft/DNS-Challenge/raw/master/DNSMOS`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  afterEach(() => {
    repository.requests = [];
    repository.corrupt = null;
    repository.missing = null;
  });

  test('1. a configured folder wins over the environment variable', async () => {
    const configured = await linkedModelDirectory(['sig_bak_ovr.onnx', 'model_v8.onnx']);
    const fromEnvironment = await linkedModelDirectory(['sig_bak_ovr.onnx', 'model_v8.onnx']);
    const resolved = await resolveDnsmosModelDirectory({
      modelDirectory: configured,
      environment: { DUPLEXSYNTH_DNSMOS_DIR: fromEnvironment },
      downloadOptions: { fetch: noNetwork },
    });
    expect(resolved).toBe(configured);
  });

  test('2. the environment variable is used next; an incomplete folder there is an error, not skipped', async () => {
    const resolved = await resolveDnsmosModelDirectory({
      environment: { DUPLEXSYNTH_DNSMOS_DIR: SHARED },
      downloadOptions: { fetch: noNetwork },
    });
    expect(resolved).toBe(SHARED);
    const incomplete = await linkedModelDirectory(['model_v8.onnx']);
    await expect(
      resolveDnsmosModelDirectory({
        environment: { DUPLEXSYNTH_DNSMOS_DIR: incomplete },
        cacheDirectory: SHARED,
        downloadOptions: { fetch: noNetwork },
      }),
    ).rejects.toThrow(/sig_bak_ovr\.onnx .*DUPLEXSYNTH_DNSMOS_DIR/);
  });

  test('3. a complete cache folder is used without any download', async () => {
    const cache = await linkedModelDirectory(['sig_bak_ovr.onnx', 'model_v8.onnx']);
    const resolved = await resolveDnsmosModelDirectory({
      cacheDirectory: cache,
      environment: {},
      downloadOptions: { fetch: noNetwork },
    });
    expect(resolved).toBe(cache);
  });

  test('4. downloads missing files into the cache (following the redirect), verified, with SHA256SUMS', async () => {
    const cache = path.join(await temporaryDirectory(), 'nested', 'dnsmos');
    const resolved = await resolveDnsmosModelDirectory({
      cacheDirectory: cache,
      personalized: true,
      environment: {},
      downloadOptions: { baseUrl: repository.baseUrl },
    });
    expect(resolved).toBe(cache);
    expect(repository.requests).toEqual([
      '/microsoft/DNS-Challenge/raw/master/DNSMOS/DNSMOS/sig_bak_ovr.onnx',
      '/media/DNSMOS/sig_bak_ovr.onnx',
      '/microsoft/DNS-Challenge/raw/master/DNSMOS/DNSMOS/model_v8.onnx',
      '/media/DNSMOS/model_v8.onnx',
      '/microsoft/DNS-Challenge/raw/master/DNSMOS/pDNSMOS/sig_bak_ovr.onnx',
      '/media/pDNSMOS/sig_bak_ovr.onnx',
    ]);
    expect((await readdir(cache)).sort()).toEqual([
      'SHA256SUMS',
      'model_v8.onnx',
      'p_sig_bak_ovr.onnx',
      'sig_bak_ovr.onnx',
    ]);
    for (const [file, source] of Object.entries(DNSMOS_MODEL_SOURCES))
      expect(await sha256OfFile(path.join(cache, file))).toBe(source.sha256);
    const scorer = await DnsmosScorer.load(cache, { personalized: true });
    await scorer.close();
    // A second resolution finds everything in the cache.
    repository.requests = [];
    await resolveDnsmosModelDirectory({
      cacheDirectory: cache,
      personalized: true,
      environment: {},
      downloadOptions: { baseUrl: repository.baseUrl },
    });
    expect(repository.requests).toEqual([]);
  });

  test('4. only the missing file is downloaded', async () => {
    const cache = await linkedModelDirectory(['sig_bak_ovr.onnx']);
    await resolveDnsmosModelDirectory({
      cacheDirectory: cache,
      environment: {},
      downloadOptions: { baseUrl: repository.baseUrl },
    });
    expect(repository.requests.filter((request) => request.startsWith('/media/'))).toEqual([
      '/media/DNSMOS/model_v8.onnx',
    ]);
  });

  test('a download with the wrong sha256 is rejected and leaves no file behind', async () => {
    repository.corrupt = 'DNSMOS/model_v8.onnx';
    const cache = await temporaryDirectory();
    const error = await resolveDnsmosModelDirectory({
      cacheDirectory: cache,
      environment: {},
      downloadOptions: { baseUrl: repository.baseUrl },
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DnsmosModelFileError);
    expect((error as Error).message).toMatch(
      /model_v8\.onnx does not match the expected sha256 for model_v8\.onnx: expected 9246480c\S+, got /,
    );
    expect((error as DnsmosModelFileError).file).toBe(`${repository.baseUrl}/DNSMOS/model_v8.onnx`);
    // sig_bak_ovr.onnx (downloaded first, correct) stays; no model_v8.onnx and no partial files.
    expect(await readdir(cache)).toEqual(['sig_bak_ovr.onnx']);
  });

  test('an HTTP error names the URL and status', async () => {
    repository.missing = 'DNSMOS/sig_bak_ovr.onnx';
    const cache = await temporaryDirectory();
    await expect(
      resolveDnsmosModelDirectory({
        cacheDirectory: cache,
        environment: {},
        downloadOptions: { baseUrl: repository.baseUrl },
      }),
    ).rejects.toThrow(/download of http:\/\/127\.0\.0\.1:\d+\/.*sig_bak_ovr\.onnx failed: HTTP 404/);
    expect(await readdir(cache)).toEqual([]);
  });

  test('with downloads disabled, an incomplete cache is an error naming the missing files', async () => {
    const cache = await linkedModelDirectory(['model_v8.onnx']);
    await expect(
      resolveDnsmosModelDirectory({ cacheDirectory: cache, environment: {}, download: false }),
    ).rejects.toThrow(/not found .* sig_bak_ovr\.onnx/);
  });
});
