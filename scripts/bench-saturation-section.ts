/**
 * The bench's `saturation` section: the build against 4 loopback CosyVoice2 servers, each run in a
 * Node process of its own, the default config several times beside its baselines (V8's own heap
 * growth and optimization budget, mastering in a worker thread, the 'best' resampler, Triton).
 */
import { execFile } from 'node:child_process';
import {
  formatSaturationBenchmark,
  type SaturationBenchmarkOptions,
  type SaturationBenchmarkResult,
} from '../pipeline/orchestration/build-saturation.bench.ts';
import { runnableModule, TYPESCRIPT_LOADER_ARGUMENTS } from '../pipeline/storage/package-files.ts';
import { describeRuns, ratio } from './bench-measure.ts';
import type { BenchOptions, SectionFindings } from './bench-section.ts';

/** Unprofiled runs of the default config in the saturation section (spread between the baselines). */
const SATURATION_DEFAULT_RUNS = 3;

/**
 * The build against 4 loopback CosyVoice2 servers at RTF 0.02: the default config ('speex') unprofiled
 * {@link SATURATION_DEFAULT_RUNS} times, between the baselines (V8's own heap growth and optimization budget, mastering in a
 * worker thread, 'best' also in worker threads, Triton), each unprofiled, then the default once more
 * under the V8 sampling profiler for the table of CPU by step (the profiler costs CPU and wakes the
 * thread, so its run is not in the headline).
 *
 * The headline gives, for each figure, its best value over the default runs (not necessarily one run
 * for both figures), their median and every value, beside the baselines' single runs (compare medians
 * with those): on a shared machine another tenant's load only adds CPU time and only lowers the
 * servers' busy share, so the best value is the closest to what the code costs (Python's `timeit` documentation: "the lowest value gives a lower
 * bound for how fast your machine can run the given code snippet; higher values in the result vector
 * are typically not caused by variability in Python's speed, but by other processes interfering").
 */
export async function saturationSection(options: BenchOptions, findings: SectionFindings): Promise<string> {
  const defaultLabel = (run: number) =>
    `FastAPI protocol, resampler 'speex' (the default), run ${run} of ${SATURATION_DEFAULT_RUNS}`;
  const defaultSettings: SaturationChildOptions = { protocol: 'cosyvoice2', resampleQuality: 'speex', profile: false };
  const baselines: [string, SaturationChildOptions][] = [
    [
      "FastAPI protocol, resampler 'speex', V8's own heap growing factor (without pipeline/run/heap-growth.ts)",
      { protocol: 'cosyvoice2', resampleQuality: 'speex', v8HeapGrowth: true, profile: false },
    ],
    [
      "FastAPI protocol, resampler 'speex', V8's own optimization budget (without pipeline/run/optimization-budget.ts)",
      { protocol: 'cosyvoice2', resampleQuality: 'speex', v8InterruptBudget: true, profile: false },
    ],
    [
      "FastAPI protocol, resampler 'speex', mastering in a worker thread (audio.renderThreads 1)",
      { protocol: 'cosyvoice2', resampleQuality: 'speex', renderThreads: 1, profile: false },
    ],
    ["FastAPI protocol, resampler 'best'", { protocol: 'cosyvoice2', resampleQuality: 'best', profile: false }],
    [
      "FastAPI protocol, resampler 'best' in 2 worker threads",
      { protocol: 'cosyvoice2', resampleQuality: 'best', resampleThreads: 2, profile: false },
    ],
    ["Triton protocol, resampler 'speex'", { protocol: 'cosyvoice2-triton', resampleQuality: 'speex', profile: false }],
  ];
  const profiledLabel = "FastAPI protocol, resampler 'speex' (the default), under the sampling profiler";
  // the default runs spread over the section (one before each of the first baselines), so a burst of
  // another tenant's load does not fall on all of them
  const runs: [string, SaturationChildOptions][] = [];
  for (let run = 1; run <= SATURATION_DEFAULT_RUNS; run++) {
    runs.push([defaultLabel(run), defaultSettings]);
    if (run < SATURATION_DEFAULT_RUNS && baselines[run - 1]) runs.push(baselines[run - 1]!);
  }
  runs.push(...baselines.slice(SATURATION_DEFAULT_RUNS - 1), [
    profiledLabel,
    { protocol: 'cosyvoice2', resampleQuality: 'speex', profile: true },
  ]);
  const results: [string, SaturationBenchmarkResult][] = [];
  const failures: string[] = [];
  for (const [label, settings] of runs) {
    try {
      // each in a process of its own: a run after others would find V8's code compiled and its heap
      // sized by them (the first of them paying for both), so runs in one process are not comparable
      results.push([
        label,
        await saturationInChildProcess({
          dialogues: options.limit,
          servers: 4,
          realTimeFactor: 0.02,
          ...(options.corpus ? { corpus: options.corpus } : {}),
          ...settings,
        }),
      ]);
    } catch (error) {
      failures.push(
        `- ${label}: not measured: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      );
      process.exitCode = 1;
    }
  }
  const percent = (share: number) => `${(share * 100).toFixed(1)} %`;
  const defaultRuns = results.filter(([label]) => label.includes('(the default), run ')).map(([, result]) => result);
  const [bestRun, threadRun, heapRun, budgetRun] = [
    results.find(([label]) => label === "FastAPI protocol, resampler 'best'")?.[1],
    results.find(([label]) => label.includes('audio.renderThreads 1'))?.[1],
    results.find(([label]) => label.includes("V8's own heap growing factor"))?.[1],
    results.find(([label]) => label.includes("V8's own optimization budget"))?.[1],
  ];
  const audioPerCpu = (result: SaturationBenchmarkResult) => result.synthesizedAudioSeconds / result.localCpuSeconds;
  const perCpu = (result: SaturationBenchmarkResult) => audioPerCpu(result).toFixed(1);
  if (defaultRuns.length > 0 && bestRun) {
    const busy = defaultRuns.map((result) => result.meanBusyFraction);
    const audio = defaultRuns.map(audioPerCpu);
    findings.headlines.push(
      `servers busy, whole build (default config, 4 servers at RTF 0.02): ${describeRuns(busy, percent)}; baselines (one run each): 'best' resampler ${percent(bestRun.meanBusyFraction)}${heapRun ? `; V8's own heap growth ${percent(heapRun.meanBusyFraction)}` : ''}${budgetRun ? `; V8's own optimization budget ${percent(budgetRun.meanBusyFraction)}` : ''}${threadRun ? `; mastering in a worker thread ${percent(threadRun.meanBusyFraction)}` : ''}`,
      `synthesized audio s per CPU s of the build's process (servers excluded): ${describeRuns(audio, (value) => value.toFixed(1))}; baselines (one run each): 'best' ${perCpu(bestRun)}${heapRun ? `; V8's own heap growth ${perCpu(heapRun)}` : ''}${budgetRun ? `; V8's own optimization budget ${perCpu(budgetRun)}` : ''}${threadRun ? `; mastering in a worker thread ${perCpu(threadRun)}` : ''}`,
      `full garbage collections in the build (default config): ${defaultRuns.map((result) => result.fullCollections).join(', ')}${heapRun ? `; baseline, V8's own heap growth: ${heapRun.fullCollections}` : ''}`,
    );
    const runsLabel = defaultRuns.length === 1 ? '1 run' : `best of ${defaultRuns.length} runs`;
    findings.figures.push(
      {
        measure: `servers busy, whole build (default config, 4 servers at RTF 0.02, ${runsLabel})`,
        value: percent(Math.max(...busy)),
        ratio: `${ratio(Math.max(...busy), bestRun.meanBusyFraction)} (/ the 'best' resampler's run)`,
      },
      {
        measure: `synthesized audio s per CPU s of the build's process (default config, ${runsLabel})`,
        value: Math.max(...audio).toFixed(1),
        ratio: `${ratio(Math.max(...audio), audioPerCpu(bestRun))} (/ the 'best' resampler's run)`,
      },
    );
  }
  return [
    `Summary (${options.limit} dialogues; 4 servers x 1 request at a time, service time 0.02 x audio duration = 200 s of audio per second at most). Each run in its own process, in this order; the default config ${SATURATION_DEFAULT_RUNS} times unprofiled, then once under the sampling profiler for the CPU by step:`,
    '',
    '| run | servers busy (mean, of wall time) | busy from first request to last answer | s before the first request / after the last answer | synthesized audio s per wall s | per local CPU s | main thread ms per audio s | full collections |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(([label, result]) => {
      const main = result.steps ? Object.values(result.steps).reduce((sum, seconds) => sum + seconds, 0) : null;
      return `| ${label} | ${percent(result.meanBusyFraction)} | ${percent(result.busyFractionWhileSynthesizing)} | ${result.leadSeconds.toFixed(2)} / ${result.tailSeconds.toFixed(2)} | ${(result.synthesizedAudioSeconds / result.wallSeconds).toFixed(1)} | ${perCpu(result)} | ${main === null ? 'n/a' : ((main * 1000) / result.synthesizedAudioSeconds).toFixed(2)} | ${result.fullCollections} |`;
    }),
    ...(failures.length > 0 ? ['', ...failures] : []),
    ...results.flatMap(([label, result]) => ['', `### ${label}`, '', formatSaturationBenchmark(result)]),
  ].join('\n');
}

/** A saturation run's settings; `v8HeapGrowth`, `v8InterruptBudget`: measure with V8's own heap growing factor, optimization budget. */
export type SaturationChildOptions = Partial<SaturationBenchmarkOptions> & {
  v8HeapGrowth?: boolean;
  v8InterruptBudget?: boolean;
};

/**
 * `benchmarkBuildSaturation` in a Node process of its own (pipeline/orchestration/build-saturation.bench.ts
 * run as a script, its options passed as its arguments and SATURATION_* variables), as the command line
 * runs a build: the heap growing factor and optimization budget the command line sets
 * (pipeline/run/heap-growth.ts, optimization-budget.ts), or V8's own with `v8HeapGrowth`,
 * `v8InterruptBudget` (the baselines of those settings).
 * @returns the result and the process's peak resident set (getrusage maxrss)
 * @throws the child's error (its exit status and stderr) when it fails
 */
export function saturationInChildProcess(
  options: SaturationChildOptions,
): Promise<SaturationBenchmarkResult & { maxResidentMebibytes: number }> {
  const script = runnableModule('pipeline/orchestration/build-saturation.bench.ts');
  const argumentsOf = [
    options.dialogues ?? 20,
    options.servers ?? 4,
    options.realTimeFactor ?? 0.02,
    options.protocol ?? 'cosyvoice2',
  ].map(String);
  const environment: Record<string, string> = {
    SATURATION_JSON: '1',
    ...(options.profile === false ? { SATURATION_NO_PROFILE: '1' } : {}),
    ...(options.resampleQuality ? { SATURATION_RESAMPLER: options.resampleQuality } : {}),
    ...(options.resampleThreads !== undefined ? { SATURATION_RESAMPLE_THREADS: String(options.resampleThreads) } : {}),
    ...(options.renderThreads !== undefined ? { SATURATION_RENDER_THREADS: String(options.renderThreads) } : {}),
    ...(options.v8HeapGrowth ? { SATURATION_V8_HEAP_GROWTH: '1' } : {}),
    ...(options.v8InterruptBudget ? { SATURATION_V8_INTERRUPT_BUDGET: '1' } : {}),
    ...(options.corpus ? { SATURATION_CORPUS: options.corpus } : {}),
  };
  return new Promise((resolve, reject) => {
    // a run's settings come from `options` alone: the caller's SATURATION_* variables are not passed on
    // (a SATURATION_NO_PROFILE would leave the profiled run unprofiled, a SATURATION_OUT put every run in
    // one folder), except SATURATION_PROFILE_FILE, which only the profiled run writes
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !name.startsWith('SATURATION_') || name === 'SATURATION_PROFILE_FILE',
      ),
    );
    execFile(
      process.execPath,
      [...TYPESCRIPT_LOADER_ARGUMENTS, script, ...argumentsOf],
      { env: { ...inherited, ...environment }, maxBuffer: 64 * 2 ** 20 },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout.trim().split('\n').at(-1)!))),
    );
  });
}
