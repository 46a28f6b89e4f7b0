/**
 * Where the saturation benchmark's local CPU goes: CPU seconds of this process's threads from /proc,
 * and a V8 sampling profile of the build's (main) thread split by step (decode, resample, placement,
 * render, write, …) by the source file of each frame, with the Markdown table of those steps.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/** CPU seconds (of the build's thread, from the profile) per step. */
export type StepSeconds = Record<string, number>;

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
  if (url.includes('/stages/place-timeline') || url.includes('/pipeline/timeline/')) return 'placement';
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
  if (functionName === 'composeFullBand' && url.includes('/stages/place-timeline')) return 'full-band master';
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
 * seconds from /proc (a sampling profile counts wall time, which includes the time the thread waited
 * for a core while other processes held them). Without /proc the profile's own seconds are returned.
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
