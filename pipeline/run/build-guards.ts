/**
 * What a build does around its work so that nothing is lost, leaked or hung (issue 11), in two calls
 * from `runBuild` (./build.ts):
 *
 * 1. {@link beginGuardedBuild}, first: registers every configured API key for redaction, checks the
 *    settings the schema cannot see, and returns the build log with keys redacted;
 * 2. {@link runLocked}, after ingestion: checks the output and cache folders (folder, writable, not a
 *    special file system), takes the output folder's lock, removes what killed builds left (`.partial`
 *    datasets, temporary files in the cache and the output folder), checks there is room for the
 *    planned audio, runs the work, and ends it with a one-line LockLostError as soon as the lock is lost.
 */
import type { BuildConfig } from '../config.ts';
import type { SourceConversation } from '../model/types.ts';
import type { LogLevel } from './progress.ts';
import { lockOutputDirectory } from './build-lock.ts';
import { removeOrphanedTemporaryFiles } from '../storage/write-atomic.ts';
import { checkBuildFolders, checkBuildSettings, checkFreeSpace, estimatePlannedAudioBytes, removeUnfinishedDatasets } from './output-checks.ts';
import { GEMINI_DEFAULT_KEY_VARIABLES, redactSecrets, registerSecret } from '../storage/redact.ts';

/**
 * Register the configuration's API keys for redaction and check its settings.
 * @param config the build
 * @param log the caller's log
 * @returns the log to use: every line redacted
 * @throws BuildInputError naming the setting (./output-checks.ts `checkBuildSettings`)
 */
export function beginGuardedBuild(config: BuildConfig, log: (line: string, level?: LogLevel) => void): (line: string, level?: LogLevel) => void {
  registerConfiguredSecrets(config);
  checkBuildSettings(config);
  return (line, level) => log(redactSecrets(line), level);
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
export async function runLocked<T>(config: BuildConfig, corpus: { readonly conversations: readonly SourceConversation[] }, log: (line: string) => void, work: () => Promise<T>): Promise<T> {
  await checkBuildFolders(config);
  const lock = await lockOutputDirectory(config.output.directory, { log });
  try {
    const unfinished = await removeUnfinishedDatasets(config.output.directory);
    if (unfinished.length > 0) log(`cleanup: removed ${unfinished.length} unfinished dataset folders (.partial) of an interrupted build`);
    for (const directory of [config.output.cacheDirectory, config.output.directory]) {
      const removed = await removeOrphanedTemporaryFiles(directory);
      if (removed.length > 0) log(`cleanup: removed ${removed.length} temporary files left by killed builds in ${directory}`);
    }
    // each language's dataset, and its barge-in variant when asked for (counted at full length: an over-estimate)
    const datasetsPerLanguage = config.datasets.bargeIn ? 2 : 1;
    await checkFreeSpace(config, estimatePlannedAudioBytes(corpus.conversations, config.languages.length * datasetsPerLanguage, config.audio.sampleRate));
    const running = work();
    running.catch(() => {}); // when the lock is lost first, the abandoned work's failure is not reported twice
    return await Promise.race([running, lock.lost]);
  } finally {
    await lock.release();
  }
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
 * Register the values of every key variable the configuration names ({@link configuredKeyVariables}).
 * @param environment where the values are read; default `process.env`
 */
export function registerConfiguredSecrets(config: BuildConfig, environment: Readonly<Record<string, string | undefined>> = process.env): void {
  for (const name of configuredKeyVariables(config)) registerSecret(environment[name], name);
}
