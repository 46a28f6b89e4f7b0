/**
 * The shape of a stage (after DVC's stages: a stage declares what it reads and which parameters it
 * depends on; its results are stored under a content hash of exactly those).
 *
 * A stage is a value with
 * - `name`: what timings (`BuildReport.stageSeconds`), failure messages (`FAILED at {name}`) and
 *   quarantined dialogues in `summary.json` (`failed[].stage`) call it;
 * - `inputs` and `parameters`: the fields of its input and of its parameters it reads (the input is
 *   per item, e.g. one dialogue; the parameters are per dataset: settings and service clients);
 * - `cacheStages` and `cacheKeys`: the content-cache folders it stores results in, and the keys of
 *   the entries `run` looks up first for an input: exactly the key material `run` hands the
 *   {@link ContentCache}, so a key computed here names the same entry a run reads;
 * - `run`: the work itself, given the input, the parameters and the {@link StageContext}.
 *
 * Stages live in `stages/` (one module each) and import this machinery; the machinery never imports
 * a stage. A build is a list of stages run by ./stage-runner.ts.
 */
import type { ContentCache } from '../storage/content-cache.ts';

/** One content-cache entry: the cache folder (`ContentCache.json`'s `stage`) and the key material hashed into its key. */
export interface StageCacheKey {
  /** The cache folder and `ContentCache.statistics` entry, e.g. `rewrite-spoken`. */
  readonly stage: string;
  /** Everything the entry depends on (hashed with `contentHash` together with `stage`). */
  readonly keyMaterial: unknown;
}

/** What every stage's `run` receives besides its input and parameters. */
export interface StageContext {
  /** The build's content cache (a dry run passes a cache that never writes). */
  readonly cache: ContentCache;
}

/**
 * A stage: `Input` is per item (a dialogue, a dataset folder), `Parameters` per dataset, `Output` what
 * `run` returns.
 */
export interface Stage<Input, Parameters, Output> {
  /** The stage's name in timings, failure messages and `summary.json` (kebab-case verb-noun). */
  readonly name: string;
  /** The fields of `Input` the stage reads. */
  readonly inputs: readonly (keyof Input & string)[];
  /** The fields of `Parameters` the stage reads. */
  readonly parameters: readonly (keyof Parameters & string)[];
  /** The content-cache folders the stage stores results in; empty when it caches nothing. */
  readonly cacheStages: readonly string[];
  /**
   * The cache entries `run` looks up first for `input` (one per cached result; empty for a stage that
   * caches nothing or whose keys depend on what it reads while running, as its docstring says).
   * @throws whatever deriving the key needs (e.g. a tokenizer that cannot load), as `run` would
   */
  cacheKeys(input: Input, parameters: Parameters): Promise<StageCacheKey[]>;
  /**
   * Do the work.
   * @throws the stage's errors (its docstring lists them); the runner records the stage's name with them
   */
  run(input: Input, parameters: Parameters, context: StageContext): Promise<Output>;
}

/**
 * `ContentCache.json` under a stage's key: the cached value for `key`, or `compute()` stored under it.
 * @param compute produces the value on a miss; it must be JSON-serialisable
 */
export function cachedJson<T>(cache: ContentCache, key: StageCacheKey, compute: () => Promise<T>): Promise<T> {
  return cache.json<T>(key.stage, key.keyMaterial, compute);
}
