/**
 * Waveform outlines for the dialogue pages: per column of pixels the lowest and highest sample, drawn
 * as one closed SVG path (upper edge left to right, lower edge back), so a page draws a minute of
 * audio without any script.
 */
import { openInputFile, readInputFile } from '../storage/read-input-file.ts';
import { decodeWav, isPcm16, readWavFileLayout } from '../audio/wav.ts';
import { WavDecodeError } from '../audio/raw-audio.ts';

/**
 * The channels of a WAV file as floats in [-1, 1] (index = channel), through the project's WAV codec
 * (16-bit PCM, what every dataset holds, is read straight from the data chunk).
 * @throws WavDecodeError naming the file when it is not a WAV file `decodeWav` can read
 */
export async function readWavChannels(file: string): Promise<Float32Array[]> {
  return decodeWav(await readInputFile(file), file).channels;
}

/** Frames of 16-bit PCM read at a time by {@link readWavEnvelopes} (256 KiB for two channels). */
const ENVELOPE_READ_FRAMES = 65536;

/**
 * The {@link waveformEnvelope} of each channel of a WAV file (index = channel), equal to that of the
 * channels {@link readWavChannels} decodes. 16-bit PCM (every dataset's audio) is read from the data
 * chunk 64 Ki frames at a time into one buffer, so a dialogue's samples are never all in memory as
 * floats (a build report read every dialogue's WAV whole, then as floats twice: 1 GB of short-lived
 * buffers for 20 dialogues, each 64 MB of them a full garbage collection); other encodings are decoded whole.
 * @param columns columns per channel (a positive integer)
 * @throws RangeError when `columns` is not a positive integer; WavDecodeError naming the file when it
 *   is not a WAV file `decodeWav` can read; the file-system error when it cannot be read
 */
export async function readWavEnvelopes(file: string, columns: number): Promise<WaveformEnvelope[]> {
  if (!Number.isInteger(columns) || columns <= 0)
    throw new RangeError(`columns must be a positive integer, got ${columns}`);
  // refuses a FIFO or device before the header is read by path
  await (await openInputFile(file)).handle.close();
  const layout = readWavFileLayout(file);
  if (
    layout === undefined ||
    !isPcm16(layout.format) ||
    layout.format.channels < 1 ||
    !(layout.format.sampleRate > 0) ||
    !PLATFORM_IS_LITTLE_ENDIAN
  ) {
    return (await readWavChannels(file)).map((samples) => waveformEnvelope(samples, columns));
  }
  const channelCount = layout.format.channels;
  const frames = Math.floor(layout.dataBytes / (2 * channelCount));
  const envelopes = Array.from({ length: channelCount }, () => ({
    minimum: new Float32Array(columns),
    maximum: new Float32Array(columns),
  }));
  const buffer = Buffer.allocUnsafeSlow(ENVELOPE_READ_FRAMES * channelCount * 2);
  const pcm = new Int16Array(buffer.buffer, buffer.byteOffset, ENVELOPE_READ_FRAMES * channelCount);
  const words =
    channelCount === 2 && buffer.byteOffset % 4 === 0
      ? new Int32Array(buffer.buffer, buffer.byteOffset, ENVELOPE_READ_FRAMES)
      : null;
  const { handle } = await openInputFile(file);
  try {
    let windowStart = 0;
    let windowEnd = 0; // frames [windowStart, windowEnd) are in `pcm`
    const per = frames / columns;
    for (let column = 0; column < columns; column++) {
      // the same slices as waveformEnvelope's
      const from = Math.floor(column * per);
      const to = Math.min(frames, Math.max(from + 1, Math.floor((column + 1) * per)));
      for (let channel = 0; channel < channelCount; channel++) {
        envelopes[channel]!.minimum[column] = 0;
        envelopes[channel]!.maximum[column] = 0;
      }
      for (let start = from; start < to;) {
        if (start < windowStart || start >= windowEnd) {
          const wanted = Math.min(ENVELOPE_READ_FRAMES, frames - start);
          const { bytesRead } = await handle.read(
            buffer,
            0,
            wanted * channelCount * 2,
            layout.dataOffset + start * channelCount * 2,
          );
          if (bytesRead < wanted * channelCount * 2)
            throw new WavDecodeError(
              file,
              `the file ended inside its data chunk (${bytesRead} of ${wanted * channelCount * 2} bytes at frame ${start})`,
            );
          windowStart = start;
          windowEnd = start + wanted;
        }
        const stop = Math.min(to, windowEnd);
        if (words !== null) {
          // stereo (every dataset's WAV): one 32-bit load per frame, left the low half, right the high
          // half; the extremes of the integers scaled once (x / 32768 is exact and keeps order: the
          // same values as per sample), about 1.7 x faster on a saturation build's 40 WAVs
          let leftLow = 0;
          let leftHigh = 0;
          let rightLow = 0;
          let rightHigh = 0;
          for (let frame = start - windowStart, end = stop - windowStart; frame < end; frame++) {
            const word = words[frame] as number;
            const left = (word << 16) >> 16;
            const right = word >> 16;
            if (left < leftLow) leftLow = left;
            if (left > leftHigh) leftHigh = left;
            if (right < rightLow) rightLow = right;
            if (right > rightHigh) rightHigh = right;
          }
          const [left, right] = envelopes as [WaveformEnvelope, WaveformEnvelope];
          left.minimum[column] = Math.min(left.minimum[column]!, leftLow / 32768);
          left.maximum[column] = Math.max(left.maximum[column]!, leftHigh / 32768);
          right.minimum[column] = Math.min(right.minimum[column]!, rightLow / 32768);
          right.maximum[column] = Math.max(right.maximum[column]!, rightHigh / 32768);
          start = stop;
          continue;
        }
        for (let channel = 0; channel < channelCount; channel++) {
          const envelope = envelopes[channel]!;
          let low = envelope.minimum[column]!;
          let high = envelope.maximum[column]!;
          for (
            let index = (start - windowStart) * channelCount + channel, end = (stop - windowStart) * channelCount;
            index < end;
            index += channelCount
          ) {
            const value = (pcm[index] as number) / 32768;
            if (value < low) low = value;
            if (value > high) high = value;
          }
          envelope.minimum[column] = low;
          envelope.maximum[column] = high;
        }
        start = stop;
      }
    }
  } finally {
    await handle.close();
  }
  return envelopes;
}

const PLATFORM_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

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
  if (!Number.isInteger(columns) || columns <= 0)
    throw new RangeError(`columns must be a positive integer, got ${columns}`);
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
 * edge (y = 0 top, `height` bottom, silence on the middle line). Coordinates are whole pixels (each
 * column's y rounded, so the steps add up to the rounded positions); after the first point every step
 * is relative (`l dx dy`), and a run of level steps (silence, mostly) is one `h`: a dialogue's lane is
 * about a third of the bytes of absolute 0.1 px coordinates, drawn the same at the page's zoom 1.
 */
export function waveformPath(envelope: WaveformEnvelope, columnWidth: number, height: number): string {
  const middle = height / 2;
  const y = (value: number) => Math.round(middle - value * middle);
  const x = (column: number) => Math.round(column * columnWidth);
  const columns = envelope.maximum.length;
  const parts: string[] = [];
  let atX = x(0);
  let atY = y(envelope.maximum[0]!);
  parts.push(`M${atX} ${atY}`);
  let level = 0; // a level run not yet written, px
  const step = (toX: number, toY: number) => {
    const dx = toX - atX;
    const dy = toY - atY;
    if (dy === 0 && (level === 0 || Math.sign(dx) === Math.sign(level))) level += dx;
    else {
      if (level !== 0) parts.push(`h${level}`);
      level = 0;
      if (dy === 0) level = dx;
      else parts.push(dx === 0 ? `v${dy}` : `l${dx}${dy < 0 ? '' : ' '}${dy}`); // a minus sign separates the numbers
    }
    atX = toX;
    atY = toY;
  };
  for (let column = 1; column < columns; column++) step(x(column), y(envelope.maximum[column]!));
  for (let column = columns - 1; column >= 0; column--) step(x(column), y(envelope.minimum[column]!));
  if (level !== 0) parts.push(`h${level}`);
  return `${parts.join('')}Z`;
}
