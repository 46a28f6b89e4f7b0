/** The header facts of a WAV file (channels, sample rate, samples per channel), read with wavefile. */
import { readFile } from 'node:fs/promises';
import wavefile from 'wavefile';
import { WavDecodeError } from '../audio/raw-audio.ts';

/** Facts from a WAV header. */
export interface WavInfo {
  channels: number;
  /** Hz. */
  sampleRate: number;
  /** Samples per channel. */
  sampleCount: number;
}

/**
 * Reads the header of the WAV file `file`.
 * @throws WavDecodeError naming the file when it is not a PCM/float WAV file wavefile can parse
 */
export async function readWavInfo(file: string): Promise<WavInfo> {
  const bytes = await readFile(file);
  let wave: InstanceType<typeof wavefile.WaveFile>;
  try {
    wave = new wavefile.WaveFile(bytes);
  } catch (error) {
    throw new WavDecodeError(file, error instanceof Error ? error.message : String(error));
  }
  const format = wave.fmt as { numChannels: number; sampleRate: number; bitsPerSample: number };
  const data = wave.data as { chunkSize: number };
  const frameBytes = format.numChannels * (format.bitsPerSample / 8);
  if (!(frameBytes > 0) || data.chunkSize % frameBytes !== 0) throw new WavDecodeError(file, `data chunk of ${data.chunkSize} bytes is not a whole number of ${frameBytes}-byte frames`);
  return { channels: format.numChannels, sampleRate: format.sampleRate, sampleCount: data.chunkSize / frameBytes };
}
