/**
 * `npm run bench`: measurements of the pipeline and its services, printed as one Markdown report.
 * Each section has its own baseline, measured in the same run:
 *
 * - build: the first N (default 20) English dialogues of the real TopiOCQA dev set with a fresh
 *   cache, time per stage, audio seconds per second; baseline: the bare TTS engine on the same texts
 *   (the synthesize stage's time as a ratio to it). A second, cached build measures the cache's effect.
 *   The cold build's main-thread CPU is split by step from a CPU profile (pipeline/orchestration/build-saturation.bench.ts).
 * - saturation (pipeline/orchestration/build-saturation.bench.ts): the same N-dialogue build against 4 loopback
 *   CosyVoice2 servers at a real-time factor of 0.02 (one request at a time each): servers' busy
 *   fraction, synthesized audio per wall and per CPU second; the default config three times
 *   (best, median, each run), each baseline (resamplers, heap growth, mastering thread) once, all
 *   unprofiled; then the default once under the sampling profiler for the local CPU by step.
 * - memory: peak resident set of a 20- and a 200-dialogue build against fast loopback servers, each in
 *   its own process (the ratio is the claim: memory flat in corpus size).
 * - dryrun (pipeline/orchestration/plan-build.bench.ts): peak resident set of `build --dry-run` on one
 *   20-turn and one 1,000-turn conversation, each in its own process (the ratio: memory independent of
 *   the conversation's length).
 * - VAD (pipeline/services/vad/vad.bench.ts): Silero against a bare onnxruntime loop, x real time per core.
 * - DNSMOS (pipeline/services/mos/dnsmos.bench.ts): seconds per hour of audio against a bare onnxruntime loop.
 * - chat-scoring (stages/chat-scoring.bench.ts): the quality stage's work on one Chat segment of real
 *   speech against the bare DNSMOS loop, CPU and peak RSS at two segment lengths (memory flat in length).
 * - LLM clients (pipeline/services/llm/llm.bench.ts): throughput against a loopback server, against bare fetch.
 * - TTS service clients (pipeline/services/tts/tts.bench.ts): throughput against loopback servers.
 * - cli: the command's start (`--version`, `--help`) against a bare Node start and against the pipeline
 *   loaded at start, as the command did before its imports became lazy.
 * - tests: the suite as `npm test` runs it (the end-to-end and unit projects at once, vitest.config.ts)
 *   against one worker process, one file after another (`DUPLEXSYNTH_TEST_SERIAL=1`: vitest's default
 *   on 2 cores, the set-up before); wall, CPU, the ten slowest files. It runs the suite twice.
 *
 * A summary at the end puts the default config's figures beside their baselines: servers' busy share
 * and audio per CPU second (saturation, 'best' as before), CLI start, test-suite wall time.
 *
 * The machine may be shared, so wall-clock time alone misleads: every section also reports its CPU
 * time (this process, all threads, user + system, from `process.cpuUsage`; and its terminated child
 * processes, e.g. espeak-ng and ffmpeg, from /proc/self/stat where available) and the load average
 * at its start and end. No limits are asserted anywhere: these are measurements.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DEFAULT_CONFIG_FILE, loadConfigFile, sharedDirectory, type BuildConfig } from '../pipeline/config.ts';
import { runBuild, type BuildReport } from '../pipeline/orchestration/build.ts';
import { scoreDatasetQuality } from '../stages/score-quality.ts';
import { readDatasetFolder } from '../pipeline/quality/dataset-files.ts';
import { decodeWav } from '../pipeline/audio/wav.ts';
import { BARGE_IN_SUFFIX } from '../pipeline/orchestration/dataset-output.ts';
import { benchmarkVad, formatVadBenchmark } from '../pipeline/services/vad/vad.bench.ts';
import { benchmarkDnsmos, formatDnsmosBenchmark } from '../pipeline/services/mos/dnsmos.bench.ts';
import { formatThroughputReport, runLanguageModelThroughputBench } from '../pipeline/services/llm/llm.bench.ts';
import { benchmarkSpeechServices, formatBenchmarkResult } from '../pipeline/services/tts/tts.bench.ts';
import { createSpeechSynthesizer } from '../pipeline/services/tts/synthesizer-registry.ts';
import {
  formatSaturationBenchmark,
  formatStepTable,
  profileMainThread,
  synthesizedSeconds,
  type SaturationBenchmarkOptions,
  type SaturationBenchmarkResult,
} from '../pipeline/orchestration/build-saturation.bench.ts';
import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT, runnableModule, TYPESCRIPT_LOADER_ARGUMENTS } from '../pipeline/storage/package-files.ts';
import { DEFAULT_VOICES } from '../pipeline/services/tts/synthesizer-registry.ts';
import type { DryRunMeasurement } from '../pipeline/orchestration/plan-build.bench.ts';
import { median } from 'simple-statistics';

/** Clock ticks per second of the times in /proc/<pid>/stat (USER_HZ: 100 on every Linux architecture node runs on). */
const PROC_TICKS_PER_SECOND = 100;

/** CPU seconds used so far. */
export interface CpuTimes {
  /** This process, all threads, user + system (`process.cpuUsage`). */
  selfSeconds: number;
  /**
   * Its terminated, waited-for child processes (and theirs), user + system: cutime + cstime of
   * /proc/self/stat. null where /proc is not available. Children still running are not included.
   */
  childrenSeconds: number | null;
}

/**
 * The children's CPU seconds (cutime + cstime, fields 16 and 17) from the text of a /proc/<pid>/stat file.
 * @throws RangeError when the text does not have those fields
 */
export function childrenCpuSecondsFromProcStat(text: string, ticksPerSecond = PROC_TICKS_PER_SECOND): number {
  // the command name (field 2) is in parentheses and may hold spaces or parentheses: split after the last ')'
  const fields = text
    .slice(text.lastIndexOf(')') + 2)
    .trim()
    .split(/\s+/);
  const [cutime, cstime] = [Number(fields[13]), Number(fields[14])]; // fields[0] is field 3 (state)
  if (!Number.isFinite(cutime) || !Number.isFinite(cstime)) throw new RangeError('not a /proc/<pid>/stat line');
  return (cutime + cstime) / ticksPerSecond;
}

/** CPU seconds used so far by this process and its finished child processes. */
export function cpuTimes(): CpuTimes {
  const usage = process.cpuUsage();
  let childrenSeconds: number | null = null;
  try {
    childrenSeconds = childrenCpuSecondsFromProcStat(readFileSync('/proc/self/stat', 'utf8'));
  } catch {
    // not Linux: children's CPU is not measured
  }
  return { selfSeconds: (usage.user + usage.system) / 1e6, childrenSeconds };
}

/** What {@link measure} records about one piece of work. */
export interface Measurement {
  wallSeconds: number;
  /** CPU seconds of this process (all threads). */
  cpuSelfSeconds: number;
  /** CPU seconds of child processes that finished during the work; null where not measurable. */
  cpuChildrenSeconds: number | null;
  /** `os.loadavg()` (1, 5, 15 minutes) before and after. */
  loadAverageStart: number[];
  loadAverageEnd: number[];
}

/** Self + children CPU seconds of a measurement (self only where children are not measurable). */
export function totalCpuSeconds(measurement: Measurement): number {
  return measurement.cpuSelfSeconds + (measurement.cpuChildrenSeconds ?? 0);
}

/** Run `work` and record its wall-clock time, CPU time (this process and its children) and the load average. */
export async function measure<T>(work: () => Promise<T>): Promise<{ value: T; measurement: Measurement }> {
  const loadAverageStart = os.loadavg();
  const cpuStart = cpuTimes();
  const started = performance.now();
  const value = await work();
  const wallSeconds = (performance.now() - started) / 1000;
  const cpuEnd = cpuTimes();
  return {
    value,
    measurement: {
      wallSeconds,
      cpuSelfSeconds: cpuEnd.selfSeconds - cpuStart.selfSeconds,
      cpuChildrenSeconds:
        cpuStart.childrenSeconds === null || cpuEnd.childrenSeconds === null
          ? null
          : cpuEnd.childrenSeconds - cpuStart.childrenSeconds,
      loadAverageStart,
      loadAverageEnd: os.loadavg(),
    },
  };
}

function loadAverage(values: number[]): string {
  return values.map((value) => value.toFixed(2)).join(' / ');
}

/** One line: wall, CPU (self + children) and load average of a measurement. */
export function formatMeasurement(measurement: Measurement): string {
  const children =
    measurement.cpuChildrenSeconds === null
      ? 'child processes not measured'
      : `+ ${measurement.cpuChildrenSeconds.toFixed(2)} s child processes`;
  return (
    `${measurement.wallSeconds.toFixed(2)} s wall; CPU ${measurement.cpuSelfSeconds.toFixed(2)} s this process ${children}; ` +
    `load average (1/5/15 min) ${loadAverage(measurement.loadAverageStart)} at start, ${loadAverage(measurement.loadAverageEnd)} at end`
  );
}

function formatRow(cells: (string | number)[]): string {
  return `| ${cells.join(' | ')} |`;
}

function ratio(numerator: number, denominator: number, digits = 2): string {
  return denominator > 0 ? (numerator / denominator).toFixed(digits) : 'n/a';
}

/** Run the benchmarks and print a Markdown report to stdout, section by section as each finishes. */
export async function runBenchmarks(options: { corpus?: string; limit: number; sections?: string[] }): Promise<void> {
  const started = os.loadavg();
  console.log(
    [
      '# duplexsynth benchmark',
      '',
      `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; load average (1/5/15 min) at start ${loadAverage(started)}. ` +
        'CPU times are user + system; "this process" covers all its threads (onnxruntime included), "child processes" the finished ones (espeak-ng, ffmpeg) from /proc/self/stat.',
    ].join('\n'),
  );
  const sections: [string, string, () => Promise<string>][] = [
    [
      'queue',
      'Queued build: 1, 2, 4 worker processes against one process (BullMQ on a local redis-server)',
      () => queueSection(options),
    ],
    ['build', 'Build (offline engines)', () => buildSection(options)],
    ['saturation', 'Saturation: the build against fast CosyVoice2 servers', () => saturationSection(options)],
    ['memory', 'Memory: 20 against 200 dialogues', memorySection],
    ['dryrun', 'Memory of --dry-run: a 20-turn against a 1,000-turn conversation', dryRunSection],
    ['vad', 'Voice activity detection', vadSection],
    ['dnsmos', 'DNSMOS', dnsmosSection],
    ['chat-scoring', 'Chat segment scoring against the bare DNSMOS loop', chatScoringSection],
    ['llm', 'LLM clients', languageModelSection],
    ['tts', 'TTS service clients', speechServiceSection],
    [
      'cli',
      'CLI start',
      () => cliStartSection().then(({ markdown, headline }) => (headlines.push(headline), markdown)),
    ],
    [
      'tests',
      'Test suite',
      () => testSuiteSection().then(({ markdown, headline }) => (headlines.push(headline), markdown)),
    ],
  ];
  headlines.length = 0;
  const unknown = (options.sections ?? []).filter((name) => !sections.some(([key]) => key === name));
  if (unknown.length > 0)
    throw new RangeError(
      `unknown bench section(s) ${unknown.join(', ')}; the sections are ${sections.map(([key]) => key).join(', ')}`,
    );
  for (const [key, title, run] of sections) {
    if (options.sections && options.sections.length > 0 && !options.sections.includes(key)) continue;
    let body: string;
    try {
      const { value, measurement } = await measure(run);
      body = `${value}\n\nSection: ${formatMeasurement(measurement)}.`;
    } catch (error) {
      body = `Not measured: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
      process.exitCode = 1;
    }
    console.log(`\n## ${title}\n\n${body}`);
  }
  if (headlines.length > 0)
    console.log(
      `\n## Summary: the default config beside its baselines (same run)\n\n${headlines.map((line) => `- ${line}`).join('\n')}`,
    );
  console.log(`\nLoad average (1/5/15 min) at the end: ${loadAverage(os.loadavg())}.`);
}

/** One line per goal figure, each beside its baseline, printed after the sections (filled by them). */
const headlines: string[] = [];

/** The build benchmark (cold and cached build, bare-engine baseline) as Markdown. */
async function buildSection(options: { corpus?: string; limit: number }): Promise<string> {
  const corpus = options.corpus ?? path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-bench-'));
  try {
    const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
    const config: BuildConfig = {
      ...base,
      name: 'bench',
      languages: ['en'],
      corpus: { ...base.corpus, path: corpus, limit: options.limit },
      llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
      datasets: { ...base.datasets, en: 'topiocqa' },
      output: { directory: path.join(scratch, 'out'), cacheDirectory: path.join(scratch, 'cache') },
      // quality scoring is timed on its own below, so the build's time is synthesis and writing
      quality: { ...base.quality, enabled: false },
    };
    const memoryBefore = process.memoryUsage().rss;
    const { value: profiled, measurement: coldTime } = await measure(() => profileMainThread(() => runBuild(config)));
    const cold = profiled.value;
    const synthesized = await synthesizedSeconds(config);
    const { value: warm, measurement: warmTime } = await measure(() => runBuild(config));
    // Quality scoring of the written datasets as a build scores them (the base and its barge-in
    // variant; DNSMOS, signal checks, ffmpeg loudness), fresh cache.
    const datasetDirectories = ['topiocqa', `topiocqa${BARGE_IN_SUFFIX}`].map((name) =>
      path.join(config.output.directory, 'data', 'en', 'task', name),
    );
    const { value: quality, measurement: qualityTime } = await measure(() =>
      profileMainThread(async () => {
        const reports = [];
        for (const directory of datasetDirectories)
          reports.push(
            await scoreDatasetQuality(directory, {
              cacheDirectory: path.join(scratch, 'quality-cache'),
              dnsmos: base.quality.dnsmos,
            }),
          );
        return { dialogues: reports.flatMap((report) => report.dialogues) };
      }),
    );
    const scoredSeconds = quality.value.dialogues.reduce((sum, dialogue) => sum + dialogue.durationSeconds, 0);
    const scoredChannelSeconds = quality.value.dialogues.reduce(
      (sum, dialogue) =>
        sum + dialogue.durationSeconds * dialogue.dnsmos.channels.filter((channel) => channel.scores !== null).length,
      0,
    );
    // Baseline of scoring: the bare DNSMOS loop (model runs alone) on the same recordings.
    const recordings = [];
    for (const directory of datasetDirectories)
      for (const dialogue of (await readDatasetFolder(directory)).dialogues)
        recordings.push(decodeWav(await readFile(dialogue.audioFile), dialogue.audioFile));
    const { bareDnsmosLoop } = await import('../stages/chat-scoring.bench.ts');
    const bareScoring = await bareDnsmosLoop(recordings, path.join(sharedDirectory(), 'models', 'dnsmos'));
    const scoringCpu = totalCpuSeconds(qualityTime);
    headlines.push(
      `quality scoring CPU (this process + ffmpeg) / bare DNSMOS loop CPU on the same ${recordings.length} recordings (base and barge-in variant): ${ratio(scoringCpu, bareScoring.cpuSeconds)} (goal: at most 1.10); ${scoringCpu.toFixed(1)} s against ${bareScoring.cpuSeconds.toFixed(1)} s`,
    );

    // Baseline: the bare engine on the texts the build synthesized (same process-spawn path, no cache,
    // no resampling or analysis).
    const synthesizer = await createSpeechSynthesizer('espeak-ng');
    const texts = await synthesizedTexts(cold);
    const { measurement: baseline } = await measure(async () => {
      for (const [role, text] of texts)
        await synthesizer.synthesize({ text, language: 'en', voice: DEFAULT_VOICES.en!.voices[role] });
    });

    const children = (time: Measurement) =>
      time.cpuChildrenSeconds === null ? 'not measured' : time.cpuChildrenSeconds.toFixed(2);
    const cpuLines =
      baseline.cpuChildrenSeconds === null
        ? [
            `- CPU: child processes are not measurable here (no /proc/self/stat); this process: cold build ${coldTime.cpuSelfSeconds.toFixed(2)} s, baseline ${baseline.cpuSelfSeconds.toFixed(2)} s.`,
          ]
        : [
            `- baseline CPU: ${totalCpuSeconds(baseline).toFixed(2)} s (${baseline.cpuChildrenSeconds.toFixed(2)} s in the espeak-ng processes, ${baseline.cpuSelfSeconds.toFixed(2)} s in this process)`,
            `- cold build CPU / baseline CPU = ${ratio(totalCpuSeconds(coldTime), totalCpuSeconds(baseline))}; (cold - cached build) CPU / baseline CPU = ${ratio(totalCpuSeconds(coldTime) - totalCpuSeconds(warmTime), totalCpuSeconds(baseline))}; ` +
              `child-process CPU, cold build / baseline = ${ratio(coldTime.cpuChildrenSeconds ?? 0, baseline.cpuChildrenSeconds)} (the build's children are the engine processes)`,
          ];
    return [
      `${options.limit} English dialogues of ${path.basename(corpus)}: ${cold.datasets[0]?.dialogues ?? 0} dialogues, ${cold.audioSeconds.toFixed(1)} s of dialogue audio, ${texts.length} utterances synthesized.`,
      '',
      'Stage times are wall clock summed over dialogues; synthesis runs up to 4 dialogues at once (the one being placed and 3 ahead), so its sum exceeds its share of the wall clock.',
      '',
      formatRow(['stage', 'cold build s', 'cached build s']),
      '|---|---:|---:|',
      ...Object.keys(cold.stageSeconds).map((stage) =>
        formatRow([stage, cold.stageSeconds[stage]!.toFixed(2), (warm.stageSeconds[stage] ?? 0).toFixed(2)]),
      ),
      formatRow(['**total (wall clock)**', coldTime.wallSeconds.toFixed(2), warmTime.wallSeconds.toFixed(2)]),
      formatRow(['CPU, this process', coldTime.cpuSelfSeconds.toFixed(2), warmTime.cpuSelfSeconds.toFixed(2)]),
      formatRow(['CPU, child processes', children(coldTime), children(warmTime)]),
      formatRow([
        'load average (1 min) start → end',
        `${coldTime.loadAverageStart[0]!.toFixed(2)} → ${coldTime.loadAverageEnd[0]!.toFixed(2)}`,
        `${warmTime.loadAverageStart[0]!.toFixed(2)} → ${warmTime.loadAverageEnd[0]!.toFixed(2)}`,
      ]),
      '',
      `- audio seconds produced per wall-clock second: cold ${ratio(cold.audioSeconds, coldTime.wallSeconds, 1)}, cached ${ratio(warm.audioSeconds, warmTime.wallSeconds, 1)}; per CPU second (this process + children): cold ${ratio(cold.audioSeconds, totalCpuSeconds(coldTime), 1)}, cached ${ratio(warm.audioSeconds, totalCpuSeconds(warmTime), 1)}`,
      `- baseline, bare espeak-ng on the same ${texts.length} texts, one at a time: ${formatMeasurement(baseline)}`,
      `- cold build (without quality scoring) / baseline, wall clock = ${ratio(coldTime.wallSeconds, baseline.wallSeconds)} (the build runs ${config.synthesis.concurrency} engine processes at once and adds resampling, speech detection, word timing, placement and writing of both variants)`,
      ...cpuLines,
      `- cached build / cold build = ${ratio(warmTime.wallSeconds, coldTime.wallSeconds, 3)} wall, ${ratio(totalCpuSeconds(warmTime), totalCpuSeconds(coldTime), 3)} CPU; synthesis cache on the cached build: ${JSON.stringify(warm.cache['synthesize-speech'] ?? {})}`,
      `- resident memory: ${(memoryBefore / 2 ** 20).toFixed(0)} MiB before, ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB after`,
      '',
      `Cold build, main-thread CPU by step (${profiled.mainThreadCpuSeconds === null ? 'profile seconds' : `${profiled.mainThreadCpuSeconds.toFixed(2)} s`}; the engine processes and ffmpeg are child processes, not in it), per second of the ${synthesized.toFixed(0)} s of synthesized audio:`,
      '',
      formatStepTable(profiled.steps, synthesized),
      '',
      `Quality scoring of the ${quality.value.dialogues.length} dialogues (${scoredSeconds.toFixed(0)} s of dialogue audio, ${scoredChannelSeconds.toFixed(0)} s of channels with speech scored by DNSMOS; fresh cache; ${base.quality.dnsmos.concurrentDialogues} dialogues at once, ${base.quality.dnsmos.batchWindows} windows per model run): ${formatMeasurement(qualityTime)}; ` +
        `${ratio(qualityTime.wallSeconds * 1000, scoredChannelSeconds, 1)} ms wall per channel-second scored. ` +
        `Baseline, the bare DNSMOS loop (stages/chat-scoring.bench.ts \`bareDnsmosLoop\`: the two models' runs alone, one window at a time) on the same ${recordings.length} recordings: ${bareScoring.windows} windows, ${bareScoring.cpuSeconds.toFixed(2)} s CPU, ${bareScoring.wallSeconds.toFixed(2)} s wall; ` +
        `scoring CPU (this process + children) / bare loop CPU = ${ratio(scoringCpu, bareScoring.cpuSeconds)}. Main-thread CPU by step (onnxruntime's calling thread computes too, so DNSMOS shows here):`,
      '',
      formatStepTable(quality.steps, scoredChannelSeconds)
        .replace('ms per audio s', 'ms per channel-second')
        .replace('audio s per CPU s', 'channel-seconds per CPU s'),
    ].join('\n');
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Silero VAD against a bare onnxruntime loop (its own baseline), on about 60 s of espeak-ng speech. */
/**
 * The queued build (pipeline/orchestration/queued-build.bench.ts): 1, 2 and 4 worker processes against
 * the one-process build, offline and against 4 loopback CosyVoice2 servers; coordinator and Redis cost
 * per dialogue. The dialogues are at most 16 (each configuration builds them from an empty cache; fewer
 * leave the ratios to the fixed costs of a build: the workers' corpus reading, the commit, the report).
 */
async function queueSection(options: { corpus?: string; limit: number }): Promise<string> {
  const dialogues = Math.min(options.limit, 16);
  const { benchmarkQueuedBuild, formatQueuedBuildBenchmark } =
    await import('../pipeline/orchestration/queued-build.bench.ts');
  const load = os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join('/');
  const runs = await benchmarkQueuedBuild({
    dialogues,
    childrenCpuSeconds: () => cpuTimes().childrenSeconds,
    ...(options.corpus ? { corpus: options.corpus } : {}),
  });
  return [
    `${dialogues} TopiOCQA dev dialogues (English, rules rewrite, speex resampling, barge-in variants, quality off), each run from an empty cache; load average at start ${load}, at end ${os
      .loadavg()
      .map((value) => value.toFixed(1))
      .join('/')} (the ratios need the cores free to mean what they say):`,
    '',
    formatQueuedBuildBenchmark(runs),
  ].join('\n');
}

/** The quality stage's per-segment scoring on real speech against the bare DNSMOS loop (stages/chat-scoring.bench.ts). */
async function chatScoringSection(): Promise<string> {
  const { benchmarkChatScoring, formatChatScoringBenchmark } = await import('../stages/chat-scoring.bench.ts');
  return formatChatScoringBenchmark(await benchmarkChatScoring());
}

async function vadSection(): Promise<string> {
  return formatVadBenchmark(await benchmarkVad());
}

/**
 * DNSMOS against a bare onnxruntime loop, with the shared models: 60 s at 16 kHz (what the build
 * scores: its WAVs are 16 kHz, nothing is resampled) and 30 s at 24 kHz (resampling included).
 */
async function dnsmosSection(): Promise<string> {
  const modelDirectory = path.join(sharedDirectory(), 'models', 'dnsmos');
  return [
    formatDnsmosBenchmark(await benchmarkDnsmos({ modelDirectory, audioSeconds: 60, sampleRate: 16000 })),
    '',
    formatDnsmosBenchmark(
      await benchmarkDnsmos({ modelDirectory, audioSeconds: 30, sampleRate: 24000, repetitions: 2 }),
    ),
  ].join('\n');
}

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
async function saturationSection(options: { corpus?: string; limit: number }): Promise<string> {
  const defaultLabel = (run: number) =>
    `FastAPI protocol, resampler 'speex' (the default), run ${run} of ${SATURATION_DEFAULT_RUNS}`;
  const defaultSettings: SaturationChildOptions = { protocol: 'cosyvoice2', resampleQuality: 'speex', profile: false };
  const baselines: [string, SaturationChildOptions][] = [
    [
      "FastAPI protocol, resampler 'speex', V8's own heap growing factor (before pipeline/run/heap-growth.ts)",
      { protocol: 'cosyvoice2', resampleQuality: 'speex', v8HeapGrowth: true, profile: false },
    ],
    [
      "FastAPI protocol, resampler 'speex', V8's own optimization budget (before pipeline/run/optimization-budget.ts)",
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
    headlines.push(
      `servers busy, whole build (default config, 4 servers at RTF 0.02): ${describeRuns(busy, percent)}; baselines (one run each): 'best' (the resampler before) ${percent(bestRun.meanBusyFraction)}${heapRun ? `; V8's own heap growth ${percent(heapRun.meanBusyFraction)}` : ''}${budgetRun ? `; V8's own optimization budget ${percent(budgetRun.meanBusyFraction)}` : ''}${threadRun ? `; mastering in a worker thread ${percent(threadRun.meanBusyFraction)}` : ''}`,
      `synthesized audio s per CPU s of the build's process (servers excluded): ${describeRuns(audio, (value) => value.toFixed(1))}; baselines (one run each): 'best' ${perCpu(bestRun)}${heapRun ? `; V8's own heap growth ${perCpu(heapRun)}` : ''}${budgetRun ? `; V8's own optimization budget ${perCpu(budgetRun)}` : ''}${threadRun ? `; mastering in a worker thread ${perCpu(threadRun)}` : ''}`,
      `full garbage collections in the build (default config): ${defaultRuns.map((result) => result.fullCollections).join(', ')}${heapRun ? `; baseline, V8's own heap growth: ${heapRun.fullCollections}` : ''}`,
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

/**
 * Repeated measurements of one setting for a headline: `best B of N runs (median M; v1, v2, ...)`,
 * best = the largest (a busy share, audio per CPU second: another process's load only lowers them).
 * @param values one per run, in run order (at least one)
 */
export function describeRuns(values: readonly number[], format: (value: number) => string): string {
  if (values.length === 1) return format(values[0]!);
  return `best ${format(Math.max(...values))} of ${values.length} runs (median ${format(median(values as number[]))}; ${values.map(format).join(', ')})`;
}

/** A saturation run's settings; `v8HeapGrowth`, `v8InterruptBudget`: measure with V8's own heap growing factor, optimization budget. */
type SaturationChildOptions = Partial<SaturationBenchmarkOptions> & {
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
function saturationInChildProcess(
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

/**
 * Peak resident set (getrusage maxrss) of a 20- and a 200-dialogue build, each in its own process,
 * against 4 loopback CosyVoice2 servers at RTF 0.002 with the 'speex' resampler and no profile (a
 * 200-dialogue build against espeak-ng would take about an hour here); quality scoring off. The peak
 * includes the loopback servers' thread, which runs in the same process.
 */
async function memorySection(): Promise<string> {
  const runOne = (dialogues: number) =>
    saturationInChildProcess({
      dialogues,
      servers: 4,
      realTimeFactor: 0.002,
      profile: false,
      resampleQuality: 'speex',
    });
  const small = await runOne(20);
  const large = await runOne(200);
  const row = (result: typeof small) =>
    `| ${result.options.dialogues} | ${result.writtenAudioSeconds.toFixed(0)} | ${result.wallSeconds.toFixed(1)} | ${result.maxResidentMebibytes.toFixed(0)} | ${result.failedDialogues} |`;
  return [
    'Each build in its own process (`node --import tsx/esm pipeline/orchestration/build-saturation.bench.ts N 4 0.002` with SATURATION_RESAMPLER=speex): 4 loopback CosyVoice2 servers at RTF 0.002, quality scoring off.',
    '',
    '| dialogues | dialogue audio written s | wall s | peak RSS MiB (process, servers included) | failed |',
    '|---:|---:|---:|---:|---:|',
    row(small),
    row(large),
    '',
    `- peak RSS, 200 / 20 dialogues = ${ratio(large.maxResidentMebibytes, small.maxResidentMebibytes)} (goal <= 1.5)`,
  ].join('\n');
}

/**
 * `build --dry-run` of one conversation of 20 and of 1,000 turns (pipeline/orchestration/plan-build.bench.ts),
 * each in its own process: the peak resident set's ratio is the claim (memory independent of the
 * conversation's length; the planner holds one window of stand-in clips).
 */
async function dryRunSection(): Promise<string> {
  const script = runnableModule('pipeline/orchestration/plan-build.bench.ts');
  const runOne = (turns: number) =>
    new Promise<DryRunMeasurement>((resolve, reject) => {
      execFile(
        process.execPath,
        [...TYPESCRIPT_LOADER_ARGUMENTS, script, String(turns)],
        { maxBuffer: 64 * 2 ** 20 },
        (error, stdout) =>
          error ? reject(error) : resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as DryRunMeasurement),
      );
    });
  const short = await runOne(20);
  const long = await runOne(1000);
  const row = (result: DryRunMeasurement) =>
    `| ${result.turns} | ${(result.corpusBytes / 1e6).toFixed(2)} | ${result.utterances} | ${result.wallSeconds.toFixed(1)} | ${result.maxResidentMebibytes.toFixed(0)} |`;
  return [
    'Each dry run in its own process (`node --import tsx/esm pipeline/orchestration/plan-build.bench.ts TURNS`): one conversation, offline English config (rules rewrite, espeak-ng), empty cache, so every clip is a planned request answered with stand-in audio.',
    '',
    '| turns | corpus MB | utterances planned | wall s | peak RSS MiB |',
    '|---:|---:|---:|---:|---:|',
    row(short),
    row(long),
    '',
    `- peak RSS, 1,000 / 20 turns = ${ratio(long.maxResidentMebibytes, short.maxResidentMebibytes)} for ${ratio(long.utterances, short.utterances, 0)} times the utterances`,
  ].join('\n');
}

/** Both LLM clients against a loopback server (4 requests at once x 300 ms), each with its bare-fetch baseline. */
async function languageModelSection(): Promise<string> {
  const settings = { capacity: 4, latencyMilliseconds: 300 };
  const results = [
    await runLanguageModelThroughputBench({ ...settings, backend: 'gemini' }),
    await runLanguageModelThroughputBench({ ...settings, backend: 'openai-compatible' }),
  ];
  return formatThroughputReport(results);
}

/** The CosyVoice2 client against 4 loopback servers (1 request at a time x 300 ms); the baseline is the servers' maximum rate. */
async function speechServiceSection(): Promise<string> {
  // its own report starts with a level-1 title; this report's sections are level 2
  return formatBenchmarkResult(await benchmarkSpeechServices({ backend: 'cosyvoice2' })).replace(
    /^# (.*)\n\n/,
    '$1:\n\n',
  );
}

async function synthesizedTexts(report: BuildReport): Promise<['user' | 'system', string][]> {
  const { readFile, readdir } = await import('node:fs/promises');
  const directory = path.join(report.outputDirectory, 'data', 'en', 'task', 'topiocqa', 'metadata');
  const texts: ['user' | 'system', string][] = [];
  for (const file of (await readdir(directory)).sort()) {
    const metadata = JSON.parse(await readFile(path.join(directory, file), 'utf8')) as {
      utterances: { role: 'user' | 'system'; text: { synthesized: string } }[];
    };
    for (const utterance of metadata.utterances) texts.push([utterance.role, utterance.text.synthesized]);
  }
  return texts;
}

/** Runs a command to its end (any exit code) and returns its standard output. */
function runToEnd(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  timeoutMilliseconds = 0,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: PACKAGE_ROOT, env, maxBuffer: 256 * 2 ** 20, timeout: timeoutMilliseconds },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** The fastest of `repetitions` runs (by CPU: the least disturbed by other processes on a shared machine). */
async function fastestOf(repetitions: number, work: () => Promise<unknown>): Promise<Measurement> {
  let best: Measurement | null = null;
  for (let index = 0; index < repetitions; index++) {
    const { measurement } = await measure(work);
    if (best === null || totalCpuSeconds(measurement) < totalCpuSeconds(best)) best = measurement;
  }
  return best!;
}

/** Modules the command loaded at start before its imports became lazy (scripts/cli.ts's former static imports). */
const EAGER_START_MODULES = [
  'pipeline/config',
  'pipeline/orchestration/build',
  'pipeline/orchestration/plan-build',
  'pipeline/run/verify-dataset',
  'pipeline/run/progress',
  'pipeline/events/index',
  'pipeline/events/evaluable-events',
  'scripts/commands/quality',
  'scripts/commands/measure',
  'scripts/commands/export',
  'scripts/commands/report',
  'scripts/commands/status',
  'scripts/commands/prompts',
  'scripts/commands/chat',
  'pipeline/export/index',
  'pipeline/report/build-report',
  'pipeline/orchestration/build-status',
  'stages/score-quality',
  'stages/split-dev-test',
];

/** The `cli` section: start of `duplexsynth --version` and `--help` against its baselines. */
export async function cliStartSection(repetitions = 5): Promise<{ markdown: string; headline: string }> {
  // scripts/build-dist.js is plain JavaScript beside the sources, never compiled into dist/: found from the package root
  const { distState } = (await import(pathToFileURL(path.join(PACKAGE_ROOT, 'scripts', 'build-dist.js')).href)) as {
    distState: () => { fresh: boolean };
  };
  const compiled = distState().fresh;
  const command = compiled
    ? [path.join(PACKAGE_ROOT, 'scripts', 'duplexsynth.js')]
    : [path.join(PACKAGE_ROOT, 'scripts', 'duplexsynth-dev.js')];
  const moduleUrl = (module: string) =>
    pathToFileURL(compiled ? path.join(PACKAGE_ROOT, 'dist', `${module}.js`) : path.join(PACKAGE_ROOT, `${module}.ts`))
      .href;
  const eager = `await Promise.all(${JSON.stringify(EAGER_START_MODULES.map(moduleUrl))}.map((url) => import(url)));`;
  const loader = compiled ? [] : [...TYPESCRIPT_LOADER_ARGUMENTS];
  const rows: [string, Measurement][] = [
    [
      '`duplexsynth --version`',
      await fastestOf(repetitions, () => runToEnd(process.execPath, [...command, '--version'])),
    ],
    ['`duplexsynth --help`', await fastestOf(repetitions, () => runToEnd(process.execPath, [...command, '--help']))],
    ['baseline: bare `node -e 0`', await fastestOf(repetitions, () => runToEnd(process.execPath, ['-e', '0']))],
    [
      'baseline: the modules the command loaded at start before (whole pipeline)',
      await fastestOf(repetitions, () => runToEnd(process.execPath, [...loader, '--input-type=module', '-e', eager])),
    ],
  ];
  const cpu = (measurement: Measurement) => totalCpuSeconds(measurement).toFixed(3);
  const [version, help, , before] = rows.map(([, measurement]) => measurement) as [
    Measurement,
    Measurement,
    Measurement,
    Measurement,
  ];
  return {
    markdown: [
      `${compiled ? 'The compiled command (dist/, what `npm install` users run)' : 'From the sources through tsx (dist/ is missing or stale: run `npm run build` to measure the compiled command)'}; fastest of ${repetitions} runs each, by CPU.`,
      '',
      '| run | wall s | CPU s (user + system) |',
      '|---|---:|---:|',
      ...rows.map(
        ([label, measurement]) => `| ${label} | ${measurement.wallSeconds.toFixed(3)} | ${cpu(measurement)} |`,
      ),
      '',
      `- \`--help\` CPU / eager start CPU = ${(totalCpuSeconds(help) / totalCpuSeconds(before)).toFixed(2)} (goal: under 0.5 s on an idle machine, where wall ≈ CPU)`,
    ].join('\n'),
    headline: `CLI start: \`--version\` ${version.wallSeconds.toFixed(2)} s wall / ${cpu(version)} s CPU, \`--help\` ${help.wallSeconds.toFixed(2)} s / ${cpu(help)} s CPU; baseline (the pipeline loaded at start, as before) ${before.wallSeconds.toFixed(2)} s / ${cpu(before)} s CPU`,
  };
}

/** vitest's JSON report (the fields used here). */
interface VitestJsonReport {
  numTotalTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: { name: string; startTime: number; endTime: number; status: string }[];
}

/** One `vitest run` of the suite with the JSON reporter. */
async function runSuite(
  serial: boolean,
  files: readonly string[],
): Promise<{ report: VitestJsonReport | null; measurement: Measurement; exitCode: number }> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-bench-tests-'));
  try {
    const outputFile = path.join(scratch, 'report.json');
    const vitest = path.join(PACKAGE_ROOT, 'node_modules', 'vitest', 'vitest.mjs');
    const env = { ...process.env, ...(serial ? { DUPLEXSYNTH_TEST_SERIAL: '1' } : {}) };
    const { value, measurement } = await measure(() =>
      runToEnd(process.execPath, [vitest, 'run', '--reporter=json', `--outputFile=${outputFile}`, ...files], env),
    );
    const report = await readFile(outputFile, 'utf8').then(
      (text) => JSON.parse(text) as VitestJsonReport,
      () => null,
    );
    return { report, measurement, exitCode: value.code };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The `tests` section: the suite as `npm test` runs it against one worker, one file at a time.
 * @param files only these test files (default: the whole suite)
 */
export async function testSuiteSection(files: readonly string[] = []): Promise<{ markdown: string; headline: string }> {
  const parallel = await runSuite(false, files);
  const serial = await runSuite(true, files);
  const describe = (label: string, run: Awaited<ReturnType<typeof runSuite>>) => {
    const report = run.report;
    const tests = report
      ? `${report.numTotalTests} tests, ${report.numFailedTests} failed, ${report.numPendingTests} skipped`
      : `no report (exit code ${run.exitCode})`;
    return `| ${label} | ${run.measurement.wallSeconds.toFixed(0)} | ${totalCpuSeconds(run.measurement).toFixed(0)} | ${tests} |`;
  };
  const seconds = (result: VitestJsonReport['testResults'][number]) => (result.endTime - result.startTime) / 1000;
  const slowest = [...(parallel.report?.testResults ?? [])].sort((a, b) => seconds(b) - seconds(a)).slice(0, 10);
  const serialSeconds = new Map((serial.report?.testResults ?? []).map((result) => [result.name, seconds(result)]));
  const relative = (file: string) => path.relative(PACKAGE_ROOT, file);
  const load = `load average (1 min) ${parallel.measurement.loadAverageStart[0]!.toFixed(1)} → ${serial.measurement.loadAverageEnd[0]!.toFixed(1)}`;
  return {
    markdown: [
      `\`vitest run\`${files.length > 0 ? ` of ${files.length} files` : ' of the whole suite'} (the type check and layering of \`npm test\` not included); CPU = the test processes' user + system; ${load}.`,
      '',
      '| run | wall s | CPU s | tests |',
      '|---|---:|---:|---|',
      describe('as `npm test` runs it: end-to-end and unit projects at once (vitest.config.ts)', parallel),
      describe('baseline: one worker, one file at a time (`DUPLEXSYNTH_TEST_SERIAL=1`)', serial),
      '',
      `- wall, npm test / baseline = ${(parallel.measurement.wallSeconds / serial.measurement.wallSeconds).toFixed(2)}; CPU = ${(totalCpuSeconds(parallel.measurement) / totalCpuSeconds(serial.measurement)).toFixed(2)}`,
      '',
      'The ten slowest files (wall s in the parallel run, where files share the cores; alone in the baseline run):',
      '',
      '| file | s (npm test) | s (one worker) |',
      '|---|---:|---:|',
      ...slowest.map(
        (result) =>
          `| ${relative(result.name)} | ${seconds(result).toFixed(1)} | ${serialSeconds.get(result.name)?.toFixed(1) ?? 'n/a'} |`,
      ),
    ].join('\n'),
    headline: `test suite: ${(parallel.measurement.wallSeconds / 60).toFixed(1)} min wall, ${totalCpuSeconds(parallel.measurement).toFixed(0)} CPU s; baseline (one worker) ${(serial.measurement.wallSeconds / 60).toFixed(1)} min, ${totalCpuSeconds(serial.measurement).toFixed(0)} CPU s`,
  };
}
