/**
 * The candidate clips of a speaker prompt pool (steps 1 to 4 of ./speaker-prompts.ts): a channel's
 * supervisions grouped greedily into clips that are long enough, short enough, clear of the other
 * channel and fully transcribed, with one rejection reason for every supervision left out. All times
 * integer centiseconds.
 */
import type {
  Centiseconds,
  Channel,
  ReferenceRecording,
  ReferenceSupervision,
  SpeechSegment,
} from '../pipeline/model/types.ts';
import { joinTranscript, REFERENCE_CHANNELS } from './reference-recording.ts';
import { mergeOverlappingSegments } from './rttm.ts';
import type {
  PlannedSpeakerPrompt,
  RejectedSpeakerPrompt,
  ResolvedSpeakerPromptOptions,
} from './speaker-prompt-options.ts';

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
 * Greedy grouping of one channel's supervisions into clips (steps 1-4 of the module comment of ./speaker-prompts.ts). Every
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
