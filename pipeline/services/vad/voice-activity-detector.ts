/**
 * The voice activity detection seam: a tiny interface every engine implements (detector.ts,
 * re-exported here; one engine per file beside this one: silero-vad.ts, webrtc-vad.ts), engines chosen
 * by name and loaded lazily, and the helpers that turn two-party recordings into per-channel speech
 * segments.
 */
import type { ChannelSegments, SpeechSegment } from '../../model/types.ts';
import { downmixToMono, type RawAudio } from '../../audio/raw-audio.ts';
import { readAudioFile } from '../../audio/read-audio-file.ts';
import { VoiceActivityDetectionError } from './errors.ts';
import type { VoiceActivityDetector } from './detector.ts';
import type { SileroVadOptionsInput } from './silero-vad.ts';
import type { WebRtcVadOptionsInput } from './webrtc-vad.ts';

export type { VoiceActivityDetector } from './detector.ts';

/** Engines this project can create by name. */
export type VoiceActivityEngine = 'silero' | 'webrtc';

/** The option block each engine takes (see each engine's exported defaults). */
export interface VoiceActivityEngineOptions {
  silero: SileroVadOptionsInput;
  webrtc: WebRtcVadOptionsInput;
}

/** Engine factories by name; each imports its engine file only when called. */
const ENGINE_FACTORIES: {
  [Engine in VoiceActivityEngine]: (options: VoiceActivityEngineOptions[Engine]) => Promise<VoiceActivityDetector>;
} = {
  silero: async (options) => (await import('./silero-vad.ts')).createSileroVoiceActivityDetector(options),
  webrtc: async (options) => (await import('./webrtc-vad.ts')).createWebRtcVoiceActivityDetector(options),
};

/** Names accepted by {@link createVoiceActivityDetector}. */
export const VOICE_ACTIVITY_ENGINES: readonly VoiceActivityEngine[] = Object.freeze(
  Object.keys(ENGINE_FACTORIES) as VoiceActivityEngine[],
);

/**
 * Creates a detector by engine name, loading the engine's code and model only now.
 *
 * @param engine `silero` (default choice for real recordings) or `webrtc`.
 * @param options the engine's option block (any subset; the engine's exported defaults fill the rest).
 * @throws VoiceActivityOptionsError for invalid settings; VoiceActivityDetectionError `model-missing`
 *   or `model-load` when the engine cannot be loaded; TypeError for an unknown engine name (all as
 *   rejections of the returned promise).
 */
export async function createVoiceActivityDetector<Engine extends VoiceActivityEngine>(
  engine: Engine,
  options: VoiceActivityEngineOptions[Engine] = {},
): Promise<VoiceActivityDetector> {
  const factory = ENGINE_FACTORIES[engine] as
    ((options: VoiceActivityEngineOptions[Engine]) => Promise<VoiceActivityDetector>) | undefined;
  if (!factory)
    throw new TypeError(`unknown voice activity engine "${engine}" (known: ${VOICE_ACTIVITY_ENGINES.join(', ')})`);
  return await factory(options);
}

/** Runs the detector on several signals, batched when the detector supports it. */
function detectEach(
  detector: VoiceActivityDetector,
  channels: readonly Float32Array[],
  sampleRate: number,
): Promise<SpeechSegment[][]> {
  if (detector.detectMany) return detector.detectMany(channels, sampleRate);
  return Promise.all(channels.map((channel) => detector.detect(channel, sampleRate)));
}

/**
 * Speech segments of a two-party stereo recording with one speaker per channel: channel 0 of the
 * audio becomes channel 0 of the result.
 *
 * @param audio exactly two channels, any positive integer sample rate.
 * @param detector any engine.
 * @returns per channel, integer centiseconds from the start of the recording.
 * @throws VoiceActivityDetectionError `invalid-audio` when the audio does not have exactly two channels,
 *   and whatever the detector throws.
 */
export async function detectChannels(audio: RawAudio, detector: VoiceActivityDetector): Promise<ChannelSegments> {
  if (audio.channels.length !== 2) {
    throw new VoiceActivityDetectionError(
      detector.id,
      'invalid-audio',
      `a two-party recording needs exactly 2 channels (one speaker each), got ${audio.channels.length}; for one file per speaker use detectSpeakerRecordings`,
    );
  }
  const [first, second] = await detectEach(detector, audio.channels, audio.sampleRate);
  return { 0: first as SpeechSegment[], 1: second as SpeechSegment[] };
}

/**
 * Speech segments of a two-party conversation recorded as one file per speaker. Each recording is
 * downmixed to mono (equal weights) first; they may differ in length and sample rate, and both are
 * taken to start at the same moment.
 *
 * @param recordings the speaker of result channel 0, then of channel 1.
 * @param detector any engine.
 * @returns per channel, integer centiseconds from the start of the recordings.
 * @throws whatever the detector or the downmix (AudioArgumentError for malformed audio) throws.
 */
export async function detectSpeakerRecordings(
  recordings: readonly [RawAudio, RawAudio],
  detector: VoiceActivityDetector,
): Promise<ChannelSegments> {
  const [first, second] = recordings;
  const monos = [downmixToMono(first), downmixToMono(second)];
  if (first.sampleRate === second.sampleRate) {
    const [segments0, segments1] = await detectEach(detector, monos, first.sampleRate);
    return { 0: segments0 as SpeechSegment[], 1: segments1 as SpeechSegment[] };
  }
  return {
    0: await detector.detect(monos[0] as Float32Array, first.sampleRate),
    1: await detector.detect(monos[1] as Float32Array, second.sampleRate),
  };
}

/**
 * Reads one audio file per speaker ({@link readAudioFile}: WAV directly, other formats through ffmpeg)
 * and detects their speech with {@link detectSpeakerRecordings}.
 *
 * @param paths the file of result channel 0, then of channel 1.
 * @throws AudioFileError naming the file that cannot be read; whatever the detector throws.
 */
export async function detectSpeakerFiles(
  paths: readonly [string, string],
  detector: VoiceActivityDetector,
): Promise<ChannelSegments> {
  const recordings = await Promise.all([readAudioFile(paths[0]), readAudioFile(paths[1])]);
  return detectSpeakerRecordings([recordings[0], recordings[1]], detector);
}

/** Which engine a detector is and its complete settings: enough to create the same detector again. */
export interface VoiceActivitySettings {
  engine: VoiceActivityEngine;
  /** The engine's resolved option block (silero-vad.ts `SileroVadOptions`, webrtc-vad.ts `WebRtcVadOptions`). */
  options: Record<string, unknown>;
}

/**
 * The engine and resolved settings of a detector made by {@link createVoiceActivityDetector}, for a
 * dataset's manifest (so that `duplexsynth verify` can run the same detector again).
 *
 * @throws TypeError when the detector is not one of {@link VOICE_ACTIVITY_ENGINES} (a fake has no
 *   settings another process could rebuild).
 */
export function voiceActivitySettings(detector: VoiceActivityDetector): VoiceActivitySettings {
  const options = (detector as { options?: unknown }).options;
  if (
    !(VOICE_ACTIVITY_ENGINES as readonly string[]).includes(detector.id) ||
    typeof options !== 'object' ||
    options === null
  ) {
    throw new TypeError(
      `voice activity detector "${detector.id}" has no settings that could create it again (known engines: ${VOICE_ACTIVITY_ENGINES.join(', ')})`,
    );
  }
  return { engine: detector.id as VoiceActivityEngine, options: structuredClone(options) as Record<string, unknown> };
}

/**
 * Speech segments of the two channel tracks of one dialogue, each clipped to its track's length
 * (rounded up to a centisecond) with empty segments dropped: what `duplexsynth chat` derives a
 * VAD-only segment's events from and what `duplexsynth verify` re-derives them with, from the same
 * PCM16 samples.
 *
 * @param tracks channel 0 and channel 1 samples, nominal range [-1, 1].
 * @param sampleRate Hz, positive integer.
 * @returns per channel, sorted non-overlapping segments in integer centiseconds from the first sample.
 * @throws whatever the detector throws (VoiceActivityDetectionError).
 */
export async function detectTrackSpeech(
  tracks: readonly [Float32Array, Float32Array],
  sampleRate: number,
  detector: VoiceActivityDetector,
): Promise<ChannelSegments> {
  const [first, second] = await detectEach(detector, tracks, sampleRate);
  const clip = (segments: readonly SpeechSegment[], samples: number): SpeechSegment[] => {
    const length = Math.ceil((samples * 100) / sampleRate - 1e-9);
    return segments
      .map((segment) => ({ start: Math.max(0, segment.start), end: Math.min(length, segment.end) }))
      .filter((segment) => segment.end > segment.start);
  };
  return { 0: clip(first ?? [], tracks[0].length), 1: clip(second ?? [], tracks[1].length) };
}
