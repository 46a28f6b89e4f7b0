/**
 * The "GPUs" of the `machines` bench section: one loopback CosyVoice2 server (FastAPI protocol,
 * pipeline/services/tts/testing/cosyvoice-loopback-server.ts) per worker machine, or one for the
 * one-process build, each in a process of its own started from the bench's process, so outside every
 * machine's CPU quota. Each serves one request at a time and sleeps the answer's audio duration ×
 * {@link GPU_REAL_TIME_FACTOR} while it streams a cheap speech-like signal, so it costs the host
 * little and stands for a GPU elsewhere. The clients' speech-rate watch is off (that signal has no
 * prompt's tempo); the per-utterance checks run as in a real build.
 */
import {
  startLoopbackServersInProcess,
  type LoopbackWorkerServers,
} from '../pipeline/services/tts/testing/loopback-worker.ts';
import { writePromptFixture } from '../pipeline/services/tts/testing/prompt-fixtures.ts';

/** A CosyVoice2 server's real-time factor on a GPU (synthesis seconds per second of speech). */
export const GPU_REAL_TIME_FACTOR = 0.03;

/** The transcripts of the two voice prompts (user, system). */
const PROMPT_TRANSCRIPTS = [
  'I grew up near the sea and I still love the sound of waves.',
  'My favourite season is autumn because the light is so soft.',
];

/** The speech servers of one run. */
export interface SpeechStandIns {
  /** The `tts.en` settings of the process `index` (its own server; the voices are the same for all). */
  ttsSettings(index: number): Record<string, unknown>;
  /** Start counting the servers' CPU from here. */
  resetCpu(): Promise<void>;
  /** CPU seconds of all the servers' processes since {@link resetCpu}. */
  cpuSeconds(): Promise<number>;
  /** Stop every server process; never throws. */
  close(): Promise<void>;
}

/**
 * Start `count` server processes and write the voice prompts into `directory`.
 * @throws Error when espeak-ng (the prompts) is missing or a server process does not start
 */
export async function startSpeechStandIns(directory: string, count: number): Promise<SpeechStandIns> {
  const prompts = await Promise.all(
    PROMPT_TRANSCRIPTS.map((transcript, index) =>
      writePromptFixture(directory, transcript, { pitch: 30 + 40 * index, minimumSeconds: 3 }),
    ),
  );
  const voice = (index: number) => ({
    mode: 'zero-shot',
    promptWav: prompts[index]!.path,
    promptText: PROMPT_TRANSCRIPTS[index]!,
  });
  const servers: LoopbackWorkerServers[] = [];
  const close = async () => {
    await Promise.all(servers.map((server) => server.close().catch(() => {})));
  };
  try {
    for (let index = 0; index < count; index++)
      servers.push(
        await startLoopbackServersInProcess({
          protocol: 'cosyvoice2',
          servers: 1,
          latencyMs: 0,
          capacity: 1,
          voice: {},
          warmTexts: [],
          realTimeFactor: GPU_REAL_TIME_FACTOR,
          speech: 'speech-like',
        }),
      );
  } catch (error) {
    await close();
    throw error;
  }
  let start = 0;
  const total = async () =>
    (await Promise.all(servers.map(async (server) => (await server.threadCpuSeconds()) ?? 0))).reduce(
      (sum, seconds) => sum + seconds,
      0,
    );
  return {
    ttsSettings: (index) => ({
      backend: 'cosyvoice2',
      // the speech-like signal keeps no prompt's tempo: the per-voice tempo watch would quarantine it
      service: {
        urls: servers[index % servers.length]!.urls,
        sampleRate: 24000,
        checks: { speechRateMonitor: null },
      },
      voices: { user: voice(0), system: voice(1) },
    }),
    resetCpu: async () => {
      start = await total();
    },
    cpuSeconds: async () => (await total()) - start,
    close,
  };
}
