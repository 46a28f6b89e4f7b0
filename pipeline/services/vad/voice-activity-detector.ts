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
const ENGINE_FACTORIES: { [Engine in VoiceActivityEngine]: (options: VoiceActivityEngineOptions[Engine]) => Promise<VoiceActivityDetector> } = {
  silero: async (options) => (await import('./silero-vad.ts')).createSileroVoiceActivityDetector(options),
  webrtc: async (options) => (await import('./webrtc-vad.ts')).createWebRtcVoiceActivityDetector(options),
};

/** Names accepted by {@link createVoiceActivityDetector}. */
export const VOICE_ACTIVITY_ENGINES: readonly VoiceActivityEngine[] = Object.freeze(Object.keys(ENGINE_FACTORIES) as VoiceActivityEngine[]);

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
  const factory = ENGINE_FACTORIES[engine] as ((options: VoiceActivityEngineOptions[Engine]) => Promise<VoiceActivityDetector>) | undefined;
  if (!factory) throw new TypeError(`unknown voice activity engine "${engine}" (known: ${VOICE_ACTIVITY_ENGINES.join(', ')})`);
  return await factory(options);
}

/** Runs the detector on several signals, batched when the detector supports it. */
function detectEach(detector: VoiceActivityDetector, channels: readonly Float32Array[], sampleRate: number): Promise<SpeechSegment[][]> {
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
export async function detectSpeakerRecordings(recordings: readonly [RawAudio, RawAudio], detector: VoiceActivityDetector): Promise<ChannelSegments> {
  const [first, second] = recordings;
  const monos = [downmixToMono(first), downmixToMono(second)];
  if (first.sampleRate === second.sampleRate) {
    const [segments0, segments1] = await detectEach(detector, monos, first.sampleRate);
    return { 0: segments0 as SpeechSegment[], 1: segments1 as SpeechSegment[] };
  }
  return { 0: await detector.detect(monos[0] as Float32Array, first.sampleRate), 1: await detector.detect(monos[1] as Float32Array, second.sampleRate) };
}

/**
 * Reads one audio file per speaker ({@link readAudioFile}: WAV directly, other formats through ffmpeg)
 * and detects their speech with {@link detectSpeakerRecordings}.
 *
 * @param paths the file of result channel 0, then of channel 1.
 * @throws AudioFileError naming the file that cannot be read; whatever the detector throws.
 */
export async function detectSpeakerFiles(paths: readonly [string, string], detector: VoiceActivityDetector): Promise<ChannelSegments> {
  const recordings = await Promise.all([readAudioFile(paths[0]), readAudioFile(paths[1])]);
  return detectSpeakerRecordings([recordings[0], recordings[1]], detector);
}
