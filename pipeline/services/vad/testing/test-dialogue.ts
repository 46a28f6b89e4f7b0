/**
 * Two-party stereo dialogues with KNOWN speech placement, built from offline TTS (espeak-ng), for the
 * VAD tests and the VAD benchmark.
 *
 * Each utterance is synthesized, resampled to the dialogue rate, cut to its speech with the clean
 * speech detector (pipeline/audio/speech-regions.ts) and placed at a centisecond-aligned offset on its
 * speaker's channel. The known placement is each clip's detected speech segments shifted by its
 * offset — exactly what the synthetic timelines of this project use.
 */
import type { Centiseconds, Channel, ChannelSegments, SpeechSegment } from '../../../model/types.ts';
import { placeOnTrackInPlace, type RawAudio } from '../../../audio/raw-audio.ts';
import { resample } from '../../../audio/resample.ts';
import { detectSpeechSegments, trimToSpeech } from '../../../audio/speech-regions.ts';
import { DEFAULT_VOICES, createSpeechSynthesizer } from '../../tts/synthesizer-registry.ts';
import type { SpeechSynthesizer, VoiceSettings } from '../../tts/speech-synthesizer.ts';

/** Where a clip's speech starts: `seconds` after the start or the end of an earlier step's speech (negative: before). */
export interface StepPosition {
  after: 'start' | 'end';
  /** Index of the earlier step in the script. */
  step: number;
  seconds: number;
}

/** One utterance of a dialogue script. */
export interface DialogueStep {
  channel: Channel;
  text: string;
  /** Backchannels are spoken faster (see {@link BACKCHANNEL_SPEEDS}) so they last 0.2-0.3 s. */
  kind: 'turn' | 'backchannel';
  /** Absent for the first step, which starts after the lead silence. */
  position?: StepPosition;
}

/**
 * espeak-ng speed (words per minute) of backchannels per channel: 260 for the user voice (m3), 300
 * for the system voice (f3). Measured at 48 kHz: "yeah", "okay", "right", "sure" then last 0.22-0.29 s.
 */
export const BACKCHANNEL_SPEEDS: Readonly<Record<Channel, number>> = Object.freeze({ 0: 260, 1: 300 });

/**
 * The test dialogue: channel 0 is the user voice, channel 1 the system voice. It contains turn shifts
 * with gaps (0.30-0.60 s) and with a 0.15 s overlap, a barge-in (0.8 s overlap), a turn hold (0.70 s
 * pause), pauses inside an IPU (0.30, 0.35, 0.40 s) on both channels, and four backchannels, each
 * overlapping the other speaker. Every sentence is a single speech segment (no pause of 0.15 s or
 * more inside it) in both voices.
 */
export const TEST_DIALOGUE_SCRIPT: readonly DialogueStep[] = Object.freeze([
  { channel: 0, kind: 'turn', text: 'Tell me about the history of the Roman empire please' },
  {
    channel: 1,
    kind: 'turn',
    text: 'The empire began when Augustus became the first emperor',
    position: { after: 'end', step: 0, seconds: 0.4 },
  },
  { channel: 0, kind: 'backchannel', text: 'yeah', position: { after: 'start', step: 1, seconds: 1.2 } },
  {
    channel: 1,
    kind: 'turn',
    text: 'It lasted for many centuries in the west',
    position: { after: 'end', step: 1, seconds: 0.35 },
  },
  {
    channel: 0,
    kind: 'turn',
    text: 'Why did it fall apart in the end',
    position: { after: 'end', step: 3, seconds: -0.15 },
  },
  {
    channel: 1,
    kind: 'turn',
    text: 'Historians name many causes such as money and war',
    position: { after: 'end', step: 4, seconds: 0.3 },
  },
  {
    channel: 0,
    kind: 'turn',
    text: 'Which cause mattered most to them',
    position: { after: 'end', step: 5, seconds: -0.8 },
  },
  { channel: 1, kind: 'backchannel', text: 'okay', position: { after: 'end', step: 5, seconds: 0.7 } },
  {
    channel: 1,
    kind: 'turn',
    text: 'Most scholars point to money problems first',
    position: { after: 'end', step: 6, seconds: 0.6 },
  },
  {
    channel: 1,
    kind: 'turn',
    text: 'The army cost more than the state could pay',
    position: { after: 'end', step: 8, seconds: 0.7 },
  },
  { channel: 0, kind: 'backchannel', text: 'right', position: { after: 'start', step: 9, seconds: 0.8 } },
  {
    channel: 1,
    kind: 'turn',
    text: 'And the borders were too long to defend',
    position: { after: 'end', step: 9, seconds: 0.3 },
  },
  {
    channel: 0,
    kind: 'turn',
    text: 'Thanks for the helpful answer',
    position: { after: 'end', step: 11, seconds: 0.35 },
  },
  { channel: 1, kind: 'backchannel', text: 'sure', position: { after: 'end', step: 12, seconds: -0.1 } },
  {
    channel: 0,
    kind: 'turn',
    text: 'What happened to the eastern half',
    position: { after: 'end', step: 12, seconds: 0.4 },
  },
] satisfies DialogueStep[]);

/** One placed clip. */
export interface PlacedClip {
  step: DialogueStep;
  /** Where the clip's speech starts in the dialogue, centiseconds. */
  offset: Centiseconds;
  /** The clip's speech segments in dialogue time (its own segments shifted by `offset`), centiseconds. */
  segments: SpeechSegment[];
}

/** A built dialogue. */
export interface SyntheticDialogue {
  /** Two channels (0: user voice, 1: system voice) at the requested rate, noise included. */
  audio: RawAudio;
  /** The known speech placement per channel, centiseconds, sorted. */
  known: ChannelSegments;
  clips: PlacedClip[];
}

/** Settings of {@link buildSyntheticDialogue}. */
export interface SyntheticDialogueOptions {
  /** Hz, a multiple of 100. */
  sampleRate: number;
  /** Silence before the first clip, seconds. */
  leadSeconds: number;
  /** Silence after the last clip ends, seconds. */
  tailSeconds: number;
  /** White Gaussian noise added to one channel (over its whole length), or null for none. */
  noise: { channel: Channel; levelDbfs: number; seed: number } | null;
  /** The engine to speak with; default espeak-ng. */
  synthesizer?: SpeechSynthesizer;
}

/** Defaults: 48 kHz, 0.5 s lead, 1 s tail, -60 dBFS noise on channel 1 with seed 20240601. */
export const DEFAULT_SYNTHETIC_DIALOGUE_OPTIONS: Readonly<SyntheticDialogueOptions> = Object.freeze({
  sampleRate: 48000,
  leadSeconds: 0.5,
  tailSeconds: 1,
  noise: Object.freeze({ channel: 1 as Channel, levelDbfs: -60, seed: 20240601 }),
});

/** mulberry32: a tiny seeded generator of numbers in [0, 1), so the noise reproduces exactly. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Adds white Gaussian noise of RMS level `levelDbfs` (20 * log10(rms), full scale 1.0) to `samples`.
 * MUTATES `samples`. Box-Muller on mulberry32 seeded with `seed`.
 */
export function addWhiteNoiseInPlace(samples: Float32Array, levelDbfs: number, seed: number): void {
  const random = seededRandom(seed);
  const deviation = 10 ** (levelDbfs / 20);
  for (let index = 0; index < samples.length; index += 2) {
    const radius = Math.sqrt(-2 * Math.log(1 - random()));
    const angle = 2 * Math.PI * random();
    samples[index] = (samples[index] as number) + deviation * radius * Math.cos(angle);
    if (index + 1 < samples.length)
      samples[index + 1] = (samples[index + 1] as number) + deviation * radius * Math.sin(angle);
  }
}

/**
 * Synthesizes and places a script (see the file comment).
 *
 * @param script steps in order; each position refers to an earlier step.
 * @param options any of {@link SyntheticDialogueOptions}; the rest from {@link DEFAULT_SYNTHETIC_DIALOGUE_OPTIONS}.
 * @throws Error when a position refers to a later step or lands before time 0, or when two clips of
 *   one channel overlap; SpeechSynthesisError when espeak-ng is missing (`npm run setup`).
 */
export async function buildSyntheticDialogue(
  script: readonly DialogueStep[] = TEST_DIALOGUE_SCRIPT,
  options: Partial<SyntheticDialogueOptions> = {},
): Promise<SyntheticDialogue> {
  const resolved = { ...DEFAULT_SYNTHETIC_DIALOGUE_OPTIONS, ...options };
  const synthesizer = resolved.synthesizer ?? (await createSpeechSynthesizer('espeak-ng'));
  const voices = DEFAULT_VOICES.en!.voices;
  const samplesPerCentisecond = resolved.sampleRate / 100;

  const trimmed: { samples: Float32Array; segments: SpeechSegment[] }[] = [];
  for (const step of script) {
    const baseVoice: VoiceSettings = step.channel === 0 ? voices.user : voices.system;
    const voice = step.kind === 'backchannel' ? { ...baseVoice, speed: BACKCHANNEL_SPEEDS[step.channel] } : baseVoice;
    const output = await synthesizer.synthesize({ text: step.text, language: 'en', voice });
    const audio = await resample(output.audio, resolved.sampleRate, 'medium');
    const samples = audio.channels[0] as Float32Array;
    trimmed.push(trimToSpeech(samples, resolved.sampleRate, detectSpeechSegments(samples, resolved.sampleRate)));
  }

  const clips: PlacedClip[] = [];
  const lead = Math.round(resolved.leadSeconds * 100);
  script.forEach((step, index) => {
    const clip = trimmed[index] as { samples: Float32Array; segments: SpeechSegment[] };
    let offset = lead;
    if (step.position) {
      const reference = clips[step.position.step];
      if (!reference || step.position.step >= index)
        throw new Error(`step ${index} refers to step ${step.position.step}, which is not an earlier step`);
      const anchor =
        step.position.after === 'start'
          ? reference.offset
          : (reference.segments[reference.segments.length - 1] as SpeechSegment).end;
      offset = anchor + Math.round(step.position.seconds * 100);
      if (offset < 0) throw new Error(`step ${index} would start before time 0`);
    }
    clips.push({
      step,
      offset,
      segments: clip.segments.map((segment) => ({ start: segment.start + offset, end: segment.end + offset })),
    });
  });

  const end =
    Math.max(...clips.map((clip) => (clip.segments[clip.segments.length - 1] as SpeechSegment).end)) +
    Math.round(resolved.tailSeconds * 100);
  const tracks = [new Float32Array(end * samplesPerCentisecond), new Float32Array(end * samplesPerCentisecond)];
  const known: ChannelSegments = { 0: [], 1: [] };
  clips.forEach((clip, index) => {
    const channel = clip.step.channel;
    placeOnTrackInPlace(
      tracks[channel] as Float32Array,
      (trimmed[index] as { samples: Float32Array }).samples,
      clip.offset * samplesPerCentisecond,
    );
    known[channel].push(...clip.segments.map((segment) => ({ ...segment })));
  });
  for (const channel of [0, 1] as const) {
    known[channel].sort((a, b) => a.start - b.start);
    known[channel].forEach((segment, index) => {
      const previous = known[channel][index - 1];
      if (previous && segment.start < previous.end)
        throw new Error(`two clips of channel ${channel} overlap at ${segment.start} cs`);
    });
  }
  if (resolved.noise)
    addWhiteNoiseInPlace(tracks[resolved.noise.channel] as Float32Array, resolved.noise.levelDbfs, resolved.noise.seed);
  return { audio: { channels: tracks, sampleRate: resolved.sampleRate }, known, clips };
}
