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
 * 4. A clip whose transcript holds a placeholder token (`<unk>`: a word the aligner did not know) is
 *    rejected: its text is not the exact transcript. With `minimumSnrDb`, a clip whose signal-to-noise
 *    ratio (below) is lower is rejected.
 * 5. Per speaker (across recordings and corpora), the `clipsPerSpeaker` longest clips are kept (ties:
 *    earlier recording in the input, earlier start), or, with `selectionSeed`, that many drawn at
 *    random from a stream seeded by (seed, corpus:speaker), so the same seed gives the same pool.
 * Every candidate left out gets a reason (`rejected`).
 *
 * Signal-to-noise ratio of a clip (dB): `10·log10((Ps − Pn) / Pn)`, the textbook definition with the
 * speech power measured as signal plus noise: Ps = mean square of the clip's channel over its speech
 * segments, Pn = mean square of the same channel over the recording's time where neither channel
 * has speech within `otherChannelMarginSeconds` (at least 0.2 s of it, else the SNR is unknown and a
 * minimum rejects the clip); +∞ when Pn is 0 (digital silence).
 *
 * Loudness (`loudness`): each clip gets one gain so that its integrated loudness (ITU-R BS.1770 /
 * EBU R 128, measured by ffmpeg's ebur128 filter, pipeline/quality/loudness.ts) meets the target,
 * lowered when the true peak would pass the ceiling.
 * The clip spans exactly from the first supervision's start to the last one's end; its text is the
 * supervisions' texts joined with `joinTranscript` (no spaces between Japanese pieces).
 *
 * Output: `clips/<id>.wav` (16 kHz mono PCM16 by default) and `speaker-prompts.jsonl`, one line per
 * clip, sorted by corpus, speaker, recording and start; every file written atomically. The same input
 * gives byte-identical output.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { quantizeToPcm16, type RawAudio } from '../pipeline/audio/raw-audio.ts';
import { resample, type ResampleQuality } from '../pipeline/audio/resample.ts';
import { encodeWavPcm16 } from '../pipeline/audio/wav.ts';
import type { Centiseconds, Channel, ReferenceRecording, ReferenceSupervision, SpeechSegment } from '../pipeline/model/types.ts';
import { measureLoudness, type LoudnessMeasurement } from '../pipeline/quality/loudness.ts';
import { writeAtomic } from '../pipeline/storage/write-atomic.ts';
import { dialogueRandomStream } from '../pipeline/model/random.ts';
import { joinTranscript, readReferenceAudio, REFERENCE_CHANNELS, type AudioFileReader } from './reference-recording.ts';
import { mergeOverlappingSegments } from './rttm.ts';
import { speakerPromptLineSchema, type SpeakerPromptLine } from '../pipeline/model/speaker-prompt.ts';
import { formatRecordLine } from '../pipeline/storage/json-records.ts';

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
}

/** Loudness target of the written clips. */
export interface SpeakerPromptLoudness {
  /** Integrated loudness to reach, LUFS (EBU R 128 programme target: −23). */
  targetLufs: number;
  /** Highest true peak allowed after the gain, dBTP (EBU R 128: −1). */
  maximumTruePeakDbtp: number;
}

/** The EBU R 128 targets: −23 LUFS integrated, true peak at most −1 dBTP (EBU R 128, 2020). */
export const EBU_R128_LOUDNESS: Readonly<SpeakerPromptLoudness> = Object.freeze({ targetLufs: -23, maximumTruePeakDbtp: -1 });

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
  if (resolved.selectionSeed !== null && !Number.isSafeInteger(resolved.selectionSeed)) throw new RangeError(`speaker prompts: selectionSeed ${resolved.selectionSeed} is not a safe integer or null`);
  if (resolved.minimumSnrDb !== null && !Number.isFinite(resolved.minimumSnrDb)) throw new RangeError(`speaker prompts: minimumSnrDb ${resolved.minimumSnrDb} is not a number or null`);
  if (resolved.loudness !== null && (!Number.isFinite(resolved.loudness.targetLufs) || !Number.isFinite(resolved.loudness.maximumTruePeakDbtp) || resolved.loudness.maximumTruePeakDbtp > 0)) {
    throw new RangeError(`speaker prompts: loudness ${JSON.stringify(resolved.loudness)} needs a finite targetLufs and a maximumTruePeakDbtp at most 0`);
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
  /** Exact transcript: the supervisions' texts joined with `joinTranscript`. */
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

/** A token in angle brackets in a transcript (`<unk>`): the aligner's placeholder, not the words said. */
const PLACEHOLDER_TOKEN = /<[^<>\s]+>/;

/**
 * Greedy grouping of one channel's supervisions into clips (steps 1-4 of the file comment). Every
 * supervision that ends up in no clip gets one rejection: the reason of the group that started at it.
 */
function planChannel(recording: ReferenceRecording, channel: Channel, options: ResolvedSpeakerPromptOptions): { clips: PlannedSpeakerPrompt[]; rejected: RejectedSpeakerPrompt[] } {
  const own = (recording.supervisions ?? [])
    .filter((supervision) => supervision.channel === channel && supervision.text.trim() !== '')
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
    if (!isSilent(other, start - margin, end + margin)) return `the other channel speaks within ${options.otherChannelMarginSeconds} s`;
    if (!isCovered(ownSegments, mergeOverlappingSegments(group).segments, start, end)) return 'untranscribed speech of the speaker inside (laughter, noise)';
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
      reasons.set(first, { reason: `the transcript holds the placeholder ${placeholder[0]} (not the words said)`, start, end });
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
    rejected.push({ corpus: recording.format, recording: recording.id, channel, speaker: supervision.speaker, start: why.start, end: why.end, reason: why.reason });
  });
  return { clips, rejected };
}

/** Code-unit string order (locale-independent). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Every clip that passes steps 1-4 (no per-speaker limit), with the rejections and skipped recordings. */
function candidateSpeakerPrompts(recordings: readonly ReferenceRecording[], resolved: ResolvedSpeakerPromptOptions): { candidates: { clip: PlannedSpeakerPrompt; order: number }[]; skipped: string[]; rejected: RejectedSpeakerPrompt[] } {
  const skipped: string[] = [];
  const rejected: RejectedSpeakerPrompt[] = [];
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
      const planned = planChannel(recording, channel, resolved);
      for (const clip of planned.clips) candidates.push({ clip, order });
      rejected.push(...planned.rejected);
    }
  });
  return { candidates, skipped, rejected };
}

/** Manifest order: corpus, speaker, recording, start, channel. */
function compareClips(a: PlannedSpeakerPrompt, b: PlannedSpeakerPrompt): number {
  return compareText(a.corpus, b.corpus) || compareText(a.speaker, b.speaker) || compareText(a.recording.id, b.recording.id) || a.start - b.start || a.channel - b.channel;
}

/** Step 5 of the file comment: the clips kept per speaker, in manifest order, and those left out. */
function selectPerSpeaker(
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
      list.sort((a, b) => b.clip.end - b.clip.start - (a.clip.end - a.clip.start) || a.order - b.order || a.clip.start - b.clip.start);
    } else {
      // Fisher-Yates on the manifest order, from a stream seeded by (seed, corpus:speaker).
      list.sort((a, b) => compareClips(a.clip, b.clip));
      const stream = dialogueRandomStream(resolved.selectionSeed, `${list[0]?.clip.corpus}:${speaker}`, 'speaker-prompts');
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
        rejected.push({ corpus: clip.corpus, recording: clip.recording.id, channel: clip.channel, speaker, start: clip.start, end: clip.end, reason: `over the limit of ${limit} clips per speaker` });
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
export function planSpeakerPrompts(recordings: readonly ReferenceRecording[], options: SpeakerPromptOptions = {}): SpeakerPromptPlan {
  const resolved = resolveSpeakerPromptOptions(options);
  const candidates = candidateSpeakerPrompts(recordings, resolved);
  const selected = selectPerSpeaker(candidates.candidates, resolved);
  return { clips: selected.clips, skipped: [...candidates.skipped, ...selected.skipped], rejected: [...candidates.rejected, ...selected.rejected] };
}

/** What {@link writeSpeakerPromptPool} wrote. */
export interface SpeakerPromptPool {
  entries: SpeakerPromptLine[];
  /** Absolute-or-as-given path of `speaker-prompts.jsonl`. */
  manifestPath: string;
  /** Recordings and clips left out, one reason each. */
  skipped: string[];
  /** Every candidate clip left out, with its reason. */
  rejected: RejectedSpeakerPrompt[];
}

/** Least non-speech time (both channels silent) on which the noise power is measured, centiseconds. */
export const MINIMUM_NOISE_MEASUREMENT: Centiseconds = 20;

/** Mean square of `samples` over the sample ranges of `spans` (centiseconds), and how many samples that was. */
function meanSquare(samples: Float32Array, sampleRate: number, spans: readonly SpeechSegment[]): { power: number; count: number } {
  let sum = 0;
  let count = 0;
  for (const span of spans) {
    const from = Math.max(0, Math.round((span.start * sampleRate) / 100));
    const to = Math.min(samples.length, Math.round((span.end * sampleRate) / 100));
    for (let index = from; index < to; index += 1) sum += (samples[index] as number) ** 2;
    count += Math.max(0, to - from);
  }
  return { power: count === 0 ? 0 : sum / count, count };
}

/** The complement of sorted, merged `busy` spans within [0, end], centiseconds. */
function gapsOf(busy: readonly SpeechSegment[], end: Centiseconds): SpeechSegment[] {
  const gaps: SpeechSegment[] = [];
  let cursor = 0;
  for (const span of busy) {
    if (span.start > cursor) gaps.push({ start: cursor, end: Math.min(span.start, end) });
    cursor = Math.max(cursor, span.end);
  }
  if (cursor < end) gaps.push({ start: cursor, end });
  return gaps.filter((gap) => gap.end > gap.start);
}

/**
 * Signal-to-noise ratio of a clip (module comment), dB.
 * @param samples the clip's channel of the recording, whole; `sampleRate` in Hz.
 * @returns dB (+Infinity for a digitally silent background), or null when the recording has less than
 *   {@link MINIMUM_NOISE_MEASUREMENT} of time with both channels silent.
 */
export function clipSignalToNoiseRatio(clip: PlannedSpeakerPrompt, samples: Float32Array, sampleRate: number, marginSeconds: number): number | null {
  const margin = seconds(marginSeconds);
  const { recording } = clip;
  const busy = mergeOverlappingSegments(
    [...recording.segments[0], ...recording.segments[1]].map((segment) => ({ start: Math.max(0, segment.start - margin), end: segment.end + margin })),
  ).segments;
  const end = Math.min(recording.durationCs, Math.floor((samples.length * 100) / sampleRate));
  const noise = meanSquare(samples, sampleRate, gapsOf(busy, end));
  if (noise.count < (MINIMUM_NOISE_MEASUREMENT * sampleRate) / 100) return null;
  const speechSpans = recording.segments[clip.channel]
    .map((segment) => ({ start: Math.max(segment.start, clip.start), end: Math.min(segment.end, clip.end) }))
    .filter((segment) => segment.end > segment.start);
  const speech = meanSquare(samples, sampleRate, speechSpans);
  if (noise.power === 0) return Number.POSITIVE_INFINITY;
  return 10 * Math.log10(Math.max(speech.power - noise.power, Number.MIN_VALUE) / noise.power);
}

/** Finds the audio file and file channel of one recording channel (see corpora/reference-recording.ts). */
function audioSourceOf(recording: ReferenceRecording, channel: Channel): string {
  const entry = (recording.audio ?? []).find((candidate) => candidate.channel === channel);
  if (entry === undefined) throw new Error(`speaker prompts: ${recording.id} has no audio for channel ${channel}`);
  return entry.path;
}

/** The samples of one recording channel in a decoded audio file (file channel c, or its only channel). */
function channelSamples(audio: RawAudio, channel: Channel, file: string): Float32Array {
  const samples = audio.channels.length >= 2 ? audio.channels[channel] : audio.channels[0];
  if (samples === undefined) throw new Error(`speaker prompts: ${file} has no audio channels`);
  return samples;
}

/** Clips grouped by the audio file of their channel, in first-use order. */
function byAudioFile(clips: readonly PlannedSpeakerPrompt[]): Map<string, PlannedSpeakerPrompt[]> {
  const files = new Map<string, PlannedSpeakerPrompt[]>();
  for (const clip of clips) {
    const file = audioSourceOf(clip.recording, clip.channel);
    files.set(file, [...(files.get(file) ?? []), clip]);
  }
  return files;
}

const tenths = (value: number): number => Math.round(value * 10) / 10;

/**
 * Cuts the planned clips and writes the pool: `clips/<id>.wav` (mono PCM16 at `sampleRate`) and the
 * JSONL manifest, all atomically. Audio of a recording channel is the file's channel c when the file
 * has two or more channels, its only channel when mono. With `minimumSnrDb`, every candidate's SNR is
 * measured first (one audio file in memory at a time) and the per-speaker selection is made among
 * those that pass; with `loudness`, each clip is measured (ffmpeg ebur128 on a temporary file) and
 * given its gain.
 *
 * @param recordings reference recordings (with supervisions and audio to contribute clips).
 * @param outputDirectory folder to write into (created when missing).
 * @param options see {@link SpeakerPromptOptions}.
 * @returns the manifest entries (in file order), the manifest path, the skip lines and the rejected
 *   candidates (clips that reach past the end of their audio, fail the SNR minimum or are silent are
 *   rejected too).
 * @throws RangeError for invalid options; the reader's error when an audio file cannot be read;
 *   LoudnessMeasurementError when ffmpeg cannot measure a clip.
 */
export async function writeSpeakerPromptPool(
  recordings: readonly ReferenceRecording[],
  outputDirectory: string,
  options: SpeakerPromptOptions = {},
): Promise<SpeakerPromptPool> {
  const resolved = resolveSpeakerPromptOptions(options);
  const planned = candidateSpeakerPrompts(recordings, resolved);
  const skipped = [...planned.skipped];
  const rejected = [...planned.rejected];
  const reject = (clip: PlannedSpeakerPrompt, reason: string) =>
    rejected.push({ corpus: clip.corpus, recording: clip.recording.id, channel: clip.channel, speaker: clip.speaker, start: clip.start, end: clip.end, reason });
  let candidates = planned.candidates;
  const snr = new Map<string, number | null>();
  if (resolved.minimumSnrDb !== null) {
    const minimum = resolved.minimumSnrDb;
    const passing = new Set<PlannedSpeakerPrompt>();
    for (const [file, clips] of byAudioFile(candidates.map((candidate) => candidate.clip))) {
      const audio = await resolved.readAudio(file);
      for (const clip of clips) {
        const samples = channelSamples(audio, clip.channel, file);
        if (Math.round((clip.end * audio.sampleRate) / 100) > samples.length) {
          reject(clip, `reaches past the end of ${file}`);
          continue;
        }
        const ratio = clipSignalToNoiseRatio(clip, samples, audio.sampleRate, resolved.otherChannelMarginSeconds);
        snr.set(clip.id, ratio === null || ratio === Number.POSITIVE_INFINITY ? ratio : tenths(ratio));
        if (ratio === null) reject(clip, `signal-to-noise ratio unknown: under ${MINIMUM_NOISE_MEASUREMENT / 100} s with both channels silent to measure the noise on`);
        else if (ratio < minimum) reject(clip, `signal-to-noise ratio ${tenths(ratio)} dB below ${minimum} dB`);
        else passing.add(clip);
      }
    }
    candidates = candidates.filter((candidate) => passing.has(candidate.clip));
  }
  const selected = selectPerSpeaker(candidates, resolved);
  skipped.push(...selected.skipped);
  rejected.push(...selected.rejected);
  const written = new Map<string, SpeakerPromptLine>();
  const scratch = resolved.loudness === null ? undefined : await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-prompt-loudness-'));
  try {
    // One audio file in memory at a time: cut every clip of a file, then move on.
    for (const [file, clips] of byAudioFile(selected.clips)) {
      const audio = await resolved.readAudio(file);
      for (const clip of clips) {
        const samples = channelSamples(audio, clip.channel, file);
        const from = Math.round((clip.start * audio.sampleRate) / 100);
        const to = Math.round((clip.end * audio.sampleRate) / 100);
        if (to > samples.length) {
          skipped.push(`${clip.id}: reaches past the end of ${file}`);
          reject(clip, `reaches past the end of ${file}`);
          continue;
        }
        const cut = await resample({ channels: [samples.slice(from, to)], sampleRate: audio.sampleRate }, resolved.sampleRate, resolved.resampleQuality);
        let levels: Pick<SpeakerPromptLine, 'loudnessLufs' | 'gainDb'> = {};
        if (resolved.loudness !== null && scratch !== undefined) {
          const probe = path.join(scratch, `${clip.id}.wav`);
          await writeFile(probe, encodeWavPcm16(cut));
          const measured = await resolved.measureLoudness(probe);
          await rm(probe, { force: true });
          if (measured.integratedLufs === null) {
            reject(clip, 'silent: no loudness above the gate');
            continue;
          }
          let gain = resolved.loudness.targetLufs - measured.integratedLufs;
          if (measured.truePeakDbtp !== null && measured.truePeakDbtp + gain > resolved.loudness.maximumTruePeakDbtp) {
            gain = resolved.loudness.maximumTruePeakDbtp - measured.truePeakDbtp;
          }
          const factor = 10 ** (gain / 20);
          const channel = cut.channels[0] as Float32Array;
          const scaled = new Float32Array(channel.length);
          for (let index = 0; index < channel.length; index += 1) scaled[index] = Math.max(-1, Math.min(1, (channel[index] as number) * factor));
          cut.channels[0] = quantizeToPcm16(scaled);
          levels = { loudnessLufs: tenths(measured.integratedLufs + gain), gainDb: tenths(gain) };
        }
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
          ...(snr.has(clip.id) ? { snrDb: snr.get(clip.id) === Number.POSITIVE_INFINITY ? null : (snr.get(clip.id) as number | null) } : {}),
          ...levels,
        });
      }
    }
  } finally {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  }
  const entries = selected.clips.flatMap((clip) => written.get(clip.id) ?? []);
  const manifestPath = path.join(outputDirectory, SPEAKER_PROMPT_MANIFEST);
  await writeAtomic(manifestPath, entries.map((entry, index) => formatRecordLine(`${manifestPath}:${index + 1}`, speakerPromptLineSchema, entry)).join(''));
  return { entries, manifestPath, skipped, rejected };
}
