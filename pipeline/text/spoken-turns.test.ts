import { describe, expect, it } from 'vitest';
import { spokenAnswer, spokenQuestion, unanswerableReply, UNANSWERABLE_REPLIES } from './spoken-turns.ts';

describe('spokenQuestion', () => {
  it('capitalises, normalises and ends with a question mark', () => {
    expect(spokenQuestion('when was the eiffel tower built')).toBe('When was the eiffel tower built?');
    expect(spokenQuestion('how high is mt. fuji?')).toBe('How high is mount fuji?');
    expect(spokenQuestion('what happened in 1987 .')).toBe('What happened in nineteen eighty-seven?');
    expect(spokenQuestion('can i visit it?')).toBe('Can I visit it?');
  });

  it('ends a request with a full stop', () => {
    expect(spokenQuestion('tell me about its history')).toBe('Tell me about its history.');
  });
});

describe('spokenAnswer', () => {
  it('turns a bare yes or no into a tag answer from the question', () => {
    expect(spokenAnswer('was it the tallest structure in the world?', 'Yes')).toBe('Yes, it was.');
    expect(spokenAnswer('is the museum open on mondays?', 'no')).toBe("No, it isn't.");
    expect(spokenAnswer('are you sure?', 'Yes')).toBe('Yes, I am.');
    expect(spokenAnswer('did they win?', 'No.')).toBe("No, they didn't.");
    expect(spokenAnswer('is there a lake nearby?', 'Yes')).toBe('Yes, there is.');
    expect(spokenAnswer('any museums here?', 'Yes')).toBe("Yes, that's right.");
  });

  it('puts a bare year or date into a when-frame', () => {
    expect(spokenAnswer('when was it released?', '1987')).toBe('It was in nineteen eighty-seven.');
    expect(spokenAnswer('when did it last erupt?', '16 December 1707')).toBe(
      'It was on the sixteenth of December, seventeen oh seven.',
    );
    expect(spokenAnswer('when was the eiffel tower built', 'Between 1887 and 1889')).toBe(
      'It was between eighteen eighty-seven and eighteen eighty-nine.',
    );
    expect(spokenAnswer('when is the festival?', 'July')).toBe("It's in July.");
  });

  it('puts a bare place, name or thing into a frame', () => {
    expect(spokenAnswer('where does the film take place', 'Paris')).toBe("It's in Paris.");
    expect(spokenAnswer('who composed the music?', 'John Barry')).toBe('It was John Barry.');
    expect(spokenAnswer('what river flows past it?', 'The Seine')).toBe("It's the Seine.");
    expect(spokenAnswer('how tall is it?', '330 m (1,083 ft)')).toBe("It's three hundred thirty meters.");
    expect(spokenAnswer('what color is the jersey?', 'Pink')).toBe("It's pink.");
    expect(spokenAnswer('how do they find the flowers?', 'With the waggle dance')).toBe(
      "It's done with the waggle dance.",
    );
    expect(spokenAnswer('why did it close?', 'Because of the war')).toBe('It was because of the war.');
  });

  it('makes a plural answer for lists and plural questions', () => {
    expect(spokenAnswer('who are the actors?', 'Christopher Lee, Joseph Wiseman, Britt Ekland')).toBe(
      "They're Christopher Lee, Joseph Wiseman, and Britt Ekland.",
    );
    expect(spokenAnswer('what lakes are near it?', 'Lake Sai, Lake Shoji & Lake Motosu')).toBe(
      "They're Lake Sai, Lake Shoji and Lake Motosu.",
    );
  });

  it('keeps answers that already read as sentences', () => {
    expect(spokenAnswer('did he get a prize?', 'He shared the 1973 Nobel Prize')).toBe(
      'He shared the nineteen seventy-three Nobel Prize.',
    );
    expect(spokenAnswer('is it active?', 'Yes, it is classified as active')).toBe('Yes, it is classified as active.');
    expect(spokenAnswer('what happened?', 'It transformed its society into an industrial nation.')).toBe(
      'It transformed its society into an industrial nation.',
    );
  });

  it('rejects an empty answer', () => {
    expect(() => spokenAnswer('who?', ' (none) ')).toThrow(/empty answer/);
  });
});

describe('unanswerableReply', () => {
  it('rotates deterministically through the apologies', () => {
    expect(unanswerableReply(1)).toBe("I'm sorry, I don't know that.");
    expect(unanswerableReply(4)).toBe(unanswerableReply(1));
    expect(new Set([1, 2, 3].map(unanswerableReply)).size).toBe(UNANSWERABLE_REPLIES.length);
  });
});
