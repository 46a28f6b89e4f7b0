/**
 * `build --dry-run` on one long conversation: its peak memory against a short one's (`npm run bench`
 * section `dryrun`, scripts/bench.ts). Each run is its own process, so its peak resident set
 * (`process.resourceUsage().maxRSS`) is its own:
 *
 *     node --import tsx/esm pipeline/orchestration/plan-build.bench.ts TURNS
 *
 * writes a TopiOCQA-format corpus of one conversation with TURNS turns (distinct questions and
 * answers, each turn's Context the turns before, as the corpus has it) to a temporary folder, plans an
 * offline English build of it (rules rewrite, espeak-ng's identity; the planner's stand-in audio for
 * every clip, since the cache is empty) with `corpus.maximumTurnsPerConversation` raised to TURNS,
 * and prints one JSON line: turns, utterances planned, wall seconds, peak RSS MiB.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { DEFAULT_CONFIG_FILE, loadConfigFile, type BuildConfig } from '../config.ts';
import { planBuild } from './plan-build.ts';

/** What one dry run measured. */
export interface DryRunMeasurement {
  turns: number;
  corpusBytes: number;
  utterances: number;
  wallSeconds: number;
  maxResidentMebibytes: number;
}

/**
 * One conversation of `turns` TopiOCQA records: distinct questions and answers; each turn's Context is
 * the last 10 question/answer texts before it (the full history would make the corpus quadratic in
 * length and measure the JSON parser, not the planner).
 */
export function longConversation(turns: number): object[] {
  const records = [];
  const texts: string[] = [];
  for (let index = 0; index < turns; index++) {
    const question = `What happened in the harbour town in the year ${1500 + index}?`;
    const answer = `A new pier was built there in ${1500 + index}, after the storm of the year before.`;
    records.push({
      Conversation_no: 1,
      Turn_no: index + 1,
      Question: question,
      is_nq: false,
      Answer: answer,
      Topic: 'Harbour',
      Topic_section: 'History',
      Context: texts.slice(-10),
    });
    texts.push(question, answer);
  }
  return records;
}

/** Plans the dry run of a `turns`-turn conversation in this process and measures it. */
export async function measureDryRun(turns: number): Promise<DryRunMeasurement> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-dryrun-bench-'));
  try {
    const corpus = path.join(folder, 'long.json');
    const text = JSON.stringify(longConversation(turns));
    await writeFile(corpus, text);
    const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
    const config: BuildConfig = {
      ...base,
      name: 'dry-run-bench',
      languages: ['en'],
      corpus: { ...base.corpus, path: corpus, limit: null, maximumTurnsPerConversation: turns },
      llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } } as BuildConfig['llm'],
      output: { directory: path.join(folder, 'out'), cacheDirectory: path.join(folder, 'cache') },
    };
    const started = performance.now();
    const plan = await planBuild(config);
    const wallSeconds = (performance.now() - started) / 1000;
    if (plan.languages[0]!.failures.length > 0)
      throw new Error(`dry run failed: ${plan.languages[0]!.failures[0]!.reason}`);
    return {
      turns,
      corpusBytes: Buffer.byteLength(text),
      utterances: plan.languages[0]!.utterances,
      wallSeconds,
      maxResidentMebibytes: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const turns = Number(process.argv[2] ?? 20);
  console.log(JSON.stringify(await measureDryRun(turns)));
}
