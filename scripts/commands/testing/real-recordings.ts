/**
 * Test recordings for the chat, prompts and measure commands, made at test time outside the project
 * tree: the shared real Japanese two-party recordings (../shared/corpora/reference-audio/ja,
 * J-Moshi demo audio, 32 kHz stereo, 10 s each) joined end to end with sox into one long recording,
 * and sox-made variants of them (mono mix, lower sample rate, one channel only).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { sharedDirectory } from '../../../pipeline/config.ts';

/** The two shared Japanese recordings, prompt-62.wav and prompt-159.wav. */
export function sharedJapaneseRecordings(): [string, string] {
  const folder = path.join(sharedDirectory(), 'corpora', 'reference-audio', 'ja');
  return [path.join(folder, 'prompt-62.wav'), path.join(folder, 'prompt-159.wav')];
}

/**
 * Joins the two shared recordings `repeats` times (62, 159, 62, 159, ...) into `file` (sox
 * concatenation, 32 kHz stereo PCM16): `repeats` = 6 gives 120 s, one chat segment.
 */
export async function joinSharedJapaneseRecordings(file: string, repeats: number): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  const inputs = Array.from({ length: repeats }, () => sharedJapaneseRecordings()).flat();
  await execa('sox', [...inputs, file]);
  return file;
}

/** Runs sox on one input with output options and effects: `sox in.wav [outputOptions] out.wav [effects]`. */
export async function soxConvert(
  input: string,
  output: string,
  outputOptions: readonly string[],
  effects: readonly string[] = [],
): Promise<string> {
  await mkdir(path.dirname(output), { recursive: true });
  await execa('sox', [input, ...outputOptions, output, ...effects]);
  return output;
}
