/**
 * What the loopback speech servers of this folder share: real speech for any text (espeak-ng, so
 * downstream speech detection and word timing work on it), scriptable faults, a capacity gate (a
 * CosyVoice FastAPI process serves one request at a time), and request records with concurrency
 * counts. Test and benchmark code only; servers listen on 127.0.0.1.
 */
import { execFile } from 'node:child_process';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { downmixToMono } from '../../../audio/raw-audio.ts';
import { decodeWav } from '../../../audio/wav.ts';

/** A fault a loopback server applies to one request. */
export type LoopbackFault =
  /** Answer with this HTTP status (and body) instead of audio; `retryAfterSeconds` sets `Retry-After`. */
  | { kind: 'http-error'; status: number; body?: string; retryAfterSeconds?: number }
  /** Stop after `fraction` of the audio bytes: `end` ends the response cleanly, `reset` destroys the connection. */
  | { kind: 'cut-stream'; fraction: number; how: 'end' | 'reset' }
  /** Append this much digital silence. */
  | { kind: 'silence-tail'; seconds: number }
  /** Append steady noise at this RMS level (dBFS). */
  | { kind: 'noise-tail'; seconds: number; levelDbfs: number }
  /** Append a gap of silence, then the speech of `text` (a hallucinated tail). */
  | { kind: 'hallucinated-tail'; gapSeconds: number; text: string }
  /** Repeat the whole speech this many times in total (runaway output). */
  | { kind: 'runaway'; repeat: number }
  /** Wait this much longer before answering. */
  | { kind: 'delay'; milliseconds: number }
  /** Answer 200 with no audio. */
  | { kind: 'empty' };

/** What a fault script sees of a request. */
export interface FaultContext {
  /** 0-based index of the request on this server (every route counts). */
  index: number;
  route: string;
  /** The text to speak. */
  text: string;
}

/** Decides the faults of each request. */
export type FaultScript = (request: FaultContext) => LoopbackFault | readonly LoopbackFault[] | null | undefined;

/**
 * A script from a table of request indexes: `faultsByRequestIndex({0: {kind: 'http-error', status: 500}})`
 * fails the first request only.
 */
export function faultsByRequestIndex(table: Readonly<Record<number, LoopbackFault | readonly LoopbackFault[]>>): FaultScript {
  return ({ index }) => table[index] ?? null;
}

/** The faults of a script's answer as a list. */
export function faultList(script: FaultScript | undefined, context: FaultContext): LoopbackFault[] {
  const answer = script?.(context);
  if (!answer) return [];
  return Array.isArray(answer) ? [...(answer as readonly LoopbackFault[])] : [answer as LoopbackFault];
}

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
export function loopbackSpeech(text: string, sampleRate: number, voice: Partial<LoopbackVoice> = {}): Promise<Float32Array> {
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
export function loopbackAudio(text: string, sampleRate: number, voice: Partial<LoopbackVoice> = {}, source: LoopbackSpeechSource = 'espeak-ng'): Promise<Float32Array> {
  return source === 'espeak-ng' ? loopbackSpeech(text, sampleRate, voice) : Promise.resolve(speechLikeSignal(text, sampleRate, voice.pitch ?? 50));
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

/**
 * A loopback server's processing time for one answer: the fixed `latencyMs` plus `realTimeFactor` x
 * the answer's audio duration (a GPU TTS server's time grows with the audio it makes; CosyVoice2 on
 * TensorRT-LLM runs at a real-time factor of about 0.03 on one L20).
 * @returns milliseconds.
 */
export function serviceMilliseconds(latencyMs: number, realTimeFactor: number, sampleCount: number, sampleRate: number): number {
  return latencyMs + (realTimeFactor * sampleCount * 1000) / sampleRate;
}

async function espeakSpeech(text: string, sampleRate: number, wordsPerMinute: number, pitch: number): Promise<Float32Array> {
  const args = ['--stdout', '-b', '1', '-v', isJapaneseText(text) ? 'ja' : 'en-us', '-s', String(Math.min(450, Math.max(80, wordsPerMinute))), '-p', String(pitch)];
  const wav = await new Promise<Buffer>((resolve, reject) => {
    const child = execFile('espeak-ng', args, { encoding: 'buffer', maxBuffer: 256 * 2 ** 20 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
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
 * Applies the audio faults (tails, runaway) to speech.
 *
 * @returns new samples (the input is not changed).
 */
export async function applyAudioFaults(speech: Float32Array, sampleRate: number, faults: readonly LoopbackFault[], voice: Partial<LoopbackVoice> = {}): Promise<Float32Array> {
  let samples = speech;
  for (const fault of faults) {
    if (fault.kind === 'runaway') samples = concatenateSamples(Array.from({ length: Math.max(1, fault.repeat) }, () => samples));
    if (fault.kind === 'silence-tail') samples = concatenateSamples([samples, new Float32Array(Math.round(fault.seconds * sampleRate))]);
    if (fault.kind === 'noise-tail') samples = concatenateSamples([samples, steadyNoise(Math.round(fault.seconds * sampleRate), fault.levelDbfs)]);
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

/** A counting semaphore: at most `capacity` holders at once, the others wait in order. */
export class CapacityGate {
  private holders = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(readonly capacity: number) {}

  /** Waits for a slot; call the returned function once to free it. */
  async acquire(): Promise<() => void> {
    if (this.holders >= this.capacity) await new Promise<void>((resolve) => this.waiters.push(resolve));
    else this.holders += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.holders -= 1;
    };
  }
}

/** One request a loopback server received. */
export interface LoopbackRequestRecord {
  /** 0-based, per server, in arrival order. */
  index: number;
  method: string;
  route: string;
  /** Text fields (multipart form fields, or JSON members that are strings). */
  fields: Record<string, string>;
  /** The uploaded or embedded prompt, when there was one. */
  prompt?: { sampleRate: number; channels: number; durationSeconds: number; bytes: number };
  faults: LoopbackFault[];
  /** HTTP status sent (0 while unanswered or when the connection was destroyed first). */
  status: number;
  /** Audio bytes or values sent. */
  audioBytes: number;
  /** Requests open on this server when this one arrived (itself included). */
  openOnArrival: number;
  /** Milliseconds (performance.now) of arrival, of the start of processing (a capacity slot) and of the end. */
  receivedAt: number;
  startedAt: number;
  finishedAt: number;
}

/** What every loopback server returns. */
export interface LoopbackServer {
  /** Base URL, e.g. `http://127.0.0.1:40123` (no trailing slash). */
  url: string;
  /** Every request received, in arrival order (live array). */
  requests: LoopbackRequestRecord[];
  /** Most requests open at once. */
  peakOpenRequests(): number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** Tracks open requests and records for a server. */
export class RequestLog {
  readonly requests: LoopbackRequestRecord[] = [];
  private open = 0;
  private peak = 0;

  /** Starts a record for an arriving request; call `finish` when its answer ended. */
  begin(method: string, route: string): { record: LoopbackRequestRecord; finish: () => void } {
    this.open += 1;
    this.peak = Math.max(this.peak, this.open);
    const now = performance.now();
    const record: LoopbackRequestRecord = { index: this.requests.length, method, route, fields: {}, faults: [], status: 0, audioBytes: 0, openOnArrival: this.open, receivedAt: now, startedAt: now, finishedAt: now };
    this.requests.push(record);
    let finished = false;
    return {
      record,
      finish: () => {
        if (finished) return;
        finished = true;
        this.open -= 1;
        record.finishedAt = performance.now();
      },
    };
  }

  /** Most requests that were open at once. */
  peakOpen(): number {
    return this.peak;
  }
}

/** Waits `milliseconds`. */
export function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, milliseconds)));
}

/** Reads a Node request body completely. */
export async function readRequestBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Sends a JSON answer. */
export function sendJson(response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  response.end(body);
}

/** Timed steps a streamed answer is split into (fewer timers keep the schedule exact under load). */
const STREAM_STEPS = 4;

/**
 * Writes `bytes` in chunks of `chunkBytes`, released in {@link STREAM_STEPS} equal steps over
 * `durationMilliseconds` from `startedAt` (as a model streams segments while it generates them),
 * applying a `cut-stream` fault when there is one. The answer ends at startedAt + duration at the
 * earliest.
 *
 * @param startedAt performance.now() milliseconds when processing began.
 * @returns bytes written.
 */
export async function streamBytes(
  response: ServerResponse,
  bytes: Uint8Array,
  chunkBytes: number,
  faults: readonly LoopbackFault[],
  schedule: { startedAt: number; durationMilliseconds: number } = { startedAt: performance.now(), durationMilliseconds: 0 },
): Promise<number> {
  const cut = faults.find((fault): fault is Extract<LoopbackFault, { kind: 'cut-stream' }> => fault.kind === 'cut-stream');
  const limit = cut ? Math.floor(bytes.length * cut.fraction) : bytes.length;
  const chunkCount = Math.max(1, Math.ceil(bytes.length / chunkBytes));
  const steps = Math.min(STREAM_STEPS, chunkCount);
  let written = 0;
  for (let chunk = 0; written < limit && !response.destroyed; chunk++) {
    const step = Math.floor((chunk * steps) / chunkCount); // the step this chunk belongs to
    const due = schedule.startedAt + (schedule.durationMilliseconds * (step + 1)) / steps;
    const wait = due - performance.now();
    if (wait > 1) await delay(wait);
    const end = Math.min(limit, written + chunkBytes);
    const flushed = response.write(bytes.subarray(written, end));
    written = end;
    if (!flushed) await new Promise<void>((resolve) => response.once('drain', resolve));
  }
  const remaining = schedule.startedAt + schedule.durationMilliseconds - performance.now();
  if (remaining > 1 && !cut) await delay(remaining);
  if (cut?.how === 'reset') {
    // Give the written chunks a moment to leave, then break the connection without the final chunk.
    await delay(5);
    response.socket?.destroy();
    response.destroy();
  } else {
    response.end();
  }
  return written;
}

/** Format of a RIFF/WAVE file, read from its header only (fast; no sample is decoded). */
export interface WaveHeader {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Frames in the data chunk (limited to the bytes present). */
  frames: number;
}

/**
 * Reads the `fmt ` and `data` chunk headers of a WAV file.
 *
 * @throws Error when the bytes are not a RIFF/WAVE file with both chunks.
 */
export function readWaveHeader(bytes: Uint8Array): WaveHeader {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (offset: number): string => String.fromCharCode(...bytes.subarray(offset, offset + 4));
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('not a RIFF/WAVE file');
  let format: Omit<WaveHeader, 'frames'> | undefined;
  for (let offset = 12; offset + 8 <= bytes.length; ) {
    const size = view.getUint32(offset + 4, true);
    if (tag(offset) === 'fmt ') format = { channels: view.getUint16(offset + 10, true), sampleRate: view.getUint32(offset + 12, true), bitsPerSample: view.getUint16(offset + 22, true) };
    if (tag(offset) === 'data') {
      if (!format || format.channels === 0 || format.bitsPerSample === 0) throw new Error('data chunk before a valid fmt chunk');
      const present = Math.min(size, bytes.length - offset - 8);
      return { ...format, frames: Math.floor(present / (format.channels * (format.bitsPerSample / 8))) };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}

/** Closes an HTTP server and every connection it holds; closing a closed server does nothing. */
export function closeServer(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}

/** The `delay` faults' total, milliseconds. */
export function extraDelay(faults: readonly LoopbackFault[]): number {
  return faults.reduce((sum, fault) => sum + (fault.kind === 'delay' ? fault.milliseconds : 0), 0);
}

/** The first `http-error` fault, if any. */
export function httpErrorFault(faults: readonly LoopbackFault[]): Extract<LoopbackFault, { kind: 'http-error' }> | undefined {
  return faults.find((fault): fault is Extract<LoopbackFault, { kind: 'http-error' }> => fault.kind === 'http-error');
}
