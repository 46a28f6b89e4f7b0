import { describe, expect, it } from 'vitest';
import { countGraphemeClusters, graphemeClusters } from './grapheme-clusters.ts';

describe('graphemeClusters', () => {
  it('keeps Devanagari and Thai vowel signs and tone marks with their letter', () => {
    expect(graphemeClusters('कि', 'hi')).toEqual(['कि']);
    expect(graphemeClusters('ดี่', 'th')).toEqual(['ดี่']);
    expect(graphemeClusters('e\u0301', 'fr')).toEqual(['e\u0301']);
  });

  it('counts one cluster per Latin letter without combining marks, as a letter count does', () => {
    const text = 'Who built the Eiffel Tower, in 1887?';
    expect(countGraphemeClusters(text, 'en')).toBe(text.match(/\p{L}/gu)!.length);
  });

  it('counts a mark as part of its letter, not as a letter of its own nor as nothing', () => {
    // น ม ส् ते: 4 clusters; \p{L} alone would count 4 letters (न म स त) and drop the signs
    expect(countGraphemeClusters('नमस्ते', 'hi')).toBe(graphemeClusters('नमस्ते', 'hi').length);
    // สวัสดี: ส วั ส ดี, 4 clusters each holding a letter
    expect(countGraphemeClusters('สวัสดี', 'th')).toBe(4);
    expect(countGraphemeClusters('1, 2!', 'en', /\p{N}/u)).toBe(2);
  });
});
