import { describe, expect, it } from 'vitest';
import wavefile from 'wavefile';
import {
  AudioArgumentError,
  concatenate,
  downmixToMono,
  isOnPcm16Grid,
  placeOnTrackInPlace,
  quantizeToPcm16,
  sliceBySamples,
  toPcm16Integer,
  WavDecodeError,
} from './raw-audio.ts';
import { resample } from './resample.ts';
import { decodeWav, encodeWavPcm16 } from './wav.ts';

function waveBytes(bitDepth: string, channels: number[][], sampleRate = 8000): Uint8Array {
  const wave = new wavefile.WaveFile();
  wave.fromScratch(channels.length, sampleRate, bitDepth, channels);
  return wave.toBuffer();
}

function tone(frequency: number, seconds: number, sampleRate: number, amplitude = 0.5): Float32Array {
  const samples = new Float32Array(Math.round(seconds * sampleRate));
  for (let index = 0; index < samples.length; index++)
    samples[index] = amplitude * Math.sin((2 * Math.PI * frequency * index) / sampleRate);
  return samples;
}

/** Upward zero crossings per second, a simple frequency estimate for a pure tone. */
function estimatedFrequency(samples: Float32Array, sampleRate: number): number {
  let crossings = 0;
  for (let index = 1; index < samples.length; index++)
    if ((samples[index - 1] as number) < 0 && (samples[index] as number) >= 0) crossings++;
  return crossings / (samples.length / sampleRate);
}

describe('decodeWav', () => {
  it.each([
    ['8', [0, 128, 255], [-1, 0, 127 / 128]],
    ['16', [-32768, 0, 16384, 32767], [-1, 0, 0.5, 32767 / 32768]],
    ['24', [-8388608, 0, 4194304], [-1, 0, 0.5]],
    ['32', [-2147483648, 0, 1073741824], [-1, 0, 0.5]],
    ['32f', [-1, 0, 0.25], [-1, 0, 0.25]],
  ])('decodes %s-bit samples to [-1, 1]', (bitDepth, stored, expected) => {
    const audio = decodeWav(waveBytes(bitDepth, [stored, [...stored].reverse()]), 'test.wav');
    expect(audio.sampleRate).toBe(8000);
    expect(audio.channels).toHaveLength(2);
    expect(Array.from(audio.channels[0] as Float32Array)).toEqual(expected.map((value) => Math.fround(value)));
    expect(Array.from(audio.channels[1] as Float32Array)).toEqual(
      [...expected].reverse().map((value) => Math.fround(value)),
    );
  });

  it('names the source when the bytes are not WAV', () => {
    expect(() =>
      decodeWav(new TextEncoder().encode('not a wave file at all, just text'), 'outputs/broken.wav'),
    ).toThrow(WavDecodeError);
    expect(() =>
      decodeWav(new TextEncoder().encode('not a wave file at all, just text'), 'outputs/broken.wav'),
    ).toThrow(/outputs\/broken\.wav/);
  });

  it('rejects compressed encodings, naming the source', () => {
    const wave = new wavefile.WaveFile();
    wave.fromScratch(1, 8000, '16', [0, 1000, -1000, 2000]);
    wave.toMuLaw();
    expect(() => decodeWav(wave.toBuffer(), 'mu-law.wav')).toThrow(/mu-law\.wav.*unsupported sample encoding/);
  });

  it('reads a streamed WAV whose data size field is 0x7FFFFFFF up to the bytes present', () => {
    const bytes = encodeWavPcm16({ channels: [new Float32Array([0.5, -0.5, 0.25])], sampleRate: 22050 });
    new DataView(bytes.buffer).setUint32(40, 0x7fffffff, true);
    new DataView(bytes.buffer).setUint32(4, 0x7fffffff, true);
    expect(Array.from(decodeWav(bytes, 'stream').channels[0] as Float32Array)).toEqual([0.5, -0.5, 0.25]);
  });
});

describe('encodeWavPcm16 and quantizeToPcm16', () => {
  const samples = new Float32Array([0, 0.1, -0.1, 0.333333, -0.999, 1.5, -1.5, 1 / 65536]);

  it('toPcm16Integer rounds every float32 sample as clamped Math.round(x * 32768) does: halves, the range ends, -0, NaN, infinities', () => {
    const reference = (sample: number) => {
      const scaled = Math.round(sample * 32768);
      return scaled > 32767 ? 32767 : scaled < -32768 ? -32768 : scaled;
    };
    const edges = [
      0,
      -0,
      0.5,
      -0.5,
      1.5,
      -1.5,
      2.5,
      -2.5,
      32766.5,
      -32767.5,
      -32768.5,
      32767.49,
      32767.5,
      40000,
      -40000,
      1e-30,
      -1e-30,
      2 ** -24,
    ].map((value) => value / 32768);
    const random = Array.from({ length: 200000 }, (_, index) => Math.sin(index * 12.9898) * 1.2);
    // halves and their float32 neighbours, where floor(x + 0.5) and Math.round could part
    const halves = Array.from({ length: 2000 }, (_, index) => (index - 1000 + 0.5) / 32768).flatMap((value) => {
      const bits = new Float32Array([value]);
      const integer = new Int32Array(bits.buffer);
      const below = new Float32Array(new Int32Array([integer[0]! - 1]).buffer)[0]!;
      const above = new Float32Array(new Int32Array([integer[0]! + 1]).buffer)[0]!;
      return [below, bits[0]!, above];
    });
    const differing = Array.from(Float32Array.from([...edges, ...random, ...halves])).filter(
      (sample) => !Object.is(toPcm16Integer(sample), reference(sample) + 0),
    );
    expect(differing).toEqual([]);
    expect(toPcm16Integer(Number.NaN)).toBeNaN();
    expect(toPcm16Integer(Number.POSITIVE_INFINITY)).toBe(32767);
    expect(toPcm16Integer(Number.NEGATIVE_INFINITY)).toBe(-32768);
  });

  it('writes a canonical 44-byte header and deterministic bytes', () => {
    const audio = { channels: [samples, samples.map((value) => -value)], sampleRate: 16000 };
    const bytes = encodeWavPcm16(audio);
    expect(bytes.length).toBe(44 + samples.length * 2 * 2);
    const view = new DataView(bytes.buffer);
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('RIFF');
    expect(view.getUint32(4, true)).toBe(36 + samples.length * 4);
    expect(view.getUint16(20, true)).toBe(1);
    expect(view.getUint16(22, true)).toBe(2);
    expect(view.getUint32(24, true)).toBe(16000);
    expect(view.getUint32(28, true)).toBe(64000);
    expect(view.getUint16(34, true)).toBe(16);
    expect(view.getUint32(40, true)).toBe(samples.length * 4);
    expect(view.getInt16(44 + 2 * 2, true)).toBe(Math.round(0.1 * 32768)); // frame 1, left
    expect(view.getInt16(44 + 5 * 4, true)).toBe(32767); // 1.5 clipped
    expect(view.getInt16(44 + 6 * 4, true)).toBe(-32768); // -1.5 clipped
    expect(encodeWavPcm16(audio)).toEqual(bytes);
  });

  it('quantized samples survive encode -> decode unchanged (what we analyse is what we write)', () => {
    const quantized = quantizeToPcm16(samples);
    const decoded = decodeWav(encodeWavPcm16({ channels: [quantized], sampleRate: 16000 }), 'round trip');
    expect(Array.from(decoded.channels[0] as Float32Array)).toEqual(Array.from(quantized));
    expect(quantized[5]).toBe(32767 / 32768);
    expect(quantized[6]).toBe(-1);
    expect(quantized[7]).toBe(1 / 32768); // rounds half up
    expect(Array.from(quantizeToPcm16(quantized))).toEqual(Array.from(quantized));
  });

  it('rejects channels of different lengths', () => {
    expect(() => encodeWavPcm16({ channels: [new Float32Array(3), new Float32Array(2)], sampleRate: 16000 })).toThrow(
      AudioArgumentError,
    );
  });
});

describe('isOnPcm16Grid', () => {
  it('holds exactly where quantizeToPcm16 would give back the same values', () => {
    const decoded = Float32Array.from([-32768, -1, 0, 1, 12345, 32767], (integer) => integer / 32768);
    expect(isOnPcm16Grid(decoded)).toBe(true);
    expect(quantizeToPcm16(decoded)).toEqual(decoded);
    for (const value of [1, 0.5 / 32768, -0, -1.5, 3 / 65536 + 1 / 32768]) {
      const samples = Float32Array.from([0.25, value, -0.5]);
      expect(isOnPcm16Grid(samples)).toBe(false);
      // rounding changes it (-0 becomes +0)
      expect(Array.from(quantizeToPcm16(samples), (sample) => (Object.is(sample, -0) ? '-0' : sample))).not.toEqual(
        Array.from(samples, (sample) => (Object.is(sample, -0) ? '-0' : sample)),
      );
    }
    expect(isOnPcm16Grid(Float32Array.from([0, Number.NaN]))).toBe(false); // not a PCM value: the caller rounds a copy
    expect(isOnPcm16Grid(new Float32Array(0))).toBe(true);
  });
});

describe('downmixToMono, sliceBySamples, concatenate, placeOnTrackInPlace', () => {
  it('averages channels and copies mono', () => {
    const mono = new Float32Array([0.5, -0.5]);
    expect(
      Array.from(
        downmixToMono({ channels: [new Float32Array([0.5, 0.25]), new Float32Array([0.25, -0.25])], sampleRate: 100 }),
      ),
    ).toEqual([0.375, 0]);
    const copy = downmixToMono({ channels: [mono], sampleRate: 100 });
    expect(copy).not.toBe(mono);
    expect(Array.from(copy)).toEqual([0.5, -0.5]);
  });

  it('slices and joins by samples', () => {
    const audio = { channels: [new Float32Array([1, 2, 3, 4].map((value) => value / 8))], sampleRate: 100 };
    expect(Array.from(sliceBySamples(audio, 1, 3).channels[0] as Float32Array)).toEqual([0.25, 0.375]);
    expect(() => sliceBySamples(audio, 2, 5)).toThrow(AudioArgumentError);
    const joined = concatenate([audio, sliceBySamples(audio, 0, 1)]);
    expect(Array.from(joined.channels[0] as Float32Array)).toEqual([0.125, 0.25, 0.375, 0.5, 0.125]);
    expect(() => concatenate([audio, { channels: [new Float32Array(1)], sampleRate: 200 }])).toThrow(/differ/);
    expect(() => concatenate([])).toThrow(AudioArgumentError);
  });

  it('mixes a clip into a track in place at a sample offset', () => {
    const track = new Float32Array([0.5, 0.5, 0.5, 0.5, 0.5]);
    placeOnTrackInPlace(track, new Float32Array([0.25, -0.25]), 2);
    expect(Array.from(track)).toEqual([0.5, 0.5, 0.75, 0.25, 0.5]);
    expect(() => placeOnTrackInPlace(track, new Float32Array(2), 4)).toThrow(AudioArgumentError);
    expect(() => placeOnTrackInPlace(track, new Float32Array(1), -1)).toThrow(AudioArgumentError);
  });
});

describe('resample', () => {
  it('changes the rate, keeps the tone frequency and the time origin, and is deterministic', async () => {
    const input = { channels: [tone(440, 1, 22050)], sampleRate: 22050 };
    const first = await resample(input, 16000);
    const second = await resample(input, 16000);
    expect(first.sampleRate).toBe(16000);
    expect(first.channels[0]).toHaveLength(16000);
    expect(Array.from(first.channels[0] as Float32Array)).toEqual(Array.from(second.channels[0] as Float32Array));
    expect(estimatedFrequency(first.channels[0] as Float32Array, 16000)).toBeCloseTo(440, -1);
    // time 0 stays at time 0: the sine's phase at output sample 400 (25 ms) matches the analytic value
    expect((first.channels[0] as Float32Array)[400]).toBeCloseTo(0.5 * Math.sin(2 * Math.PI * 440 * 0.025), 2);
  });

  it('handles audio longer than libsamplerate-js one-call limit (1,008,000 samples) without losing output', async () => {
    const long = tone(300, 25, 48000, 0.3); // 1,200,000 samples
    const whole = await resample({ channels: [long], sampleRate: 48000 }, 16000);
    const head = await resample({ channels: [long.subarray(0, 48000 * 5)], sampleRate: 48000 }, 16000);
    const output = whole.channels[0] as Float32Array;
    expect(output).toHaveLength(400000);
    expect(estimatedFrequency(output, 16000)).toBeCloseTo(300, -1);
    // the first 4.5 s agree with resampling the first 5 s alone (beyond the filter reach of the cut)
    const prefix = head.channels[0] as Float32Array;
    let largest = 0;
    for (let index = 0; index < 16000 * 4.5; index++)
      largest = Math.max(largest, Math.abs((output[index] as number) - (prefix[index] as number)));
    expect(largest).toBeLessThan(1e-6);
    // the last second is not silent (the library's own chunking dropped it)
    expect(Math.max(...output.subarray(output.length - 16000, output.length - 100))).toBeGreaterThan(0.29);
  });

  it("'speex' (SpeexDSP) gives the same length, time origin and tone as 'best' within 16-bit precision, deterministically", async () => {
    for (const [rate, target] of [
      [24000, 16000],
      [22050, 16000],
      [16000, 48000],
    ] as const) {
      const input = { channels: [tone(440, 2, rate, 0.5), tone(1000, 2, rate, 0.3)], sampleRate: rate };
      const fast = await resample(input, target, 'speex');
      const again = await resample(input, target, 'speex');
      const best = await resample(input, target, 'best');
      for (const channel of [0, 1]) {
        const output = fast.channels[channel] as Float32Array;
        expect(output).toHaveLength(Math.round(2 * target));
        expect(Array.from(output)).toEqual(Array.from(again.channels[channel] as Float32Array));
        const reference = best.channels[channel] as Float32Array;
        const edge = Math.round(0.02 * target); // the tones start and stop abruptly: broadband clicks, where the two filters differ most
        let interior = 0;
        let ends = 0;
        for (let index = 0; index < output.length; index++) {
          const difference = Math.abs((output[index] as number) - (reference[index] as number));
          if (index < edge || index >= output.length - edge) ends = Math.max(ends, difference);
          else interior = Math.max(interior, difference);
        }
        expect(interior).toBeLessThan(2 / 32768); // within two 16-bit steps of the best sinc converter
        expect(ends).toBeLessThan(0.01);
      }
    }
  });

  it('copies audio that is already at the target rate and rejects non-integer rates', async () => {
    const audio = { channels: [new Float32Array([0.5])], sampleRate: 16000 };
    const same = await resample(audio, 16000);
    expect(same.channels[0]).not.toBe(audio.channels[0]);
    await expect(resample(audio, 16000.5)).rejects.toThrow(AudioArgumentError);
  });
});
