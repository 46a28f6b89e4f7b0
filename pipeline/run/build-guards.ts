/**
 * What a build does around its work so that nothing is lost, leaked or hung, in two calls
 * from `runBuild` (./build.ts):
 *
 * 1. {@link beginGuardedBuild}, first: registers every configured API key for redaction, checks the
 *    settings the schema cannot see, and returns the build log with keys redacted;
 * 2. {@link refuseForeignBackupFolders}, before ingestion: a `.previous` folder the build would swap
 *    through (the report's, each dataset's), or a dataset folder, that is someone else's stops the
 *    build before any work;
 * 3. {@link runLocked}, after ingestion: checks the output and cache folders (folder, writable, not a
 *    special file system), takes the output folder's lock, removes what killed builds left (`.partial`
 *    datasets, temporary files in the cache and the output folder), checks there is room for the
 *    planned audio, runs the work, and ends it with a one-line LockLostError as soon as the lock is lost.
 */
import type { BuildConfig } from '../config.ts';
import type { SourceConversation } from '../model/types.ts';
import { BuildInputError, DiskFullError } from '../model/build-errors.ts';
import type { LogLevel } from './progress.ts';
import { lockOutputDirectory } from './build-lock.ts';
import { formatBytes, removeOrphanedTemporaryFiles } from '../storage/write-atomic.ts';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { outermostMissingFolder, removeCreatedFolders, removeFoldersLeftEmpty } from '../storage/empty-folders.ts';
import {
  checkBuildFolders,
  checkBuildSettings,
  removeUnfinishedDatasets,
  removeUnfinishedReportPages,
} from './output-checks.ts';
import { checkBuildSpace } from './build-space-estimate.ts';
import { currentStopScope } from './stop-signals.ts';
import { REPORT_DIRECTORY } from '../report/build-report.ts';
import { refuseForeignBackupFolder } from '../storage/folder-swap.ts';
import { refuseForeignDatasetFolder } from '../storage/foreign-dataset-folder.ts';
import { removeUnfinishedOutputsOnStop } from './stopped-build.ts';
import { GEMINI_DEFAULT_KEY_VARIABLES, redactSecrets, registerSecret } from '../storage/redact.ts';

export { ForeignDatasetFolderError } from '../storage/foreign-dataset-folder.ts';

/**
 * Register the configuration's API keys for redaction and check its settings.
 * @param config the build
 * @param log the caller's log
 * @returns the log to use: every line redacted
 * @throws BuildInputError naming the setting (./output-checks.ts `checkBuildSettings`), or the
 *   setting and the environment variable of an API key that is not set ({@link checkConfiguredKeys})
 */
export function beginGuardedBuild(
  config: BuildConfig,
  log: (line: string, level?: LogLevel) => void,
): (line: string, level?: LogLevel) => void {
  registerConfiguredSecrets(config);
  checkBuildSettings(config);
  checkConfiguredKeys(config);
  return (line, level) => log(redactSecrets(line), level);
}

/**
 * Refuses a build whose swaps would meet a `{folder}.previous` that no swap left (no backup marker),
 * before any work, as the swap itself refuses it after all the synthesis: the report's
 * (`report.previous`, pipeline/report/build-report.ts) and each dataset folder's the build commits
 * (`{dataset}.previous`, stages/render-dataset-replace.ts). Likewise a dataset folder that holds files
 * but no `manifest.json` (someone else's folder: ../storage/foreign-dataset-folder.ts, the check the
 * dataset writer repeats when it opens that dataset). The swaps and the writer keep their own
 * checks, for a folder made while the build runs.
 * @param outputDirectory the build's output folder (need not exist)
 * @param datasetFolders the dataset folders the build commits (base and barge-in variant, every language)
 * @throws ForeignBackupFolderError (exit code 2) naming the first such `.previous` folder;
 *   ForeignDatasetFolderError (exit code 2) naming the first such dataset folder; nothing is touched
 */
export async function refuseForeignBackupFolders(
  outputDirectory: string,
  datasetFolders: readonly string[],
): Promise<void> {
  await refuseForeignBackupFolder(path.join(outputDirectory, REPORT_DIRECTORY), 'the report');
  for (const folder of datasetFolders) await refuseForeignBackupFolder(folder, 'the dataset');
  for (const folder of datasetFolders) await refuseForeignDatasetFolder(folder);
}

/**
 * Check the folders, take the lock, clean up after killed builds, run `work`, release the lock.
 * @param config the build
 * @param corpus the ingested corpus (the ingest stage's IngestedCorpus; its conversations set the space the folders need)
 * @param log the build log
 * @param work the build proper
 * @returns what `work` returns
 * @throws BuildInputError or DiskFullError from the folder checks; OutputLockedError when a running
 *   build holds the lock; LockLostError when the lock is lost during `work`; whatever `work` throws
 */
export async function runLocked<T>(
  config: BuildConfig,
  corpus: { readonly conversations: readonly SourceConversation[] },
  log: (line: string) => void,
  work: () => Promise<T>,
): Promise<T> {
  // what the build is about to create, so that a refused build leaves no empty folder behind
  const created = {
    output: await outermostMissingFolder(config.output.directory),
    cache: await outermostMissingFolder(config.output.cacheDirectory),
  };
  const scope = currentStopScope();
  // a stop removes these too when they are left empty (./stop-signals.ts)
  const withdrawFolders = [
    scope?.removeCreatedFoldersOnStop(config.output.directory, created.output),
    scope?.removeCreatedFoldersOnStop(config.output.cacheDirectory, created.cache),
  ];
  const held = { lock: false };
  try {
    await checkBuildFolders(config);
    return await runWithLock(config, corpus, log, work, held);
  } catch (error) {
    // only what this build made: below the output folder only while it held the lock (a build refused
    // by another's lock must not touch that build's folders or lock); in the cache, shared with other
    // builds, only below a cache folder this build made
    if (held.lock) await removeFoldersLeftEmpty(config.output.directory, created.output);
    else await removeCreatedFolders(config.output.directory, created.output);
    if (created.cache !== null) await removeFoldersLeftEmpty(config.output.cacheDirectory, created.cache);
    throw error;
  } finally {
    for (const withdraw of withdrawFolders) withdraw?.();
  }
}

/** {@link runLocked} once the folders are checked. */
async function runWithLock<T>(
  config: BuildConfig,
  corpus: { readonly conversations: readonly SourceConversation[] },
  log: (line: string) => void,
  work: () => Promise<T>,
  held: { lock: boolean },
): Promise<T> {
  const lock = await lockOutputDirectory(config.output.directory, { log });
  // a signal that stops the build removes its `.partial` folders while it holds the lock, then gives the
  // lock back, so that the folders it created can go when empty (./stopped-build.ts, ./stop-signals.ts)
  const withdrawLock = currentStopScope()?.onStop(() => lock.releaseSync());
  const withdrawPartials = removeUnfinishedOutputsOnStop(config.output.directory);
  held.lock = true;
  try {
    const unfinished = await removeUnfinishedDatasets(config.output.directory);
    if (unfinished.length > 0)
      log(`cleanup: removed ${unfinished.length} unfinished dataset folders (.partial) of an interrupted build`);
    const pages = await removeUnfinishedReportPages(config.output.directory);
    if (pages !== null) log(`cleanup: removed the report pages an interrupted build made (${pages})`);
    for (const directory of [config.output.cacheDirectory, config.output.directory]) {
      const removed = await removeOrphanedTemporaryFiles(directory);
      if (removed.length > 0)
        log(`cleanup: removed ${removed.length} temporary files left by killed builds in ${directory}`);
    }
    // every byte the build writes: datasets, barge-in variants, full-band masters, cache, report
    await checkBuildSpace(config, corpus.conversations);
    const running = work();
    running.catch(() => {}); // when the lock is lost first, the abandoned work's failure is not reported twice
    try {
      return await Promise.race([running, lock.lost]);
    } catch (error) {
      if (error instanceof DiskFullError) throw await freeUnfinishedDatasets(config.output.directory, error);
      throw error;
    }
  } finally {
    withdrawPartials();
    withdrawLock?.();
    await lock.release();
  }
}

/**
 * A build stopped by a full disk removes its own unfinished `.partial` datasets at once (under its
 * lock), so the space is free before the user reruns, and says how much that freed.
 * @returns the error to throw: the same kind, its message extended by what was removed
 */
async function freeUnfinishedDatasets(outputDirectory: string, error: DiskFullError): Promise<DiskFullError> {
  let bytes = 0;
  const data = path.join(outputDirectory, 'data');
  for (const entry of await readdir(data, { recursive: true, withFileTypes: true }).catch(() => [])) {
    if (!entry.isFile() || !/\.partial(\/|$)/.test(`${path.relative(data, entry.parentPath)}/`)) continue;
    bytes += await stat(path.join(entry.parentPath, entry.name)).then(
      (stats) => stats.size,
      () => 0,
    );
  }
  const removed = await removeUnfinishedDatasets(outputDirectory);
  if (removed.length === 0) return error;
  const freed = `removed this build's ${removed.length} unfinished dataset folder${removed.length === 1 ? '' : 's'} (.partial), ${formatBytes(bytes)} freed`;
  const advice = '; free some space or choose another folder';
  const message = error.message.endsWith(advice)
    ? `${error.message.slice(0, -advice.length)}; ${freed}${advice}`
    : `${error.message}; ${freed}`;
  return new DiskFullError(message, error.file, error.neededBytes, error.availableBytes, { cause: error });
}

/**
 * The environment variables a build's configuration reads API keys from: `apiKeyVariable` of the
 * `llm.rewrite`/`llm.translate` backends (the Gemini backend's defaults GEMINI_API_KEY and
 * GOOGLE_API_KEY when it names none) and `apiKeyEnvironmentVariable` of a remote speech service.
 */
export function configuredKeyVariables(config: BuildConfig): string[] {
  const names = new Set<string>();
  for (const backend of [config.llm.rewrite, config.llm.translate] as { backend: string; apiKeyVariable?: string }[]) {
    if (typeof backend.apiKeyVariable === 'string') names.add(backend.apiKeyVariable);
    else if (backend.backend === 'gemini') for (const name of GEMINI_DEFAULT_KEY_VARIABLES) names.add(name);
  }
  for (const language of config.languages) {
    const variable = config.tts[language]?.service?.apiKeyEnvironmentVariable;
    if (typeof variable === 'string') names.add(variable);
  }
  return [...names];
}

/**
 * Every API key the build's services will ask for is set, checked before the lock and before any
 * request (a missing key would otherwise fail each dialogue in turn): the Gemini backend's
 * `apiKeyVariable` (else GEMINI_API_KEY or GOOGLE_API_KEY), an OpenAI-compatible backend's
 * `apiKeyVariable` when it names one (a local vLLM needs none), a speech service's
 * `apiKeyEnvironmentVariable`. The translation backend counts when a non-English language is built.
 * @param environment where the values are read; default `process.env`
 * @throws BuildInputError naming the setting and the variable(s) to set
 */
export function checkConfiguredKeys(
  config: BuildConfig,
  environment: Readonly<Record<string, string | undefined>> = process.env,
): void {
  const isSet = (name: string) => (environment[name] ?? '').trim() !== '';
  const translating = config.languages.some((language) => language !== 'en');
  const backends: [string, { backend: string; apiKeyVariable?: string }][] = [['llm.rewrite', config.llm.rewrite]];
  if (translating) backends.push(['llm.translate', config.llm.translate]);
  for (const [setting, backend] of backends) {
    const variables =
      typeof backend.apiKeyVariable === 'string'
        ? [backend.apiKeyVariable]
        : backend.backend === 'gemini'
          ? [...GEMINI_DEFAULT_KEY_VARIABLES]
          : [];
    if (variables.length > 0 && !variables.some(isSet)) {
      throw new BuildInputError(
        `${setting}: the ${backend.backend} backend needs an API key: set the environment variable ${variables.join(' or ')} (the setting names the variable with apiKeyVariable, never the key)`,
      );
    }
  }
  for (const language of config.languages) {
    const variable = config.tts[language]?.service?.apiKeyEnvironmentVariable;
    if (typeof variable === 'string' && !isSet(variable)) {
      throw new BuildInputError(
        `tts.${language}.service.apiKeyEnvironmentVariable: the speech service needs an API key: set the environment variable ${variable}`,
      );
    }
  }
}

/**
 * Register the values of every key variable the configuration names ({@link configuredKeyVariables}).
 * @param environment where the values are read; default `process.env`
 */
export function registerConfiguredSecrets(
  config: BuildConfig,
  environment: Readonly<Record<string, string | undefined>> = process.env,
): void {
  for (const name of configuredKeyVariables(config)) registerSecret(environment[name], name);
  // a password (or token) written into a URL's user info (`http://me:sk-…@host/v1`) or its query
  // (`…/v1?token=…`): fetch and the SDKs refuse or report such a URL with a message that quotes it whole,
  // and every line the build writes goes through the redaction
  for (const url of configuredUrls(config)) {
    registerSecret(safeDecode(url.password), 'URL_PASSWORD');
    if (url.password === '') registerSecret(safeDecode(url.username), 'URL_USER');
    for (const [, value] of url.searchParams) {
      registerSecret(value, 'URL_QUERY_VALUE');
      // the raw form as written (`%2B` or `+` kept), which a message may quote instead of the decoded one
      registerSecret(rawQueryValue(url.search, value), 'URL_QUERY_VALUE');
    }
  }
}

/** `text` percent-decoded, or as it is when it is not valid percent-encoding. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The query `search` part whose decoded value is `value`, as written (undefined when none differs). */
function rawQueryValue(search: string, value: string): string | undefined {
  for (const pair of search.replace(/^\?/, '').split('&')) {
    const raw = pair.slice(pair.indexOf('=') + 1);
    if (pair.includes('=') && raw !== value && new URLSearchParams(`x=${raw}`).get('x') === value) return raw;
  }
  return undefined;
}

/**
 * Every string in `value` (any depth) that parses as a URL with a user name or password before its
 * host or a query string: the configured endpoints that carry credentials.
 */
export function configuredUrls(value: unknown): URL[] {
  if (typeof value === 'string') {
    if (!/^[a-z][a-z0-9+.-]*:\/\/([^/]*@|[^?#]*\?.)/i.test(value)) return [];
    try {
      const url = new URL(value);
      return url.username !== '' || url.password !== '' || url.search !== '' ? [url] : [];
    } catch {
      return [];
    }
  }
  if (Array.isArray(value)) return value.flatMap(configuredUrls);
  if (value !== null && typeof value === 'object')
    return Object.values(value as Record<string, unknown>).flatMap(configuredUrls);
  return [];
}
