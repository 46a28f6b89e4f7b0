/**
 * `npm run bench`: measurements of the pipeline and its services, printed as one Markdown report.
 * Each section has its own baseline, measured in the same run:
 *
 * - build: the first N (default 20) English dialogues of the real TopiOCQA dev set with a fresh
 *   cache, time per stage, audio seconds per second; baseline: the bare TTS engine on the same texts
 *   (the synthesize stage's time as a ratio to it). A second, cached build measures the cache's effect.
 *   The cold build's main-thread CPU is split by step from a CPU profile (pipeline/orchestration/build-saturation-profile.bench.ts).
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
 * - cli: the command's start (`--version`, `--help`) against a bare Node start and against the whole
 *   pipeline loaded at start (the command imports its subcommands' modules lazily).
 * - tests: the suite as `npm test` runs it (the end-to-end and unit projects at once, vitest.config.ts)
 *   against one worker process, one file after another (`DUPLEXSYNTH_TEST_SERIAL=1`: vitest's default
 *   on 2 cores); wall, CPU, the ten slowest files. It runs the suite twice.
 *
 * A summary at the end puts the default config's figures beside their baselines: servers' busy share
 * and audio per CPU second (saturation, beside the 'best' resampler), CLI start, test-suite wall time.
 * docs/performance.md is then rewritten with the figures of the sections run (scripts/bench-performance-page.ts).
 *
 * This module runs the sections in order and writes the report; the sections are in
 * scripts/bench-build-section.ts, bench-saturation-section.ts, bench-memory-sections.ts,
 * bench-service-sections.ts, bench-cli-start.ts and bench-test-suite.ts, the measuring helpers in
 * scripts/bench-measure.ts.
 *
 * The machine may be shared, so wall-clock time alone misleads: every section also reports its CPU
 * time (this process, all threads, user + system, from `process.cpuUsage`; and its terminated child
 * processes, e.g. espeak-ng and ffmpeg, from /proc/self/stat where available) and the load average
 * at its start and end. No limits are asserted anywhere: these are measurements.
 */
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../pipeline/storage/package-files.ts';
import { buildSection } from './bench-build-section.ts';
import { cliStartSection } from './bench-cli-start.ts';
import { formatMeasurement, loadAverage, measure } from './bench-measure.ts';
import { dryRunSection, memorySection } from './bench-memory-sections.ts';
import { writePerformancePage, type SectionFigures } from './bench-performance-page.ts';
import { saturationSection } from './bench-saturation-section.ts';
import { simulatedMachinesSection } from './bench-simulated-machines.ts';
import type { BenchOptions, BenchSection, SectionFindings } from './bench-section.ts';
import {
  chatScoringSection,
  dnsmosSection,
  languageModelSection,
  queueSection,
  speechServiceSection,
  vadSection,
} from './bench-service-sections.ts';
import { testSuiteSection } from './bench-test-suite.ts';

export {
  childrenCpuSecondsFromProcStat,
  cpuTimes,
  describeRuns,
  formatMeasurement,
  measure,
  totalCpuSeconds,
  type CpuTimes,
  type Measurement,
} from './bench-measure.ts';
export { cliStartSection } from './bench-cli-start.ts';
export { testSuiteSection } from './bench-test-suite.ts';

/** The page of the figures, rewritten by every run (scripts/bench-performance-page.ts). */
export const PERFORMANCE_PAGE = path.join(PACKAGE_ROOT, 'docs', 'performance.md');

/** A section whose `{ markdown, headline, figures }` result is reported into `findings`. */
function headlined(
  run: () => Promise<{ markdown: string; headline: string; figures: SectionFindings['figures'] }>,
): BenchSection {
  return async (_options, findings) => {
    const { markdown, headline, figures } = await run();
    findings.headlines.push(headline);
    findings.figures.push(...figures);
    return markdown;
  };
}

/** The sections: name (as `--sections` takes it), title, section; in the order they run. */
const SECTIONS: readonly [string, string, BenchSection][] = [
  [
    'queue',
    'Queued build: 1, 2, 4 worker processes against one process (BullMQ on a local redis-server)',
    queueSection,
  ],
  [
    'machines',
    'Queued build on simulated machines: a CPU-quota cgroup per process, 1, 2, 4 workers against one machine',
    simulatedMachinesSection,
  ],
  ['build', 'Build (offline engines)', buildSection],
  ['saturation', 'Saturation: the build against fast CosyVoice2 servers', saturationSection],
  ['memory', 'Memory: 20 against 200 dialogues', memorySection],
  ['dryrun', 'Memory of --dry-run: a 20-turn against a 1,000-turn conversation', dryRunSection],
  ['vad', 'Voice activity detection', vadSection],
  ['dnsmos', 'DNSMOS', dnsmosSection],
  ['chat-scoring', 'Chat segment scoring against the bare DNSMOS loop', chatScoringSection],
  ['llm', 'LLM clients', languageModelSection],
  ['tts', 'TTS service clients', speechServiceSection],
  ['cli', 'CLI start', headlined(() => cliStartSection())],
  ['tests', 'Test suite', headlined(() => testSuiteSection())],
];

/**
 * Run the benchmarks and print a Markdown report to stdout, section by section as each finishes; then
 * rewrite `performancePage` (default docs/performance.md) with the figures of the sections run.
 * @throws RangeError naming the sections when `sections` holds an unknown one (before any runs)
 */
export async function runBenchmarks(
  options: BenchOptions & { sections?: string[]; performancePage?: string },
): Promise<void> {
  const started = os.loadavg();
  console.log(
    [
      '# duplexsynth benchmark',
      '',
      `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; load average (1/5/15 min) at start ${loadAverage(started)}. ` +
        'CPU times are user + system; "this process" covers all its threads (onnxruntime included), "child processes" the finished ones (espeak-ng, ffmpeg) from /proc/self/stat.',
    ].join('\n'),
  );
  const unknown = (options.sections ?? []).filter((name) => !SECTIONS.some(([key]) => key === name));
  if (unknown.length > 0)
    throw new RangeError(
      `unknown bench section(s) ${unknown.join(', ')}; the sections are ${SECTIONS.map(([key]) => key).join(', ')}`,
    );
  const headlines: string[] = [];
  const pageSections: SectionFigures[] = [];
  for (const [key, title, run] of SECTIONS) {
    if (options.sections && options.sections.length > 0 && !options.sections.includes(key)) continue;
    const findings: SectionFindings = { headlines: [], figures: [] };
    let body: string;
    try {
      const { value, measurement } = await measure(() => run(options, findings));
      body = `${value}\n\nSection: ${formatMeasurement(measurement)}.`;
      pageSections.push({ section: key, figures: findings.figures });
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n')[0]! : String(error);
      body = `Not measured: ${reason}`;
      pageSections.push({ section: key, figures: [], failure: reason });
      process.exitCode = 1;
    }
    headlines.push(...findings.headlines);
    console.log(`\n## ${title}\n\n${body}`);
  }
  if (headlines.length > 0)
    console.log(
      `\n## Summary: the default config beside its baselines (same run)\n\n${headlines.map((line) => `- ${line}`).join('\n')}`,
    );
  console.log(`\nLoad average (1/5/15 min) at the end: ${loadAverage(os.loadavg())}.`);
  const page = options.performancePage ?? PERFORMANCE_PAGE;
  await writePerformancePage(page, pageSections);
  console.log(`\nThe figures of these sections: ${path.relative(process.cwd(), page) || page} (rewritten).`);
}
