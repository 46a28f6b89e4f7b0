/**
 * EBU R 128 / ITU-R BS.1770 loudness of a WAV file, measured by ffmpeg's `ebur128` filter:
 *
 * `ffmpeg -nostats -hide_banner -i FILE -filter_complex "[0:a]pan=mono|c0=cN,ebur128=peak=true:framelog=verbose" -f null -`
 *
 * (without `pan` for the whole file). The filter logs a summary at uninit:
 *
 * ```
 * [Parsed_ebur128_1 @ 0x...] Summary:
 *
 *   Integrated loudness:
 *     I:         -23.0 LUFS
 *     Threshold: -33.0 LUFS
 *
 *   Loudness range:
 *     LRA:         0.0 LU
 *     ...
 *   True peak:
 *     Peak:      -20.0 dBFS
 * ```
 *
 * ffmpeg 5.1 builds the filter graph twice (a probe graph, then the real one), so two summaries are
 * printed and the LAST one is the measurement. `framelog=verbose` moves the ten-per-second frame
 * lines to the verbose log level, which is not printed. When no 400 ms block passes the absolute
 * gate (-70 LUFS; a silent channel), ffmpeg prints `I: -70.0 LUFS` with `Threshold: 0.0 LUFS`: this
 * module reports that as `integratedLufs: null`. A true peak of `-inf` (digital silence) is null too.
 *
 * A single channel is measured as a mono programme (channel weight 1.0, BS.1770), which is how each
 * speaker's channel is heard on its own; ffmpeg's `dualmono` option is not used.
 */
import { execa } from 'execa';
import type { LoudnessMeasurement } from '../model/quality-report.ts';

export type { LoudnessMeasurement } from '../model/quality-report.ts';

/** ffmpeg failed or its output held no loudness summary. */
export class LoudnessMeasurementError extends Error {
  override readonly name = 'LoudnessMeasurementError';
}

function parseLevel(text: string): number | null {
  if (/^-inf$/i.test(text)) return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

/**
 * Parses the last `ebur128` summary in ffmpeg's standard error (format in the module comment).
 * @returns the measurement; `integratedLufs` is null when the gate threshold is 0.0 LUFS (no gated
 *   block), `truePeakDbtp` null for `-inf`.
 * @throws LoudnessMeasurementError when there is no summary or it lacks the integrated loudness or
 *   the true peak (for example when run without `peak=true`).
 */
export function parseEbur128Summary(stderr: string): LoudnessMeasurement {
  const start = stderr.lastIndexOf('Summary:');
  if (start < 0) throw new LoudnessMeasurementError('ffmpeg printed no ebur128 summary');
  const summary = stderr.slice(start);
  const integrated = /Integrated loudness:\s*\n\s*I:\s*(\S+) LUFS\s*\n\s*Threshold:\s*(\S+) LUFS/.exec(summary);
  const range = /Loudness range:\s*\n\s*LRA:\s*(\S+) LU/.exec(summary);
  const truePeak = /True peak:\s*\n\s*Peak:\s*(\S+) dBFS/.exec(summary);
  if (!integrated || !truePeak) {
    throw new LoudnessMeasurementError(
      `the ebur128 summary lacks ${integrated ? 'the true peak (peak=true)' : 'the integrated loudness'}: ${summary.slice(0, 300)}`,
    );
  }
  const threshold = parseLevel(integrated[2]!);
  const gated = threshold !== null && threshold !== 0;
  return {
    integratedLufs: gated ? parseLevel(integrated[1]!) : null,
    truePeakDbtp: parseLevel(truePeak[1]!),
    loudnessRangeLu: range ? (parseLevel(range[1]!) ?? 0) : 0,
  };
}

/** Named channel layouts ffmpeg prints in a stream line, and their channel counts. */
const LAYOUT_CHANNELS: Record<string, number> = {
  mono: 1,
  stereo: 2,
  '2.1': 3,
  '3.0': 3,
  quad: 4,
  '4.0': 4,
  '5.0': 5,
  '5.1': 6,
  '6.1': 7,
  '7.1': 8,
};

/**
 * Channel count of the first input audio stream from ffmpeg's stream line
 * (`Stream #0:0: Audio: pcm_s16le (...), 16000 Hz, stereo, s16, 512 kb/s`); null when not found.
 */
export function audioChannelCount(stderr: string): number | null {
  const match = /Stream #0:\d+[^\n]*?: Audio: [^\n]*?, \d+ Hz, ([^,\n]+)/.exec(stderr);
  if (!match) return null;
  const layout = match[1]!.trim();
  const counted = /^(\d+) channels/.exec(layout);
  if (counted) return Number(counted[1]);
  return LAYOUT_CHANNELS[layout.replace(/\(.*\)$/, '')] ?? null;
}

/** Options of {@link measureLoudness}. */
export interface LoudnessOptions {
  /** Measure only this channel (0-based) as a mono programme. Default: all channels together. */
  channel?: number;
  /** The ffmpeg executable. Default `ffmpeg` (Debian package ffmpeg, 5.1 here). */
  ffmpeg?: string;
  /** Give up after this many milliseconds. Default 600000. */
  timeoutMilliseconds?: number;
}

/**
 * Integrated loudness, true peak and loudness range of a WAV file (or one of its channels), via
 * ffmpeg's `ebur128` filter (command in the module comment).
 * @param file path of an audio file ffmpeg can read.
 * @throws RangeError for a negative or non-integer channel; LoudnessMeasurementError when the file
 *   does not have the channel (ffmpeg's `pan` would silently read it as silence, so the channel
 *   count of ffmpeg's stream line is checked), when ffmpeg cannot be run or exits non-zero (message:
 *   the last lines of its standard error), or prints no summary.
 */
export async function measureLoudness(file: string, options: LoudnessOptions = {}): Promise<LoudnessMeasurement> {
  const filters = ['ebur128=peak=true:framelog=verbose'];
  if (options.channel !== undefined) {
    if (!Number.isInteger(options.channel) || options.channel < 0)
      throw new RangeError(`channel must be a non-negative integer, got ${options.channel}`);
    filters.unshift(`pan=mono|c0=c${options.channel}`);
  }
  const ffmpeg = options.ffmpeg ?? 'ffmpeg';
  const result = await execa(
    ffmpeg,
    [
      '-nostats',
      '-hide_banner',
      '-nostdin',
      '-i',
      file,
      '-filter_complex',
      `[0:a]${filters.join(',')}`,
      '-f',
      'null',
      '-',
    ],
    {
      reject: false,
      stdin: 'ignore',
      timeout: options.timeoutMilliseconds ?? 600_000,
      encoding: 'utf8',
    },
  );
  const stderr = typeof result.stderr === 'string' ? result.stderr : '';
  // pan silently reads a channel the file does not have as silence, so check the count ffmpeg reports.
  const inputChannels = audioChannelCount(stderr);
  if (options.channel !== undefined && inputChannels !== null && options.channel >= inputChannels) {
    throw new LoudnessMeasurementError(
      `${file}: cannot measure channel ${options.channel}: the file has ${inputChannels} channels`,
    );
  }
  if (result.failed) {
    const tail = stderr
      .split('\n')
      .filter((line) => line.trim() !== '')
      .slice(-2)
      .join(' | ');
    throw new LoudnessMeasurementError(
      `${ffmpeg} failed on ${file}${options.channel !== undefined ? ` channel ${options.channel}` : ''}: ${result.exitCode !== undefined ? `exit code ${result.exitCode}` : result.shortMessage}${tail ? `: ${tail}` : ''}`,
    );
  }
  return parseEbur128Summary(stderr);
}
