/**
 * The options of a speaker prompt pool (./speaker-prompts.ts) with their defaults and checks, and the
 * shapes of a planned clip, a rejected candidate and a plan. All times integer centiseconds.
 */
import type { ResampleQuality } from '../pipeline/audio/resample.ts';
import type { Centiseconds, Channel, ReferenceRecording, ReferenceSupervision } from '../pipeline/model/types.ts';
import { measureLoudness, type LoudnessMeasurement } from '../pipeline/quality/loudness.ts';
import { readReferenceAudio, type AudioFileReader } from './reference-recording.ts';
import type { SpeakerPromptLoudness } from './speaker-prompt-loudness.ts';

/** Options of the speaker prompt pool. Every field has a default in {@link DEFAULT_SPEAKER_PROMPT_OPTIONS}. */
export interface SpeakerPromptOptions {
  /** Shortest clip, seconds (inclusive). Default 3. */
  minimumDurationSeconds?: number;
  /** Longest clip, seconds (inclusive). Default 10. */
  maximumDurationSeconds?: number;
  /** Longest silence between two supervisions merged into one clip, seconds (inclusive). Default 1.0. */
  maximumGapSeconds?: number;
  /** The other channel must be silent this long before and after the clip too, seconds. Default 0.1. */
  otherChannelMarginSeconds?: number;
  /** Most clips kept per speaker (the longest); null for all. Default 3. */
  clipsPerSpeaker?: number | null;
  /** Sample rate of the written clips, Hz. Default 16000. */
  sampleRate?: number;
  /**
   * libsamplerate converter for clips whose audio has another rate. Default `medium` (about 97 dB
   * signal-to-noise over 90% of the band, ample for a voice prompt, about 3x faster than `best`).
   */
  resampleQuality?: ResampleQuality;
  /** Reads the recordings' audio files; default {@link readReferenceAudio} (WAV in process, other formats through ffmpeg). */
  readAudio?: AudioFileReader;
  /** null: keep the longest clips per speaker; a seed (safe integer): draw them at random, deterministically. Default null. */
  selectionSeed?: number | null;
  /** Reject clips whose signal-to-noise ratio (./speaker-prompts.ts module comment) is below this, dB; null for no check. Default null. */
  minimumSnrDb?: number | null;
  /** Loudness normalization of the written clips (./speaker-prompts.ts module comment); null for none. Default null. */
  loudness?: SpeakerPromptLoudness | null;
  /** Measures a WAV file's loudness; default `measureLoudness` (ffmpeg ebur128). */
  measureLoudness?: (file: string) => Promise<LoudnessMeasurement>;
  /**
   * Recordings without transcripts (stereo-wav, RTTM turns with `--audio`) contribute clips too: their
   * channels' speech segments (speech detection or turns) take the place of supervisions, so a clip is
   * a clean single-speaker stretch, and its text is '' until {@link SpeakerPromptOptions.transcribe}
   * gives one. Default false (such recordings are skipped: "no supervisions").
   */
  untranscribedSpeech?: boolean;
  /**
   * Gives a clip without text its text (an ASR service, a filled-in TSV): called with the clip and its
   * WAV as written. A clip that gets no text is written to `clips/` but never enters the manifest (a
   * voice prompt needs its transcript). Default null: such clips stay without text.
   */
  transcribe?: SpeakerPromptTranscriber | null;
}

/** What a {@link SpeakerPromptTranscriber} found: the text and who wrote it, or why there is none. */
export type SpeakerPromptTranscription = { text: string; transcribedBy: string } | { missing: string };

/** Gives a clip without text its text (see {@link SpeakerPromptOptions.transcribe}). */
export type SpeakerPromptTranscriber = (
  clip: PlannedSpeakerPrompt,
  wav: Uint8Array,
) => Promise<SpeakerPromptTranscription>;

export { EBU_R128_LOUDNESS, type SpeakerPromptLoudness } from './speaker-prompt-loudness.ts';

/** Options with every default applied. */
export type ResolvedSpeakerPromptOptions = Required<SpeakerPromptOptions>;

/** Defaults of {@link SpeakerPromptOptions}. */
export const DEFAULT_SPEAKER_PROMPT_OPTIONS: Readonly<ResolvedSpeakerPromptOptions> = Object.freeze({
  minimumDurationSeconds: 3,
  maximumDurationSeconds: 10,
  maximumGapSeconds: 1,
  otherChannelMarginSeconds: 0.1,
  clipsPerSpeaker: 3,
  sampleRate: 16000,
  resampleQuality: 'medium',
  readAudio: readReferenceAudio,
  selectionSeed: null,
  minimumSnrDb: null,
  loudness: null,
  measureLoudness: (file: string) => measureLoudness(file),
  untranscribedSpeech: false,
  transcribe: null,
});

/** File name of the manifest inside the output folder. */
export const SPEAKER_PROMPT_MANIFEST = 'speaker-prompts.jsonl';

/**
 * Fills defaults and checks the options.
 *
 * @throws RangeError when a duration is negative or not finite, the minimum exceeds the maximum, the
 *   maximum exceeds CosyVoice's 30 s prompt limit, `clipsPerSpeaker` is not a positive integer or
 *   null, or the sample rate is not a positive integer.
 */
export function resolveSpeakerPromptOptions(options: SpeakerPromptOptions = {}): ResolvedSpeakerPromptOptions {
  const resolved: ResolvedSpeakerPromptOptions = { ...DEFAULT_SPEAKER_PROMPT_OPTIONS };
  for (const [key, value] of Object.entries(options) as [keyof SpeakerPromptOptions, unknown][]) {
    if (value !== undefined) (resolved as Record<string, unknown>)[key] = value;
  }
  for (const key of [
    'minimumDurationSeconds',
    'maximumDurationSeconds',
    'maximumGapSeconds',
    'otherChannelMarginSeconds',
  ] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0)
      throw new RangeError(`speaker prompts: ${key} ${resolved[key]} is not a non-negative number of seconds`);
  }
  if (resolved.minimumDurationSeconds > resolved.maximumDurationSeconds) {
    throw new RangeError(
      `speaker prompts: minimumDurationSeconds ${resolved.minimumDurationSeconds} exceeds maximumDurationSeconds ${resolved.maximumDurationSeconds}`,
    );
  }
  if (resolved.maximumDurationSeconds > 30)
    throw new RangeError(
      `speaker prompts: maximumDurationSeconds ${resolved.maximumDurationSeconds} exceeds the 30 s prompt limit`,
    );
  if (
    resolved.clipsPerSpeaker !== null &&
    (!Number.isSafeInteger(resolved.clipsPerSpeaker) || resolved.clipsPerSpeaker < 1)
  ) {
    throw new RangeError(
      `speaker prompts: clipsPerSpeaker ${resolved.clipsPerSpeaker} is not a positive integer or null`,
    );
  }
  if (!Number.isSafeInteger(resolved.sampleRate) || resolved.sampleRate <= 0)
    throw new RangeError(`speaker prompts: sampleRate ${resolved.sampleRate} is not a positive integer`);
  if (resolved.selectionSeed !== null && !Number.isSafeInteger(resolved.selectionSeed))
    throw new RangeError(`speaker prompts: selectionSeed ${resolved.selectionSeed} is not a safe integer or null`);
  if (resolved.minimumSnrDb !== null && !Number.isFinite(resolved.minimumSnrDb))
    throw new RangeError(`speaker prompts: minimumSnrDb ${resolved.minimumSnrDb} is not a number or null`);
  if (
    resolved.loudness !== null &&
    (!Number.isFinite(resolved.loudness.targetLufs) ||
      !Number.isFinite(resolved.loudness.maximumTruePeakDbtp) ||
      resolved.loudness.maximumTruePeakDbtp > 0)
  ) {
    throw new RangeError(
      `speaker prompts: loudness ${JSON.stringify(resolved.loudness)} needs a finite targetLufs and a maximumTruePeakDbtp at most 0`,
    );
  }
  return resolved;
}

/** A clip chosen from a recording, before its audio is cut. */
export interface PlannedSpeakerPrompt {
  /** Unique id, also the WAV file name: `<corpus>-<recording>-<channel>-<start>-<end>` (centiseconds), unsafe characters as `_`. */
  id: string;
  /** The recording's `format` (`candor`, `magicdata`, ...). */
  corpus: string;
  recording: ReferenceRecording;
  channel: Channel;
  speaker: string;
  /** Clip start in the recording, centiseconds. */
  start: Centiseconds;
  /** Clip end in the recording, centiseconds. */
  end: Centiseconds;
  /** Exact transcript: the supervisions' texts joined with `joinTranscript`; '' for a clip of untranscribed speech. */
  text: string;
  /** The supervisions the clip is made of, in order. */
  supervisions: ReferenceSupervision[];
}

/** A candidate clip left out, with the reason. */
export interface RejectedSpeakerPrompt {
  corpus: string;
  recording: string;
  channel: Channel;
  speaker: string;
  /** The span that was considered, centiseconds. */
  start: Centiseconds;
  end: Centiseconds;
  reason: string;
}

/** The planned clips and why recordings or clips were left out. */
export interface SpeakerPromptPlan {
  clips: PlannedSpeakerPrompt[];
  /** Recordings or channels without transcripts or audio, speakers over the limit (one line each). */
  skipped: string[];
  /** Every candidate span left out, with its reason, in recording order. */
  rejected: RejectedSpeakerPrompt[];
}
