/**
 * Helpers shared by the DNSMOS tests and the DNSMOS benchmark: where the shared model files are,
 * speech synthesized with espeak-ng, and seeded noise.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import wavefile from 'wavefile';
import { sharedDirectory } from '../../../config.ts';

/** `<shared>/models/dnsmos`, holding sig_bak_ovr.onnx, model_v8.onnx, p_sig_bak_ovr.onnx and SHA256SUMS. */
export function sharedDnsmosModelDirectory(): string {
  return path.join(sharedDirectory(), 'models', 'dnsmos');
}

/**
 * English speech from the espeak-ng command (Debian package `espeak-ng`): mono float32 samples in
 * -1..1 at espeak-ng's rate (22050 Hz).
 * @throws Error when espeak-ng is not installed or fails.
 */
export function synthesizeSpeechWithEspeak(
  text: string,
  voice = 'en-us',
): { samples: Float32Array; sampleRate: number } {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'duplexsynth-espeak-'));
  try {
    const wavPath = path.join(directory, 'speech.wav');
    const result = spawnSync('espeak-ng', ['-v', voice, '-w', wavPath, text], { encoding: 'utf8' });
    if (result.error)
      throw new Error(`espeak-ng could not be run (install the Debian package espeak-ng): ${result.error.message}`);
    if (result.status !== 0) throw new Error(`espeak-ng exited with ${result.status}: ${result.stderr}`);
    const wav = new wavefile.WaveFile(readFileSync(wavPath));
    const format = wav.fmt as { sampleRate: number; numChannels: number; bitsPerSample: number };
    if (format.numChannels !== 1 || format.bitsPerSample !== 16) {
      throw new Error(`unexpected espeak-ng output: ${format.numChannels} channels, ${format.bitsPerSample} bits`);
    }
    const integers = wav.getSamples(false, Int16Array) as unknown as Int16Array;
    const samples = new Float32Array(integers.length);
    for (let index = 0; index < integers.length; index++) samples[index] = integers[index]! / 32768;
    return { samples, sampleRate: format.sampleRate };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Deterministic pseudo-random numbers in [0, 1): mulberry32. */
export function seededUniform(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** `length` samples of zero-mean, unit-variance white Gaussian noise (Box-Muller on mulberry32), seeded. */
export function seededGaussianNoise(length: number, seed: number): Float32Array {
  const uniform = seededUniform(seed);
  const noise = new Float32Array(length);
  for (let index = 0; index < length; index += 2) {
    const radius = Math.sqrt(-2 * Math.log(1 - uniform()));
    const angle = 2 * Math.PI * uniform();
    noise[index] = radius * Math.cos(angle);
    if (index + 1 < length) noise[index + 1] = radius * Math.sin(angle);
  }
  return noise;
}

/**
 * `speech + g * noise`, with `g` chosen so that the mean power of the speech (over the whole clip)
 * over the mean power of the scaled noise is `snrDb` decibels.
 */
export function mixAtSnr(speech: Float32Array, noise: Float32Array, snrDb: number): Float32Array {
  if (noise.length < speech.length) throw new RangeError('noise is shorter than speech');
  let speechPower = 0;
  let noisePower = 0;
  for (let index = 0; index < speech.length; index++) {
    speechPower += speech[index]! * speech[index]!;
    noisePower += noise[index]! * noise[index]!;
  }
  const gain = Math.sqrt(speechPower / noisePower / Math.pow(10, snrDb / 10));
  const mixed = new Float32Array(speech.length);
  for (let index = 0; index < speech.length; index++) mixed[index] = speech[index]! + gain * noise[index]!;
  return mixed;
}
