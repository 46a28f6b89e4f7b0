/**
 * Scriptable faults of the loopback speech servers: what a server may do wrong on one request, the
 * script that picks the faults of each request, and the helpers that read a request's faults.
 */

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
  /**
   * Speak `text` before the text asked for, without a pause: a language tag read aloud (`<|en|>` as
   * "en"), or the voice prompt's transcript leaking into the reply (known CosyVoice failures).
   */
  | { kind: 'leading-speech'; text: string }
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
export function faultsByRequestIndex(
  table: Readonly<Record<number, LoopbackFault | readonly LoopbackFault[]>>,
): FaultScript {
  return ({ index }) => table[index] ?? null;
}

/** The faults of a script's answer as a list. */
export function faultList(script: FaultScript | undefined, context: FaultContext): LoopbackFault[] {
  const answer = script?.(context);
  if (!answer) return [];
  return Array.isArray(answer) ? [...(answer as readonly LoopbackFault[])] : [answer as LoopbackFault];
}

/** The `delay` faults' total, milliseconds. */
export function extraDelay(faults: readonly LoopbackFault[]): number {
  return faults.reduce((sum, fault) => sum + (fault.kind === 'delay' ? fault.milliseconds : 0), 0);
}

/** The first `http-error` fault, if any. */
export function httpErrorFault(
  faults: readonly LoopbackFault[],
): Extract<LoopbackFault, { kind: 'http-error' }> | undefined {
  return faults.find((fault): fault is Extract<LoopbackFault, { kind: 'http-error' }> => fault.kind === 'http-error');
}
