/**
 * Saturation benchmark of the whole build: a real-corpus build (TopiOCQA dev, English, rules rewrite)
 * against N loopback CosyVoice2 servers (FastAPI or Triton protocol) that each serve one request at a
 * time with a service time of `realTimeFactor` x the answer's audio duration, answering a cheap
 * speech-like signal (loopback-speech.ts `speechLikeSignal`), so the servers cost this machine almost
 * nothing and stand for GPUs elsewhere. Reports the servers' busy fraction, synthesized audio seconds
 * per wall second and per CPU second, and the local CPU per audio second split by step, from a CPU
 * profile of the build's thread (node:inspector; {@link classifyProfile}).
 *
 * Run: `npx tsx pipeline/orchestration/build-saturation.bench.ts [dialogues] [servers] [realTimeFactor] [protocol]`
 * (defaults 20, 4, 0.02, cosyvoice2). Quality scoring (DNSMOS) is off here: it is measured on its
 * own (pipeline/services/mos/dnsmos.bench.ts) against the bare model loop.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { DEFAULT_CONFIG_FILE, loadConfigFile, resolveConfig, sharedDirectory, type BuildConfig } from '../config.ts';
import {
  startLoopbackServersInProcess,
  type LoopbackWorkerServerReport,
} from '../services/tts/testing/loopback-worker.ts';
import { writePromptFixture } from '../services/tts/testing/prompt-fixtures.ts';
import { runBuild, type BuildReport } from './build.ts';
import { widenHeapGrowth, widenedHeapGrowthPercent } from '../run/heap-growth.ts';
import { raiseOptimizationBudget, raisedOptimizationBudget } from '../run/optimization-budget.ts';

/** Settings of {@link benchmarkBuildSaturation}. */
export interface SaturationBenchmarkOptions {
  /** First N conversations of the corpus. Default 20. */
  dialogues: number;
  /** Loopback servers, one request at a time each. Default 4. */
  servers: number;
  /** Service time per answer = this x its audio duration. Default 0.02. */
  realTimeFactor: number;
  /** Server protocol. Default cosyvoice2 (FastAPI). */
  protocol: 'cosyvoice2' | 'cosyvoice2-triton';
  /** TopiOCQA JSON. Default the shared dev set. */
  corpus: string;
  /** `synthesis.concurrency` of the build (utterances in flight). Default 4 x servers. */
  concurrency: number;
  /**
   * Requests the client keeps open per server (`concurrencyPerEndpoint`); the servers still process
   * one at a time, so with 2 the next request waits at the server while the current one is served
   * (as requests queue at a FastAPI or Triton server), hiding the client's turnaround. Default 2.
   */
  requestsPerServer: number;
  /** Record a CPU profile of the build's thread and split the local cost by step. Default true. */
  profile: boolean;
  /** `synthesis.resampleQuality` of the build. Default 'speex' (the config default). */
  resampleQuality: 'best' | 'speex';
  /** `synthesis.resampleThreads` of the build. Default 0 (the config default). */
  resampleThreads: number;
  /** `audio.renderThreads` of the build. Default 0 (the config default). */
  renderThreads: number;
  /** `audio.fullBandMaster` of the build. Default true (the config default). */
  fullBandMaster: boolean;
  /** Keep the build's output folder here instead of a removed temporary one. */
  outputDirectory?: string;
}

/** CPU seconds (of the build's thread, from the profile) per step. */
export type StepSeconds = Record<string, number>;

/** What {@link benchmarkBuildSaturation} measured. */
export interface SaturationBenchmarkResult {
  options: SaturationBenchmarkOptions;
  wallSeconds: number;
  /** CPU seconds of this process (the build alone: the servers run in a child process), all threads, user + system. */
  cpuSeconds: number;
  /** Audio seconds the servers synthesized (from the client's counters). */
  synthesizedAudioSeconds: number;
  /** Dialogue audio seconds written (base datasets and barge-in variants). */
  writtenAudioSeconds: number;
  utterancesSynthesized: number;
  /** Per server: busy time (capacity held) / wall time of the build. */
  serverBusyFraction: number[];
  /** Mean of serverBusyFraction. */
  meanBusyFraction: number;
  /** Busy time / (last answer end - first processing start): how busy the servers were while the synthesis ran. */
  busyFractionWhileSynthesizing: number;
  /** Seconds from the build's start to the first request processed (ingest, checks, lock, first texts). */
  leadSeconds: number;
  /** Seconds from the last answer to the build's end (the last dialogues' placement and writing, commits, summaries). */
  tailSeconds: number;
  servers: LoopbackWorkerServerReport[];
  /** CPU seconds of the loopback servers' process (what stands for the GPU hosts), all threads. */
  serverCpuSeconds: number | null;
  /** What the build used locally: cpuSeconds (kept as its own field for the report). */
  localCpuSeconds: number;
  /** CPU seconds per thread name over the build (threads that ended during it are missing). */
  threadCpuSeconds: Record<string, number>;
  /** CPU seconds of the build's (main) thread; null where not measurable. */
  mainThreadCpuSeconds: number | null;
  /**
   * The main thread's CPU seconds split by step: each step's share of the profile's non-idle samples
   * x mainThreadCpuSeconds (a sampling profile counts wall time, which on a loaded machine includes
   * time the thread waited for a core); null when not profiled.
   */
  steps: StepSeconds | null;
  stageSeconds: BuildReport['stageSeconds'];
  peakResidentMebibytes: number;
  /** Full (mark-compact) garbage collections of the build's isolate during the build (perf_hooks 'gc' entries of kind major). */
  fullCollections: number;
  /** V8's heap growing percent in effect (pipeline/run/heap-growth.ts); null: V8's own factor. */
  heapGrowingPercent: number | null;
  /** the V8 interrupt budget pipeline/run/optimization-budget.ts set; null: V8's own */
  interruptBudget: number | null;
  failedDialogues: number;
}

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
 * CPU seconds (user + system) of this process's main thread so far, from /proc/self/task/{pid}/stat
 * (fields 14 and 15, in USER_HZ = 100 ticks per second); null where /proc is not available.
 */
export function mainThreadCpuSeconds(): number | null {
  try {
    const text = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = text
      .slice(text.lastIndexOf(')') + 2)
      .trim()
      .split(/\s+/);
    return (Number(fields[11]) + Number(fields[12])) / 100; // fields[0] is field 3 (state)
  } catch {
    return null;
  }
}

/**
 * CPU seconds (user + system) of each thread of this process by thread name (/proc/self/task/{tid}/comm,
 * e.g. `node`, `libuv-worker`, `V8 DefaultWorke`), summed over threads of the same name; {} without /proc.
 */
export function threadCpuSecondsByName(): Record<string, number> {
  const totals: Record<string, number> = {};
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
        const text = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        const fields = text
          .slice(text.lastIndexOf(')') + 2)
          .trim()
          .split(/\s+/);
        const key = tid === String(process.pid) ? 'main' : name;
        totals[key] = (totals[key] ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100;
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    // not Linux
  }
  return totals;
}

/** A V8 CPU profile (Profiler.stop). */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Which step a profile frame's own time belongs to, by its source file (and function for the shared
 * audio module); null = the caller's step (built-ins, WebAssembly, node internals called by our code).
 * The steps: decode (HTTP client, PCM/WAV decoding, downmix), resample (libsamplerate and the 16-bit
 * quantization), detection (energy speech detection, trimming), timing (word tokenization and timing),
 * placement (timeline), true-peak limiter (pipeline/audio/true-peak-limiter.ts, every track of both
 * variants), events (annotation), render (mixing, WAV encoding, dataset records), write (cache and
 * dataset files), text (ingest and rewrite), orchestration (queues, build loop). The compiled code
 * (`dist/…/*.js`, what `npm run bench` runs) is named by the source file it was compiled from.
 */
export function stepOfFrame(functionName: string, frameUrl: string): string | null {
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(program)') return 'native (unattributed)';
  if (frameUrl === '' || frameUrl.startsWith('wasm://')) return null;
  const url = sourceUrl(frameUrl);
  // the resampler's module (its WebAssembly frames, named by no file, count for it as their caller)
  if (
    url.includes('libsamplerate') ||
    url.includes('speex-resampler') ||
    /\/pipeline\/audio\/resample(-pool|-worker)?\.ts$/.test(url)
  )
    return 'resample';
  if (url.includes('/pipeline/audio/true-peak-limiter.ts')) return 'true-peak limiter';
  if (url.includes('/pipeline/audio/raw-audio.ts') || url.includes('/pipeline/audio/wav.ts')) {
    if (/resample|quantize/i.test(functionName)) return 'resample';
    if (/encode|placeOnTrack|mix|concatenate/i.test(functionName)) return 'render';
    if (/decode|downmix/i.test(functionName)) return 'decode';
    return null;
  }
  if (url.includes('/pipeline/services/tts/synthesis-checks.ts')) return 'detection';
  if (url.includes('/pipeline/services/mos/') || url.includes('onnxruntime')) return 'quality: DNSMOS';
  if (url.includes('/pipeline/quality/summarize-dataset.ts')) return 'render';
  if (
    url.includes('/pipeline/quality/') ||
    url.includes('/stages/score-quality.ts') ||
    url.includes('/stages/split-dev-test.ts')
  )
    return 'quality: checks and split';
  if (url.includes('/pipeline/report/')) return 'report';
  if (url.includes('/pipeline/audio/speech-regions.ts') || url.includes('/pipeline/services/vad/')) return 'detection';
  if (
    /\/pipeline\/services\/tts\/(word-timing|spoken-words|japanese-morae|japanese-kana)\.ts/.test(url) ||
    url.includes('kuromoji')
  )
    return 'timing';
  if (
    /\/pipeline\/services\/tts\/|undici|node:internal\/(http|net|stream|streams|deps\/undici|webstreams)|node:(http|net|stream)/.test(
      url,
    )
  )
    return 'decode';
  if (url.includes('/stages/place-timeline.ts') || url.includes('/pipeline/timeline/')) return 'placement';
  if (url.includes('/stages/annotate-events.ts') || url.includes('/pipeline/events/')) return 'events';
  if (url.includes('/stages/render-dataset.ts') || url.includes('/pipeline/orchestration/dataset-output.ts'))
    return 'render';
  if (
    url.includes('/pipeline/storage/') ||
    /node:(fs|internal\/fs)|write-file-atomic|canonicalize|node:crypto|node:internal\/crypto/.test(url)
  )
    return 'write';
  if (
    url.includes('/stages/ingest-corpus.ts') ||
    url.includes('/pipeline/orchestration/prepare-text.ts') ||
    url.includes('/pipeline/services/llm/') ||
    url.includes('/pipeline/text/')
  )
    return 'text';
  if (url.includes('/stages/synthesize-speech.ts')) return 'orchestration';
  if (url.includes('/node_modules/') || url.startsWith('node:')) return null;
  return 'orchestration';
}

/** A frame's URL as the project's source file: `…/dist/pipeline/x.js` → `…/pipeline/x.ts` (the compiled build mirrors the sources). */
function sourceUrl(url: string): string {
  if (url.includes('/node_modules/')) return url;
  const compiled = url.match(/^(.*)\/dist\/((?:pipeline|stages|scripts|corpora)\/.*)\.js$/);
  return compiled ? `${compiled[1]}/${compiled[2]}.ts` : url;
}

/**
 * A step that a frame's whole subtree counts for, whatever the frames below would be on their own
 * (except the true-peak limiter and garbage collection, which keep theirs): the full-band master
 * (`audio.fullBandMaster`: its mix in composeFullBand, its WAV encoding in writeFullBandMaster), so the
 * table shows what the second mix costs beside the 16 kHz one. null = none.
 */
export function subtreeStepOfFrame(functionName: string, frameUrl: string): string | null {
  const url = sourceUrl(frameUrl);
  if (functionName === 'composeFullBand' && url.includes('/stages/place-timeline.ts')) return 'full-band master';
  if (functionName === 'writeFullBandMaster' && url.includes('/stages/render-dataset.ts')) return 'full-band master';
  return null;
}

/**
 * Self time of a CPU profile by step ({@link stepOfFrame}); a frame without its own step counts for
 * the nearest ancestor that has one ('orchestration' at the top), a frame below one with a subtree
 * step ({@link subtreeStepOfFrame}) for that step.
 * @returns seconds per step.
 */
export function classifyProfile(profile: CpuProfile): StepSeconds {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const stepOfNode = new Map<number, string>();
  const root = profile.nodes[0];
  if (!root) return {};
  const stack: [number, string, string | null][] = [[root.id, 'orchestration', null]];
  while (stack.length > 0) {
    const [id, inherited, subtree] = stack.pop()!;
    const node = byId.get(id);
    if (!node) continue;
    const own = stepOfFrame(node.callFrame.functionName, node.callFrame.url);
    const forced = subtree ?? subtreeStepOfFrame(node.callFrame.functionName, node.callFrame.url);
    const step =
      forced !== null && own !== 'true-peak limiter' && own !== 'garbage collection' ? forced : (own ?? inherited);
    stepOfNode.set(id, step);
    for (const child of node.children ?? []) stack.push([child, step, forced]);
  }
  const seconds: StepSeconds = {};
  profile.samples.forEach((id, index) => {
    const step = stepOfNode.get(id) ?? 'orchestration';
    seconds[step] = (seconds[step] ?? 0) + (profile.timeDeltas[index] ?? 0) / 1e6;
  });
  return seconds;
}

/**
 * Runs `work` under a V8 sampling profile of this (main) thread and splits the thread's CPU time by
 * step: each step's share of the profile's busy samples ({@link classifyProfile}) x the thread's CPU
 * seconds from /proc (a sampling profile counts wall time, which on a loaded machine includes time the
 * thread waited for a core). Without /proc the profile's own seconds are returned.
 * @returns the work's value, the steps (CPU seconds) and the thread's CPU seconds (null without /proc).
 */
export async function profileMainThread<T>(
  work: () => Promise<T>,
  profileFile?: string,
): Promise<{ value: T; steps: StepSeconds; mainThreadCpuSeconds: number | null }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  const mainStart = mainThreadCpuSeconds();
  let value: T;
  let mainEnd: number | null;
  let profile: CpuProfile;
  try {
    value = await work();
  } finally {
    mainEnd = mainThreadCpuSeconds();
    profile = ((await session.post('Profiler.stop')) as { profile: CpuProfile }).profile;
    session.disconnect();
  }
  if (profileFile) writeFileSync(profileFile, JSON.stringify(profile));
  const mainCpu = mainStart === null || mainEnd === null ? null : mainEnd - mainStart;
  const sampled = classifyProfile(profile);
  const busy = Object.entries(sampled)
    .filter(([step]) => step !== 'idle')
    .reduce((sum, [, seconds]) => sum + seconds, 0);
  const scale = mainCpu !== null && busy > 0 ? mainCpu / busy : 1;
  const steps = Object.fromEntries(
    Object.entries(sampled)
      .filter(([step]) => step !== 'idle')
      .map(([step, seconds]) => [step, seconds * scale]),
  );
  return { value, steps, mainThreadCpuSeconds: mainCpu };
}

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

/** Steps in report order. */
export const STEP_ORDER = [
  'decode',
  'resample',
  'detection',
  'timing',
  'placement',
  'true-peak limiter',
  'full-band master',
  'events',
  'render',
  'write',
  'text',
  'quality: DNSMOS',
  'quality: checks and split',
  'report',
  'orchestration',
  'garbage collection',
  'native (unattributed)',
] as const;

/** The result as Markdown. */
export function formatSaturationBenchmark(result: SaturationBenchmarkResult): string {
  const { options } = result;
  const audio = result.synthesizedAudioSeconds;
  const lines = [
    `${options.dialogues} TopiOCQA dev dialogues (English, rules rewrite, quality scoring off) against ${options.servers} loopback ${options.protocol} servers, one request at a time each, ` +
      `service time = ${options.realTimeFactor} x audio duration (capacity ${(options.servers / options.realTimeFactor).toFixed(0)} s of audio per second); synthesis.concurrency ${options.concurrency}, ${options.requestsPerServer} request(s) open per server (concurrencyPerEndpoint), resampler '${options.resampleQuality}'${options.resampleThreads > 0 ? ` in ${options.resampleThreads} worker threads` : ''}; mastering (limiter, WAV encoding) ${options.renderThreads > 0 ? `in ${options.renderThreads} worker thread(s)` : "on the build's thread"}${options.fullBandMaster ? '' : ', no full-band master (audio.fullBandMaster false)'}; heap growing factor ${result.heapGrowingPercent === null ? "V8's own" : `1 + ${result.heapGrowingPercent} % (pipeline/run/heap-growth.ts)`}; optimization (interrupt) budget ${result.interruptBudget === null ? "V8's own" : `${result.interruptBudget} (pipeline/run/optimization-budget.ts)`}; ${os.cpus().length} cores.`,
    '',
    '| measure | value |',
    '|---|---:|',
    `| wall s | ${result.wallSeconds.toFixed(2)} |`,
    `| local CPU s (the build's process, all threads) | ${result.localCpuSeconds.toFixed(2)} |`,
    `| CPU s of the loopback servers' process (same 2 cores) | ${result.serverCpuSeconds === null ? 'not measured' : result.serverCpuSeconds.toFixed(2)} |`,
    `| utterances synthesized | ${result.utterancesSynthesized} |`,
    `| synthesized audio s | ${audio.toFixed(1)} |`,
    `| dialogue audio written s (datasets + barge-in variants) | ${result.writtenAudioSeconds.toFixed(1)} |`,
    `| servers' busy fraction (of the build's wall time) | ${result.serverBusyFraction.map((share) => `${(share * 100).toFixed(1)} %`).join(', ')} (mean ${(result.meanBusyFraction * 100).toFixed(1)} %) |`,
    `| busy fraction from first request to last answer | ${(result.busyFractionWhileSynthesizing * 100).toFixed(1)} % |`,
    `| s before the first request / after the last answer | ${result.leadSeconds.toFixed(2)} / ${result.tailSeconds.toFixed(2)} |`,
    `| synthesized audio s per wall s | ${(audio / result.wallSeconds).toFixed(1)} |`,
    `| synthesized audio s per local CPU s | ${(audio / result.localCpuSeconds).toFixed(1)} |`,
    `| synthesized audio s per CPU s, servers' process included | ${(audio / (result.cpuSeconds + (result.serverCpuSeconds ?? 0))).toFixed(1)} |`,
    `| CPU s by thread | ${Object.entries(result.threadCpuSeconds)
      .filter(([, seconds]) => seconds >= 0.01)
      .sort((a, b) => b[1] - a[1])
      .map(([name, seconds]) => `${name} ${seconds.toFixed(2)}`)
      .join(', ')} |`,
    `| full garbage collections (mark-compact) | ${result.fullCollections} |`,
    `| peak RSS MiB | ${result.peakResidentMebibytes.toFixed(0)} |`,
    `| failed dialogues | ${result.failedDialogues} |`,
  ];
  if (result.steps) {
    const busy = Object.values(result.steps).reduce((sum, seconds) => sum + seconds, 0);
    lines.push(
      '',
      `Local CPU of the build's main thread (${busy.toFixed(2)} s of the build's ${result.localCpuSeconds.toFixed(2)} s; the rest is the process's other threads: V8's background threads (concurrent garbage collection, compilation) and libuv's file system pool) by step ` +
        `(share of the V8 sampling profile's busy samples x the thread's CPU time from /proc), per second of synthesized audio:`,
      '',
      formatStepTable(result.steps, audio),
    );
  }
  return lines.join('\n');
}

/** A Markdown table of CPU seconds by step, per second of `audioSeconds`, in {@link STEP_ORDER}. */
export function formatStepTable(steps: StepSeconds, audioSeconds: number): string {
  const busy = Object.values(steps).reduce((sum, seconds) => sum + seconds, 0);
  return [
    '| step | CPU s | ms per audio s | audio s per CPU s |',
    '|---|---:|---:|---:|',
    ...[
      ...STEP_ORDER,
      ...Object.keys(steps).filter((step) => step !== 'idle' && !(STEP_ORDER as readonly string[]).includes(step)),
    ]
      .filter((step) => steps[step] !== undefined && steps[step]! > 0)
      .map(
        (step) =>
          `| ${step} | ${steps[step]!.toFixed(2)} | ${((steps[step]! * 1000) / audioSeconds).toFixed(2)} | ${(audioSeconds / steps[step]!).toFixed(0)} |`,
      ),
    `| **all (main thread)** | ${busy.toFixed(2)} | ${((busy * 1000) / audioSeconds).toFixed(2)} | ${(audioSeconds / busy).toFixed(0)} |`,
  ].join('\n');
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
