/**
 * Voice prompt files for tests and benchmarks: espeak-ng speech of a transcript written as a WAV file,
 * at any sample rate and channel count, optionally padded to a length.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { encodeWavPcm16, readWavFileLayout } from '../../../audio/wav.ts';
import { linearResample, loopbackSpeech } from './loopback-speech.ts';

/** A prompt file and its transcript. */
export interface PromptFixture {
  path: string;
  transcript: string;
}

/** Settings of {@link writePromptFixture}. */
export interface PromptFixtureOptions {
  /** WAV sample rate, Hz. Default 16000. */
  sampleRate: number;
  /** Channels (the speech is copied to each). Default 1. */
  channels: number;
  /** Pad with silence to at least this many seconds. Default none. */
  minimumSeconds: number;
  /** espeak-ng pitch 0..99. Default 50. */
  pitch: number;
}

/** A fresh temporary directory for fixture files. */
export function fixtureDirectory(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'duplexsynth-tts-'));
}

/**
 * Writes espeak-ng speech of `transcript` as a 16-bit WAV file.
 *
 * @param directory where to write (the file name comes from the settings).
 * @param transcript the words spoken.
 * @param options sample rate (Hz), channels, minimum length (seconds), pitch.
 * @returns the file path and the transcript.
 */
export async function writePromptFixture(
  directory: string,
  transcript: string,
  options: Partial<PromptFixtureOptions> = {},
): Promise<PromptFixture> {
  const settings: PromptFixtureOptions = { sampleRate: 16000, channels: 1, minimumSeconds: 0, pitch: 50, ...options };
  const speech24k = await loopbackSpeech(transcript, 24000, { pitch: settings.pitch });
  let speech = linearResample(speech24k, 24000, settings.sampleRate);
  const minimumLength = Math.round(settings.minimumSeconds * settings.sampleRate);
  if (speech.length < minimumLength) {
    const padded = new Float32Array(minimumLength);
    padded.set(speech);
    speech = padded;
  }
  const file = path.join(
    directory,
    `prompt-${settings.sampleRate}-${settings.channels}-${settings.minimumSeconds}-${settings.pitch}-${Buffer.from(transcript).toString('hex').slice(0, 16)}.wav`,
  );
  await writeFile(
    file,
    encodeWavPcm16({
      channels: Array.from({ length: settings.channels }, () => speech),
      sampleRate: settings.sampleRate,
    }),
  );
  return { path: file, transcript };
}

/** The two English transcripts of {@link writePromptManifest}'s speakers. */
const MANIFEST_TRANSCRIPTS = [
  'I grew up near the sea and I still love the sound of waves.',
  'My favourite season is autumn because the light is so soft.',
];

/**
 * Writes a speaker prompt manifest of two espeak-ng speakers (`speaker-0`, `speaker-1`, pitches 30
 * and 70, at least 3 s each) into `directory`, as `speakerPrompts.manifest` reads it.
 * @param directory an existing folder; the clips and `manifest.jsonl` are written into it.
 * @returns the path of `manifest.jsonl`.
 */
export async function writePromptManifest(directory: string): Promise<string> {
  const lines: string[] = [];
  for (const [index, transcript] of MANIFEST_TRANSCRIPTS.entries()) {
    const fixture = await writePromptFixture(directory, transcript, { pitch: 30 + index * 40, minimumSeconds: 3 });
    const layout = readWavFileLayout(fixture.path)!;
    lines.push(
      JSON.stringify({
        id: `clip-${index}`,
        speaker: `speaker-${index}`,
        corpus: 'fixture',
        text: transcript,
        path: fixture.path,
        // rounded as a manifest writes it; it must match the clip
        durationSeconds:
          Math.round((layout.dataBytes / layout.format.blockAlign / layout.format.sampleRate) * 100) / 100,
      }),
    );
  }
  const manifest = path.join(directory, 'manifest.jsonl');
  await writeFile(manifest, `${lines.join('\n')}\n`);
  return manifest;
}
