import { describe, expect, it } from 'vitest';
import { paddedTexts } from './padded-phrasing.ts';

describe('paddedTexts', () => {
  it('offers two longer phrasings for questions and answers, none for backchannels', () => {
    expect(paddedTexts('en', 'answer', 'Paris.')).toEqual(['Well, Paris.', 'Well, Paris. That is what I know.']);
    expect(paddedTexts('ja', 'question', 'なぜ？')[0]).toBe('あの、なぜ？');
    expect(paddedTexts('en', 'answer', 'It was red.')[0]).toBe('Well, it was red.');
    expect(paddedTexts('en', 'question', 'What else?')[1]).toBe('Could you tell me, what else?');
    expect(paddedTexts('en', 'backchannel', 'uh-huh')).toEqual([]);
  });
});
