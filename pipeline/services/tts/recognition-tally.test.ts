/**
 * The per-context tally of the speech recognition check: two pieces of work counting at the same
 * time each get their own clips, also through a p-queue of one slot whose tasks are bound to their
 * caller's context (as stages/synthesize-speech-dialogue.ts adds them); outside a tally nothing counts.
 */
import { AsyncResource } from 'node:async_hooks';
import PQueue from 'p-queue';
import { describe, expect, it } from 'vitest';
import { countRecognizedSpeech, tallyRecognizedSpeech } from './recognition-tally.ts';

describe('tallyRecognizedSpeech', () => {
  it('counts the clips of each piece of work apart, through a queue that starts tasks later', async () => {
    const queue = new PQueue({ concurrency: 1 });
    const work = (edits: number, clips: number) =>
      tallyRecognizedSpeech(() =>
        Promise.all(
          Array.from({ length: clips }, () =>
            queue.add(
              AsyncResource.bind(async () => {
                await new Promise((resolve) => setTimeout(resolve, 1));
                countRecognizedSpeech({ edits, referenceTokens: 10 });
              }),
            ),
          ),
        ),
      );
    const [first, second] = await Promise.all([work(1, 3), work(2, 4)]);
    expect(first.counts).toEqual({ utterances: 3, edits: 3, referenceTokens: 30 });
    expect(second.counts).toEqual({ utterances: 4, edits: 8, referenceTokens: 40 });
  });

  it('counts nothing outside a tally', async () => {
    countRecognizedSpeech({ edits: 5, referenceTokens: 5 });
    const { counts } = await tallyRecognizedSpeech(() => Promise.resolve());
    expect(counts).toEqual({ utterances: 0, edits: 0, referenceTokens: 0 });
  });
});
