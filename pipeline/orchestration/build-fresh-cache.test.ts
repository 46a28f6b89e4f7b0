/**
 * Determinism of the demo build (both languages, recorded responses) from an empty cache: the same
 * seed gives the files of the run's shared cold demo build (./testing/shared-build.ts), another seed
 * moves the timeline. In its own file (taken out of build.test.ts) so that the other end-to-end worker
 * runs it beside build.test.ts: its reseeded build goes on while the shared build is made, and its
 * same-seed build beside build.test.ts's second run.
 *
 * What the same-seed build does not redo: DNSMOS. A cold demo build spends about 345 of its 380 CPU s
 * in DNSMOS (866 channel-seconds), so the same-seed build's cache starts with the shared
 * build's `dnsmos` entries and nothing else. Those entries are keyed by the sha256 of the dialogue's
 * WAV, so one is used only for a WAV byte-identical to the shared build's (any other WAV is scored
 * afresh, and the tree comparison fails on it anyway); every other stage (text, speech, timeline,
 * rendering, the split, the report) starts from nothing. That DNSMOS gives the same scores when run
 * again, by another scorer, two recordings at once, is shown on real speech by
 * pipeline/services/mos/dnsmos.test.ts; that scores read from the cache give the files computed ones
 * give, by build.test.ts's second run and here.
 */
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildConfig } from '../config.ts';
import type { ProgressEvent } from '../run/progress.ts';
import { runBuild } from './build.ts';
import { DEMO_BUILD_TIMEOUT, demoConfig, hashTree, sharedDemoBuild } from './testing/shared-build.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-build-fresh-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** `config` writing into `scratch/{name}/out`, its cache in `scratch/{name}/cache`. */
function into(config: BuildConfig, name: string): BuildConfig {
  return {
    ...config,
    output: { directory: path.join(scratch, name, 'out'), cacheDirectory: path.join(scratch, name, 'cache') },
  };
}

describe('demo build (both languages, recorded responses)', () => {
  it(
    'the same seed with a fresh cache gives the same files; another seed moves the timeline',
    async () => {
      // another seed, from its own empty cache, unscored (the timeline is the point): built first, while
      // build.test.ts makes the shared build
      const demo = await demoConfig();
      const reseeded = {
        ...into(demo, 'demo-reseeded'),
        seed: demo.seed + 1,
        quality: { ...demo.quality, enabled: false },
      };
      await runBuild(reseeded);

      const shared = await sharedDemoBuild();
      const fresh = into(shared.config, 'demo-fresh');
      expect(fresh).toEqual({ ...shared.config, output: fresh.output });
      // the shared build's DNSMOS results, and nothing else (see the file's comment)
      await cp(
        path.join(shared.config.output.cacheDirectory, 'dnsmos'),
        path.join(fresh.output.cacheDirectory, 'dnsmos'),
        { recursive: true },
      );
      expect(await readdir(fresh.output.cacheDirectory)).toEqual(['dnsmos']);
      const scoring: string[] = [];
      const report = await runBuild(fresh, {
        progress: (event: ProgressEvent) => {
          if (event.type === 'item' && event.stage === 'score-quality')
            scoring.push(`${event.language} ${event.id} ${event.status}`);
        },
      });
      // every stage of the build's cache did the work of the shared cold build, from nothing: the same
      // lookups per stage. Not the same hits: a clip said twice in one build is a hit or a miss as the
      // first synthesis has finished or not when the second is asked (synthesis runs dialogues ahead;
      // a CI run saw 4/84 against 5/83 hits/misses for the same 88 lookups).
      const lookups = (cache: typeof report.cache) =>
        Object.fromEntries(
          Object.entries(cache).map(([stage, counts]) => [
            stage,
            { lookups: counts.hits + counts.misses, corrupt: counts.corrupt },
          ]),
        );
      expect(lookups(report.cache)).toEqual(lookups(shared.report.cache));
      expect(report.cache['synthesize-speech']?.misses).toBeGreaterThan(0);
      // every dialogue of the four datasets found its DNSMOS by its WAV's sha256: the WAVs are the shared build's
      expect(scoring).toHaveLength(8);
      for (const line of scoring) expect(line).toMatch(/ cached$/);
      expect(await hashTree(fresh.output.directory)).toEqual(await hashTree(shared.config.output.directory));

      const a = await readFile(path.join(fresh.output.directory, 'data/en/task/topiocqa_demo/all.jsonl'), 'utf8');
      const b = await readFile(path.join(reseeded.output.directory, 'data/en/task/topiocqa_demo/all.jsonl'), 'utf8');
      expect(b).not.toEqual(a);
    },
    DEMO_BUILD_TIMEOUT,
  );
});
