import { describe, expect, it } from 'vitest';
import { dialogueRandomStream } from '../model/random.ts';
import { planTurnHolds, splitEnglishQuestion, splitJapaneseQuestion } from './turn-hold-split.ts';

describe('splitting a question where a speaker would pause', () => {
  it('English: prefers a comma, then a relative clause, a conjunction, a phrase; never inside a word', () => {
    expect(splitEnglishQuestion('Okay, so tell me, what did the band do after the tour ended?')).toEqual({
      first: 'Okay, so tell me,',
      second: 'what did the band do after the tour ended?',
      boundary: 'comma',
    });
    expect(splitEnglishQuestion('What is the name of the actor who played the lead role?')).toEqual({
      first: 'What is the name of the actor,',
      second: 'who played the lead role?',
      boundary: 'clause',
    });
    expect(splitEnglishQuestion('What was his role in the movie about the war?')?.boundary).toBe('phrase');
    const text = 'Can you tell me what happened to the company and who bought it in the end?';
    const parts = splitEnglishQuestion(text)!;
    expect(`${parts.first.replace(/,$/, '')} ${parts.second}`).toBe(text);
    expect(text.split(' ')).toContain(parts.second.split(' ')[0]);
  });

  it('English: no split when a part would have fewer than four words (it would be spoken in under a second)', () => {
    expect(splitEnglishQuestion('Who built it?')).toBeNull();
    expect(splitEnglishQuestion('Where is it in the city?')).toBeNull();
    expect(splitEnglishQuestion('Where is it in the city?', { minimumWords: 2, minimumMorae: 8 })).not.toBeNull();
  });

  it('English: never splits after a sentence end inside the question', () => {
    expect(splitEnglishQuestion('That is very interesting indeed. What did they do next?')).toBeNull();
  });

  it('Japanese: after 、 first, else after a phrase-final particle; both parts at least eight morae', async () => {
    expect(await splitJapaneseQuestion('彼がバンドを辞めた後、何をしましたか？')).toEqual({ first: '彼がバンドを辞めた後、', second: '何をしましたか？', boundary: 'comma' });
    const parts = (await splitJapaneseQuestion('その映画でバットマンを演じた俳優の名前は何ですか？'))!;
    expect(parts.boundary).toBe('phrase');
    expect(parts.first.endsWith('、')).toBe(true);
    expect(parts.first.slice(0, -1) + parts.second).toBe('その映画でバットマンを演じた俳優の名前は何ですか？');
    expect(await splitJapaneseQuestion('それは誰が作りましたか？')).toBeNull();
  });
});

describe('planTurnHolds', () => {
  const questions = [
    'What is the name of the actor who played the lead role?',
    'Who built it?',
    'Okay, so tell me, what did the band do after the tour ended?',
    'What was his role in the movie about the war?',
    'When did the company open its first store in New York City?',
    'Is it big?',
  ].map((question, index) => ({ turnNumber: index + 1, question }));

  it('splits round(share × questions) of the splittable questions, the same ones for the same stream', async () => {
    const plan = await planTurnHolds(questions, 'en', 0.5, dialogueRandomStream(1, 'd', 'turn-holds'));
    expect(plan.size).toBe(3);
    for (const turnNumber of plan.keys()) expect([2, 6]).not.toContain(turnNumber);
    const again = await planTurnHolds(questions, 'en', 0.5, dialogueRandomStream(1, 'd', 'turn-holds'));
    expect([...again.keys()]).toEqual([...plan.keys()]);
    expect((await planTurnHolds(questions, 'en', 0, dialogueRandomStream(1, 'd', 'turn-holds'))).size).toBe(0);
    expect((await planTurnHolds(questions, 'en', 1, dialogueRandomStream(1, 'd', 'turn-holds'))).size).toBe(4); // only four can be split
  });

  it('refuses a share outside [0, 1]', async () => {
    await expect(planTurnHolds(questions, 'en', 1.5, dialogueRandomStream(1, 'd'))).rejects.toThrow(RangeError);
  });
});
