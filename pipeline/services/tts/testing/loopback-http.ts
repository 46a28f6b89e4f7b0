/**
 * The HTTP side of the loopback speech servers: service time, a capacity gate (a CosyVoice FastAPI
 * process serves one request at a time), request records with concurrency counts, request and answer
 * helpers, streamed answers with the cut-stream fault, and closing a server.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { SYSTEM_CLOCK, type Clock } from '../../clock.ts';
import type { LoopbackFault } from './loopback-faults.ts';

/**
 * A loopback server's processing time for one answer: the fixed `latencyMs` plus `realTimeFactor` x
 * the answer's audio duration (a GPU TTS server's time grows with the audio it makes; CosyVoice2 on
 * TensorRT-LLM runs at a real-time factor of about 0.03 on one L20).
 * @returns milliseconds.
 */
export function serviceMilliseconds(
  latencyMs: number,
  realTimeFactor: number,
  sampleCount: number,
  sampleRate: number,
): number {
  return latencyMs + (realTimeFactor * sampleCount * 1000) / sampleRate;
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
  /** Milliseconds on the server's clock (performance.now for the system clock) of arrival, of the start of processing (a capacity slot) and of the end. */
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

  /** @param time the server's time; the records' times are read on its clock. */
  constructor(private readonly time: LoopbackTime) {}

  /** Starts a record for an arriving request; call `finish` when its answer ended. */
  begin(method: string, route: string): { record: LoopbackRequestRecord; finish: () => void } {
    this.open += 1;
    this.peak = Math.max(this.peak, this.open);
    const now = this.time.now();
    const record: LoopbackRequestRecord = {
      index: this.requests.length,
      method,
      route,
      fields: {},
      faults: [],
      status: 0,
      audioBytes: 0,
      openOnArrival: this.open,
      receivedAt: now,
      startedAt: now,
      finishedAt: now,
    };
    this.requests.push(record);
    let finished = false;
    return {
      record,
      finish: () => {
        if (finished) return;
        finished = true;
        this.open -= 1;
        record.finishedAt = this.time.now();
      },
    };
  }

  /** Most requests that were open at once. */
  peakOpen(): number {
    return this.peak;
  }
}

/**
 * The time of one loopback server: every reading and every wait (service time, `delay` faults, stream
 * steps, the moment before a reset) goes through its {@link Clock} (default {@link SYSTEM_CLOCK},
 * which vitest's fake timers drive), and {@link LoopbackTime.close} ends the waits still pending.
 */
export class LoopbackTime {
  /** Aborted by `close`: ends the pending waits. */
  private readonly closing = new AbortController();

  constructor(readonly clock: Clock = SYSTEM_CLOCK) {}

  /** Whether `close` was called (the server's connections are gone; handlers stop writing). */
  get closed(): boolean {
    return this.closing.signal.aborted;
  }

  /** Milliseconds on the clock. */
  now(): number {
    return this.clock.now();
  }

  /**
   * Waits `milliseconds` on the clock; resolves at once for 0 or less and once closed, and early when
   * closed during the wait (the server then finds its responses destroyed). Never rejects.
   */
  wait(milliseconds: number): Promise<void> {
    if (milliseconds <= 0 || this.closing.signal.aborted) return Promise.resolve();
    return this.clock.sleep(milliseconds, this.closing.signal).catch(() => undefined);
  }

  /** Ends the pending waits and makes later ones return at once. */
  close(): void {
    this.closing.abort();
  }
}

/** Reads a Node request body completely. */
export async function readRequestBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Sends a JSON answer. */
export function sendJson(
  response: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(value);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
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
 * @param time the server's time: the schedule is read and waited on its clock.
 * @param schedule `startedAt`: clock milliseconds when processing began (default now); `durationMilliseconds` default 0.
 * @returns bytes written.
 */
export async function streamBytes(
  response: ServerResponse,
  bytes: Uint8Array,
  chunkBytes: number,
  faults: readonly LoopbackFault[],
  time: LoopbackTime,
  schedule: { startedAt: number; durationMilliseconds: number } = { startedAt: time.now(), durationMilliseconds: 0 },
): Promise<number> {
  const cut = faults.find(
    (fault): fault is Extract<LoopbackFault, { kind: 'cut-stream' }> => fault.kind === 'cut-stream',
  );
  const limit = cut ? Math.floor(bytes.length * cut.fraction) : bytes.length;
  const chunkCount = Math.max(1, Math.ceil(bytes.length / chunkBytes));
  const steps = Math.min(STREAM_STEPS, chunkCount);
  let written = 0;
  for (let chunk = 0; written < limit && !response.destroyed && !time.closed; chunk++) {
    const step = Math.floor((chunk * steps) / chunkCount); // the step this chunk belongs to
    const due = schedule.startedAt + (schedule.durationMilliseconds * (step + 1)) / steps;
    const wait = due - time.now();
    if (wait > 1) await time.wait(wait);
    const end = Math.min(limit, written + chunkBytes);
    const flushed = response.write(bytes.subarray(written, end));
    written = end;
    if (!flushed) await new Promise<void>((resolve) => response.once('drain', resolve));
  }
  const remaining = schedule.startedAt + schedule.durationMilliseconds - time.now();
  if (remaining > 1 && !cut) await time.wait(remaining);
  if (cut?.how === 'reset') {
    // Give the written chunks a moment to leave, then break the connection without the final chunk.
    await time.wait(5);
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
  for (let offset = 12; offset + 8 <= bytes.length;) {
    const size = view.getUint32(offset + 4, true);
    if (tag(offset) === 'fmt ')
      format = {
        channels: view.getUint16(offset + 10, true),
        sampleRate: view.getUint32(offset + 12, true),
        bitsPerSample: view.getUint16(offset + 22, true),
      };
    if (tag(offset) === 'data') {
      if (!format || format.channels === 0 || format.bitsPerSample === 0)
        throw new Error('data chunk before a valid fmt chunk');
      const present = Math.min(size, bytes.length - offset - 8);
      return { ...format, frames: Math.floor(present / (format.channels * (format.bitsPerSample / 8))) };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}

/**
 * Closes an HTTP server and every connection it holds, then ends the server's pending waits (`time`:
 * the handlers resume on destroyed connections and write nothing); closing a closed server does nothing.
 */
export function closeServer(server: Server, time?: LoopbackTime): Promise<void> {
  if (!server.listening) {
    time?.close();
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
    time?.close();
  });
}
