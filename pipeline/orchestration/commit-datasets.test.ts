/**
 * commitLanguageDatasets with stand-in dataset outputs: a build that commits no barge-in dataset
 * removes the `{dataset}_bargein` folder an earlier build committed, and only warns about one it
 * cannot prove is a commit's.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../config.ts';
import type { DatasetSummary } from '../model/dataset-summary.ts';
import { commitLanguageDatasets, type LanguageCommit } from './commit-datasets.ts';
import type { DatasetOutput } from './dataset-output.ts';

let scratch: string;
let base: string;
beforeEach(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'commit-datasets-'));
  base = path.join(scratch, 'data', 'en', 'task', 'topiocqa');
});
afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A dataset output that commits without writing anything; `events` its dialogues' events. */
function output(dataset: string, directory: string, events: { event: string }[] = []): DatasetOutput {
  return {
    dataset,
    directory,
    results: [{ events: [events, []] }],
    commit: async () =>
      ({
        dataset,
        variant: dataset.endsWith('_bargein') ? 'barge-in' : 'default',
        dialogues: 1,
        failed: [],
        evaluableEvents: [],
      }) as unknown as DatasetSummary,
    discard: async () => {},
  } as unknown as DatasetOutput;
}

/** Commits `base` (and `variant`); the log and warning lines. */
async function commit(variant: DatasetOutput | null): Promise<{ logged: string[]; warnings: string[] }> {
  const logged: string[] = [];
  const warnings: string[] = [];
  await commitLanguageDatasets({
    config: resolveConfig({ corpus: { path: 'corpus.json' } }, 'test.yaml', scratch),
    language: 'en',
    dataset: 'topiocqa',
    base: output('topiocqa', base),
    variant,
    statistics: {},
    detector: {},
    turnHoldShare: 0,
    backchannelPhrases: [],
    placement: { options: {} },
    allowShrink: false,
    log: (line: string) => logged.push(line),
    kept: () => {},
    warn: (warning: string) => warnings.push(warning),
  } as unknown as LanguageCommit);
  return { logged, warnings };
}

/** The folder an earlier build's commit of the barge-in variant left. */
async function writeEarlierVariant(): Promise<string> {
  const directory = `${base}_bargein`;
  await mkdir(directory, { recursive: true });
  await writeFile(path.join(directory, 'all.jsonl'), '{}\n');
  await writeFile(
    path.join(directory, 'manifest.json'),
    JSON.stringify({
      format: 'm3-duplexbench',
      dataset: 'topiocqa_bargein',
      variant: { kind: 'barge-in', of: 'topiocqa', systemYields: 'next-word-boundary' },
      files: { 'all.jsonl': 'b'.repeat(64) },
    }),
  );
  return directory;
}

describe('commitLanguageDatasets and an earlier barge-in dataset', () => {
  it('removes it when the variant is off', async () => {
    const directory = await writeEarlierVariant();
    const { logged, warnings } = await commit(null);
    expect(existsSync(directory)).toBe(false);
    expect(logged).toContain(
      `[en] ${directory}: removed: the barge-in dataset of an earlier build (this build writes none)`,
    );
    expect(warnings).toEqual([]);
  });

  it('removes it when the variant holds no BARGE_IN event and is not written', async () => {
    const directory = await writeEarlierVariant();
    const { warnings } = await commit(output('topiocqa_bargein', directory, [{ event: 'TURN' }]));
    expect(existsSync(directory)).toBe(false);
    expect(warnings).toEqual([expect.stringMatching(/topiocqa_bargein: not written: .*no BARGE_IN event/)]);
  });

  it('keeps it when this build writes the variant', async () => {
    const directory = await writeEarlierVariant();
    await commit(output('topiocqa_bargein', directory, [{ event: 'BARGE_IN' }]));
    expect(existsSync(path.join(directory, 'manifest.json'))).toBe(true);
  });

  it("only warns about a folder of that name it cannot prove is a commit's", async () => {
    const directory = `${base}_bargein`;
    await mkdir(directory, { recursive: true });
    await writeFile(path.join(directory, 'keep.wav'), 'RIFF');
    const { warnings } = await commit(null);
    expect(existsSync(path.join(directory, 'keep.wav'))).toBe(true);
    expect(warnings).toEqual([
      `${directory}: left as it is: this build writes no barge-in dataset, and the folder is not provably one a build wrote (it has no manifest.json); remove it if it is stale`,
    ]);
  });
});
