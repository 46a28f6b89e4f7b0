/**
 * Checks of real recordings that `chat` and `prompts` make before they write anything: audio with one
 * speaker per channel, and at least 16 kHz. What fails is refused with one line naming the file and
 * the way out (exit code 2, pipeline/model/build-errors.ts), never quietly turned into a dataset.
 *
 * Why 16 kHz: DNSMOS (the chat quality score) and the speaker prompts (16 kHz mono clips for
 * CosyVoice2) work at 16 kHz; 8 kHz telephone audio upsampled has nothing above 4 kHz, and a dataset
 * that says 16 kHz must say where it came from (`--allow-upsample` is recorded in the summary).
 */
import path from 'node:path';
import { BuildInputError } from '../../pipeline/model/build-errors.ts';
import type { Channel, ReferenceRecording } from '../../pipeline/model/types.ts';
import { readReferenceAudio, readWavHeader } from '../../corpora/reference-recording.ts';

/** Lowest sample rate `chat` and `prompts` take without `--allow-upsample`, Hz. */
export const MINIMUM_SAMPLE_RATE = 16000;

/** A recording refused by a check of this module: one line, exit code 2. */
export class RecordingRefusedError extends BuildInputError {
  override name = 'RecordingRefusedError';
}

/** Channel count and sample rate of an audio file: from the WAV header, else by decoding it (ffmpeg). */
export async function audioFileLayout(
  file: string,
): Promise<{ channelCount: number; sampleRate: number; seconds: number }> {
  const header = await readWavHeader(file).catch(() => undefined);
  if (header !== undefined)
    return {
      channelCount: header.channelCount,
      sampleRate: header.sampleRate,
      seconds: header.frameCount / header.sampleRate,
    };
  const audio = await readReferenceAudio(file);
  return {
    channelCount: audio.channels.length,
    sampleRate: audio.sampleRate,
    seconds: (audio.channels[0]?.length ?? 0) / audio.sampleRate,
  };
}

/** A file whose rate is below {@link MINIMUM_SAMPLE_RATE}, upsampled because `--allow-upsample` was given. */
export interface UpsampledAudio {
  file: string;
  sampleRate: number;
  to: number;
}

/**
 * Checks the audio of recordings for `chat` (every check) or `prompts` (`onePerChannel: false`: a
 * mono mix still gives single-speaker clips where the other speaker is silent):
 * - one speaker per channel: both channels have audio (a recording with none is left to the caller,
 *   which lists it as failed); when both channels point to the same file it has two channels (a mono
 *   file with both speakers is a mix); two files, one per speaker, have the same sample rate and lengths
 *   within 1 s;
 * - every file at least {@link MINIMUM_SAMPLE_RATE} Hz, unless `allowUpsample`.
 * @returns the files that will be upsampled (with `allowUpsample`).
 * @throws RecordingRefusedError naming the recording, the file and the way out.
 */
export async function checkRecordingAudio(
  recordings: readonly ReferenceRecording[],
  options: { onePerChannel: boolean; allowUpsample: boolean; command: string },
): Promise<UpsampledAudio[]> {
  const upsampled: UpsampledAudio[] = [];
  const seen = new Set<string>();
  for (const recording of recordings) {
    const audio = recording.audio ?? [];
    if (audio.length === 0) continue;
    const entries = ([0, 1] as Channel[]).map((channel) => audio.find((entry) => entry.channel === channel));
    const refuse = (reason: string): never => {
      throw new RecordingRefusedError(`${options.command}: recording ${recording.id}: ${reason}`);
    };
    if (options.onePerChannel && entries.some((entry) => entry === undefined)) {
      const missing = entries.findIndex((entry) => entry === undefined);
      const present = entries.find((entry) => entry !== undefined);
      refuse(
        `no audio for channel ${missing} (${present === undefined ? '' : `only ${path.basename(present.path)} for channel ${1 - missing}; `}give both speakers' files, <id>_0 and <id>_1, or a stereo file)`,
      );
    }
    const layouts = new Map<string, Awaited<ReturnType<typeof audioFileLayout>>>();
    for (const entry of entries)
      if (entry !== undefined && !layouts.has(entry.path)) layouts.set(entry.path, await audioFileLayout(entry.path));
    const [first, second] = entries;
    if (options.onePerChannel && first !== undefined && second !== undefined) {
      const layout0 = layouts.get(first.path)!;
      const layout1 = layouts.get(second.path)!;
      if (first.path === second.path && layout0.channelCount < 2) {
        refuse(
          `${first.path} is a mono mix (1 channel for both speakers); the Chat track needs one speaker per channel: a stereo file or one file per speaker (<id>_0, <id>_1)`,
        );
      }
      if (first.path === second.path && layout0.channelCount > 2)
        refuse(`${first.path} has ${layout0.channelCount} channels, expected 2 (one speaker each)`);
      if (first.path !== second.path) {
        if (layout0.sampleRate !== layout1.sampleRate)
          refuse(
            `the speakers' files do not match: ${path.basename(first.path)} is ${layout0.sampleRate} Hz, ${path.basename(second.path)} ${layout1.sampleRate} Hz (convert one, e.g. sox in.wav -r ${Math.max(layout0.sampleRate, layout1.sampleRate)} out.wav)`,
          );
        if (Math.abs(layout0.seconds - layout1.seconds) > 1)
          refuse(
            `the speakers' files do not match: ${path.basename(first.path)} lasts ${layout0.seconds.toFixed(2)} s, ${path.basename(second.path)} ${layout1.seconds.toFixed(2)} s (not one conversation recorded together?)`,
          );
      }
    }
    for (const [file, layout] of layouts) {
      if (layout.sampleRate >= MINIMUM_SAMPLE_RATE || seen.has(file)) continue;
      seen.add(file);
      if (!options.allowUpsample)
        refuse(
          `${file} is ${layout.sampleRate} Hz, below ${MINIMUM_SAMPLE_RATE} Hz (DNSMOS and the voice prompts work at 16 kHz); pass --allow-upsample to upsample it (recorded in the summary)`,
        );
      upsampled.push({ file, sampleRate: layout.sampleRate, to: MINIMUM_SAMPLE_RATE });
    }
  }
  return upsampled;
}
