/**
 * Reads an audio file of any common format into {@link RawAudio}, keeping its channels and sample rate.
 *
 * WAV (RIFF/WAVE) with integer PCM (8/16/24/32-bit) or IEEE float (32/64-bit) is decoded in process
 * with {@link decodeWav}. Everything else (MP3, FLAC, M4A/AAC, Ogg Vorbis/Opus, compressed WAV such
 * as ADPCM or mu-law) is decoded by calling ffmpeg directly: ffprobe reports the channel count and
 * the sample rate, ffmpeg writes 32-bit float little-endian interleaved samples to standard output.
 * (fluent-ffmpeg is not used: it is deprecated and its repository archived.)
 */
import { constants as bufferConstants } from 'node:buffer';
import { open, readFile, stat } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { execa } from 'execa';
import { WavDecodeError, type RawAudio } from './raw-audio.ts';
import { decodeWav, isRiffWave } from './wav.ts';

/** Why a file could not be read. */
export type AudioFileFailure =
  | 'not-found' // no such file, or it is a folder
  | 'unreadable' // the file system refused (permissions, I/O error)
  | 'missing-ffmpeg' // ffmpeg or ffprobe is not installed
  | 'no-audio-stream' // the container holds no audio
  | 'decode'; // the bytes could not be decoded

/** The message line that tells the user how to install ffmpeg. */
const FFMPEG_SETUP_HINT = 'Install ffmpeg with `npm run setup` (runs scripts/setup-system.sh; needs root or sudo).';

/** An audio file could not be read. The message names the file and the reason. */
export class AudioFileError extends Error {
  override readonly name = 'AudioFileError';
  constructor(
    readonly path: string,
    readonly failure: AudioFileFailure,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      `Cannot read audio file ${path} (${failure}): ${reason}${failure === 'missing-ffmpeg' ? `. ${FFMPEG_SETUP_HINT}` : ''}`,
      options,
    );
  }
}

/** Programs used for formats other than plain WAV. */
export interface ReadAudioFileOptions {
  /** ffmpeg program name or path; default `ffmpeg` (looked up on PATH). */
  ffmpegPath: string;
  /** ffprobe program name or path; default `ffprobe` (looked up on PATH). */
  ffprobePath: string;
}

/** Default programs: `ffmpeg` and `ffprobe` from PATH (installed by `npm run setup`). */
export const DEFAULT_READ_AUDIO_FILE_OPTIONS: Readonly<ReadAudioFileOptions> = Object.freeze({
  ffmpegPath: 'ffmpeg',
  ffprobePath: 'ffprobe',
});

/** Characters of a program's standard error quoted in error messages. */
const STDERR_EXCERPT_LENGTH = 300;

function excerpt(text: string): string {
  const flat = text.trim().replace(/\s+/g, ' ');
  return flat.length > STDERR_EXCERPT_LENGTH ? `${flat.slice(0, STDERR_EXCERPT_LENGTH)}…` : flat;
}

/**
 * ffmpeg's `file:` form of a path, so names that look like options or other protocols (`-x.wav`,
 * `http:...`, `concat:...`) are read as plain local files.
 */
function fileUrl(path: string): string {
  return `file:${resolvePath(path)}`;
}

/** Reads the first `length` bytes of a file (fewer when the file is shorter). */
async function readHead(path: string, length: number): Promise<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const buffer = new Uint8Array(length);
    const { bytesRead } = await handle.read(buffer, 0, length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Runs a program, turning "not installed" into `missing-ffmpeg` and failure into `decode`. */
async function runTool(path: string, program: string, args: readonly string[]) {
  const result = await execa(program, args, {
    encoding: 'buffer',
    reject: false,
    maxBuffer: bufferConstants.MAX_LENGTH,
    stripFinalNewline: false,
  });
  if (result.failed) {
    if (result.code === 'ENOENT')
      throw new AudioFileError(path, 'missing-ffmpeg', `program "${program}" was not found on PATH`, { cause: result });
    const stderr = excerpt(Buffer.from(result.stderr).toString('utf8'));
    const how = result.exitCode !== undefined ? `exit code ${result.exitCode}` : (result.shortMessage ?? 'failure');
    throw new AudioFileError(path, 'decode', `${program} ended with ${how}${stderr ? `: ${stderr}` : ''}`, {
      cause: result,
    });
  }
  return result;
}

/** Channel count and sample rate of the first audio stream, from `ffprobe -of json`. */
async function probeAudioStream(
  path: string,
  options: ReadAudioFileOptions,
): Promise<{ channels: number; sampleRate: number }> {
  const args = [
    '-v',
    'error',
    '-select_streams',
    'a:0',
    '-show_entries',
    'stream=channels,sample_rate',
    '-of',
    'json',
    '-i',
    fileUrl(path),
  ];
  const { stdout } = await runTool(path, options.ffprobePath, args);
  let parsed: { streams?: { channels?: unknown; sample_rate?: unknown }[] };
  try {
    parsed = JSON.parse(Buffer.from(stdout).toString('utf8')) as typeof parsed;
  } catch (error) {
    throw new AudioFileError(path, 'decode', `ffprobe wrote output that is not JSON`, { cause: error });
  }
  const stream = parsed.streams?.[0];
  if (!stream) throw new AudioFileError(path, 'no-audio-stream', 'the file has no audio stream');
  const channels = Number(stream.channels);
  const sampleRate = Number(stream.sample_rate);
  if (!Number.isInteger(channels) || channels < 1 || !Number.isInteger(sampleRate) || sampleRate < 1) {
    throw new AudioFileError(
      path,
      'decode',
      `ffprobe reports ${String(stream.channels)} channels at ${String(stream.sample_rate)} Hz`,
    );
  }
  return { channels, sampleRate };
}

/** Decodes any format ffmpeg reads, keeping channels and sample rate. */
async function decodeWithFfmpeg(path: string, options: ReadAudioFileOptions): Promise<RawAudio> {
  const { channels, sampleRate } = await probeAudioStream(path, options);
  const args = [
    '-v',
    'error',
    '-nostdin',
    '-i',
    fileUrl(path),
    '-map',
    '0:a:0',
    '-f',
    'f32le',
    '-acodec',
    'pcm_f32le',
    '-',
  ];
  const { stdout } = await runTool(path, options.ffmpegPath, args);
  const bytesPerFrame = channels * 4;
  if (stdout.byteLength % bytesPerFrame !== 0) {
    throw new AudioFileError(
      path,
      'decode',
      `ffmpeg wrote ${stdout.byteLength} bytes, not a whole number of ${channels}-channel float frames`,
    );
  }
  // ffmpeg's stdout buffer may start at any byte offset; copy into an aligned buffer when it does not start on 4 bytes.
  const aligned = stdout.byteOffset % 4 === 0 ? stdout : stdout.slice();
  const interleaved = new Float32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4);
  const frames = interleaved.length / channels;
  const output = Array.from({ length: channels }, () => new Float32Array(frames));
  for (let channel = 0; channel < channels; channel++) {
    const target = output[channel] as Float32Array;
    for (let frame = 0, index = channel; frame < frames; frame++, index += channels)
      target[frame] = interleaved[index] as number;
  }
  return { channels: output, sampleRate };
}

/**
 * Reads an audio file, keeping every channel and the file's own sample rate.
 *
 * @param path file path. WAV (RIFF/WAVE, PCM 8/16/24/32-bit or float 32/64-bit, any rate, any channel
 *   count) is decoded in process; anything else (MP3, FLAC, M4A, Ogg, compressed WAV) by ffmpeg.
 * @param options ffmpeg and ffprobe programs; defaults {@link DEFAULT_READ_AUDIO_FILE_OPTIONS}.
 * @returns samples in [-1, 1] (float formats may exceed it), one Float32Array per channel, and the
 *   sample rate in Hz.
 * @throws AudioFileError naming the file: `not-found`, `unreadable`, `missing-ffmpeg` (with the
 *   `npm run setup` hint), `no-audio-stream`, or `decode` (quoting the WAV decoder's or ffmpeg's reason).
 */
export async function readAudioFile(path: string, options: Partial<ReadAudioFileOptions> = {}): Promise<RawAudio> {
  const resolved = { ...DEFAULT_READ_AUDIO_FILE_OPTIONS, ...options };
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new AudioFileError(path, 'not-found', 'it is not a file');
  } catch (error) {
    if (error instanceof AudioFileError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new AudioFileError(
      path,
      code === 'ENOENT' ? 'not-found' : 'unreadable',
      code === 'ENOENT' ? 'no such file' : String(error),
      { cause: error },
    );
  }
  let header: Uint8Array;
  try {
    header = await readHead(path, 12);
  } catch (error) {
    throw new AudioFileError(path, 'unreadable', String(error), { cause: error });
  }
  if (isRiffWave(header)) {
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      throw new AudioFileError(path, 'unreadable', String(error), { cause: error });
    }
    try {
      return decodeWav(bytes, path);
    } catch (error) {
      if (!(error instanceof WavDecodeError)) throw error;
      // Compressed WAV encodings (ADPCM, A-law, mu-law, ...) and headers the in-process decoder rejects go to ffmpeg.
      try {
        return await decodeWithFfmpeg(path, resolved);
      } catch (ffmpegError) {
        if (ffmpegError instanceof AudioFileError && ffmpegError.failure === 'decode') {
          throw new AudioFileError(path, 'decode', `${error.reason}; ffmpeg: ${ffmpegError.reason}`, {
            cause: ffmpegError,
          });
        }
        throw ffmpegError;
      }
    }
  }
  return decodeWithFfmpeg(path, resolved);
}
