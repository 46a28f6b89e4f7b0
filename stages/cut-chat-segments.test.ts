import { describe, expect, it } from 'vitest';
import type { ChannelSegments, ReferenceRecording, SpeechSegment } from '../pipeline/model/types.ts';
import { chatSegmentContent, chatSegmentSpans } from './cut-chat-segments.ts';

/** Speech every `period` cs lasting `length` cs, from `from` to `to` (cs), skipping the given silences. */
function speech(
  from: number,
  to: number,
  period: number,
  length: number,
  silences: readonly [number, number][] = [],
): SpeechSegment[] {
  const segments: SpeechSegment[] = [];
  for (let start = from; start + length <= to; start += period) {
    const end = start + length;
    if (silences.some(([a, b]) => start < b && end > a)) continue;
    segments.push({ start, end });
  }
  return segments;
}

describe('chat segment cuts', () => {
  it('cuts at the point of a silence of both speakers nearest to 120 s, kept 0.2 s inside it', () => {
    // Channel 0 talks in 0.6 s bursts every 0.9 s (pauses 0.3 s: one long IPU) except in silences at
    // 98-99.5 s, 117-118 s and 126-127 s; channel 1 says nothing there either.
    const silences: [number, number][] = [
      [9800, 9950],
      [11700, 11800],
      [12600, 12700],
    ];
    const segments: ChannelSegments = { 0: speech(0, 30000, 90, 60, silences), 1: [] };
    const { spans } = chatSegmentSpans(segments, 30000);
    // The 117-118 s silence: its speech-free part ends where the next burst starts; the cut is as near 120 s as it allows, 0.2 s inside.
    const first = spans[0];
    expect(first?.start).toBe(0);
    const gapEnd = segments[0].find((segment) => segment.start >= 11700)?.start as number;
    expect(first?.end).toBe(gapEnd - 20);
    for (const span of spans) {
      expect(span.end - span.start).toBeGreaterThanOrEqual(10000);
      expect(span.end - span.start).toBeLessThanOrEqual(14000);
      for (const segment of [...segments[0], ...segments[1]])
        expect(segment.start < span.end && segment.end > span.end).toBe(false);
    }
  });

  it('never cuts inside an IPU: a 0.5 s pause is not a place to cut, 0.51 s is', () => {
    // Bursts of 1 s with 0.5 s pauses form one IPU (docs/events.md, Step 1); one 0.51 s pause at 120 s.
    const segments: SpeechSegment[] = [];
    for (let start = 0; start < 30000; start += 150) segments.push({ start, end: start + 100 });
    const at = segments.findIndex((segment) => segment.start >= 12000);
    for (let index = at; index < segments.length; index += 1)
      segments[index] = {
        start: (segments[index] as SpeechSegment).start + 1,
        end: (segments[index] as SpeechSegment).end + 1,
      };
    const { spans, notes } = chatSegmentSpans({ 0: segments, 1: [] }, 30100);
    expect(spans[0]).toEqual({ start: 0, end: (segments[at] as SpeechSegment).start - 20 }); // inside the 0.51 s pause, 0.2 s before the speech after it
    expect(spans).toHaveLength(1);
    expect(notes[0]).toMatch(/^no silence of both speakers between 219\.81 and 259\.81 s/); // after it: one IPU up to 300 s
  });

  it('keeps every cut at least 0.2 s from speech: a silence under 0.4 s is no place to cut', () => {
    // Channel 0 speaks 0-119.85 s and 120.15-300 s with 0.3 s pauses (one IPU) except a 0.3 s silence
    // nearest to 120 s and a 1 s silence at 110-111 s; channel 1 only backchannels inside channel 0's speech.
    const segments: ChannelSegments = {
      0: [
        ...speech(0, 11000, 100, 70),
        ...speech(11100, 11985, 100, 70),
        { start: 11900, end: 11985 },
        ...speech(12015, 30000, 100, 70),
      ].sort((a, b) => a.start - b.start),
      1: speech(500, 29000, 2000, 30),
    };
    const merged = (list: SpeechSegment[]) =>
      list.reduce<SpeechSegment[]>((out, segment) => {
        const last = out.at(-1);
        if (last !== undefined && segment.start <= last.end) last.end = Math.max(last.end, segment.end);
        else out.push({ ...segment });
        return out;
      }, []);
    segments[0] = merged(segments[0]);
    const { spans } = chatSegmentSpans(segments, 30000);
    expect(spans[0]?.end).toBeLessThanOrEqual(11100 - 20);
    expect(spans[0]?.end).toBeGreaterThanOrEqual(11000 + 20);
    for (const span of spans.slice(0, -1)) {
      for (const segment of [...segments[0], ...segments[1]]) {
        const distance = segment.end <= span.end ? span.end - segment.end : segment.start - span.end;
        expect(distance).toBeGreaterThanOrEqual(20);
      }
    }
  });

  it('skips a stretch without any silence in the window and leaves out a short tail, saying so', () => {
    const busy: SpeechSegment[] = [{ start: 0, end: 20000 }];
    const segments: ChannelSegments = {
      0: [...busy, { start: 20500, end: 21000 }, ...speech(21200, 34000, 200, 150)],
      1: [{ start: 34500, end: 35000 }],
    };
    const { spans, notes } = chatSegmentSpans(segments, 36000);
    expect(notes[0]).toBe('no silence of both speakers between 100.00 and 140.00 s: 0.00-200.20 s left out');
    expect(spans[0]?.start).toBe(20020);
    expect(notes.at(-1)).toMatch(/are shorter than 100 s: left out$/);
  });

  it('keeps segment content relative to its start, with events and words from the recording', () => {
    const words = [
      { channel: 0 as const, start: 1000, end: 1100, word: 'hello' },
      { channel: 0 as const, start: 1100, end: 1250, word: 'there' },
      { channel: 1 as const, start: 1300, end: 1370, word: 'hi' },
    ];
    const recording: ReferenceRecording = {
      id: 'call 1',
      format: 'ctm',
      sources: ['call.ctm'],
      durationCs: 3000,
      segments: { 0: [{ start: 1000, end: 1250 }], 1: [{ start: 1300, end: 1370 }] },
      channelSpeakers: { 0: 'a', 1: 'b' },
      supervisions: [
        { channel: 0, start: 1000, end: 1250, speaker: 'a', text: 'hello there', words: words.slice(0, 2) },
        { channel: 1, start: 1300, end: 1370, speaker: 'b', text: 'hi', words: words.slice(2) },
      ],
      notes: [],
    };
    const content = chatSegmentContent(recording, { start: 900, end: 1500 });
    expect(content.id).toBe('call_1.9.0-15.0');
    expect(content.segments).toEqual({ 0: [{ start: 100, end: 350 }], 1: [{ start: 400, end: 470 }] });
    expect(content.words.map((word) => [word.channel, word.start, word.end, word.word])).toEqual([
      [0, 100, 200, 'hello'],
      [0, 200, 350, 'there'],
      [1, 400, 470, 'hi'],
    ]);
    expect(content.events[0].map((event) => event.event)).toEqual(['TURN']);
    expect(content.events[1].map((event) => event.event)).toEqual(['BC']);
    expect(content.utterances.map((utterance) => utterance.text)).toEqual(['hello there', 'hi']);
    expect(content.notes).toEqual([]);
    expect(() => chatSegmentContent(recording, { start: 1050, end: 1500 })).toThrow(/crosses the segment/);
  });
});
