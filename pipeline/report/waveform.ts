/**
 * Waveform outlines for the dialogue pages: per column of pixels the lowest and highest sample, drawn
 * as one closed SVG path (upper edge left to right, lower edge back), so a page draws a minute of
 * audio without any script.
 */
import { readFile } from 'node:fs/promises';
import { decodeWav } from '../audio/wav.ts';

/**
 * The channels of a WAV file as floats in [-1, 1] (index = channel), through the project's WAV codec
 * (16-bit PCM, what every dataset holds, is read straight from the data chunk).
 * @throws WavDecodeError naming the file when it is not a WAV file `decodeWav` can read
 */
export async function readWavChannels(file: string): Promise<Float32Array[]> {
  return decodeWav(await readFile(file), file).channels;
}

/** Lowest and highest sample per column. */
export interface WaveformEnvelope {
  /** Per column, in [-1, 1]. */
  minimum: Float32Array;
  maximum: Float32Array;
}

/**
 * The envelope of `samples` in `columns` equal slices (the last may be shorter).
 * @param samples one channel, floats in [-1, 1]
 * @throws RangeError when `columns` is not a positive integer
 */
export function waveformEnvelope(samples: Float32Array, columns: number): WaveformEnvelope {
  if (!Number.isInteger(columns) || columns <= 0) throw new RangeError(`columns must be a positive integer, got ${columns}`);
  const minimum = new Float32Array(columns);
  const maximum = new Float32Array(columns);
  const per = samples.length / columns;
  for (let column = 0; column < columns; column++) {
    const from = Math.floor(column * per);
    const to = Math.max(from + 1, Math.floor((column + 1) * per));
    let low = 0;
    let high = 0;
    for (let index = from; index < to && index < samples.length; index++) {
      const value = samples[index]!;
      if (value < low) low = value;
      if (value > high) high = value;
    }
    minimum[column] = low;
    maximum[column] = high;
  }
  return { minimum, maximum };
}

/**
 * The SVG path (`d`) of an envelope: column `c` at x = c × `columnWidth` px, amplitude 1 at the lane's
 * edge (y = 0 top, `height` bottom, silence on the middle line). Coordinates are rounded to 0.1 px.
 */
export function waveformPath(envelope: WaveformEnvelope, columnWidth: number, height: number): string {
  const middle = height / 2;
  const y = (value: number) => Math.round((middle - value * middle) * 10) / 10;
  const x = (column: number) => Math.round(column * columnWidth * 10) / 10;
  const columns = envelope.maximum.length;
  const upper: string[] = [];
  const lower: string[] = [];
  for (let column = 0; column < columns; column++) upper.push(`${x(column)} ${y(envelope.maximum[column]!)}`);
  for (let column = columns - 1; column >= 0; column--) lower.push(`${x(column)} ${y(envelope.minimum[column]!)}`);
  return `M${upper.join('L')}L${lower.join('L')}Z`;
}
