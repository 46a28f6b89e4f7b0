/**
 * Builds shared by the test files of one `vitest run`: each distinct build config is built once per
 * run, into a folder named by the config's content hash, and the test files that need it read it
 * (read-only: a test that writes, e.g. a second build or a report, copies it first with
 * {@link copySharedBuild}). A file-system lock (proper-lockfile) makes the first file that asks build
 * it while the others, in other worker processes, wait for it.
 *
 * The per-run folder comes from ./shared-build-setup.ts (the end-to-end project's globalSetup, which
 * removes it at the end of the run).
 */
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { inject } from 'vitest';
import { DEFAULT_CONFIG_FILE, loadConfigFile, type BuildConfig } from '../../config.ts';
import { bytesHash, contentHash } from '../../storage/content-cache.ts';
import { runBuild, type BuildReport } from '../build.ts';

/** A build made once per run: its config (output and cache folders inside the shared folder) and report. */
export interface SharedBuild {
  config: BuildConfig;
  report: BuildReport;
}

/**
 * The run's shared folder, made by the end-to-end project's globalSetup.
 * @throws Error when the test file does not run in that project (vitest.config.ts END_TO_END_FILES)
 */
function sharedRoot(): string {
  const provided = inject('sharedBuildRoot');
  if (!provided)
    throw new Error(
      'shared builds need the end-to-end test project (vitest.config.ts END_TO_END_FILES), whose globalSetup makes their folder',
    );
  return provided;
}

/**
 * The build of `config` (its `output` folders are replaced by the shared ones), made at most once per
 * test run. Do not write into its folders.
 * @param name readable prefix of the folder name
 * @throws whatever `runBuild` throws (for every file that asked, while the folder stays unbuilt)
 */
export async function sharedBuild(name: string, config: BuildConfig): Promise<SharedBuild> {
  const { output: _output, ...content } = config;
  const directory = path.join(sharedRoot(), `${name}-${contentHash(content).slice(0, 16)}`);
  const shared: BuildConfig = {
    ...config,
    output: { directory: path.join(directory, 'out'), cacheDirectory: path.join(directory, 'cache') },
  };
  const reportFile = path.join(directory, 'build-report.json');
  await mkdir(directory, { recursive: true });
  // A cold demo build with scoring takes minutes when the cores are shared: wait up to about 30 minutes. The
  // lock only saves duplicate work, so a lock that goes stale behind a busy event loop is not an error.
  const release = await lockfile.lock(directory, {
    lockfilePath: `${directory}.lock`,
    stale: 600_000,
    update: 10_000,
    retries: { retries: 1800, factor: 1, minTimeout: 1000, maxTimeout: 1000 },
    onCompromised: () => {},
  });
  try {
    const existing = await readFile(reportFile, 'utf8').catch(() => null);
    if (existing !== null) return { config: shared, report: JSON.parse(existing) as BuildReport };
    const report = await runBuild(shared);
    await writeFile(reportFile, JSON.stringify(report));
    return { config: shared, report };
  } finally {
    await release();
  }
}

/**
 * A writable copy of a shared build's output and cache folders under `directory`, with the config
 * pointing at them.
 */
export async function copySharedBuild(build: SharedBuild, directory: string): Promise<BuildConfig> {
  const output = { directory: path.join(directory, 'out'), cacheDirectory: path.join(directory, 'cache') };
  await cp(build.config.output.directory, output.directory, { recursive: true });
  await cp(build.config.output.cacheDirectory, output.cacheDirectory, { recursive: true });
  return { ...build.config, output };
}

/**
 * The demo as shipped (`duplexsynth demo --limit 2`: both languages, the barge-in variants, quality
 * scoring and the dev/test split; DNSMOS at {@link TEST_DNSMOS_HOP_SECONDS}), built once per test run for the files that read it
 * (pipeline/orchestration/build.test.ts, build-fresh-cache.test.ts). A cold build: its cache folder is
 * new in each run.
 */
export async function sharedDemoBuild(): Promise<SharedBuild> {
  return sharedBuild('demo', await demoConfig());
}

/**
 * DNSMOS window hop of the tests' demo builds, s: non-overlapping 9.01 s windows instead of the
 * reference's one per second (quality.dnsmos.hopSeconds). DNSMOS of the demo's 866 channel-seconds
 * with the reference hop is about 345 of the cold build's 380 CPU s, the longest chain of the test
 * suite; at this hop it runs about 1/8 of the windows. The scores differ, and the tests
 * of these builds compare builds with each other, never with published DNSMOS numbers: the reference
 * hop is checked by pipeline/services/mos/dnsmos.test.ts, and run end to end by `npm run demo` (.ci/run).
 */
export const TEST_DNSMOS_HOP_SECONDS = 9.01;

/**
 * The config of {@link sharedDemoBuild}: the built-in demo config, `corpus.limit` 2, DNSMOS windows
 * every {@link TEST_DNSMOS_HOP_SECONDS}, with the output and cache folders of the config file:
 * replace them before building with it.
 */
export async function demoConfig(): Promise<BuildConfig> {
  const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
  return {
    ...base,
    corpus: { ...base.corpus, limit: 2 },
    quality: { ...base.quality, dnsmos: { ...base.quality.dnsmos, hopSeconds: TEST_DNSMOS_HOP_SECONDS } },
  };
}

/**
 * Time limit of a hook or test that waits for the shared demo build or makes a cold demo build: cold
 * demo builds (both languages, every utterance synthesized, DNSMOS quality scoring and the split)
 * outlast the suite's 6-minute default (vitest.config.ts). The cold build with scoring takes about
 * 380 CPU s (365 user + 15 system; DNSMOS of 866 channel-seconds is about 345 of them, the build
 * without scoring 36); with two cores shared by other builds and test runs, the first build can take
 * about 14 minutes. Twenty minutes still ends a hung build.
 */
export const DEMO_BUILD_TIMEOUT = 1_200_000;

/**
 * sha256 of every file under `directory`, by path relative to it (compare two builds' trees with
 * `toEqual`: a file missing, extra or changed is named in the difference).
 */
export async function hashTree(directory: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    result[path.relative(directory, full)] = bytesHash(await readFile(full));
  }
  return result;
}
