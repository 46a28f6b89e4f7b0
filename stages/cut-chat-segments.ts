/**
 * Stage `cut-chat-segments`: real two-party recordings (`ReferenceRecording`, any loader of corpora/)
 * -> Chat-track dialogues of about 120 s, cut without splitting an utterance (docs/corpora.md,
 * "`chat`: Chat-track datasets"), each with its speech segments, benchmark events
 * (docs/events.md rules via pipeline/events `computeEvents`) and word alignment, times relative to the
 * segment start. Pure: audio is cut by the caller (scripts/commands/chat.ts).
 *
 * Where a segment ends (all times integer centiseconds):
 * - the utterances are the IPUs of both channels (docs/events.md, Step 1: a channel's speech merged across
 *   silences of at most 0.50 s); a cut may only fall where neither channel is inside an IPU, so no
 *   utterance, and no SHORTPAUSE, is split;
 * - from the segment start, the cut is the point of such a silence nearest to start + 120 s, at least
 *   `edgeMarginSeconds` (0.2 s) from speech on both sides, so only silences of at least twice the
 *   margin qualify (the next segment starts there too), and it must lie between start + 100 s and
 *   start + 140 s (inclusive); the end of the recording counts as a silence;
 * - when no silence lies in that window, the stretch up to the first silence after it is skipped
 *   (noted) and cutting resumes there; a tail shorter than 100 s is left out (noted).
 * The first segment starts at 0 (as the benchmark's `A0022_S0003.0.0-120.0`); ids are
 * `<recording>.<start>-<end>` in seconds with one decimal.
 */
import {
  buildIpus,
  computeEvents,
  DEFAULT_EVENT_THRESHOLDS,
  segmentsFromWords,
  type EventThresholds,
} from '../pipeline/events/index.ts';
import type {
  AlignedWord,
  Centiseconds,
  Channel,
  ChannelEvents,
  ChannelSegments,
  ReferenceRecording,
  SpeechSegment,
} from '../pipeline/model/types.ts';
import { joinTranscript } from '../corpora/reference-recording.ts';
import type { Stage } from '../pipeline/run/stage.ts';

/** Segment lengths of the chat track, seconds. */
export interface ChatSegmentOptions {
  /** Length aimed at. Default 120 (the benchmark's). */
  targetSeconds: number;
  /** Shortest segment, inclusive. Default 100. */
  minimumSeconds: number;
  /** Longest segment, inclusive. Default 140. */
  maximumSeconds: number;
  /** How far a cut is kept from speech on either side; shorter silences are not cut in. Default 0.2. */
  edgeMarginSeconds: number;
  /** Event thresholds (IPU pause, backchannel, barge-in), centiseconds. Default docs/events.md's. */
  thresholds: EventThresholds;
}

/** The defaults of {@link ChatSegmentOptions}: 120 s aimed at, 100-140 s allowed. */
export const DEFAULT_CHAT_SEGMENT_OPTIONS: Readonly<ChatSegmentOptions> = Object.freeze({
  targetSeconds: 120,
  minimumSeconds: 100,
  maximumSeconds: 140,
  edgeMarginSeconds: 0.2,
  thresholds: DEFAULT_EVENT_THRESHOLDS,
});

/** A stretch of a recording, centiseconds. */
export interface ChatSpan {
  start: Centiseconds;
  end: Centiseconds;
}

const centiseconds = (seconds: number): Centiseconds => Math.round(seconds * 100);

/**
 * The IPUs of both channels merged into busy stretches (sorted, non-overlapping; touching ones merged).
 * @param segments per channel, sorted and non-overlapping (ReferenceRecording contract).
 */
export function utteranceStretches(
  segments: ChannelSegments,
  thresholds: EventThresholds = DEFAULT_EVENT_THRESHOLDS,
): ChatSpan[] {
  const spans = ([0, 1] as const)
    .flatMap((channel) =>
      buildIpus(segments[channel], thresholds, channel).map((ipu) => ({ start: ipu.start, end: ipu.end })),
    )
    .sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: ChatSpan[] = [];
  for (const span of spans) {
    const last = merged.at(-1);
    if (last !== undefined && span.start <= last.end) last.end = Math.max(last.end, span.end);
    else merged.push({ ...span });
  }
  return merged;
}

/**
 * Where to cut a recording into chat segments (module comment).
 * @param segments the recording's speech per channel, centiseconds.
 * @param durationCs the recording's length, centiseconds.
 * @returns the segment spans in order, and notes on skipped stretches and the tail left out.
 * @throws RangeError when the lengths are not 0 < minimum <= target <= maximum or the margin is negative.
 */
export function chatSegmentSpans(
  segments: ChannelSegments,
  durationCs: Centiseconds,
  options: Partial<ChatSegmentOptions> = {},
): { spans: ChatSpan[]; notes: string[] } {
  const resolved = { ...DEFAULT_CHAT_SEGMENT_OPTIONS, ...options };
  const [minimum, target, maximum, margin] = [
    resolved.minimumSeconds,
    resolved.targetSeconds,
    resolved.maximumSeconds,
    resolved.edgeMarginSeconds,
  ].map(centiseconds) as [number, number, number, number];
  if (!(minimum > 0 && minimum <= target && target <= maximum) || margin < 0) {
    throw new RangeError(
      `chat segments: need 0 < minimum <= target <= maximum seconds and a margin >= 0, got ${resolved.minimumSeconds}, ${resolved.targetSeconds}, ${resolved.maximumSeconds}, ${resolved.edgeMarginSeconds}`,
    );
  }
  const busy = utteranceStretches(segments, resolved.thresholds);
  const end = Math.max(durationCs, busy.at(-1)?.end ?? 0);
  const silences: ChatSpan[] = [];
  let cursor = 0;
  for (const span of busy) {
    if (span.start > cursor) silences.push({ start: cursor, end: span.start });
    cursor = Math.max(cursor, span.end);
  }
  silences.push({ start: cursor, end }); // the end of the recording is a place to cut
  const spans: ChatSpan[] = [];
  const notes: string[] = [];
  const seconds = (value: Centiseconds) => (value / 100).toFixed(2);
  let start = 0;
  while (end - start >= minimum) {
    let best: Centiseconds | undefined;
    for (const silence of silences) {
      if (silence.end < start + minimum) continue;
      if (silence.start > start + maximum) break;
      const isRecordingEnd = silence.end === end;
      // A cut inside the audio keeps the full margin from speech on both sides, so a silence shorter
      // than twice the margin is no place to cut; the end of the recording is (the audio ends there).
      if (!isRecordingEnd && silence.end - silence.start < 2 * margin) continue;
      const low = Math.max(
        isRecordingEnd ? Math.min(silence.start + margin, silence.end) : silence.start + margin,
        start + minimum,
      );
      const high = Math.min(isRecordingEnd ? silence.end : silence.end - margin, start + maximum);
      if (low > high) continue;
      const point = Math.min(Math.max(start + target, low), high);
      if (best === undefined || Math.abs(point - (start + target)) < Math.abs(best - (start + target))) best = point;
    }
    if (best === undefined) {
      const next = silences.find(
        (silence) =>
          silence.start > start + maximum && (silence.end === end || silence.end - silence.start >= 2 * margin),
      );
      if (next === undefined) break;
      const resume = Math.min(next.start + margin, next.end);
      notes.push(
        `no silence of both speakers between ${seconds(start + minimum)} and ${seconds(start + maximum)} s: ${seconds(start)}-${seconds(resume)} s left out`,
      );
      start = resume;
      continue;
    }
    spans.push({ start, end: best });
    start = best;
  }
  if (end - start > 0 && spans.at(-1)?.end !== end)
    notes.push(
      `the last ${seconds(end - start)} s (${seconds(start)}-${seconds(end)} s) are shorter than ${resolved.minimumSeconds} s: left out`,
    );
  return { spans, notes };
}

/** One IPU of a chat segment, for the metadata. */
export interface ChatUtterance {
  channel: Channel;
  /** Relative to the segment, centiseconds. */
  start: Centiseconds;
  end: Centiseconds;
  kind: 'TURN' | 'BC';
  /** Its words (or supervision texts) joined with `joinTranscript`; empty when the recording has no transcript there. */
  text: string;
}

/** The content of one chat segment, times relative to its start. */
export interface ChatSegmentContent {
  id: string;
  span: ChatSpan;
  segments: ChannelSegments;
  events: ChannelEvents;
  /** Word alignment (`txt_align`): word timings when the recording has them, else one line per supervision. */
  words: AlignedWord[];
  /** `words` (word timings) or `supervisions` (utterance-level lines) or `none` (no transcript). */
  alignmentUnit: 'words' | 'supervisions' | 'none';
  utterances: ChatUtterance[];
  /** Disagreements worth knowing (words that do not tile the speech), one line each. */
  notes: string[];
}

/** `12345` -> `123.5` (seconds with one decimal, as the benchmark's chat ids). */
function idSeconds(value: Centiseconds): string {
  return (value / 100).toFixed(1);
}

/**
 * Cuts one span out of a recording: its speech segments, events, alignment and utterances.
 * @param recording the recording the span was chosen in ({@link chatSegmentSpans}).
 * @param span where no IPU crosses its ends.
 * @throws RangeError when a speech segment crosses an end of the span (the span was not chosen by
 *   chatSegmentSpans on these segments).
 */
export function chatSegmentContent(
  recording: ReferenceRecording,
  span: ChatSpan,
  thresholds: EventThresholds = DEFAULT_EVENT_THRESHOLDS,
): ChatSegmentContent {
  const inside = <T extends { start: number; end: number }>(item: T) =>
    item.start >= span.start && item.end <= span.end;
  const shift = <T extends { start: number; end: number }>(item: T): T => ({
    ...item,
    start: item.start - span.start,
    end: item.end - span.start,
  });
  const segments = {} as ChannelSegments;
  for (const channel of [0, 1] as const) {
    const crossing = recording.segments[channel].find(
      (segment) => segment.start < span.end && segment.end > span.start && !inside(segment),
    );
    if (crossing !== undefined)
      throw new RangeError(
        `${recording.id}: speech ${crossing.start}-${crossing.end} cs on channel ${channel} crosses the segment ${span.start}-${span.end} cs`,
      );
    segments[channel] = recording.segments[channel].filter(inside).map(shift) as SpeechSegment[];
  }
  const events = computeEvents(segments, thresholds);
  const supervisions = (recording.supervisions ?? []).filter(inside);
  const hasWords = supervisions.some((supervision) => supervision.words !== undefined);
  const words: AlignedWord[] = hasWords
    ? supervisions.flatMap((supervision) => (supervision.words ?? []).filter(inside).map(shift))
    : supervisions
        .filter((supervision) => supervision.text.trim() !== '')
        .map((supervision) =>
          shift({
            channel: supervision.channel,
            start: supervision.start,
            end: supervision.end,
            word: supervision.text.replace(/\s+/g, ' ').trim(),
          }),
        );
  const notes: string[] = [];
  if (hasWords) {
    const fromWords = segmentsFromWords(words);
    for (const channel of [0, 1] as const) {
      if (JSON.stringify(fromWords[channel]) !== JSON.stringify(segments[channel]))
        notes.push(`channel ${channel}: the words do not tile the speech segments exactly`);
    }
  }
  const utterances: ChatUtterance[] = ([0, 1] as const)
    .flatMap((channel) =>
      buildIpus(segments[channel], thresholds, channel).map((ipu) => ({
        channel,
        start: ipu.start,
        end: ipu.end,
        kind: ipu.kind,
        text: joinTranscript(
          words
            .filter((word) => word.channel === channel && word.start >= ipu.start && word.end <= ipu.end)
            .map((word) => word.word),
        ),
      })),
    )
    .sort((a, b) => a.start - b.start || a.channel - b.channel);
  return {
    id: `${recording.id.replace(/[^A-Za-z0-9._-]/g, '_')}.${idSeconds(span.start)}-${idSeconds(span.end)}`,
    span,
    segments,
    events,
    words,
    alignmentUnit: hasWords ? 'words' : words.length > 0 ? 'supervisions' : 'none',
    utterances,
    notes,
  };
}

/** Input of {@link cutChatSegmentsStage}: one recording and its length. */
export interface CutChatSegmentsInput {
  recording: ReferenceRecording;
  /** The recording's audio length, centiseconds. */
  durationCs: Centiseconds;
}

/**
 * Stage `cut-chat-segments`: where to cut one recording ({@link chatSegmentSpans}) and the content of
 * each segment ({@link chatSegmentContent}). Not cached (fast, and its output is written at once).
 * @throws as {@link chatSegmentSpans} and {@link chatSegmentContent}
 */
export const cutChatSegmentsStage: Stage<
  CutChatSegmentsInput,
  { options: Partial<ChatSegmentOptions> },
  { segments: ChatSegmentContent[]; notes: string[] }
> = {
  name: 'cut-chat-segments',
  inputs: ['recording', 'durationCs'],
  parameters: ['options'],
  cacheStages: [],
  cacheKeys: async () => [],
  run: async (input, parameters) => {
    const { spans, notes } = chatSegmentSpans(input.recording.segments, input.durationCs, parameters.options);
    return { segments: spans.map((span) => chatSegmentContent(input.recording, span)), notes };
  },
};
