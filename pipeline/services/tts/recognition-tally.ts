/**
 * The speech recognition check's counts of one piece of work (a queued build's dialogue job), beside
 * the synthesizer's own counts for the whole run: the remote synthesizer (remote-synthesizer.ts) adds
 * every accepted, transcribed clip to the tally of the async context that asked for it, so that
 * dialogues synthesized at the same time on one worker each count their own clips. A clip found in
 * the synthesis cache is not transcribed and not counted, as in the synthesizer's counts.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Clips transcribed and accepted, their edits and reference tokens (words, or characters for languages written without spaces). */
export interface RecognitionCounts {
  utterances: number;
  edits: number;
  referenceTokens: number;
}

const tallies = new AsyncLocalStorage<RecognitionCounts>();

/**
 * Run `work` with a tally of its own: every clip the check accepts while it runs (in its async
 * context) is counted in the returned counts.
 * @throws what `work` throws
 */
export async function tallyRecognizedSpeech<T>(
  work: () => Promise<T>,
): Promise<{ result: T; counts: RecognitionCounts }> {
  const counts: RecognitionCounts = { utterances: 0, edits: 0, referenceTokens: 0 };
  const result = await tallies.run(counts, work);
  return { result, counts };
}

/** Count one accepted clip's edits and reference tokens in the tally of the current async context (none: nothing). */
export function countRecognizedSpeech(recognized: { edits: number; referenceTokens: number }): void {
  const counts = tallies.getStore();
  if (!counts) return;
  counts.utterances += 1;
  counts.edits += recognized.edits;
  counts.referenceTokens += recognized.referenceTokens;
}
