/**
 * The audio of the loopback speech servers: real speech for any text (espeak-ng, so downstream speech
 * detection and word timing work on it) or a cheap speech-like signal, the audio faults (tails,
 * runaway), and PCM16 encoding.
 */
import { execFile } from 'node:child_process';
import { downmixToMono } from '../../../audio/raw-audio.ts';
import { decodeWav } from '../../../audio/wav.ts';
import type { LoopbackFault } from './loopback-faults.ts';

/** How the loopback speech sounds. */
export interface LoopbackVoice {
  /** espeak-ng words per minute. Default 175 (espeak-ng's default). */
  wordsPerMinute: number;
  /** espeak-ng pitch 0..99. Default 50. */
  pitch: number;
}

const speechCache = new Map<string, Promise<Float32Array>>();
const SPEECH_CACHE_SIZE = 256;

/** True when the text is Japanese (kana or kanji): espeak-ng's `ja` voice reads kana (kanji it spells as "Chinese letter"). */
export function isJapaneseText(text: string): boolean {
  return /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]/u.test(text);
}

/**
 * Speech for `text` at `sampleRate`: espeak-ng (`en-us`, or `ja` for kana/kanji text) at 22050 Hz,
 * resampled by linear interpolation ({@link linearResample}). Cached per text, rate and voice (256 entries).
 *
 * @returns mono samples in [-1, 1].
 * @throws Error when espeak-ng cannot run.
 */
export function loopbackSpeech(
  text: string,
  sampleRate: number,
  voice: Partial<LoopbackVoice> = {},
): Promise<Float32Array> {
  const wordsPerMinute = Math.round(voice.wordsPerMinute ?? 175);
  const pitch = Math.round(voice.pitch ?? 50);
  const key = `${sampleRate}|${wordsPerMinute}|${pitch}|${text}`;
  let speech = speechCache.get(key);
  if (!speech) {
    speech = espeakSpeech(text, sampleRate, wordsPerMinute, pitch);
    speechCache.set(key, speech);
    speech.catch(() => speechCache.delete(key));
    while (speechCache.size > SPEECH_CACHE_SIZE) speechCache.delete(speechCache.keys().next().value as string);
  }
  return speech;
}

/** What a loopback server speaks: espeak-ng speech of the text, or {@link speechLikeSignal} (no process, almost no CPU). */
export type LoopbackSpeechSource = 'espeak-ng' | 'speech-like';

/**
 * The audio a loopback server answers for `text`: {@link loopbackSpeech} for 'espeak-ng',
 * {@link speechLikeSignal} for 'speech-like' (what saturation benchmarks use, so the servers cost the
 * machine almost nothing and only their service time counts).
 * @returns mono samples in [-1, 1] at `sampleRate`.
 */
export function loopbackAudio(
  text: string,
  sampleRate: number,
  voice: Partial<LoopbackVoice> = {},
  source: LoopbackSpeechSource = 'espeak-ng',
): Promise<Float32Array> {
  return source === 'espeak-ng'
    ? loopbackSpeech(text, sampleRate, voice)
    : Promise.resolve(speechLikeSignal(text, sampleRate, voice.pitch ?? 50));
}

/** Seconds of one syllable of {@link speechLikeSignal} (about 5 syllables per second, a conversational rate). */
const SPEECH_LIKE_SYLLABLE_SECONDS = 0.2;
const syllableCache = new Map<string, Float32Array>();

/** One voiced syllable: 12 harmonics of a 100-180 Hz fundamental (by pitch 0..99) under a raised-sine envelope that dips to -30 dB between syllables. */
function speechLikeSyllable(sampleRate: number, pitch: number): Float32Array {
  const key = `${sampleRate}|${pitch}`;
  let syllable = syllableCache.get(key);
  if (!syllable) {
    const length = Math.round(SPEECH_LIKE_SYLLABLE_SECONDS * sampleRate);
    const fundamental = 100 + (80 * Math.min(99, Math.max(0, pitch))) / 99;
    syllable = new Float32Array(length);
    for (let index = 0; index < length; index++) {
      const phase = (2 * Math.PI * fundamental * index) / sampleRate;
      let voice = 0;
      for (let harmonic = 1; harmonic <= 12; harmonic++) voice += Math.sin(harmonic * phase) / harmonic;
      const envelope = 0.03 + 0.97 * Math.sin((Math.PI * index) / length) ** 2;
      syllable[index] = 0.2 * envelope * voice;
    }
    syllableCache.set(key, syllable);
  }
  return syllable;
}

/**
 * A deterministic speech-like signal for `text`: 0.15 s of silence, then per word one 0.2 s voiced
 * syllable per three letters (at least one), words back to back, 0.25 s of silence after a comma,
 * semicolon or colon and 0.45 s after a sentence end (. ! ?), then 0.3 s of silence. The energy
 * detector and the word timing of the build see speech segments split at the pauses, like speech; the
 * samples are copies of one cached syllable, so making it costs about as much as copying it.
 * @param pitch 0..99 (espeak-ng's scale): the fundamental runs from 100 to 180 Hz.
 * @returns mono samples in [-1, 1] at `sampleRate`.
 */
export function speechLikeSignal(text: string, sampleRate: number, pitch = 50): Float32Array {
  const syllable = speechLikeSyllable(sampleRate, Math.round(pitch));
  const seconds = (value: number): number => Math.round(value * sampleRate);
  const plan: (number | 'syllable')[] = [seconds(0.15)];
  const words = text.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word));
  for (const word of words) {
    const letters = word.replace(/[^\p{L}\p{N}]/gu, '').length;
    for (let count = Math.max(1, Math.round(letters / 3)); count > 0; count--) plan.push('syllable');
    if (/[.!?]["')\]]*$/.test(word)) plan.push(seconds(0.45));
    else if (/[,;:]["')\]]*$/.test(word)) plan.push(seconds(0.25));
  }
  plan.push(seconds(0.3));
  const length = plan.reduce<number>((sum, part) => sum + (part === 'syllable' ? syllable.length : part), 0);
  const signal = new Float32Array(length);
  let position = 0;
  for (const part of plan) {
    if (part === 'syllable') {
      signal.set(syllable, position);
      position += syllable.length;
    } else {
      position += part;
    }
  }
  return signal;
}

async function espeakSpeech(
  text: string,
  sampleRate: number,
  wordsPerMinute: number,
  pitch: number,
): Promise<Float32Array> {
  const args = [
    '--stdout',
    '-b',
    '1',
    '-v',
    isJapaneseText(text) ? 'ja' : 'en-us',
    '-s',
    String(Math.min(450, Math.max(80, wordsPerMinute))),
    '-p',
    String(pitch),
  ];
  const wav = await new Promise<Buffer>((resolve, reject) => {
    const child = execFile('espeak-ng', args, { encoding: 'buffer', maxBuffer: 256 * 2 ** 20 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
    child.stdin?.end(text);
  });
  const audio = decodeWav(wav, 'espeak-ng standard output');
  return linearResample(downmixToMono(audio), audio.sampleRate, sampleRate);
}

/**
 * Resamples by linear interpolation between neighbouring samples. Cheap (libsamplerate's sinc
 * converters take 0.1-0.3 s per second of audio at 22050 -> 24000 Hz here) and good enough for test
 * speech: espeak-ng's energy lies below 5 kHz, so the little aliasing it adds is far below the speech.
 *
 * @param samples mono samples.
 * @param sourceRate their rate, Hz.
 * @param targetRate the rate wanted, Hz.
 * @returns round(length * targetRate / sourceRate) samples (a copy when the rates are equal).
 */
export function linearResample(samples: Float32Array, sourceRate: number, targetRate: number): Float32Array {
  if (sourceRate === targetRate) return samples.slice();
  const output = new Float32Array(Math.round((samples.length * targetRate) / sourceRate));
  const step = sourceRate / targetRate;
  for (let index = 0; index < output.length; index++) {
    const position = index * step;
    const before = Math.floor(position);
    const fraction = position - before;
    const first = samples[before] ?? 0;
    const second = samples[before + 1] ?? 0;
    output[index] = first + (second - first) * fraction;
  }
  return output;
}

/**
 * Applies the audio faults (leading speech, tails, runaway) to speech.
 *
 * @returns new samples (the input is not changed).
 */
export async function applyAudioFaults(
  speech: Float32Array,
  sampleRate: number,
  faults: readonly LoopbackFault[],
  voice: Partial<LoopbackVoice> = {},
): Promise<Float32Array> {
  let samples = speech;
  for (const fault of faults) {
    if (fault.kind === 'runaway')
      samples = concatenateSamples(Array.from({ length: Math.max(1, fault.repeat) }, () => samples));
    if (fault.kind === 'silence-tail')
      samples = concatenateSamples([samples, new Float32Array(Math.round(fault.seconds * sampleRate))]);
    if (fault.kind === 'noise-tail')
      samples = concatenateSamples([samples, steadyNoise(Math.round(fault.seconds * sampleRate), fault.levelDbfs)]);
    if (fault.kind === 'leading-speech')
      samples = concatenateSamples([await loopbackSpeech(fault.text, sampleRate, voice), samples]);
    if (fault.kind === 'hallucinated-tail') {
      const burst = await loopbackSpeech(fault.text, sampleRate, voice);
      samples = concatenateSamples([samples, new Float32Array(Math.round(fault.gapSeconds * sampleRate)), burst]);
    }
  }
  return samples;
}

/** Uniform noise with the given RMS level (dBFS), from a fixed-seed generator (deterministic). */
export function steadyNoise(length: number, levelDbfs: number): Float32Array {
  const amplitude = 10 ** (levelDbfs / 20) * Math.sqrt(3); // uniform in [-a, a] has RMS a / sqrt(3)
  const noise = new Float32Array(length);
  let state = 0x2545f491;
  for (let index = 0; index < length; index++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    noise[index] = (((state >>> 0) / 0xffffffff) * 2 - 1) * amplitude;
  }
  return noise;
}

/** Joins sample arrays end to end. */
export function concatenateSamples(parts: readonly Float32Array[]): Float32Array {
  const joined = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let position = 0;
  for (const part of parts) {
    joined.set(part, position);
    position += part.length;
  }
  return joined;
}

const encodedPcm = new WeakMap<Float32Array, Uint8Array>();

/**
 * Samples to raw little-endian int16 PCM bytes (round(x * 32768), clamped). Remembered per sample
 * array (the cached speech of a text is encoded once).
 */
export function encodePcm16LittleEndian(samples: Float32Array): Uint8Array {
  let bytes = encodedPcm.get(samples);
  if (!bytes) {
    bytes = encodePcm16(samples);
    encodedPcm.set(samples, bytes);
  }
  return bytes;
}

function encodePcm16(samples: Float32Array): Uint8Array {
  const bytes = new Uint8Array(samples.length * 2);
  const view = new DataView(bytes.buffer);
  for (let index = 0; index < samples.length; index++) {
    const value = Math.round((samples[index] as number) * 32768);
    view.setInt16(index * 2, value > 32767 ? 32767 : value < -32768 ? -32768 : value, true);
  }
  return bytes;
}
