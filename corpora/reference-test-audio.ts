/**
 * Test-only helpers for the reference corpus loaders: deterministic test audio (tone bursts at exact
 * centisecond spans, so the energy detector finds exactly those spans), WAV writing, temporary
 * folders, and the energy detector of pipeline/audio/speech-regions.ts behind the
 * `VoiceActivityDetector` interface.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeWavPcm16 } from '../pipeline/audio/wav.ts';
import { detectSpeechSegments, type SpeechDetectorOptions } from '../pipeline/audio/speech-regions.ts';
import type { Centiseconds, SpeechSegment } from '../pipeline/model/types.ts';
import type { VoiceActivityDetector } from '../pipeline/services/vad/voice-activity-detector.ts';

/** Folder of this file's fixtures (`corpora/fixtures`). */
export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

/**
 * A mono track of `durationCs` centiseconds at `sampleRate` Hz: silence (digital zero) except inside
 * the spans, where it holds a 220 Hz + 660 Hz tone of peak `amplitude` (spans in centiseconds,
 * `sampleRate` a multiple of 100 so span edges fall on whole samples and 10 ms frames).
 */
export function toneTrack(
  durationCs: Centiseconds,
  sampleRate: number,
  spans: readonly SpeechSegment[],
  amplitude = 0.3,
): Float32Array {
  const perCentisecond = sampleRate / 100;
  const samples = new Float32Array(durationCs * perCentisecond);
  for (const span of spans) {
    for (
      let index = span.start * perCentisecond;
      index < Math.min(samples.length, span.end * perCentisecond);
      index += 1
    ) {
      const time = index / sampleRate;
      samples[index] =
        amplitude * (0.7 * Math.sin(2 * Math.PI * 220 * time) + 0.3 * Math.sin(2 * Math.PI * 660 * time));
    }
  }
  return samples;
}

/** Adds `other * gain` into `target` in place (crosstalk); returns `target`. */
export function addInPlace(target: Float32Array, other: Float32Array, gain: number): Float32Array {
  for (let index = 0; index < target.length; index += 1)
    target[index] = (target[index] as number) + gain * ((other[index] as number) ?? 0);
  return target;
}

/** Writes a PCM16 WAV file with the given channels, creating its folder. */
export async function writeWavFile(file: string, channels: Float32Array[], sampleRate: number): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, encodeWavPcm16({ channels, sampleRate }));
}

/** The energy detector (pipeline/audio/speech-regions.ts) as a `VoiceActivityDetector`, recording its calls. */
export function energyDetector(
  options: Partial<SpeechDetectorOptions> = {},
): VoiceActivityDetector & { calls: { length: number; sampleRate: number }[] } {
  const calls: { length: number; sampleRate: number }[] = [];
  return {
    id: 'energy',
    calls,
    detect: async (samples: Float32Array, sampleRate: number) => {
      calls.push({ length: samples.length, sampleRate });
      return detectSpeechSegments(samples, sampleRate, options);
    },
  };
}

/** A fresh temporary folder; call the returned `remove` when done. */
export async function temporaryFolder(prefix: string): Promise<{ folder: string; remove: () => Promise<void> }> {
  const folder = await mkdtemp(path.join(os.tmpdir(), `duplexsynth-${prefix}-`));
  return { folder, remove: () => rm(folder, { recursive: true, force: true }) };
}

/** Copies a fixture folder (relative to `corpora/fixtures`) into `target`. */
export async function copyFixture(name: string, target: string): Promise<string> {
  await cp(path.join(FIXTURES, name), target, { recursive: true });
  return target;
}

/** Speech of the two speakers of session A0001_S0001 (from its TXT file, noise lines left out), centiseconds. */
export const SESSION_SPEECH: Record<'G0001' | 'G0002', SpeechSegment[]> = {
  G0001: [
    { start: 62, end: 318 },
    { start: 780, end: 990 },
    { start: 1010, end: 1260 },
    { start: 1720, end: 1760 },
    { start: 2450, end: 3000 },
    { start: 3100, end: 3400 },
  ],
  G0002: [
    { start: 340, end: 390 },
    { start: 410, end: 735 },
    { start: 1290, end: 1330 },
    { start: 1350, end: 1700 },
    { start: 1800, end: 2150 },
    { start: 2170, end: 2420 },
    { start: 3030, end: 3070 },
  ],
};

/** Sample rate of the audio {@link writeSessionAudio} writes, Hz. */
export const SESSION_SAMPLE_RATE = 16000;

/**
 * Writes `WAV/A0001_S0001.wav` (35 s) into a copy of the fixture: each speaker's lines as tone bursts on their
 * side (`G0001` left unless `swapped`), with crosstalk `crosstalkGain` on the other side; `mono` mixes both.
 */
export async function writeSessionAudio(
  corpusFolder: string,
  layout: { swapped?: boolean; crosstalkGain?: number; mono?: boolean } = {},
): Promise<string> {
  const first = toneTrack(3500, SESSION_SAMPLE_RATE, SESSION_SPEECH.G0001, 0.3);
  const second = toneTrack(3500, SESSION_SAMPLE_RATE, SESSION_SPEECH.G0002, 0.3);
  const gain = layout.crosstalkGain ?? 0.01;
  const left = addInPlace(first.slice(), second, gain);
  const right = addInPlace(second.slice(), first, gain);
  const file = path.join(corpusFolder, 'WAV', 'A0001_S0001.wav');
  if (layout.mono === true) await writeWavFile(file, [addInPlace(first.slice(), second, 1)], SESSION_SAMPLE_RATE);
  else await writeWavFile(file, layout.swapped === true ? [right, left] : [left, right], SESSION_SAMPLE_RATE);
  return file;
}
