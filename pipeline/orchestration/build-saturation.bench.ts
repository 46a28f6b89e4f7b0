/**
 * Saturation benchmark of the whole build: a real-corpus build (TopiOCQA dev, English, rules rewrite)
 * against N loopback CosyVoice2 servers (FastAPI or Triton protocol) that each serve one request at a
 * time with a service time of `realTimeFactor` x the answer's audio duration, answering a cheap
 * speech-like signal (loopback-speech.ts `speechLikeSignal`), so the servers cost this machine almost
 * nothing and stand for GPUs elsewhere. Reports the servers' busy fraction, synthesized audio seconds
 * per wall second and per CPU second, and the local CPU per audio second split by step, from a CPU
 * profile of the build's thread (node:inspector; build-saturation-profile.bench.ts `classifyProfile`).
The result and its Markdown: build-saturation-result.bench.ts.
 *
 * Run: `npx tsx pipeline/orchestration/build-saturation.bench.ts [dialogues] [servers] [realTimeFactor] [protocol]`
 * (defaults 20, 4, 0.02, cosyvoice2). Quality scoring (DNSMOS) is off here: it is measured on its
 * own (pipeline/services/mos/dnsmos.bench.ts) against the bare model loop.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { DEFAULT_CONFIG_FILE, loadConfigFile, resolveConfig, sharedDirectory, type BuildConfig } from '../config.ts';
import { startLoopbackServersInProcess } from '../services/tts/testing/loopback-worker.ts';
import { writePromptFixture } from '../services/tts/testing/prompt-fixtures.ts';
import { runBuild, type BuildReport } from './build.ts';
import { widenHeapGrowth, widenedHeapGrowthPercent } from '../run/heap-growth.ts';
import { raiseOptimizationBudget, raisedOptimizationBudget } from '../run/optimization-budget.ts';
import {
  mainThreadCpuSeconds,
  profileMainThread,
  threadCpuSecondsByName,
  type StepSeconds,
} from './build-saturation-profile.bench.ts';
import {
  formatSaturationBenchmark,
  type SaturationBenchmarkOptions,
  type SaturationBenchmarkResult,
} from './build-saturation-result.bench.ts';

export {
  classifyProfile,
  formatStepTable,
  mainThreadCpuSeconds,
  profileMainThread,
  STEP_ORDER,
  stepOfFrame,
  subtreeStepOfFrame,
  threadCpuSecondsByName,
  type CpuProfile,
  type StepSeconds,
} from './build-saturation-profile.bench.ts';
export {
  formatSaturationBenchmark,
  type SaturationBenchmarkOptions,
  type SaturationBenchmarkResult,
} from './build-saturation-result.bench.ts';

/** The defaults of {@link benchmarkBuildSaturation}'s options (`concurrency` and `corpus` depend on others). */
const DEFAULTS: Omit<SaturationBenchmarkOptions, 'concurrency' | 'corpus'> = {
  dialogues: 20,
  servers: 4,
  realTimeFactor: 0.02,
  protocol: 'cosyvoice2',
  profile: true,
  resampleQuality: 'speex',
  resampleThreads: 0,
  renderThreads: 0,
  fullBandMaster: true,
  requestsPerServer: 2,
};

/**
 * Runs the saturation build (see the file comment).
 * @throws Error when espeak-ng is missing (voice prompts) or the build cannot start.
 */
export async function benchmarkBuildSaturation(
  options: Partial<SaturationBenchmarkOptions> = {},
): Promise<SaturationBenchmarkResult> {
  const base = { ...DEFAULTS, ...options };
  const resolved: SaturationBenchmarkOptions = {
    corpus: path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json'),
    concurrency: 4 * base.servers,
    ...base,
  };
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-saturation-'));
  const servers = await startLoopbackServersInProcess({
    protocol: resolved.protocol,
    servers: resolved.servers,
    latencyMs: 0,
    capacity: 1,
    voice: {},
    warmTexts: [],
    realTimeFactor: resolved.realTimeFactor,
    speech: 'speech-like',
  });
  try {
    const transcripts = [
      'I grew up near the sea and I still love the sound of waves.',
      'My favourite season is autumn because the light is so soft.',
    ];
    const prompts = await Promise.all(
      transcripts.map((transcript, index) =>
        writePromptFixture(scratch, transcript, { pitch: 30 + 40 * index, minimumSeconds: 3 }),
      ),
    );
    // the Triton client's voice has no mode (zero-shot is what its server does)
    const voice = (index: number) => ({
      ...(resolved.protocol === 'cosyvoice2' ? { mode: 'zero-shot' } : {}),
      promptWav: prompts[index]!.path,
      promptText: transcripts[index]!,
    });
    const defaults = await loadConfigFile(DEFAULT_CONFIG_FILE);
    const config: BuildConfig = resolveConfig(
      {
        name: 'saturation',
        seed: defaults.seed,
        languages: ['en'],
        corpus: { path: resolved.corpus, limit: resolved.dialogues },
        output: {
          directory: resolved.outputDirectory ?? path.join(scratch, 'out'),
          cacheDirectory: path.join(scratch, 'cache'),
        },
        datasets: { en: 'topiocqa' },
        llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
        tts: {
          en: {
            backend: resolved.protocol,
            service: { urls: servers.urls, sampleRate: 24000, concurrencyPerEndpoint: resolved.requestsPerServer },
            voices: { user: voice(0), system: voice(1) },
          },
        },
        synthesis: {
          concurrency: resolved.concurrency,
          resampleQuality: resolved.resampleQuality,
          resampleThreads: resolved.resampleThreads,
        },
        audio: { renderThreads: resolved.renderThreads, fullBandMaster: resolved.fullBandMaster },
        quality: { enabled: false },
      },
      'saturation benchmark',
      scratch,
    );
    // Warm-up outside the clock: one dialogue into other folders (module loading and compilation,
    // JIT, the voice prompts, connections), so the measurement is the steady state of a long build.
    await runBuild({
      ...config,
      name: 'saturation-warm-up',
      corpus: { ...config.corpus, limit: 1 },
      output: { directory: path.join(scratch, 'warm-up'), cacheDirectory: path.join(scratch, 'warm-up-cache') },
    });
    await servers.resetCounters();
    global.gc?.();
    let peakResident = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      peakResident = Math.max(peakResident, process.memoryUsage.rss());
    }, 50);
    let fullCollections = 0;
    const collections = new PerformanceObserver((list) => {
      for (const entry of list.getEntries())
        if ((entry as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)
          fullCollections += 1;
    });
    collections.observe({ entryTypes: ['gc'] });
    const serverCpuStart = await servers.threadCpuSeconds();
    const threadsStart = threadCpuSecondsByName();
    const cpuStart = process.cpuUsage();
    const mainStart = mainThreadCpuSeconds();
    const started = performance.now();
    const startedAt = performance.timeOrigin + started;
    let steps: StepSeconds | null = null;
    let report: BuildReport;
    if (resolved.profile) {
      const profiled = await profileMainThread(() => runBuild(config), process.env.SATURATION_PROFILE_FILE);
      report = profiled.value;
      steps = profiled.steps;
    } else {
      report = await runBuild(config);
    }
    const wallMilliseconds = performance.now() - started;
    const cpu = process.cpuUsage(cpuStart);
    const mainEnd = mainThreadCpuSeconds();
    const serverCpuEnd = await servers.threadCpuSeconds();
    const threadsEnd = threadCpuSecondsByName();
    const threadCpu = Object.fromEntries(
      Object.entries(threadsEnd).map(([name, seconds]) => [name, seconds - (threadsStart[name] ?? 0)]),
    );
    const serverCpu = serverCpuStart === null || serverCpuEnd === null ? null : serverCpuEnd - serverCpuStart;
    const mainCpu = mainStart === null || mainEnd === null ? null : mainEnd - mainStart;
    clearInterval(sampler);
    collections.disconnect();
    const serverReports = await servers.report();
    const synthesizedAudioSeconds = await synthesizedSeconds(config);
    const busy = serverReports.map((server) => server.busyMilliseconds / wallMilliseconds);
    const firstStart = Math.min(...serverReports.map((server) => server.firstStartedAt ?? Infinity));
    const lastEnd = Math.max(...serverReports.map((server) => server.lastFinishedAt ?? -Infinity));
    const busyTotal = serverReports.reduce((sum, server) => sum + server.busyMilliseconds, 0);
    return {
      options: resolved,
      wallSeconds: wallMilliseconds / 1000,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      serverCpuSeconds: serverCpu,
      localCpuSeconds: (cpu.user + cpu.system) / 1e6,
      synthesizedAudioSeconds,
      writtenAudioSeconds: report.audioSeconds,
      utterancesSynthesized: serverReports.reduce((sum, server) => sum + server.requests, 0),
      serverBusyFraction: busy,
      meanBusyFraction: busy.reduce((sum, share) => sum + share, 0) / Math.max(1, busy.length),
      leadSeconds: Number.isFinite(firstStart) ? (firstStart - startedAt) / 1000 : 0,
      tailSeconds: Number.isFinite(lastEnd) ? (startedAt + wallMilliseconds - lastEnd) / 1000 : 0,
      busyFractionWhileSynthesizing: Number.isFinite(lastEnd - firstStart)
        ? busyTotal / (serverReports.length * (lastEnd - firstStart))
        : 0,
      servers: serverReports,
      mainThreadCpuSeconds: mainCpu,
      threadCpuSeconds: threadCpu,
      steps,
      stageSeconds: report.stageSeconds,
      peakResidentMebibytes: peakResident / 2 ** 20,
      fullCollections,
      heapGrowingPercent: widenedHeapGrowthPercent(),
      interruptBudget: raisedOptimizationBudget(),
      failedDialogues: report.failedDialogues,
    };
  } finally {
    await servers.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Seconds of audio in the build's synthesis cache entries: each entry's first WAV, a 16-bit mono clip
 * of one synthesized utterance at audio.sampleRate (an entry with a full-band clip holds that clip as a
 * second WAV after the first, at the engine's rate: not counted, it is the same speech).
 * @throws Error naming the file when an entry does not start with a RIFF/WAVE header with a data chunk
 */
export async function synthesizedSeconds(config: BuildConfig): Promise<number> {
  const { open, readdir } = await import('node:fs/promises');
  const directory = path.join(config.output.cacheDirectory, 'synthesize-speech');
  let bytes = 0;
  const header = Buffer.alloc(4096);
  const walk = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
      const file = path.join(folder, entry.name);
      if (entry.isDirectory()) await walk(file);
      else if (entry.name.endsWith('.wav')) {
        const handle = await open(file, 'r');
        try {
          const { bytesRead } = await handle.read(header, 0, header.length, 0);
          bytes += firstDataChunkBytes(header.subarray(0, bytesRead), file);
        } finally {
          await handle.close();
        }
      }
    }
  };
  await walk(directory);
  return bytes / 2 / config.audio.sampleRate;
}

/** Length of the data chunk of the RIFF/WAVE file at the start of `start` (its first bytes), bytes. */
function firstDataChunkBytes(start: Buffer, file: string): number {
  if (start.length < 12 || start.toString('latin1', 0, 4) !== 'RIFF' || start.toString('latin1', 8, 12) !== 'WAVE')
    throw new Error(`${file}: not a RIFF/WAVE file`);
  for (
    let offset = 12;
    offset + 8 <= start.length;
    offset += 8 + start.readUInt32LE(offset + 4) + (start.readUInt32LE(offset + 4) % 2)
  ) {
    if (start.toString('latin1', offset, offset + 4) === 'data') return start.readUInt32LE(offset + 4);
  }
  throw new Error(`${file}: no data chunk in its first ${start.length} bytes`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // as the command line does (scripts/cli.ts); SATURATION_V8_HEAP_GROWTH=1 measures V8's own factor
  if (!process.env.SATURATION_V8_HEAP_GROWTH) widenHeapGrowth();
  // SATURATION_V8_INTERRUPT_BUDGET=1 measures V8's own optimization budget
  if (!process.env.SATURATION_V8_INTERRUPT_BUDGET) raiseOptimizationBudget();
  const [dialogues, servers, realTimeFactor, protocol] = process.argv.slice(2);
  const result = await benchmarkBuildSaturation({
    ...(dialogues ? { dialogues: Number(dialogues) } : {}),
    ...(servers ? { servers: Number(servers) } : {}),
    ...(realTimeFactor ? { realTimeFactor: Number(realTimeFactor) } : {}),
    ...(protocol ? { protocol: protocol as SaturationBenchmarkOptions['protocol'] } : {}),
    ...(process.env.SATURATION_NO_PROFILE ? { profile: false } : {}),
    ...(process.env.SATURATION_REQUESTS_PER_SERVER
      ? { requestsPerServer: Number(process.env.SATURATION_REQUESTS_PER_SERVER) }
      : {}),
    ...(process.env.SATURATION_RESAMPLE_THREADS
      ? { resampleThreads: Number(process.env.SATURATION_RESAMPLE_THREADS) }
      : {}),
    ...(process.env.SATURATION_RENDER_THREADS ? { renderThreads: Number(process.env.SATURATION_RENDER_THREADS) } : {}),
    ...(process.env.SATURATION_FULL_BAND === '0' ? { fullBandMaster: false } : {}),
    ...(process.env.SATURATION_RESAMPLER
      ? { resampleQuality: process.env.SATURATION_RESAMPLER as 'best' | 'speex' }
      : {}),
    ...(process.env.SATURATION_OUT ? { outputDirectory: process.env.SATURATION_OUT } : {}),
    ...(process.env.SATURATION_CORPUS ? { corpus: process.env.SATURATION_CORPUS } : {}),
  });
  // SATURATION_JSON: the result and the process's peak resident set (getrusage maxrss) as one JSON line (the bench's memory runs)
  if (process.env.SATURATION_JSON)
    console.log(JSON.stringify({ ...result, maxResidentMebibytes: process.resourceUsage().maxRSS / 1024 }));
  else console.log(formatSaturationBenchmark(result));
}
