/**
 * How the input files a voice names (a voice-cloning prompt's `promptWav`) enter cache keys and
 * dataset records: never by the absolute path this process reads them from, which differs from one
 * machine or checkout to the next, but by the sha256 of their bytes (`promptWavSha256`) and, in
 * records, their path relative to the folder they were configured under (the speaker prompt
 * manifest's folder, the build config's folder). A queue worker that mounts the same prompt files
 * elsewhere then writes the synthesis cache entries the coordinator looks up, and a build from a
 * copied prompt pool writes the same dataset bytes.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { bytesHash } from '../../storage/content-hash.ts';
import type { VoiceSettings } from './speech-synthesizer.ts';

/** Voice settings fields that name a file (today the voice prompt recording of the CosyVoice2 engines). */
export const VOICE_FILE_FIELDS: readonly string[] = ['promptWav'];

/** The field holding the sha256 (hex) of the file named by `field`, e.g. `promptWavSha256`. */
export function voiceFileDigestField(field: string): string {
  return `${field}Sha256`;
}

const digests = new Map<string, { signature: string; sha256: string }>();

/**
 * sha256 (hex) of a file's bytes, read once per process while its size and modification time stay
 * the same (looked at with one `stat` per call).
 * @param file absolute path (a relative one is taken from the working directory)
 * @returns 64 lowercase hex digits
 * @throws the file system error (ENOENT, EACCES, EISDIR …) of a file that cannot be read
 */
export function voiceFileSha256(file: string): string {
  const absolute = path.resolve(file);
  const info = statSync(absolute);
  const signature = `${info.size}:${info.mtimeMs}`;
  const known = digests.get(absolute);
  if (known && known.signature === signature) return known.sha256;
  const sha256 = bytesHash(readFileSync(absolute));
  digests.set(absolute, { signature, sha256 });
  return sha256;
}

/**
 * A voice as dataset records hold it: every file field ({@link VOICE_FILE_FIELDS}) as its path
 * relative to `root` (`/` separators), next to the sha256 of its bytes (`promptWavSha256`); every
 * other field as it is. A voice without file fields (espeak-ng, Open JTalk, OpenAI voices) is
 * returned as it is.
 * @param voice engine voice settings, file fields absolute (as the config and the roster resolve them)
 * @param root the folder the files were configured relative to
 * @returns the record, e.g. `{mode, promptWav: 'clips/a.wav', promptWavSha256: '3f…', promptText}`
 * @throws the file system error of a file that cannot be read
 */
export function voiceRecordOf(voice: VoiceSettings, root: string): VoiceSettings {
  if (!VOICE_FILE_FIELDS.some((field) => typeof voice[field] === 'string')) return voice;
  const record: Record<string, string | number | boolean> = { ...voice };
  for (const field of VOICE_FILE_FIELDS) {
    const file = voice[field];
    if (typeof file !== 'string') continue;
    const absolute = path.resolve(root, file);
    record[field] = path.relative(root, absolute).split(path.sep).join('/');
    record[voiceFileDigestField(field)] = voiceFileSha256(absolute);
  }
  return record;
}

/**
 * A voice as cache keys hold it: every file field ({@link VOICE_FILE_FIELDS}) replaced by the sha256
 * of its bytes (of an absolute path, the file's, read through {@link voiceFileSha256}; of a relative
 * one, the digest its {@link voiceRecordOf} record carries): what the engine is sent depends on the
 * bytes, not on where they lie. A
 * voice without file fields is returned as it is, so its keys are the ones it always had.
 * @param voice engine voice settings (file fields absolute) or a record of {@link voiceRecordOf}
 * @returns the voice without its file paths, with `promptWavSha256`
 * @throws the file system error of a file that cannot be read (an engine voice without a digest)
 */
export function voiceCacheKeyOf(voice: VoiceSettings): VoiceSettings {
  if (!VOICE_FILE_FIELDS.some((field) => typeof voice[field] === 'string')) return voice;
  const key: Record<string, string | number | boolean> = { ...voice };
  for (const field of VOICE_FILE_FIELDS) {
    const file = voice[field];
    if (typeof file !== 'string') continue;
    const digestField = voiceFileDigestField(field);
    const recorded = voice[digestField];
    // an absolute path is a file this process reads: its bytes decide; a relative one is a record's
    key[digestField] = !path.isAbsolute(file) && typeof recorded === 'string' ? recorded : voiceFileSha256(file);
    delete key[field];
  }
  return key;
}
