/**
 * Voice activity detection on a stereo dialogue with KNOWN speech placement
 * recovers every segment boundary within 50 ms, and the events computed from the detected segments
 * equal the events computed from the known placement.
 *
 * The dialogue (test-dialogue.ts) is synthesized with espeak-ng, 48 kHz, channel 0 the user voice and
 * channel 1 the system voice with a seeded -60 dBFS white-noise floor over the whole channel. It is
 * written to a 16-bit WAV file and read back with readAudioFile, as a real recording would be.
 *
 * What "the events equal exactly" means here: per channel, the same number of events, the same event
 * types in the same order, and every event's start and end within 5 cs (50 ms) of the known event's.
 * Times cannot be required to be identical in general: events take their times from segment
 * boundaries, and boundaries are only required within 50 ms. Types and order are required to be
 * identical, and that requirement has teeth because the layout keeps every quantity an event rule
 * decides on at least 0.1 s (twice the boundary tolerance) away from its threshold — see
 * `decisionMargins` below, which the test checks first — so no boundary error within tolerance could
 * change a type or the order by itself.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchmarkEvent, Channel, ChannelEvents, ChannelSegments, SpeechSegment } from '../../model/types.ts';
import { type RawAudio } from '../../audio/raw-audio.ts';
import { encodeWavPcm16 } from '../../audio/wav.ts';
import { readAudioFile } from '../../audio/read-audio-file.ts';
import { buildIpus, computeEvents, DEFAULT_EVENT_THRESHOLDS } from '../../events/index.ts';
import { buildSyntheticDialogue, type SyntheticDialogue } from './testing/test-dialogue.ts';
import {
  createVoiceActivityDetector,
  detectChannels,
  type VoiceActivityEngine,
  type VoiceActivityEngineOptions,
} from './voice-activity-detector.ts';

/** Largest allowed boundary error, centiseconds (50 ms). */
const BOUNDARY_TOLERANCE = 5;
/** Every decision quantity stays at least this far from its threshold, centiseconds (twice the tolerance). */
const DECISION_MARGIN = 2 * BOUNDARY_TOLERANCE;
const CHANNELS: readonly Channel[] = [0, 1];

/** Signed boundary errors (detected - known), centiseconds, pairing segments by index; null when the counts differ. */
function boundaryErrors(detected: ChannelSegments, known: ChannelSegments): number[] | null {
  const errors: number[] = [];
  for (const channel of CHANNELS) {
    if (detected[channel].length !== known[channel].length) return null;
    known[channel].forEach((segment, index) => {
      const found = detected[channel][index] as SpeechSegment;
      errors.push(found.start - segment.start, found.end - segment.end);
    });
  }
  return errors;
}

/** Describes the first difference between two event lists beyond the tolerance, or null when they match. */
function eventDifference(detected: ChannelEvents, known: ChannelEvents): string | null {
  const show = (event: BenchmarkEvent | undefined) =>
    event ? `${event.event} [${event.start}, ${event.end}]` : 'nothing';
  for (const channel of CHANNELS) {
    const length = Math.max(detected[channel].length, known[channel].length);
    for (let index = 0; index < length; index++) {
      const found = detected[channel][index];
      const expected = known[channel][index];
      if (
        !found ||
        !expected ||
        found.event !== expected.event ||
        Math.abs(found.start - expected.start) > BOUNDARY_TOLERANCE ||
        Math.abs(found.end - expected.end) > BOUNDARY_TOLERANCE
      ) {
        return `channel ${channel}, event ${index}: detected ${show(found)}, known ${show(expected)}`;
      }
    }
  }
  return null;
}

/**
 * Every quantity the event rules (docs/events.md) compare with a threshold or with each other, as its
 * distance from the decision point in centiseconds: silences between segments of a channel vs the
 * 0.50 s IPU rule, IPU lengths vs the 0.80 s backchannel rule, overlaps vs the 0.40 s barge-in rule,
 * and the differences between event starts that fix the order (turn starts and ends across channels,
 * consecutive event starts within a channel; zero differences from one shared boundary excepted).
 */
function decisionMargins(known: ChannelSegments): { name: string; distance: number }[] {
  const margins: { name: string; distance: number }[] = [];
  const events = computeEvents(known);
  const turns: SpeechSegment[] = [];
  for (const channel of CHANNELS) {
    known[channel].slice(1).forEach((segment, index) => {
      const silence = segment.start - (known[channel][index] as SpeechSegment).end;
      margins.push({
        name: `channel ${channel} silence before ${segment.start}`,
        distance: Math.abs(silence - DEFAULT_EVENT_THRESHOLDS.maxPauseInIpu),
      });
    });
    for (const ipu of buildIpus(known[channel])) {
      margins.push({
        name: `channel ${channel} IPU at ${ipu.start} length`,
        distance: Math.abs(ipu.end - ipu.start - DEFAULT_EVENT_THRESHOLDS.maxBackchannel),
      });
      if (ipu.kind === 'TURN') turns.push(ipu);
    }
    for (const event of events[channel]) {
      const overlap =
        event.event === 'BARGE_IN'
          ? event.end - event.start
          : event.event === 'TURN_SHIFT'
            ? event.start - event.end
            : null;
      if (overlap !== null && overlap > 0) {
        margins.push({
          name: `channel ${channel} ${event.event} at ${event.start} overlap`,
          distance: Math.abs(overlap - DEFAULT_EVENT_THRESHOLDS.bargeInOverlap),
        });
      }
    }
    events[channel].slice(1).forEach((event, index) => {
      const difference = event.start - (events[channel][index] as BenchmarkEvent).start;
      if (difference !== 0)
        margins.push({ name: `channel ${channel} order of events at ${event.start}`, distance: difference });
    });
  }
  turns.sort((a, b) => a.start - b.start);
  turns.slice(1).forEach((turn, index) => {
    const previous = turns[index] as SpeechSegment;
    margins.push({ name: `turn starts ${previous.start} and ${turn.start}`, distance: turn.start - previous.start });
    margins.push({ name: `turn ends ${previous.end} and ${turn.end}`, distance: Math.abs(turn.end - previous.end) });
  });
  return margins;
}

/** Runs one engine on the audio and releases it. */
async function detectWith<Engine extends VoiceActivityEngine>(
  engine: Engine,
  options: VoiceActivityEngineOptions[Engine],
  audio: RawAudio,
): Promise<ChannelSegments> {
  const detector = await createVoiceActivityDetector(engine, options);
  try {
    return await detectChannels(audio, detector);
  } finally {
    await detector.release?.();
  }
}

let folder: string;
let dialogue: SyntheticDialogue;
/** The dialogue as read back from its WAV file. */
let recording: RawAudio;
let knownEvents: ChannelEvents;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'vad-dialogue-'));
  dialogue = await buildSyntheticDialogue();
  const file = path.join(folder, 'dialogue.wav');
  await writeFile(file, encodeWavPcm16(dialogue.audio));
  recording = await readAudioFile(file);
  knownEvents = computeEvents(dialogue.known);
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('the test dialogue is laid out as claimed', () => {
  it('has real TTS backchannels of 0.2-0.3 s, one speech segment per sentence, and pauses of 0.3-0.4 s inside IPUs', () => {
    for (const clip of dialogue.clips) {
      expect(clip.segments, clip.step.text).toHaveLength(1);
      const length = (clip.segments[0] as SpeechSegment).end - (clip.segments[0] as SpeechSegment).start;
      if (clip.step.kind === 'backchannel') {
        expect(length, clip.step.text).toBeGreaterThanOrEqual(20);
        expect(length, clip.step.text).toBeLessThanOrEqual(30);
      } else {
        expect(length, clip.step.text).toBeGreaterThan(100);
      }
    }
    const pauses = CHANNELS.flatMap((channel) =>
      knownEvents[channel].filter((event) => event.event === 'SHORTPAUSE').map((event) => event.end - event.start),
    );
    expect(pauses.sort((a, b) => a - b)).toEqual([30, 35, 40]);
  });

  it('covers every event type: turn shifts with gap and with overlap, a barge-in, a turn hold, backchannels on both channels', () => {
    const types = CHANNELS.flatMap((channel) => knownEvents[channel].map((event) => event.event));
    for (const type of ['TURN', 'BC', 'SHORTPAUSE', 'TURN_SHIFT', 'TURN_HOLD', 'BARGE_IN'] as const)
      expect(types).toContain(type);
    const overlappingShifts = CHANNELS.flatMap((channel) =>
      knownEvents[channel].filter((event) => event.event === 'TURN_SHIFT' && event.start > event.end),
    );
    expect(overlappingShifts).toHaveLength(1);
    for (const channel of CHANNELS) expect(knownEvents[channel].some((event) => event.event === 'BC')).toBe(true);
  });

  it('has a -60 dBFS noise floor on channel 1 only', () => {
    const lead = (channel: Channel) =>
      (recording.channels[channel] as Float32Array).subarray(0, 0.4 * recording.sampleRate);
    const levelDbfs = (samples: Float32Array) =>
      10 * Math.log10(samples.reduce((sum, sample) => sum + sample * sample, 0) / samples.length);
    expect(levelDbfs(lead(1))).toBeCloseTo(-60, 0);
    expect(lead(0).every((sample) => sample === 0)).toBe(true);
  });

  it('keeps every event decision at least 0.1 s from its threshold, so boundary errors within 50 ms cannot change types or order', () => {
    const tight = decisionMargins(dialogue.known).filter((margin) => margin.distance < DECISION_MARGIN);
    expect(tight).toEqual([]);
  });
});

describe('Silero VAD on the dialogue', () => {
  it('recovers every segment boundary within 50 ms and the events of the known placement', async () => {
    const detected = await detectWith('silero', {}, recording);
    const errors = boundaryErrors(detected, dialogue.known);
    expect(errors, `segment counts differ: ${JSON.stringify(detected)}`).not.toBeNull();
    expect(Math.max(...(errors ?? []).map(Math.abs))).toBeLessThanOrEqual(BOUNDARY_TOLERANCE);
    expect(eventDifference(computeEvents(detected), knownEvents)).toBeNull();
  });

  it('without boundary refinement still finds every segment, with boundaries within 0.15 s (frame quantization and model lag)', async () => {
    const detected = await detectWith('silero', { boundaryRefinement: false }, recording);
    const errors = boundaryErrors(detected, dialogue.known);
    expect(errors, `segment counts differ: ${JSON.stringify(detected)}`).not.toBeNull();
    expect(Math.max(...(errors ?? []).map(Math.abs))).toBeLessThanOrEqual(15);
  });

  it('also holds for the same dialogue at 16 kHz (no resampling) with the noise on channel 0', async () => {
    const other = await buildSyntheticDialogue(undefined, {
      sampleRate: 16000,
      noise: { channel: 0, levelDbfs: -60, seed: 7 },
    });
    const detected = await detectWith('silero', {}, other.audio);
    const errors = boundaryErrors(detected, other.known);
    expect(errors, `segment counts differ: ${JSON.stringify(detected)}`).not.toBeNull();
    expect(Math.max(...(errors ?? []).map(Math.abs))).toBeLessThanOrEqual(BOUNDARY_TOLERANCE);
    expect(eventDifference(computeEvents(detected), computeEvents(other.known))).toBeNull();
  });
});

describe('WebRTC VAD on the dialogue', () => {
  it('with its defaults (mode 3, refinement) recovers every boundary within 50 ms and the known events', async () => {
    const detected = await detectWith('webrtc', {}, recording);
    const errors = boundaryErrors(detected, dialogue.known);
    expect(errors, `segment counts differ: ${JSON.stringify(detected)}`).not.toBeNull();
    expect(Math.max(...(errors ?? []).map(Math.abs))).toBeLessThanOrEqual(BOUNDARY_TOLERANCE);
    expect(eventDifference(computeEvents(detected), knownEvents)).toBeNull();
  });

  it('without refinement finds every segment with boundaries within 0.15 s', async () => {
    const detected = await detectWith('webrtc', { boundaryRefinement: false }, recording);
    const errors = boundaryErrors(detected, dialogue.known);
    expect(errors, `segment counts differ: ${JSON.stringify(detected)}`).not.toBeNull();
    expect(Math.max(...(errors ?? []).map(Math.abs))).toBeLessThanOrEqual(15);
  });
});
