import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import wavefile from 'wavefile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quantizeToPcm16, type RawAudio } from './raw-audio.ts';
import { encodeWavPcm16 } from './wav.ts';
import { AudioFileError, readAudioFile } from './read-audio-file.ts';

let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'read-audio-file-'));
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** `seconds` of a sine per channel (440 Hz on channel 0, 660 Hz on channel 1, ...), amplitude 0.5. */
function sineAudio(sampleRate: number, channels: number, seconds: number): RawAudio {
  const length = Math.round(sampleRate * seconds);
  return {
    sampleRate,
    channels: Array.from({ length: channels }, (_, channel) => {
      const samples = new Float32Array(length);
      for (let index = 0; index < length; index++)
        samples[index] = 0.5 * Math.sin((2 * Math.PI * (440 + 220 * channel) * index) / sampleRate);
      return samples;
    }),
  };
}

/** Writes `audio` as WAV with wavefile at the given bit depth ('16', '24', '32' integer or '32f' float). */
async function writeWav(name: string, audio: RawAudio, bitDepth: '16' | '24' | '32' | '32f'): Promise<string> {
  const scale = bitDepth === '32f' ? 1 : 2 ** (Number(bitDepth) - 1);
  const channels = audio.channels.map((channel) =>
    Array.from(channel, (sample) =>
      bitDepth === '32f' ? sample : Math.max(-scale, Math.min(scale - 1, Math.round(sample * scale))),
    ),
  );
  const wave = new wavefile.WaveFile();
  wave.fromScratch(
    audio.channels.length,
    audio.sampleRate,
    bitDepth,
    channels.length === 1 ? (channels[0] as number[]) : channels,
  );
  const file = path.join(folder, name);
  await writeFile(file, wave.toBuffer());
  return file;
}

/** Largest absolute difference between two equally long signals (so -0 and +0 compare equal). */
function largestDifference(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let largest = 0;
  for (let index = 0; index < a.length; index++)
    largest = Math.max(largest, Math.abs((a[index] as number) - (b[index] as number)));
  return largest;
}

function rmsDbfs(samples: Float32Array): number {
  let energy = 0;
  for (const sample of samples) energy += sample * sample;
  return 10 * Math.log10(energy / samples.length);
}

describe('readAudioFile: WAV in process', () => {
  it.each([
    ['16', 8000, 1],
    ['24', 22050, 2],
    ['32', 44100, 2],
    ['32f', 48000, 1],
  ] as const)(
    'reads %s-bit WAV at %i Hz with %i channel(s), keeping rate and channels',
    async (bitDepth, sampleRate, channels) => {
      const audio = sineAudio(sampleRate, channels, 0.25);
      const file = await writeWav(`sine-${bitDepth}-${sampleRate}.wav`, audio, bitDepth);
      const read = await readAudioFile(file);
      expect(read.sampleRate).toBe(sampleRate);
      expect(read.channels).toHaveLength(channels);
      const tolerance = bitDepth === '32f' ? 0 : 1 / 2 ** (Number(bitDepth) - 1);
      read.channels.forEach((channel, index) =>
        expect(largestDifference(channel, audio.channels[index] as Float32Array)).toBeLessThanOrEqual(tolerance),
      );
    },
  );

  it('reads back exactly what encodeWavPcm16 wrote', async () => {
    const audio = sineAudio(16000, 2, 0.1);
    const file = path.join(folder, 'encoded.wav');
    await writeFile(file, encodeWavPcm16(audio));
    const read = await readAudioFile(file);
    read.channels.forEach((channel, index) =>
      expect(largestDifference(channel, quantizeToPcm16(audio.channels[index] as Float32Array))).toBe(0),
    );
  });
});

describe('readAudioFile: other formats through ffmpeg', () => {
  let source: string;
  const audio = sineAudio(44100, 2, 1);

  beforeAll(async () => {
    source = path.join(folder, 'source.wav');
    await writeFile(source, encodeWavPcm16(audio));
  });

  it.each([
    ['flac', ['-c:a', 'flac'], 0],
    ['mp3', ['-c:a', 'libmp3lame', '-b:a', '192k'], 1],
    ['m4a', ['-c:a', 'aac', '-b:a', '192k'], 1],
    ['ogg', ['-c:a', 'libvorbis', '-q:a', '6'], 1],
  ] as const)('reads .%s keeping 2 channels at 44100 Hz', async (extension, codec, levelToleranceDb) => {
    const file = path.join(folder, `sine.${extension}`);
    await execa('ffmpeg', ['-v', 'error', '-y', '-i', source, ...codec, file]);
    const read = await readAudioFile(file);
    expect(read.sampleRate).toBe(44100);
    expect(read.channels).toHaveLength(2);
    const length = read.channels[0]?.length ?? 0;
    expect(Math.abs(length - 44100)).toBeLessThanOrEqual(extension === 'flac' ? 0 : 2048);
    if (extension === 'flac') {
      read.channels.forEach((channel, index) =>
        expect(largestDifference(channel, quantizeToPcm16(audio.channels[index] as Float32Array))).toBe(0),
      );
    } else {
      // Lossy: the level of each channel (-9 dBFS for a 0.5 sine) survives within 1 dB, and the channels stay apart.
      read.channels.forEach((channel) =>
        expect(Math.abs(rmsDbfs(channel) - -9.03)).toBeLessThanOrEqual(levelToleranceDb),
      );
      expect(largestDifference(read.channels[0] as Float32Array, read.channels[1] as Float32Array)).toBeGreaterThan(
        0.5,
      );
    }
  });

  it('sends compressed WAV (mu-law) to ffmpeg', async () => {
    const file = path.join(folder, 'mulaw.wav');
    await execa('ffmpeg', ['-v', 'error', '-y', '-i', source, '-c:a', 'pcm_mulaw', file]);
    const read = await readAudioFile(file);
    expect(read.sampleRate).toBe(44100);
    expect(read.channels).toHaveLength(2);
    expect(read.channels[0]?.length).toBe(44100);
  });

  it('reads a file whose name looks like an ffmpeg option or protocol', async () => {
    const file = path.join(folder, '-odd name:concat.flac');
    await execa('ffmpeg', ['-v', 'error', '-y', '-i', source, '-c:a', 'flac', `file:${file}`]);
    expect((await readAudioFile(file)).channels).toHaveLength(2);
  });
});

describe('readAudioFile: errors name the file and the reason', () => {
  it('reports a missing file and a folder as not-found', async () => {
    const missing = path.join(folder, 'missing.wav');
    await expect(readAudioFile(missing)).rejects.toThrow(
      new RegExp(`${missing.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*not-found.*no such file`),
    );
    const subfolder = path.join(folder, 'a-folder.wav');
    await mkdir(subfolder);
    await expect(readAudioFile(subfolder)).rejects.toMatchObject({
      name: 'AudioFileError',
      failure: 'not-found',
      path: subfolder,
    });
  });

  it('reports bytes no decoder understands as decode, quoting ffmpeg', async () => {
    const garbage = path.join(folder, 'garbage.mp3');
    await writeFile(garbage, 'this is not audio at all');
    const error = await readAudioFile(garbage).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AudioFileError);
    expect(error).toMatchObject({ failure: 'decode', path: garbage });
    expect((error as Error).message).toContain(garbage);
  });

  it('reports a broken WAV with both decoders reasons', async () => {
    const broken = path.join(folder, 'broken.wav');
    await writeFile(broken, Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVE', 'latin1'), Buffer.alloc(8)]));
    await expect(readAudioFile(broken)).rejects.toMatchObject({ failure: 'decode', path: broken });
  });

  it('reports a file without an audio stream', async () => {
    const image = path.join(folder, 'image.png');
    await execa('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=red:s=16x16', '-frames:v', '1', image]);
    await expect(readAudioFile(image)).rejects.toMatchObject({ failure: 'no-audio-stream', path: image });
  });

  it('tells the user to run npm run setup when ffmpeg is missing', async () => {
    const file = path.join(folder, 'needs-ffmpeg.flac');
    await execa('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=d=0.1', file]);
    await expect(readAudioFile(file, { ffprobePath: '/nonexistent/ffprobe' })).rejects.toThrow(
      /needs-ffmpeg\.flac \(missing-ffmpeg\).*npm run setup/,
    );
    await expect(readAudioFile(file, { ffmpegPath: '/nonexistent/ffmpeg' })).rejects.toMatchObject({
      failure: 'missing-ffmpeg',
    });
  });
});
