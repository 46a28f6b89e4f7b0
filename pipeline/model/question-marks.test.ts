import { describe, expect, it } from 'vitest';
import { dominantScript, lacksQuestionMark } from './question-marks.ts';

describe('lacksQuestionMark', () => {
  it('holds Latin questions to "?"', () => {
    expect(lacksQuestionMark('Waar staat de Eiffeltoren')).toBe(true);
    expect(lacksQuestionMark('Waar staat de Eiffeltoren?')).toBe(false);
  });

  it('expects no question mark in Thai', () => {
    expect(dominantScript('หอไอเฟลสร้างเมื่อไหร่ครับ')).toBe('Thai');
    expect(lacksQuestionMark('หอไอเฟลสร้างเมื่อไหร่ครับ')).toBe(false);
  });

  it('takes the marks of the script: Arabic ؟, full-width ？, Devanagari ?', () => {
    expect(lacksQuestionMark('متى بني البرج؟')).toBe(false);
    expect(lacksQuestionMark('متى بني البرج')).toBe(true);
    expect(lacksQuestionMark('それはいつですか？')).toBe(false);
    expect(lacksQuestionMark('एफ़िल टॉवर कब बना')).toBe(true);
    expect(lacksQuestionMark('एफ़िल टॉवर कब बना?')).toBe(false);
  });
});
