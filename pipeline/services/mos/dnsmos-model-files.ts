/**
 * Where the DNSMOS ONNX model files come from: a configured folder, the `DUPLEXSYNTH_DNSMOS_DIR`
 * environment variable, a per-user cache folder, or a download from Microsoft's DNS-Challenge
 * repository (verified by SHA-256 and moved into place atomically).
 *
 * File names: the project uses the names of `shared/models/dnsmos/` — `sig_bak_ovr.onnx` (P.835),
 * `model_v8.onnx` (P.808) and `p_sig_bak_ovr.onnx` (personalized P.835). Upstream the personalized
 * model is `DNSMOS/pDNSMOS/sig_bak_ovr.onnx`; the download maps it to `p_sig_bak_ovr.onnx`.
 * The expected SHA-256 digests are those of `shared/models/dnsmos/SHA256SUMS`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The three DNSMOS model files, by role. */
export const DNSMOS_MODEL_FILE_NAMES = {
  /** P.835 model: input `input_1` float32 [N, 144160] (9.01 s at 16 kHz), output [N, 3] = raw SIG, BAK, OVRL. */
  primary: 'sig_bak_ovr.onnx',
  /** P.808 model: input `input_1` float32 [N, 900, 120] (log-mel frames), output [N, 1] = P.808 MOS. */
  p808: 'model_v8.onnx',
  /** Personalized P.835 model (pDNSMOS): same input and output as `primary`. */
  personalized: 'p_sig_bak_ovr.onnx',
} as const;

export type DnsmosModelFileName = (typeof DNSMOS_MODEL_FILE_NAMES)[keyof typeof DNSMOS_MODEL_FILE_NAMES];

/**
 * Default download base: the DNSMOS folder of github.com/microsoft/DNS-Challenge, branch `master`.
 * A changed upstream file is caught by the SHA-256 check, not silently used.
 */
export const DNSMOS_OFFICIAL_BASE_URL = 'https://github.com/microsoft/DNS-Challenge/raw/master/DNSMOS';

/** Per file: its path below {@link DNSMOS_OFFICIAL_BASE_URL} and its expected SHA-256 (hex). */
export const DNSMOS_MODEL_SOURCES: Readonly<Record<DnsmosModelFileName, { upstreamPath: string; sha256: string }>> = {
  'sig_bak_ovr.onnx': {
    upstreamPath: 'DNSMOS/sig_bak_ovr.onnx',
    sha256: '269fbebdb513aa23cddfbb593542ecc540284a91849ac50516870e1ac78f6edd',
  },
  'model_v8.onnx': {
    upstreamPath: 'DNSMOS/model_v8.onnx',
    sha256: '9246480c58567bc6affd4200938e77eef49468c8bc7ed3776d109c07456f6e91',
  },
  'p_sig_bak_ovr.onnx': {
    upstreamPath: 'pDNSMOS/sig_bak_ovr.onnx',
    sha256: '9e3a197449ca2177f0997afec3bd6b890117ce2f17b89d6eea7fa0d47272c81c',
  },
};

/** Name of the checksum list in a model folder (`sha256sum` format: `<hex>  <file name>`). */
export const SHA256SUMS_FILE_NAME = 'SHA256SUMS';

/** Environment variable naming a folder that holds the DNSMOS model files. */
export const DNSMOS_DIRECTORY_ENVIRONMENT_VARIABLE = 'DUPLEXSYNTH_DNSMOS_DIR';

/** A model file is missing, unreadable, fails its checksum, or could not be downloaded. */
export class DnsmosModelFileError extends Error {
  /** Absolute path (or URL, for a failed download) of the offending file. */
  readonly file: string;
  constructor(message: string, file: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DnsmosModelFileError';
    this.file = file;
  }
}

/** The model files a scorer needs: primary and P.808, plus the personalized model when asked. */
export function requiredDnsmosModelFiles(personalized = false): DnsmosModelFileName[] {
  const files: DnsmosModelFileName[] = [DNSMOS_MODEL_FILE_NAMES.primary, DNSMOS_MODEL_FILE_NAMES.p808];
  if (personalized) files.push(DNSMOS_MODEL_FILE_NAMES.personalized);
  return files;
}

/** SHA-256 of a file's bytes, lowercase hex. Streams the file. @throws the fs error when unreadable. */
export async function sha256OfFile(filePath: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(filePath)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Parses a `sha256sum`-style list: lines `<64 hex digits><space><space or *><file name>`; blank
 * lines and lines starting with `#` are ignored. Returns file name -> lowercase hex digest.
 * @throws Error naming the line number for a malformed line.
 */
export function parseSha256Sums(text: string): Map<string, string> {
  const result = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  lines.forEach((line, index) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const match = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(trimmed);
    if (!match)
      throw new Error(`${SHA256SUMS_FILE_NAME} line ${index + 1} is not "<sha256>  <file>": ${JSON.stringify(line)}`);
    result.set(match[2]!, match[1]!.toLowerCase());
  });
  return result;
}

async function fileExists(filePath: string): Promise<boolean> {
  try {
    await access(filePath);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks that `directory` holds every file of `files`, and, when the folder has a `SHA256SUMS`
 * list, that each of those files matches its listed digest (a file the list does not mention is
 * accepted). Without a `SHA256SUMS` list only presence is checked.
 * @throws DnsmosModelFileError naming the first missing or mismatching file (with expected and
 *   actual digests), or a malformed `SHA256SUMS`.
 */
export async function verifyDnsmosModelDirectory(directory: string, files: readonly string[]): Promise<void> {
  const absolute = path.resolve(directory);
  for (const file of files) {
    const filePath = path.join(absolute, file);
    if (!(await fileExists(filePath))) {
      throw new DnsmosModelFileError(`DNSMOS model file missing: ${filePath}`, filePath);
    }
  }
  const sumsPath = path.join(absolute, SHA256SUMS_FILE_NAME);
  if (!(await fileExists(sumsPath))) return;
  let sums: Map<string, string>;
  try {
    sums = parseSha256Sums(await readFile(sumsPath, 'utf8'));
  } catch (error) {
    throw new DnsmosModelFileError(`cannot read ${sumsPath}: ${(error as Error).message}`, sumsPath, { cause: error });
  }
  for (const file of files) {
    const expected = sums.get(file);
    if (expected === undefined) continue;
    const filePath = path.join(absolute, file);
    const actual = await sha256OfFile(filePath);
    if (actual !== expected) {
      throw new DnsmosModelFileError(
        `DNSMOS model file ${filePath} does not match ${sumsPath}: expected sha256 ${expected}, got ${actual}`,
        filePath,
      );
    }
  }
}

/**
 * The per-user cache folder for downloaded models: `$XDG_CACHE_HOME/duplexsynth/dnsmos` when
 * `XDG_CACHE_HOME` is set, else `~/.cache/duplexsynth/dnsmos`.
 */
export function defaultDnsmosCacheDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  const base = environment.XDG_CACHE_HOME ? environment.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'duplexsynth', 'dnsmos');
}

/** Options of {@link downloadDnsmosModels}. */
export interface DnsmosDownloadOptions {
  /** Base URL; file URLs are `${baseUrl}/${upstreamPath}`. Default {@link DNSMOS_OFFICIAL_BASE_URL}. */
  baseUrl?: string;
  /** Abort one file's download after this many milliseconds. Default 600000 (10 minutes). */
  timeoutMilliseconds?: number;
  /** The fetch implementation (tests may pass their own). Default: the global `fetch`. */
  fetch?: typeof fetch;
}

/**
 * Downloads `files` into `directory` (created if needed). Each file is streamed to a temporary file
 * in the same folder while its SHA-256 is computed; when the digest equals
 * {@link DNSMOS_MODEL_SOURCES}'s, the temporary file is flushed to disk and renamed over the final
 * name (atomic on one file system), otherwise it is deleted. Afterwards `SHA256SUMS` in the folder is
 * rewritten (atomically) to list every known model file present.
 * @throws DnsmosModelFileError naming the URL on an HTTP error status, a network failure or timeout,
 *   or a digest mismatch (with expected and actual digests). Files already moved into place stay.
 */
export async function downloadDnsmosModels(
  directory: string,
  files: readonly DnsmosModelFileName[],
  options: DnsmosDownloadOptions = {},
): Promise<void> {
  const baseUrl = (options.baseUrl ?? DNSMOS_OFFICIAL_BASE_URL).replace(/\/+$/, '');
  const fetchImplementation = options.fetch ?? fetch;
  const timeout = options.timeoutMilliseconds ?? 600_000;
  const absolute = path.resolve(directory);
  await mkdir(absolute, { recursive: true });
  for (const file of files) {
    const source = DNSMOS_MODEL_SOURCES[file];
    const url = `${baseUrl}/${source.upstreamPath}`;
    const finalPath = path.join(absolute, file);
    const temporaryPath = path.join(absolute, `.${file}.partial-${process.pid}-${randomBytes(6).toString('hex')}`);
    const handle = await open(temporaryPath, 'w');
    let closed = false;
    try {
      let response: Response;
      try {
        response = await fetchImplementation(url, { signal: AbortSignal.timeout(timeout), redirect: 'follow' });
      } catch (error) {
        throw new DnsmosModelFileError(`download of ${url} failed: ${(error as Error).message}`, url, { cause: error });
      }
      if (!response.ok || response.body === null) {
        throw new DnsmosModelFileError(
          `download of ${url} failed: HTTP ${response.status} ${response.statusText}`,
          url,
        );
      }
      const hash = createHash('sha256');
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          hash.update(chunk);
          await handle.write(chunk);
        }
      } catch (error) {
        throw new DnsmosModelFileError(`download of ${url} failed: ${(error as Error).message}`, url, { cause: error });
      }
      const actual = hash.digest('hex');
      if (actual !== source.sha256) {
        throw new DnsmosModelFileError(
          `download of ${url} does not match the expected sha256 for ${file}: expected ${source.sha256}, got ${actual}`,
          url,
        );
      }
      await handle.sync();
      await handle.close();
      closed = true;
      await rename(temporaryPath, finalPath);
    } finally {
      if (!closed) await handle.close().catch(() => undefined);
      await rm(temporaryPath, { force: true });
    }
  }
  await writeSha256Sums(absolute);
}

/** Rewrites `SHA256SUMS` in `directory` for the known model files present there (temp file + rename). */
async function writeSha256Sums(directory: string): Promise<void> {
  const lines: string[] = [];
  for (const [file, source] of Object.entries(DNSMOS_MODEL_SOURCES)) {
    if (await fileExists(path.join(directory, file))) lines.push(`${source.sha256}  ${file}`);
  }
  const sumsPath = path.join(directory, SHA256SUMS_FILE_NAME);
  const temporaryPath = `${sumsPath}.partial-${process.pid}-${randomBytes(6).toString('hex')}`;
  const handle = await open(temporaryPath, 'w');
  try {
    await handle.writeFile(lines.join('\n') + '\n', 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporaryPath, sumsPath);
}

/** Where to look for the model files; every field is optional. */
export interface DnsmosModelLocationConfig {
  /** A folder holding the files (highest priority). When set, it must be complete. */
  modelDirectory?: string;
  /** Need `p_sig_bak_ovr.onnx` too. Default false. */
  personalized?: boolean;
  /** Cache folder. Default {@link defaultDnsmosCacheDirectory}. */
  cacheDirectory?: string;
  /** Download into the cache folder when it lacks files. Default true. */
  download?: boolean;
  /** Download settings (base URL, timeout, fetch). */
  downloadOptions?: DnsmosDownloadOptions;
  /** Environment to read `DUPLEXSYNTH_DNSMOS_DIR` / `XDG_CACHE_HOME` from. Default `process.env`. */
  environment?: NodeJS.ProcessEnv;
}

/**
 * Finds the folder of the DNSMOS model files, in this order:
 * 1. `config.modelDirectory`;
 * 2. the `DUPLEXSYNTH_DNSMOS_DIR` environment variable;
 * 3. the cache folder (`config.cacheDirectory`, default `~/.cache/duplexsynth/dnsmos`), used when
 *    every needed file is there with the expected digest of {@link DNSMOS_MODEL_SOURCES};
 * 4. a download of the missing or mismatching files into the cache folder
 *    ({@link downloadDnsmosModels}), unless `config.download` is false.
 * A folder named by 1 or 2 is not skipped when incomplete: that is reported as an error.
 * Returns the absolute folder path.
 * @throws DnsmosModelFileError when a configured folder is incomplete or fails `SHA256SUMS`, or when
 *   the cache lacks files and downloading is disabled or fails.
 */
export async function resolveDnsmosModelDirectory(config: DnsmosModelLocationConfig = {}): Promise<string> {
  const environment = config.environment ?? process.env;
  const files = requiredDnsmosModelFiles(config.personalized ?? false);
  const explicit: Array<[string, string | undefined]> = [
    ['config modelDirectory', config.modelDirectory],
    [
      `environment variable ${DNSMOS_DIRECTORY_ENVIRONMENT_VARIABLE}`,
      environment[DNSMOS_DIRECTORY_ENVIRONMENT_VARIABLE],
    ],
  ];
  for (const [origin, directory] of explicit) {
    if (directory === undefined || directory === '') continue;
    try {
      await verifyDnsmosModelDirectory(directory, files);
    } catch (error) {
      if (error instanceof DnsmosModelFileError) {
        throw new DnsmosModelFileError(`${error.message} (folder from ${origin})`, error.file, { cause: error });
      }
      throw error;
    }
    return path.resolve(directory);
  }
  const cacheDirectory = path.resolve(config.cacheDirectory ?? defaultDnsmosCacheDirectory(environment));
  const missing: DnsmosModelFileName[] = [];
  for (const file of files) {
    const filePath = path.join(cacheDirectory, file);
    if (!(await fileExists(filePath)) || (await sha256OfFile(filePath)) !== DNSMOS_MODEL_SOURCES[file].sha256)
      missing.push(file);
  }
  if (missing.length === 0) return cacheDirectory;
  if (config.download === false) {
    const firstMissing = path.join(cacheDirectory, missing[0]!);
    throw new DnsmosModelFileError(
      `DNSMOS model files not found (or not matching their sha256) in ${cacheDirectory}: ${missing.join(', ')}; ` +
        `set ${DNSMOS_DIRECTORY_ENVIRONMENT_VARIABLE} or allow the download`,
      firstMissing,
    );
  }
  await downloadDnsmosModels(cacheDirectory, missing, config.downloadOptions);
  return cacheDirectory;
}
