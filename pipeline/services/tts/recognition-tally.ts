/**
 * The speech recognition check's counts as a property of the data: the remote synthesizer
 * (remote-synthesizer.ts) returns the edits and reference tokens of every clip it accepted with the
 * clip, the synthesis cache (stages/synthesize-speech-cache.ts) stores them in the clip's entry, and
 * a dialogue's counts are the sum over the clips of its utterances (stages/synthesize-speech.ts), so
 * that a clip read from the cache counts as it did when it was synthesized.
 */

/** What the check found in one accepted clip: edits against the text, and the text's reference tokens (words, or characters for languages written without spaces). */
export interface RecognizedClip {
  edits: number;
  referenceTokens: number;
}

/** Clips counted, their edits and reference tokens summed. */
export interface RecognitionCounts {
  utterances: number;
  edits: number;
  referenceTokens: number;
}

/** No clips: the start of a sum. */
export function noRecognitionCounts(): RecognitionCounts {
  return { utterances: 0, edits: 0, referenceTokens: 0 };
}

/**
 * The counts of `clips`: one utterance per clip that carries the check's counts, their edits and
 * reference tokens summed; clips without counts (the check did not run on them, or their cache
 * entry was stored without counts) are left out.
 */
export function recognitionCountsOf(clips: readonly { recognized?: RecognizedClip }[]): RecognitionCounts {
  const counts = noRecognitionCounts();
  for (const { recognized } of clips) {
    if (!recognized) continue;
    counts.utterances += 1;
    counts.edits += recognized.edits;
    counts.referenceTokens += recognized.referenceTokens;
  }
  return counts;
}
