/**
 * Voice activity detection speed on about 60 s of real (espeak-ng) speech: Silero's whole `detect`
 * pipeline against a bare onnxruntime loop that only calls `session.run` on prebuilt tensors for the
 * same frames with the same session, and as times faster than real time per core. The ratio is the
 * cost of everything around the model (input checks, copying each frame into the reused input
 * tensor, post-processing, boundary refinement).
 */
import * as ort from 'onnxruntime-node';
import { performance } from 'node:perf_hooks';
import { resample } from '../../audio/resample.ts';
import {
  createSileroVoiceActivityDetector,
  SILERO_CONTEXT_SAMPLES,
  SILERO_FRAME_SAMPLES,
  SILERO_SAMPLE_RATE,
} from './silero-vad.ts';
import { buildSyntheticDialogue } from './testing/test-dialogue.ts';
import { createWebRtcVoiceActivityDetector } from './webrtc-vad.ts';

/** Wall-clock and CPU time (all threads of this process: user + system) of one measured run, seconds. */
export interface MeasuredTime {
  wallSeconds: number;
  cpuSeconds: number;
}

/** Options of {@link benchmarkVad}. */
export interface VadBenchmarkOptions {
  /**
   * Mono speech at 16 kHz to measure on. Default: the two channels of the test dialogue
   * (test-dialogue.ts, built at 16 kHz without noise) end to end, about 59 s with 0.3-2 s silences.
   */
  speech16k?: Float32Array;
  /** Timed repetitions of each loop; the fastest is kept (the machine may be shared). Default 3. */
  repetitions?: number;
}

/** Result of {@link benchmarkVad}. Speeds are "times faster than real time": audio seconds / seconds. */
export interface VadBenchmarkResult {
  /** Length of the measured speech, seconds. */
  audioSeconds: number;
  /** Silero frames (512 samples at 16 kHz) per pass. */
  frames: number;
  /** `SileroVoiceActivityDetector.detect` on the speech (refinement included), fastest repetition. */
  silero: MeasuredTime;
  /** The bare `session.run` loop over the same frames with the same session, fastest repetition. */
  bareOnnx: MeasuredTime;
  /** bareOnnx.wallSeconds / silero.wallSeconds: 1 = no cost beyond the model (goal >= 0.9). */
  speedRatioToBareOnnx: number;
  /** The same ratio on CPU time, less sensitive to other processes on the machine. */
  cpuSpeedRatioToBareOnnx: number;
  /** audioSeconds / silero.cpuSeconds: times faster than real time per core (the session uses one thread). */
  sileroRealTimePerCore: number;
  /** audioSeconds / silero.wallSeconds. */
  sileroRealTimeWall: number;
  /** Both halves of the speech as a stereo pair through `detectMany` (one batched run per frame), fastest repetition. */
  sileroStereoBatched: MeasuredTime;
  /** Channel-seconds per CPU second for the batched stereo pass. */
  sileroStereoRealTimePerCore: number;
  /** The speech at 48 kHz through `detect`: resampling to 16 kHz ('fastest') included. */
  silero48k: MeasuredTime;
  /** audioSeconds / silero48k.cpuSeconds. */
  silero48kRealTimePerCore: number;
  /** `WebRtcVoiceActivityDetector.detect` (mode 3, 10 ms frames, refinement) on the same 16 kHz speech. */
  webrtc: MeasuredTime;
  /** audioSeconds / webrtc.cpuSeconds. */
  webrtcRealTimePerCore: number;
}

async function measure(run: () => Promise<void>): Promise<MeasuredTime> {
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  await run();
  const wallSeconds = (performance.now() - wallStart) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  return { wallSeconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

/** The fastest (by wall time) of `repetitions` runs. */
async function fastest(repetitions: number, run: () => Promise<void>): Promise<MeasuredTime> {
  let best: MeasuredTime | undefined;
  for (let repetition = 0; repetition < repetitions; repetition++) {
    const time = await measure(run);
    if (!best || time.wallSeconds < best.wallSeconds) best = time;
  }
  return best as MeasuredTime;
}

/**
 * Measures Silero (and, for comparison, WebRTC) VAD speed. Every loop runs once untimed first
 * (warm-up); then the bare loop and the detector alternate `repetitions` times and the fastest of each
 * is kept. The bare loop's input tensors (float32 [1, 576]: 64 context + 512 frame samples) are built
 * before its timer starts; its state tensor is chained from each run's output exactly as the
 * detector does. Memory: about 2.3 KB per frame for the prebuilt tensors (4 MB per minute).
 *
 * @throws SpeechSynthesisError when espeak-ng is missing and no speech is given (`npm run setup`);
 *   VoiceActivityDetectionError when the Silero model cannot be loaded.
 */
export async function benchmarkVad(options: VadBenchmarkOptions = {}): Promise<VadBenchmarkResult> {
  const repetitions = options.repetitions ?? 3;
  let speech = options.speech16k;
  if (!speech) {
    const dialogue = await buildSyntheticDialogue(undefined, { sampleRate: SILERO_SAMPLE_RATE, noise: null });
    const [first, second] = dialogue.audio.channels as [Float32Array, Float32Array];
    speech = new Float32Array(first.length + second.length);
    speech.set(first);
    speech.set(second, first.length);
  }
  const audioSeconds = speech.length / SILERO_SAMPLE_RATE;
  const frames = Math.ceil(speech.length / SILERO_FRAME_SAMPLES);

  const detector = await createSileroVoiceActivityDetector();
  const webrtcDetector = await createWebRtcVoiceActivityDetector();
  try {
    const session = detector.session;
    const windowSamples = SILERO_CONTEXT_SAMPLES + SILERO_FRAME_SAMPLES;
    const padded = new Float32Array(SILERO_CONTEXT_SAMPLES + frames * SILERO_FRAME_SAMPLES);
    padded.set(speech, SILERO_CONTEXT_SAMPLES);
    const inputs = Array.from(
      { length: frames },
      (_, frame) =>
        new ort.Tensor(
          'float32',
          padded.slice(frame * SILERO_FRAME_SAMPLES, frame * SILERO_FRAME_SAMPLES + windowSamples),
          [1, windowSamples],
        ),
    );
    const sampleRateTensor = new ort.Tensor('int64', BigInt64Array.from([BigInt(SILERO_SAMPLE_RATE)]), []);
    const feedsSampleRate = session.inputNames.includes('sr');
    const bareLoop = async (): Promise<void> => {
      let state: ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
      for (const input of inputs) {
        const feeds: Record<string, ort.Tensor> = { input, state };
        if (feedsSampleRate) feeds.sr = sampleRateTensor;
        const results = await session.run(feeds);
        state = results.stateN as ort.Tensor;
      }
    };
    const detectLoop = async (): Promise<void> => {
      await detector.detect(speech, SILERO_SAMPLE_RATE);
    };

    await bareLoop();
    await detectLoop();
    let bareOnnx: MeasuredTime | undefined;
    let silero: MeasuredTime | undefined;
    for (let repetition = 0; repetition < repetitions; repetition++) {
      const bare = await measure(bareLoop);
      const full = await measure(detectLoop);
      if (!bareOnnx || bare.wallSeconds < bareOnnx.wallSeconds) bareOnnx = bare;
      if (!silero || full.wallSeconds < silero.wallSeconds) silero = full;
    }
    if (!bareOnnx || !silero) throw new RangeError(`benchmarkVad: repetitions must be at least 1, got ${repetitions}`);

    const half = Math.floor(speech.length / 2);
    const stereo = [speech.subarray(0, half), speech.subarray(half, 2 * half)];
    const sileroStereoBatched = await fastest(repetitions, async () => {
      await detector.detectMany(stereo, SILERO_SAMPLE_RATE);
    });

    const speech48k = (await resample({ channels: [speech], sampleRate: SILERO_SAMPLE_RATE }, 48000, 'medium'))
      .channels[0] as Float32Array;
    await detector.detect(speech48k.subarray(0, 48000), 48000); // warm the 48 kHz -> 16 kHz converter
    const silero48k = await fastest(repetitions, async () => {
      await detector.detect(speech48k, 48000);
    });

    await webrtcDetector.detect(speech, SILERO_SAMPLE_RATE);
    const webrtc = await fastest(repetitions, async () => {
      await webrtcDetector.detect(speech, SILERO_SAMPLE_RATE);
    });

    return {
      audioSeconds,
      frames,
      silero,
      bareOnnx,
      speedRatioToBareOnnx: bareOnnx.wallSeconds / silero.wallSeconds,
      cpuSpeedRatioToBareOnnx: bareOnnx.cpuSeconds / silero.cpuSeconds,
      sileroRealTimePerCore: audioSeconds / silero.cpuSeconds,
      sileroRealTimeWall: audioSeconds / silero.wallSeconds,
      sileroStereoBatched,
      sileroStereoRealTimePerCore: (2 * half) / SILERO_SAMPLE_RATE / sileroStereoBatched.cpuSeconds,
      silero48k,
      silero48kRealTimePerCore: audioSeconds / silero48k.cpuSeconds,
      webrtc,
      webrtcRealTimePerCore: audioSeconds / webrtc.cpuSeconds,
    };
  } finally {
    await detector.release();
    await webrtcDetector.release();
  }
}

/** A few human-readable lines summarizing a {@link VadBenchmarkResult}. */
export function formatVadBenchmark(result: VadBenchmarkResult): string {
  const seconds = (time: MeasuredTime) => `${time.wallSeconds.toFixed(2)} s wall, ${time.cpuSeconds.toFixed(2)} s CPU`;
  return [
    `VAD on ${result.audioSeconds.toFixed(1)} s of espeak-ng speech at 16 kHz (${result.frames} Silero frames):`,
    `- Silero detect: ${seconds(result.silero)}; bare onnxruntime loop: ${seconds(result.bareOnnx)}; speed ratio to bare ${result.speedRatioToBareOnnx.toFixed(3)} wall, ${result.cpuSpeedRatioToBareOnnx.toFixed(3)} CPU (goal >= 0.9)`,
    `- Silero: ${result.sileroRealTimePerCore.toFixed(0)}x real time per core (${result.sileroRealTimeWall.toFixed(0)}x wall); stereo batched ${result.sileroStereoRealTimePerCore.toFixed(0)}x channel-seconds per CPU second; 48 kHz input with resampling ${result.silero48kRealTimePerCore.toFixed(0)}x per core`,
    `- WebRTC (mode 3): ${result.webrtcRealTimePerCore.toFixed(0)}x real time per core (${seconds(result.webrtc)})`,
  ].join('\n');
}
