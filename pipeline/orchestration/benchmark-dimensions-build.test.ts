/**
 * A build whose datasets leave benchmark dimensions empty, run in-process on one real TopiOCQA
 * dialogue (offline English): backchannels off, no question spoken in two parts, and a barge-in that
 * must leave more of the answer unspoken than any answer holds. The `_bargein` dataset is not
 * written; summary.json, summary.md, the log and the report say what is missing.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { loadConfigFile, sharedDirectory } from '../config.ts';
import { buildSummarySchema } from '../model/dataset-summary.ts';
import { runBuild } from './build.ts';

const TOPIOCQA_DEV = path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');
const BUILD_TIMEOUT = 1_200_000;

let scratch: string;
let output: string;
const logLines: string[] = [];
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-dimensions-test-'));
  const file = path.join(scratch, 'dimensions.yaml');
  await writeFile(
    file,
    toYaml({
      name: 'dimensions',
      seed: 5,
      languages: ['en'],
      corpus: { path: TOPIOCQA_DEV, limit: 1 },
      output: { directory: 'out', cacheDirectory: 'cache' },
      llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
      quality: { enabled: false },
      timeline: {
        turnHoldShare: 0,
        backchannels: { enabled: false },
        bargeIn: { minimumUnspoken: { seconds: 10_000, words: 10_000 } },
      },
    }),
  );
  const config = await loadConfigFile(file);
  output = config.output.directory;
  await runBuild(config, { log: (line: string) => logLines.push(line) });
}, BUILD_TIMEOUT);
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('a build whose datasets give some benchmark dimensions nothing', () => {
  it('does not write the _bargein dataset without barge-ins, and logs one line saying so', () => {
    expect(existsSync(path.join(output, 'data', 'en', 'task', 'topiocqa'))).toBe(true);
    expect(existsSync(path.join(output, 'data', 'en', 'task', 'topiocqa_bargein'))).toBe(false);
    expect(logLines.filter((line) => /topiocqa_bargein: not written/.test(line))).toHaveLength(1);
  });

  it('lists the variant not written and the dimensions without samples in summary.json', async () => {
    const summary = buildSummarySchema.parse(JSON.parse(await readFile(path.join(output, 'summary.json'), 'utf8')));
    expect(summary.datasets.map((dataset) => dataset.dataset)).toEqual(['topiocqa']);
    const warnings = summary.warnings ?? [];
    expect(warnings.some((warning) => warning.startsWith('topiocqa_bargein: not written'))).toBe(true);
    expect(warnings).toContain(
      "topiocqa: no TURN_HOLD sample: the benchmark's pause-handling dimension gets nothing from this dataset",
    );
    expect(warnings).toContain(
      "topiocqa: no BC sample: the benchmark's backchannel dimension gets nothing from this dataset",
    );
    // the TopiOCQA dialogue still has speaker changes the loader keeps
    expect(warnings.some((warning) => warning.includes('TURN_SHIFT'))).toBe(false);
  });

  it('repeats the warnings in summary.md and in the report', async () => {
    const markdown = await readFile(path.join(output, 'summary.md'), 'utf8');
    expect(markdown).toContain('## Warnings');
    expect(markdown).toContain("- topiocqa: no BC sample: the benchmark's backchannel dimension");
    const report = await readFile(path.join(output, 'report', 'index.html'), 'utf8');
    expect(report).toContain('warning: topiocqa: no TURN_HOLD sample');
    expect(report).toContain('warning: topiocqa: no BC sample');
  });

  it('adds no note about the benchmark languages to an English build', async () => {
    const markdown = await readFile(path.join(output, 'summary.md'), 'utf8');
    expect(markdown).not.toContain('new-language-benchmark.md');
  });
});
