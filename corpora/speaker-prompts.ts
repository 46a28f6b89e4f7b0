/**
 * Speaker prompt pool: single-speaker clips with their exact transcripts, cut from reference
 * recordings, for zero-shot voice cloning (CosyVoice's `prompt_wav` + `prompt_text`,
 * ../shared/docs/services.md: a prompt of at most 30 s whose text is its transcript, or the prompt
 * leaks into the output).
 *
 * How clips are chosen (all times integer centiseconds):
 * 1. Per recording and channel, the channel's supervisions in time order are grouped greedily: a group
 *    starts at a supervision and takes the next one while the silence before it is at most
 *    `maximumGapSeconds`, the group stays within `maximumDurationSeconds`, and the group stays valid.
 * 2. A group is valid when (a) the other channel has no speech segment within
 *    `otherChannelMarginSeconds` of the clip (so the clip is one speaker, also on a mono mix or with
 *    crosstalk), and (b) every bit of the clip's own channel that is speech lies inside the group's
 *    supervisions (no untranscribed speech such as laughter, so the text is the exact transcript).
 * 3. A group of at least `minimumDurationSeconds` becomes a clip and the next group starts after it;
 *    a shorter one is dropped and the next group starts at its second supervision.
 * 4. Per speaker (across recordings and corpora), the `clipsPerSpeaker` longest clips are kept (ties:
 *    earlier recording in the input, earlier start).
 * The clip spans exactly from the first supervision's start to the last one's end; its text is the
 * supervisions' texts joined with `joinTranscript` (no spaces between Japanese pieces).
 *
 * Output: `clips/<id>.wav` (16 kHz mono PCM16 by default) and `speaker-prompts.jsonl`, one line per
 * clip, sorted by corpus, speaker, recording and start; every file written atomically. The same input
 * gives byte-identical output.
 */
import path from 'node:path';
import { encodeWavPcm16, resample, type ResampleQuality } from '../pipeline/audio/raw-audio.ts';
import type { Centiseconds, Channel, ReferenceRecording, ReferenceSupervision, SpeechSegment } from '../pipeline/model/types.ts';
import { writeAtomic } from '../pipeline/run/content-cache.ts';
import { joinTranscript, readReferenceAudio, REFERENCE_CHANNELS, type AudioFileReader } from './reference-recording.ts';
import { mergeOverlappingSegments } from './rttm.ts';

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
}

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
  for (const key of ['minimumDurationSeconds', 'maximumDurationSeconds', 'maximumGapSeconds', 'otherChannelMarginSeconds'] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0) throw new RangeError(`speaker prompts: ${key} ${resolved[key]} is not a non-negative number of seconds`);
  }
  if (resolved.minimumDurationSeconds > resolved.maximumDurationSeconds) {
    throw new RangeError(`speaker prompts: minimumDurationSeconds ${resolved.minimumDurationSeconds} exceeds maximumDurationSeconds ${resolved.maximumDurationSeconds}`);
  }
  if (resolved.maximumDurationSeconds > 30) throw new RangeError(`speaker prompts: maximumDurationSeconds ${resolved.maximumDurationSeconds} exceeds the 30 s prompt limit`);
  if (resolved.clipsPerSpeaker !== null && (!Number.isSafeInteger(resolved.clipsPerSpeaker) || resolved.clipsPerSpeaker < 1)) {
    throw new RangeError(`speaker prompts: clipsPerSpeaker ${resolved.clipsPerSpeaker} is not a positive integer or null`);
  }
  if (!Number.isSafeInteger(resolved.sampleRate) || resolved.sampleRate <= 0) throw new RangeError(`speaker prompts: sampleRate ${resolved.sampleRate} is not a positive integer`);
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
  /** Exact transcript: the supervisions' texts joined with `joinTranscript`. */
  text: string;
  /** The supervisions the clip is made of, in order. */
  supervisions: ReferenceSupervision[];
}

/** The planned clips and why recordings or clips were left out (one line each). */
export interface SpeakerPromptPlan {
  clips: PlannedSpeakerPrompt[];
  skipped: string[];
}

const seconds = (value: number): Centiseconds => Math.round(value * 100);

/** True when no segment comes within [start, end] (ends touching count as inside). */
function isSilent(segments: readonly SpeechSegment[], start: Centiseconds, end: Centiseconds): boolean {
  return segments.every((segment) => segment.end < start || segment.start > end);
}

/** True when every speech part of `segments` inside [start, end] lies inside `covered` (sorted, merged). */
function isCovered(segments: readonly SpeechSegment[], covered: readonly SpeechSegment[], start: Centiseconds, end: Centiseconds): boolean {
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

/** Greedy grouping of one channel's supervisions into clips (steps 1-3 of the file comment). */
function planChannel(recording: ReferenceRecording, channel: Channel, options: ResolvedSpeakerPromptOptions): PlannedSpeakerPrompt[] {
  const own = (recording.supervisions ?? [])
    .filter((supervision) => supervision.channel === channel && supervision.text.trim() !== '')
    .sort((a, b) => a.start - b.start || a.end - b.end);
  const other = recording.segments[channel === 0 ? 1 : 0];
  const ownSegments = recording.segments[channel];
  const minimum = seconds(options.minimumDurationSeconds);
  const maximum = seconds(options.maximumDurationSeconds);
  const gap = seconds(options.maximumGapSeconds);
  const margin = seconds(options.otherChannelMarginSeconds);
  const isValid = (group: readonly ReferenceSupervision[]): boolean => {
    const start = group[0]?.start as number;
    const end = Math.max(...group.map((supervision) => supervision.end));
    if (end - start > maximum) return false;
    if (!isSilent(other, start - margin, end + margin)) return false;
    return isCovered(ownSegments, mergeOverlappingSegments(group).segments, start, end);
  };
  const clips: PlannedSpeakerPrompt[] = [];
  let first = 0;
  while (first < own.length) {
    const group = [own[first] as ReferenceSupervision];
    if (!isValid(group)) {
      first += 1;
      continue;
    }
    let next = first + 1;
    while (next < own.length) {
      const candidate = own[next] as ReferenceSupervision;
      const groupEnd = Math.max(...group.map((supervision) => supervision.end));
      if (candidate.start - groupEnd > gap || !isValid([...group, candidate])) break;
      group.push(candidate);
      next += 1;
    }
    const start = (group[0] as ReferenceSupervision).start;
    const end = Math.max(...group.map((supervision) => supervision.end));
    if (end - start >= minimum) {
      const speaker = (group[0] as ReferenceSupervision).speaker;
      clips.push({
        id: `${safe(recording.format)}-${safe(recording.id)}-${channel}-${start}-${end}`,
        corpus: recording.format,
        recording,
        channel,
        speaker,
        start,
        end,
        text: joinTranscript(group.map((supervision) => supervision.text)),
        supervisions: group,
      });
      first = next;
    } else {
      first += 1;
    }
  }
  return clips;
}

/** Code-unit string order (locale-independent). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Chooses the clips (no audio is read).
 *
 * @param recordings reference recordings; those without supervisions or without audio are skipped
 *   (listed in `skipped`).
 * @param options see {@link SpeakerPromptOptions}.
 * @returns the clips in manifest order (corpus, speaker, recording, start) and the skip reasons.
 * @throws RangeError for invalid options; Error when two clips get the same id.
 */
export function planSpeakerPrompts(recordings: readonly ReferenceRecording[], options: SpeakerPromptOptions = {}): SpeakerPromptPlan {
  const resolved = resolveSpeakerPromptOptions(options);
  const skipped: string[] = [];
  const candidates: { clip: PlannedSpeakerPrompt; order: number }[] = [];
  recordings.forEach((recording, order) => {
    if ((recording.supervisions ?? []).length === 0) {
      skipped.push(`${recording.format} ${recording.id}: no supervisions (no transcripts)`);
      return;
    }
    for (const channel of REFERENCE_CHANNELS) {
      if (!(recording.audio ?? []).some((entry) => entry.channel === channel)) {
        skipped.push(`${recording.format} ${recording.id}: no audio for channel ${channel}`);
        continue;
      }
      for (const clip of planChannel(recording, channel, resolved)) candidates.push({ clip, order });
    }
  });
  const bySpeaker = new Map<string, { clip: PlannedSpeakerPrompt; order: number }[]>();
  for (const candidate of candidates) {
    const list = bySpeaker.get(candidate.clip.speaker) ?? [];
    list.push(candidate);
    bySpeaker.set(candidate.clip.speaker, list);
  }
  const kept: PlannedSpeakerPrompt[] = [];
  for (const [speaker, list] of bySpeaker) {
    list.sort((a, b) => b.clip.end - b.clip.start - (a.clip.end - a.clip.start) || a.order - b.order || a.clip.start - b.clip.start);
    const limit = resolved.clipsPerSpeaker ?? list.length;
    kept.push(...list.slice(0, limit).map((entry) => entry.clip));
    if (list.length > limit) skipped.push(`speaker ${speaker}: ${list.length - limit} more clips over the limit of ${limit} per speaker`);
  }
  kept.sort(
    (a, b) =>
      compareText(a.corpus, b.corpus) || compareText(a.speaker, b.speaker) || compareText(a.recording.id, b.recording.id) || a.start - b.start || a.channel - b.channel,
  );
  const ids = new Set<string>();
  for (const clip of kept) {
    if (ids.has(clip.id)) throw new Error(`speaker prompts: two clips have the id ${clip.id}`);
    ids.add(clip.id);
  }
  return { clips: kept, skipped };
}

/** One line of the manifest. */
export interface SpeakerPromptEntry {
  id: string;
  speaker: string;
  /** The recording's `format`. */
  corpus: string;
  /** Recording id. */
  recording: string;
  /** Clip start in the recording, seconds (0.01 s resolution). */
  start: number;
  /** Clip end in the recording, seconds (0.01 s resolution). */
  end: number;
  /** Exact transcript of the clip (CosyVoice `prompt_text`). */
  text: string;
  /** WAV file, relative to the output folder (`clips/<id>.wav`). */
  path: string;
  /** end - start, seconds. */
  durationSeconds: number;
}

/** What {@link writeSpeakerPromptPool} wrote. */
export interface SpeakerPromptPool {
  entries: SpeakerPromptEntry[];
  /** Absolute-or-as-given path of `speaker-prompts.jsonl`. */
  manifestPath: string;
  /** Recordings and clips left out, one reason each. */
  skipped: string[];
}

/** Finds the audio file and file channel of one recording channel (see corpora/reference-recording.ts). */
function audioSourceOf(recording: ReferenceRecording, channel: Channel): string {
  const entry = (recording.audio ?? []).find((candidate) => candidate.channel === channel);
  if (entry === undefined) throw new Error(`speaker prompts: ${recording.id} has no audio for channel ${channel}`);
  return entry.path;
}

/**
 * Cuts the planned clips and writes the pool: `clips/<id>.wav` (mono PCM16 at `sampleRate`) and the
 * JSONL manifest, all atomically. Audio of a recording channel is the file's channel c when the file
 * has two or more channels, its only channel when mono.
 *
 * @param recordings reference recordings (with supervisions and audio to contribute clips).
 * @param outputDirectory folder to write into (created when missing).
 * @param options see {@link SpeakerPromptOptions}.
 * @returns the manifest entries (in file order), the manifest path and the skip reasons (clips that
 *   reach past the end of their audio are skipped too).
 * @throws RangeError for invalid options; the reader's error when an audio file cannot be read.
 */
export async function writeSpeakerPromptPool(
  recordings: readonly ReferenceRecording[],
  outputDirectory: string,
  options: SpeakerPromptOptions = {},
): Promise<SpeakerPromptPool> {
  const resolved = resolveSpeakerPromptOptions(options);
  const plan = planSpeakerPrompts(recordings, resolved);
  const skipped = [...plan.skipped];
  const byFile = new Map<string, PlannedSpeakerPrompt[]>();
  for (const clip of plan.clips) {
    const file = audioSourceOf(clip.recording, clip.channel);
    byFile.set(file, [...(byFile.get(file) ?? []), clip]);
  }
  const written = new Map<string, SpeakerPromptEntry>();
  // One audio file in memory at a time: cut every clip of a file, then move on.
  for (const [file, clips] of byFile) {
    const audio = await resolved.readAudio(file);
    for (const clip of clips) {
      const samples = audio.channels.length >= 2 ? audio.channels[clip.channel] : audio.channels[0];
      if (samples === undefined) throw new Error(`speaker prompts: ${file} has no audio channels`);
      const from = Math.round((clip.start * audio.sampleRate) / 100);
      const to = Math.round((clip.end * audio.sampleRate) / 100);
      if (to > samples.length) {
        skipped.push(`${clip.id}: reaches past the end of ${file}`);
        continue;
      }
      const cut = await resample({ channels: [samples.slice(from, to)], sampleRate: audio.sampleRate }, resolved.sampleRate, resolved.resampleQuality);
      const relativePath = `clips/${clip.id}.wav`;
      await writeAtomic(path.join(outputDirectory, relativePath), encodeWavPcm16(cut));
      written.set(clip.id, {
        id: clip.id,
        speaker: clip.speaker,
        corpus: clip.corpus,
        recording: clip.recording.id,
        start: clip.start / 100,
        end: clip.end / 100,
        text: clip.text,
        path: relativePath,
        durationSeconds: (clip.end - clip.start) / 100,
      });
    }
  }
  const entries = plan.clips.flatMap((clip) => written.get(clip.id) ?? []);
  const manifestPath = path.join(outputDirectory, SPEAKER_PROMPT_MANIFEST);
  await writeAtomic(manifestPath, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
  return { entries, manifestPath, skipped };
}
