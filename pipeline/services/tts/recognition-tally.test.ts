/**
 * The sum of the speech recognition check's counts over clips: a clip with counts is one utterance,
 * a clip without (an engine that ran no check, a cache entry stored without counts) is left out.
 */
import { describe, expect, it } from 'vitest';
import { noRecognitionCounts, recognitionCountsOf } from './recognition-tally.ts';

describe('recognitionCountsOf', () => {
  it('sums the clips that carry counts and leaves the others out', () => {
    expect(
      recognitionCountsOf([
        { recognized: { edits: 1, referenceTokens: 10 } },
        {},
        { recognized: { edits: 0, referenceTokens: 4 } },
      ]),
    ).toEqual({ utterances: 2, edits: 1, referenceTokens: 14 });
  });

  it('counts nothing in no clips', () => {
    expect(recognitionCountsOf([])).toEqual(noRecognitionCounts());
    expect(noRecognitionCounts()).toEqual({ utterances: 0, edits: 0, referenceTokens: 0 });
  });
});
