/**
 * Choosing the clips of a speaker prompt pool (steps 1 to 5 of ./speaker-prompts.ts, which cuts and
 * writes them): the options with their defaults, the planned and rejected clips, the grouping of a
 * channel's supervisions into clips, and the per-speaker selection. All times integer centiseconds.
 */
import type { ResampleQuality } from '../pipeline/audio/resample.ts';
import type {
  Centiseconds,
  Channel,
  ReferenceRecording,
  ReferenceSupervision,
  SpeechSegment,
} from '../pipeline/model/types.ts';
import { measureLoudness, type LoudnessMeasurement } from '../pipeline/quality/loudness.ts';
import { dialogueRandomStream } from '../pipeline/model/random.ts';
import { joinTranscript, readReferenceAudio, REFERENCE_CHANNELS, type AudioFileReader } from './reference-recording.ts';
import { mergeOverlappingSegments } from './rttm.ts';
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
  /** Reject clips whose signal-to-noise ratio (module comment) is below this, dB; null for no check. Default null. */
  minimumSnrDb?: number | null;
  /** Loudness normalization of the written clips (module comment); null for none. Default null. */
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

/** Seconds -> integer centiseconds. */
export const seconds = (value: number): Centiseconds => Math.round(value * 100);

/** True when no segment comes within [start, end] (ends touching count as inside). */
function isSilent(segments: readonly SpeechSegment[], start: Centiseconds, end: Centiseconds): boolean {
  return segments.every((segment) => segment.end < start || segment.start > end);
}

/** True when every speech part of `segments` inside [start, end] lies inside `covered` (sorted, merged). */
function isCovered(
  segments: readonly SpeechSegment[],
  covered: readonly SpeechSegment[],
  start: Centiseconds,
  end: Centiseconds,
): boolean {
  for (const segment of segments) {
    let from = Math.max(segment.start, start);
    const to = Math.min(segment.end, end);
    for (const span of covered) {
      if (from >= to) break;
      if (span.end <= from) continue;
      if (span.start > from) return false;
      from = span.end;
    }
    if (from < to) return false;
  }
  return true;
}

/** File-name-safe form of an id part. */
function safe(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** A token in angle brackets in a transcript (`<unk>`): the aligner's placeholder, not the words said. */
const PLACEHOLDER_TOKEN = /<[^<>\s]+>/;

/**
 * Greedy grouping of one channel's supervisions into clips (steps 1-4 of the file comment). Every
 * supervision that ends up in no clip gets one rejection: the reason of the group that started at it.
 */
function planChannel(
  recording: ReferenceRecording,
  channel: Channel,
  options: ResolvedSpeakerPromptOptions,
  untranscribed = false,
): { clips: PlannedSpeakerPrompt[]; rejected: RejectedSpeakerPrompt[] } {
  const supervisions = untranscribed
    ? recording.segments[channel].map((segment): ReferenceSupervision => ({
        channel,
        start: segment.start,
        end: segment.end,
        speaker: recording.channelSpeakers[channel],
        text: '',
      }))
    : (recording.supervisions ?? []);
  const own = supervisions
    .filter((supervision) => supervision.channel === channel && (untranscribed || supervision.text.trim() !== ''))
    .sort((a, b) => a.start - b.start || a.end - b.end);
  const other = recording.segments[channel === 0 ? 1 : 0];
  const ownSegments = recording.segments[channel];
  const minimum = seconds(options.minimumDurationSeconds);
  const maximum = seconds(options.maximumDurationSeconds);
  const gap = seconds(options.maximumGapSeconds);
  const margin = seconds(options.otherChannelMarginSeconds);
  const problemOf = (group: readonly ReferenceSupervision[]): string | null => {
    const start = group[0]?.start as number;
    const end = Math.max(...group.map((supervision) => supervision.end));
    if (end - start > maximum) return `longer than ${options.maximumDurationSeconds} s`;
    if (!isSilent(other, start - margin, end + margin))
      return `the other channel speaks within ${options.otherChannelMarginSeconds} s`;
    if (!isCovered(ownSegments, mergeOverlappingSegments(group).segments, start, end))
      return 'untranscribed speech of the speaker inside (laughter, noise)';
    return null;
  };
  const clips: PlannedSpeakerPrompt[] = [];
  const reasons = new Map<number, { reason: string; start: Centiseconds; end: Centiseconds }>();
  const used = new Set<number>();
  let first = 0;
  while (first < own.length) {
    const group = [own[first] as ReferenceSupervision];
    const problem = problemOf(group);
    if (problem !== null) {
      reasons.set(first, { reason: problem, start: group[0]!.start, end: group[0]!.end });
      first += 1;
      continue;
    }
    let next = first + 1;
    while (next < own.length) {
      const candidate = own[next] as ReferenceSupervision;
      const groupEnd = Math.max(...group.map((supervision) => supervision.end));
      if (candidate.start - groupEnd > gap || problemOf([...group, candidate]) !== null) break;
      group.push(candidate);
      next += 1;
    }
    const start = (group[0] as ReferenceSupervision).start;
    const end = Math.max(...group.map((supervision) => supervision.end));
    const text = joinTranscript(group.map((supervision) => supervision.text));
    const placeholder = PLACEHOLDER_TOKEN.exec(text);
    if (end - start < minimum) {
      reasons.set(first, { reason: `shorter than ${options.minimumDurationSeconds} s`, start, end });
      first += 1;
    } else if (placeholder !== null) {
      reasons.set(first, {
        reason: `the transcript holds the placeholder ${placeholder[0]} (not the words said)`,
        start,
        end,
      });
      first += 1;
    } else {
      const speaker = (group[0] as ReferenceSupervision).speaker;
      clips.push({
        id: `${safe(recording.format)}-${safe(recording.id)}-${channel}-${start}-${end}`,
        corpus: recording.format,
        recording,
        channel,
        speaker,
        start,
        end,
        text,
        supervisions: group,
      });
      for (let index = first; index < next; index += 1) used.add(index);
      first = next;
    }
  }
  const rejected: RejectedSpeakerPrompt[] = [];
  own.forEach((supervision, index) => {
    if (used.has(index)) return;
    const why = reasons.get(index) ?? { reason: 'not placed', start: supervision.start, end: supervision.end };
    rejected.push({
      corpus: recording.format,
      recording: recording.id,
      channel,
      speaker: supervision.speaker,
      start: why.start,
      end: why.end,
      reason: why.reason,
    });
  });
  return { clips, rejected };
}

/** Code-unit string order (locale-independent). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Every clip that passes steps 1-4 (no per-speaker limit), with the rejections and skipped recordings. */
export function candidateSpeakerPrompts(
  recordings: readonly ReferenceRecording[],
  resolved: ResolvedSpeakerPromptOptions,
): {
  candidates: { clip: PlannedSpeakerPrompt; order: number }[];
  skipped: string[];
  rejected: RejectedSpeakerPrompt[];
} {
  const skipped: string[] = [];
  const rejected: RejectedSpeakerPrompt[] = [];
  const candidates: { clip: PlannedSpeakerPrompt; order: number }[] = [];
  recordings.forEach((recording, order) => {
    const untranscribed = (recording.supervisions ?? []).length === 0 && resolved.untranscribedSpeech;
    if ((recording.supervisions ?? []).length === 0 && !untranscribed) {
      skipped.push(`${recording.format} ${recording.id}: no supervisions (no transcripts)`);
      return;
    }
    for (const channel of REFERENCE_CHANNELS) {
      if (!(recording.audio ?? []).some((entry) => entry.channel === channel)) {
        skipped.push(`${recording.format} ${recording.id}: no audio for channel ${channel}`);
        continue;
      }
      const planned = planChannel(recording, channel, resolved, untranscribed);
      for (const clip of planned.clips) candidates.push({ clip, order });
      rejected.push(...planned.rejected);
    }
  });
  return { candidates, skipped, rejected };
}

/** Manifest order: corpus, speaker, recording, start, channel. */
function compareClips(a: PlannedSpeakerPrompt, b: PlannedSpeakerPrompt): number {
  return (
    compareText(a.corpus, b.corpus) ||
    compareText(a.speaker, b.speaker) ||
    compareText(a.recording.id, b.recording.id) ||
    a.start - b.start ||
    a.channel - b.channel
  );
}

/** Step 5 of the file comment: the clips kept per speaker, in manifest order, and those left out. */
export function selectPerSpeaker(
  candidates: readonly { clip: PlannedSpeakerPrompt; order: number }[],
  resolved: ResolvedSpeakerPromptOptions,
): { clips: PlannedSpeakerPrompt[]; skipped: string[]; rejected: RejectedSpeakerPrompt[] } {
  const bySpeaker = new Map<string, { clip: PlannedSpeakerPrompt; order: number }[]>();
  for (const candidate of candidates) {
    const list = bySpeaker.get(candidate.clip.speaker) ?? [];
    list.push(candidate);
    bySpeaker.set(candidate.clip.speaker, list);
  }
  const kept: PlannedSpeakerPrompt[] = [];
  const skipped: string[] = [];
  const rejected: RejectedSpeakerPrompt[] = [];
  for (const [speaker, list] of bySpeaker) {
    if (resolved.selectionSeed === null) {
      list.sort(
        (a, b) =>
          b.clip.end - b.clip.start - (a.clip.end - a.clip.start) || a.order - b.order || a.clip.start - b.clip.start,
      );
    } else {
      // Fisher-Yates on the manifest order, from a stream seeded by (seed, corpus:speaker).
      list.sort((a, b) => compareClips(a.clip, b.clip));
      const stream = dialogueRandomStream(
        resolved.selectionSeed,
        `${list[0]?.clip.corpus}:${speaker}`,
        'speaker-prompts',
      );
      for (let index = list.length - 1; index > 0; index -= 1) {
        const other = stream.integer(0, index);
        [list[index], list[other]] = [list[other] as (typeof list)[number], list[index] as (typeof list)[number]];
      }
    }
    const limit = resolved.clipsPerSpeaker ?? list.length;
    kept.push(...list.slice(0, limit).map((entry) => entry.clip));
    if (list.length > limit) {
      skipped.push(`speaker ${speaker}: ${list.length - limit} more clips over the limit of ${limit} per speaker`);
      for (const { clip } of list.slice(limit)) {
        rejected.push({
          corpus: clip.corpus,
          recording: clip.recording.id,
          channel: clip.channel,
          speaker,
          start: clip.start,
          end: clip.end,
          reason: `over the limit of ${limit} clips per speaker`,
        });
      }
    }
  }
  kept.sort(compareClips);
  const ids = new Set<string>();
  for (const clip of kept) {
    if (ids.has(clip.id)) throw new Error(`speaker prompts: two clips have the id ${clip.id}`);
    ids.add(clip.id);
  }
  return { clips: kept, skipped, rejected };
}

/**
 * Chooses the clips (no audio is read; `minimumSnrDb` is applied by {@link writeSpeakerPromptPool}).
 *
 * @param recordings reference recordings; those without supervisions or without audio are skipped
 *   (listed in `skipped`).
 * @param options see {@link SpeakerPromptOptions}.
 * @returns the clips in manifest order (corpus, speaker, recording, start), the skip lines and the
 *   rejected candidates with reasons.
 * @throws RangeError for invalid options; Error when two clips get the same id.
 */
export function planSpeakerPrompts(
  recordings: readonly ReferenceRecording[],
  options: SpeakerPromptOptions = {},
): SpeakerPromptPlan {
  const resolved = resolveSpeakerPromptOptions(options);
  const candidates = candidateSpeakerPrompts(recordings, resolved);
  const selected = selectPerSpeaker(candidates.candidates, resolved);
  return {
    clips: selected.clips,
    skipped: [...candidates.skipped, ...selected.skipped],
    rejected: [...candidates.rejected, ...selected.rejected],
  };
}
