/**
 * What the coordinator of a queued build (./queued-build.ts) and its workers (./queue-worker.ts)
 * share: the Redis URL, the BullMQ queue names and job shapes, the build's stamp (the config's
 * content hash, the project version, the cache marker) and its record in Redis.
 *
 * Layout in Redis (one build per Redis database at a time; use `/1`, `/2`… for more):
 * - BullMQ queue `duplexsynth-datasets`: one parent job per language dataset, never processed: it
 *   leaves `waiting-children` when all of its children are done;
 * - BullMQ queue `duplexsynth-dialogues`: the children, one `score` job per dialogue whose child is
 *   the dialogue's `dialogue` job (text, speech, placement, events, render, the barge-in variant);
 *   without quality scoring the `dialogue` jobs are the dataset's children directly;
 * - key `duplexsynth:build`: the stamp of the build the queue holds (JSON), which workers check
 *   before they take a job.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { RedisOptions } from 'bullmq';
import { Redis, type RedisOptions as IoRedisOptions } from 'ioredis';
import type { BuildConfig } from '../config.ts';
import { BuildInputError } from '../model/build-errors.ts';
import type { Language } from '../model/types.ts';
import { contentHash, bytesHash } from '../storage/content-cache.ts';
import { PACKAGE_ROOT } from '../storage/package-files.ts';
import { writeAtomic } from '../storage/write-atomic.ts';

/** Queue of the per-language dataset parents. */
export const DATASETS_QUEUE = 'duplexsynth-datasets';
/** Queue of the per-dialogue jobs the workers take. */
export const DIALOGUES_QUEUE = 'duplexsynth-dialogues';
/** Redis key of the current build's stamp. */
export const BUILD_KEY = 'duplexsynth:build';
/** Redis set of the names of the workers of the current build; each keeps its counts in the hash `{WORKERS_KEY}:{name}` (started, done, failed, gaveUp). */
export const WORKERS_KEY = 'duplexsynth:workers';
/** Attempts of a dialogue or scoring job before it counts as failed (then the coordinator quarantines it as a local build does). */
export const JOB_ATTEMPTS = 3;

/** What every job carries and every worker checks: the same config, project version and cache. */
export interface BuildStamp {
  /** {@link buildConfigHash} of the coordinator's config. */
  configHash: string;
  /** The project version (package.json `version`). */
  version: string;
  /** Random token the coordinator wrote into the cache's marker file ({@link markerFile}). */
  markerToken: string;
  /** The build's name (the marker file's name). */
  name: string;
}

/** Data of a `dialogue` or `score` job. */
export interface DialogueJobData {
  stamp: BuildStamp;
  language: Language;
  /** The dialogue (conversation) id. */
  id: string;
}

/** What a `dialogue` job returns. */
export interface DialogueJobResult {
  /** sha256 of the base dataset's WAV as rendered. */
  audioSha256: string;
  /** Seconds of audio rendered (base and barge-in variant). */
  audioSeconds: number;
}

/**
 * The connection options of a `--queue` URL: `redis://[user:password@]HOST[:PORT][/DB]` or `rediss://…` (TLS).
 * @throws BuildInputError naming the URL when it is not a Redis URL
 */
export function parseQueueUrl(url: string): RedisOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BuildInputError(`--queue ${url}: not a URL; give a Redis URL, redis://HOST:PORT/DB`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new BuildInputError(
      `--queue ${url}: not a Redis URL (${parsed.protocol.replace(/:$/, '')}); give redis://HOST:PORT/DB or rediss://…`,
    );
  }
  const database = parsed.pathname.replace(/^\//, '');
  if (database !== '' && !/^\d+$/.test(database))
    throw new BuildInputError(`--queue ${url}: the database "${database}" is not a number`);
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 6379,
    db: database === '' ? 0 : Number(database),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    // BullMQ's workers block on Redis; they retry commands until it is back (never give up)
    maxRetriesPerRequest: null,
    // reconnect every second while Redis is away
    retryStrategy: () => 1000,
  };
}

/** The URL without its password, for log lines. */
export function describeQueueUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

/**
 * Connect to `url` and check that a Redis server of version ≥ 6.2 (BullMQ's floor) answers.
 * @param seconds how long to wait for the first answer
 * @throws BuildInputError when the URL is not Redis or the server is not Redis (or too old);
 *   Error when nothing answers within `seconds`
 */
export async function connectQueue(url: string, seconds = 10): Promise<Redis> {
  const options = parseQueueUrl(url);
  const client = new Redis({ ...(options as IoRedisOptions), lazyConnect: true });
  const errors: string[] = [];
  client.on('error', (error: Error) => errors.push(error.message)); // reported by the caller, once
  const described = describeQueueUrl(url);
  try {
    const info = await withTimeout(
      (async () => {
        await client.connect();
        return client.info('server');
      })(),
      seconds * 1000,
      `${described}: no Redis answered within ${seconds} s`,
    );
    const version = /redis_version:(\S+)/.exec(info)?.[1];
    if (!version) throw new BuildInputError(`--queue ${described}: the server answered but is not Redis`);
    const [major = 0, minor = 0] = version.split('.').map(Number);
    if (major < 6 || (major === 6 && minor < 2))
      throw new BuildInputError(`--queue ${described}: Redis ${version} is too old for BullMQ (6.2 or later)`);
    return client;
  } catch (error) {
    client.disconnect();
    if (error instanceof BuildInputError) throw error;
    const reason = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    const protocolError = errors.find((message) => /Protocol error/i.test(message));
    if (protocolError)
      throw new BuildInputError(
        `--queue ${described}: the server there is not Redis (${protocolError.split('\n')[0]})`,
      );
    if (/Protocol error|unknown command|ERR wrong/i.test(reason))
      throw new BuildInputError(`--queue ${described}: the server there is not Redis (${reason})`);
    throw new Error(reason.startsWith(described) ? reason : `${described}: ${reason}`);
  }
}

/** `promise`, or a rejection with `message` after `milliseconds`. */
export function withTimeout<T>(promise: Promise<T>, milliseconds: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), milliseconds);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Settings that say where and how fast a machine works, not what it builds: left out of
 * {@link buildConfigHash}, so that each worker may name its own speech servers, LLM endpoints, cache
 * mount point and parallelism.
 */
const MACHINE_LOCAL_KEYS = new Set([
  // which dialogues a build takes (the jobs name them), not how each is built
  'languages',
  'limit',
  // where the queue is (the same Redis may be reached by another name from another machine)
  'queue',
  'baseDirectory',
  'output',
  'urls',
  'baseUrl',
  'apiKeyVariable',
  'apiKeyEnvironmentVariable',
  'concurrency',
  'concurrencyPerEndpoint',
  'requestsPerInterval',
  'timeoutSeconds',
  'retry',
  'endpointCooldown',
  'resampleThreads',
  'dnsmos',
  'dnsmosModelDirectory',
  'cometKiwi',
]);

/**
 * The content hash of what a config builds: the config without its machine-local settings
 * ({@link MACHINE_LOCAL_KEYS}), each file it names (corpus, recorded responses, timing statistics,
 * voice prompts) replaced by the sha256 of its bytes, so a worker that mounts the same files
 * elsewhere agrees and one with another corpus does not.
 * @returns sha256 hex
 */
export function buildConfigHash(config: BuildConfig): string {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>)
          .filter(([key]) => !MACHINE_LOCAL_KEYS.has(key))
          .map(([key, entry]) => [key, strip(entry)]),
      );
    }
    if (typeof value === 'string' && path.isAbsolute(value)) {
      try {
        if (statSync(value).isFile()) return `sha256:${bytesHash(readFileSync(value))}`;
      } catch {
        return value; // not there: the path itself
      }
      return `folder:${path.basename(value)}`;
    }
    return value;
  };
  return contentHash(strip(config));
}

/** The project version (package.json `version`). */
export function projectVersion(): string {
  return (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The marker file of a build in its cache: `{cacheDirectory}/queue-markers/{name}.json`. */
export function markerFile(cacheDirectory: string, name: string): string {
  return path.join(cacheDirectory, 'queue-markers', `${name}.json`);
}

/** Write a fresh marker (a random token) into the cache; returns the token. */
export async function writeMarker(cacheDirectory: string, name: string): Promise<string> {
  const token = randomUUID();
  await writeAtomic(markerFile(cacheDirectory, name), `${JSON.stringify({ token })}\n`);
  return token;
}

/**
 * Why this machine cannot work for the build stamped `stamp`, or null when it can: another project
 * version, another config (hash), or a cache folder without the coordinator's marker.
 */
export async function refusalOf(stamp: BuildStamp, config: BuildConfig, configHash: string): Promise<string | null> {
  if (stamp.version !== projectVersion())
    return `the build runs duplexsynth ${stamp.version}, this worker ${projectVersion()}; install the same version`;
  if (stamp.configHash !== configHash) {
    return `this worker's config (hash ${configHash.slice(0, 12)}) differs from the build's (hash ${stamp.configHash.slice(0, 12)}); start it with the build's config (only endpoints, concurrency and folders may differ)`;
  }
  const file = markerFile(config.output.cacheDirectory, stamp.name);
  const text = await readFile(file, 'utf8').catch(() => null);
  let token: unknown = null;
  try {
    token = text === null ? null : (JSON.parse(text) as { token?: unknown }).token;
  } catch {
    token = null;
  }
  if (token !== stamp.markerToken) {
    return `the cache ${config.output.cacheDirectory} is not the coordinator's (${text === null ? `no ${path.relative(config.output.cacheDirectory, file)}` : "another build's marker"}); mount the shared cache and set output.cacheDirectory to it`;
  }
  return null;
}
