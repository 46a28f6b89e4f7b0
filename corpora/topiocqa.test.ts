import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadTopiocqa,
  normaliseTopiocqaText,
  parseTopiocqa,
  resolveTopiocqaOptions,
  TopiocqaFormatError,
  type TopiocqaLoadResult,
  type TopiocqaQuirkKind,
} from './topiocqa.ts';

const sharedDir = process.env.DUPLEXSYNTH_SHARED ?? fileURLToPath(new URL('../../shared', import.meta.url));
const devFile = path.join(sharedDir, 'corpora', 'topiocqa', 'topiocqa_dev.json');
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/topiocqa/${name}`, import.meta.url));

function countKinds(result: TopiocqaLoadResult): Partial<Record<TopiocqaQuirkKind, number>> {
  const counts: Partial<Record<TopiocqaQuirkKind, number>> = {};
  for (const quirk of result.quirks) counts[quirk.kind] = (counts[quirk.kind] ?? 0) + 1;
  return counts;
}

/** Runs `action`, expects a TopiocqaFormatError, returns it. */
async function expectFormatError(action: () => Promise<unknown>): Promise<TopiocqaFormatError> {
  try {
    await action();
  } catch (error) {
    expect(error).toBeInstanceOf(TopiocqaFormatError);
    return error as TopiocqaFormatError;
  }
  throw new Error('expected a TopiocqaFormatError, nothing was thrown');
}

describe('loadTopiocqa on the real TopiOCQA dev file', () => {
  let result: TopiocqaLoadResult;
  beforeAll(async () => {
    result = await loadTopiocqa(devFile);
  });

  it('reads 205 conversations and 2,514 turns, numbered 1..205', () => {
    expect(result.stats.conversations).toBe(205);
    expect(result.stats.turns).toBe(2514);
    expect(result.conversations.map((c) => c.conversationNumber)).toEqual(Array.from({ length: 205 }, (_, i) => i + 1));
    expect(result.rejected).toEqual([]);
    const lengths = result.conversations.map((c) => c.turns.length);
    expect(Math.min(...lengths)).toBe(10);
    expect(Math.max(...lengths)).toBe(16);
  });

  it('gives every conversation a unique topiocqa_dev_NNNN id and contiguous turns', () => {
    const ids = result.conversations.map((c) => c.id);
    expect(new Set(ids).size).toBe(205);
    expect(ids[0]).toBe('topiocqa_dev_0001');
    expect(ids[204]).toBe('topiocqa_dev_0205');
    for (const conversation of result.conversations) {
      expect(conversation.id).toMatch(/^topiocqa_dev_\d{4}$/);
      expect(conversation.sourceFile).toBe(devFile);
      expect(conversation.turns.map((t) => t.turnNumber)).toEqual(conversation.turns.map((_, i) => i + 1));
      expect(conversation.turns[0]!.topicSwitch).toBe(false);
    }
  });

  it('measures the quirks of the release', () => {
    expect(result.stats).toEqual({
      conversations: 205,
      turns: 2514,
      unanswerable: 174,
      emptyAnswers: 0,
      topicSwitches: 672,
      questionsWithoutQuestionMark: 180,
      droppedTurns: 0,
      droppedConversations: 0,
      rejectedConversations: 0,
    });
    expect(countKinds(result)).toEqual({
      unanswerable: 174,
      'question-without-question-mark': 180,
      'whitespace-normalised': 115,
      'missing-topic': 174,
    });
    const normalisedFields = result.quirks.filter((q) => q.kind === 'whitespace-normalised').map((q) => q.field);
    expect(normalisedFields.filter((f) => f === 'Answer')).toHaveLength(106);
    expect(normalisedFields.filter((f) => f === 'Question')).toHaveLength(9);
    const unanswerable = result.quirks.filter((q) => q.kind === 'unanswerable');
    expect(new Set(unanswerable.map((q) => q.conversationNumber)).size).toBe(115);
    expect(result.warnings).toEqual([
      '174 turns answered UNANSWERABLE in 115 conversations: kept with answer null and answerable false',
      '180 questions without "?": kept as they are',
      '115 text fields had Unicode or repeated spaces normalised (Answer 106, Question 9)',
      '174 turns without a topic: topic "", never counted as a topic switch',
    ]);
  });

  it('marks UNANSWERABLE turns (which carry no topic) and normalises every text field', () => {
    const turns = result.conversations.flatMap((c) => c.turns);
    const unanswerable = turns.filter((t) => !t.answerable);
    expect(unanswerable).toHaveLength(174);
    for (const turn of unanswerable) {
      expect(turn.answer).toBeNull();
      expect(turn.topic).toBe('');
      expect(turn.topicSection).toBeUndefined();
      expect(turn.topicSwitch).toBe(false);
    }
    expect(turns.filter((t) => t.answerable && t.answer === null)).toHaveLength(0);
    expect(turns.filter((t) => t.isNaturalQuestions)).toHaveLength(164);
    expect(result.conversations.filter((c) => !c.turns[0]!.answerable)).toHaveLength(9);
    expect(result.conversations.filter((c) => !c.turns.at(-1)!.answerable)).toHaveLength(14);
    for (const turn of turns) {
      for (const text of [turn.question, turn.answer ?? '', turn.topic, turn.topicSection ?? '']) {
        expect(text).toBe(normaliseTopiocqaText(text));
        expect(text).not.toMatch(/[\u00a0]| {2}/);
      }
    }
  });

  it('agrees with counts taken straight from the raw JSON', async () => {
    type RawRecord = { Conversation_no: number; Question: string; Answer: string; Topic: string };
    const raw = JSON.parse(await readFile(devFile, 'utf8')) as RawRecord[];
    expect(raw).toHaveLength(2514);
    expect(raw.filter((r) => r.Answer === 'UNANSWERABLE')).toHaveLength(result.stats.unanswerable);
    expect(raw.filter((r) => !r.Question.includes('?'))).toHaveLength(result.stats.questionsWithoutQuestionMark);
    // A naive "Topic differs from the previous record" count is inflated by the empty topics of UNANSWERABLE turns
    // (the release lists each conversation's turns together and in order).
    const naiveSwitches = raw.filter(
      (r, i) => i > 0 && r.Conversation_no === raw[i - 1]!.Conversation_no && r.Topic !== raw[i - 1]!.Topic,
    ).length;
    expect(naiveSwitches).toBe(909);
  });

  it('applies the drop-turn and drop-conversation policies', async () => {
    const dropTurn = await loadTopiocqa(devFile, { unanswerable: 'drop-turn' });
    expect(dropTurn.stats).toMatchObject({ conversations: 205, turns: 2340, unanswerable: 0, droppedTurns: 174 });
    expect(dropTurn.stats.topicSwitches).toBe(672);
    for (const conversation of dropTurn.conversations) {
      expect(conversation.turns.map((t) => t.turnNumber)).toEqual(conversation.turns.map((_, i) => i + 1));
    }
    const dropConversation = await loadTopiocqa(devFile, { unanswerable: 'drop-conversation' });
    expect(dropConversation.stats).toMatchObject({
      conversations: 90,
      turns: 1103,
      unanswerable: 0,
      topicSwitches: 312,
      droppedConversations: 115,
    });
  });

  it('limits to the first N conversations by number and accepts an id prefix', async () => {
    const limited = await loadTopiocqa(devFile, { limit: 3, idPrefix: 'tq' });
    expect(limited.conversations.map((c) => c.id)).toEqual(['tq_0001', 'tq_0002', 'tq_0003']);
    expect(limited.stats.conversations).toBe(3);
  });
});

describe('loadTopiocqa quirk handling (invented fixtures)', () => {
  let result: TopiocqaLoadResult;
  beforeAll(async () => {
    result = await loadTopiocqa(fixture('quirks.json'));
  });

  it('derives the id prefix from the file name and sorts conversations and turns', () => {
    expect(result.conversations.map((c) => c.id)).toEqual(['quirks_0001', 'quirks_0002', 'quirks_0003', 'quirks_0004']);
    const first = result.conversations[0]!;
    expect(first.turns.map((t) => t.question)).toEqual([
      'who built the old lighthouse at cape marrow?',
      'when was it finished',
      'what does the island sell abroad?',
    ]);
    expect(result.quirks).toContainEqual({ kind: 'turns-out-of-order', conversationNumber: 1 });
  });

  it('normalises NBSP, thin spaces, doubled and outer spaces before comparing topics', () => {
    const [t1, t2, t3] = result.conversations[0]!.turns;
    expect(t1!.answer).toBe('A local guild of masons');
    expect(t2!.topic).toBe('Cape Marrow Lighthouse');
    expect(result.conversations[0]!.turns.map((t) => t.topicSwitch)).toEqual([false, false, true]);
    expect(t3!.topicSection).toBe('Economy');
    expect(t1!.isNaturalQuestions).toBe(true);
    const normalised = result.quirks.filter((q) => q.kind === 'whitespace-normalised');
    expect(normalised).toEqual([
      { kind: 'whitespace-normalised', conversationNumber: 1, turnNumber: 1, field: 'Answer' },
      { kind: 'whitespace-normalised', conversationNumber: 1, turnNumber: 2, field: 'Topic' },
      { kind: 'whitespace-normalised', conversationNumber: 1, turnNumber: 3, field: 'Question' },
    ]);
  });

  it('flags questions without a question mark and keeps them as they are', () => {
    const flagged = result.quirks.filter((q) => q.kind === 'question-without-question-mark');
    expect(flagged).toEqual([
      { kind: 'question-without-question-mark', conversationNumber: 1, turnNumber: 2, field: 'Question' },
    ]);
    expect(result.stats.questionsWithoutQuestionMark).toBe(1);
    expect(result.warnings).toContain('1 questions without "?": kept as they are');
  });

  it('marks UNANSWERABLE turns and a final empty answer, with topic switches over topicless turns', () => {
    const ferry = result.conversations[1]!.turns;
    expect(ferry.map((t) => [t.answer, t.answerable, t.topic, t.topicSwitch])).toEqual([
      ['Bright yellow', true, 'Harbour Ferry Line', false],
      [null, false, '', false],
      ['Only in summer', true, 'Harbour Ferry Line', false],
      [null, true, 'City Tram', true],
    ]);
    expect(ferry[1]!.topicSection).toBeUndefined();
    expect(result.quirks).toContainEqual({
      kind: 'empty-answer',
      conversationNumber: 2,
      turnNumber: 4,
      field: 'Answer',
      detail: 'final turn',
    });
    // Conversation 3 starts unanswerable: its first topic is not a switch.
    expect(result.conversations[2]!.turns.map((t) => t.topicSwitch)).toEqual([false, false, false]);
    expect(result.stats).toMatchObject({ unanswerable: 3, emptyAnswers: 1, topicSwitches: 2 });
  });

  it('notes Context mismatches and unknown fields without failing', () => {
    expect(result.quirks).toContainEqual({
      kind: 'context-mismatch',
      conversationNumber: 3,
      turnNumber: 3,
      field: 'Context',
      detail: '1 entries, expected 4',
    });
    expect(result.quirks).toContainEqual({
      kind: 'unknown-field',
      conversationNumber: 1,
      turnNumber: 3,
      field: 'Annotator_note',
    });
    expect(countKinds(result)).toEqual({
      'turns-out-of-order': 1,
      'whitespace-normalised': 3,
      'question-without-question-mark': 1,
      'unknown-field': 1,
      unanswerable: 3,
      'missing-topic': 3,
      'empty-answer': 1,
      'context-mismatch': 1,
    });
    expect(result.warnings).toHaveLength(8);
  });

  it('drop-turn renumbers turns and drops conversations left empty', async () => {
    const dropped = await loadTopiocqa(fixture('quirks.json'), { unanswerable: 'drop-turn' });
    expect(dropped.conversations.map((c) => c.conversationNumber)).toEqual([1, 2, 3]);
    const ferry = dropped.conversations[1]!.turns;
    expect(ferry.map((t) => [t.turnNumber, t.question])).toEqual([
      [1, 'what colour is the harbour ferry?'],
      [2, 'does the ferry run at night?'],
      [3, 'and what about the city tram?'],
    ]);
    expect(dropped.stats).toMatchObject({ droppedTurns: 3, droppedConversations: 1, unanswerable: 0, turns: 8 });
    expect(dropped.quirks).toContainEqual({ kind: 'dropped-turn', conversationNumber: 2, turnNumber: 2 });
    expect(dropped.quirks).toContainEqual({
      kind: 'dropped-conversation',
      conversationNumber: 4,
      detail: 'no turn left',
    });
  });

  it('drop-conversation removes every conversation with an UNANSWERABLE turn', async () => {
    const dropped = await loadTopiocqa(fixture('quirks.json'), { unanswerable: 'drop-conversation' });
    expect(dropped.conversations.map((c) => c.id)).toEqual(['quirks_0001']);
    expect(dropped.stats).toMatchObject({ conversations: 1, droppedConversations: 3, unanswerable: 0 });
    expect(dropped.warnings).toContain('3 conversations dropped by the unanswerable policy "drop-conversation"');
  });

  it('limit takes the first N conversation numbers, not the first N in file order', async () => {
    const limited = await loadTopiocqa(fixture('quirks.json'), { limit: 3 });
    expect(limited.conversations.map((c) => c.conversationNumber)).toEqual([1, 2, 3]);
  });
});

describe('loadTopiocqa later-release fields', () => {
  it('reads Additional_answers as a list of objects, Rationale and Gold_passage', async () => {
    const result = await loadTopiocqa(fixture('additional-answers-list.json'));
    const [first, second] = result.conversations[0]!.turns;
    expect(first!.additionalAnswers).toEqual(['coal and wood', 'wood and coal']);
    expect(first!.rationale).toBe('The organ burns coal and wood.');
    expect(second!.additionalAnswers).toBeUndefined();
    expect(second!.rationale).toBeUndefined();
    expect(result.quirks).toContainEqual({
      kind: 'additional-answer-left-out',
      conversationNumber: 21,
      turnNumber: 1,
      field: 'Additional_answers',
      detail: 'UNANSWERABLE',
    });
    expect(countKinds(result)['unknown-field']).toBeUndefined();
  });

  it('reads Additional_answers as a dict of lists', async () => {
    const result = await loadTopiocqa(fixture('additional-answers-dict.json'));
    const turn = result.conversations[0]!.turns[0]!;
    expect(turn.additionalAnswers).toEqual(['red brick', 'bricks']);
    expect(turn.rationale).toBe('built of red brick');
    expect(result.quirks.filter((q) => q.kind === 'additional-answer-left-out')).toHaveLength(1);
  });

  it('names the nested field of a bad additional answer', async () => {
    const error = await expectFormatError(() => loadTopiocqa(fixture('additional-answers-bad.json')));
    expect(error.message).toBe(
      'additional-answers-bad.json: conversation 23, turn 1: field "Additional_answers[0].Answer": expected string, got number',
    );
  });
});

describe('loadTopiocqa malformed input', () => {
  it('names file, conversation, turn and field for a wrong type', async () => {
    const error = await expectFormatError(() => loadTopiocqa(fixture('wrong-type.json')));
    expect(error.message).toBe(
      'wrong-type.json: conversation 17, turn 3: field "Question": expected string, got number',
    );
    expect(error).toMatchObject({ kind: 'invalid-turn', conversationNumber: 17, turnNumber: 3, field: 'Question' });
    expect(error.file).toBe(fixture('wrong-type.json'));
  });

  it('names the missing field', async () => {
    const error = await expectFormatError(() => loadTopiocqa(fixture('missing-field.json')));
    expect(error.message).toBe(
      'missing-field.json: conversation 5, turn 2: field "Question": missing (expected string)',
    );
    expect(error).toMatchObject({ kind: 'invalid-turn', conversationNumber: 5, turnNumber: 2, field: 'Question' });
  });

  it('rejects a gap in Turn_no, naming the conversation', async () => {
    const error = await expectFormatError(() => loadTopiocqa(fixture('turn-gap.json')));
    expect(error.message).toBe(
      'turn-gap.json: conversation 8: Turn_no not contiguous from 1: expected 3, found 4 (Turn_no present: 1, 2, 4)',
    );
    expect(error).toMatchObject({ kind: 'turn-sequence', conversationNumber: 8 });
  });

  it('rejects a duplicate Turn_no, naming the conversation', async () => {
    const error = await expectFormatError(() => loadTopiocqa(fixture('duplicate-turn.json')));
    expect(error.message).toBe('duplicate-turn.json: conversation 9: duplicate Turn_no 2');
    expect(error).toMatchObject({ kind: 'turn-sequence', conversationNumber: 9 });
  });

  it.each([
    ['missing-field.json', 5, 'field "Question": missing'],
    ['wrong-type.json', 17, 'field "Question": expected string'],
    ['turn-gap.json', 8, 'Turn_no not contiguous'],
    ['duplicate-turn.json', 9, 'duplicate Turn_no 2'],
  ])('onInvalid skip: %s rejects conversation %i and keeps the others', async (name, bad, reason) => {
    const result = await loadTopiocqa(fixture(name), { onInvalid: 'skip' });
    expect(result.rejected).toHaveLength(1);
    expect(result.rejected[0]!.conversationNumber).toBe(bad);
    expect(result.rejected[0]!.reason).toContain(`conversation ${bad}`);
    expect(result.rejected[0]!.reason).toContain(reason);
    expect(result.rejected[0]!.error).toBeInstanceOf(TopiocqaFormatError);
    expect(result.conversations).toHaveLength(1);
    expect(result.conversations[0]!.conversationNumber).not.toBe(bad);
    expect(result.stats.rejectedConversations).toBe(1);
    expect(result.warnings.at(-1)).toBe(`1 invalid conversations skipped: ${bad}`);
  });

  it.each([
    ['empty.json', 'empty', 'file is empty'],
    ['whitespace-only.json', 'empty', 'file is empty'],
    ['empty-list.json', 'empty', 'the list holds no turn records'],
    ['not-array.json', 'not-array', 'expected a JSON list of turn records, got object'],
  ])('always throws for a whole-file problem, naming the file by its full path: %s', async (name, kind, detail) => {
    const error = await expectFormatError(() => loadTopiocqa(fixture(name), { onInvalid: 'skip' }));
    expect(error.kind).toBe(kind);
    expect(error.message).toBe(`${path.resolve(fixture(name))}: ${detail}`);
    expect(path.isAbsolute(error.message.split(': ')[0]!)).toBe(true);
  });

  it('always throws for a file that is not JSON', async () => {
    const error = await expectFormatError(() => loadTopiocqa(fixture('not-json.json'), { onInvalid: 'skip' }));
    expect(error.kind).toBe('not-json');
    expect(error.message.startsWith(`${path.resolve(fixture('not-json.json'))}: not valid JSON (`)).toBe(true);
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('always throws for a record that belongs to no conversation', async () => {
    const error = await expectFormatError(() =>
      loadTopiocqa(fixture('bad-conversation-number.json'), { onInvalid: 'skip' }),
    );
    expect(error.message).toBe(
      'bad-conversation-number.json: record [2]: field "Conversation_no": expected a positive integer, got string',
    );
    expect(error).toMatchObject({ kind: 'invalid-record', recordIndex: 2, field: 'Conversation_no' });
  });

  it('throws an unreadable error for a missing file', async () => {
    const error = await expectFormatError(() => loadTopiocqa(fixture('no-such-file.json')));
    expect(error.kind).toBe('unreadable');
    expect(error.message).toBe(`${fixture('no-such-file.json')}: cannot read: does not exist (ENOENT); check the path`);
  });
});

describe('parseTopiocqa field checks', () => {
  const record = (overrides: Record<string, unknown>): Record<string, unknown> => ({
    Conversation_no: 3,
    Turn_no: 1,
    Question: 'is the pier open?',
    Answer: 'Yes',
    Topic: 'Pier',
    Topic_section: 'Introduction',
    is_nq: true,
    Context: [],
    ...overrides,
  });
  const parse = (records: unknown[]): TopiocqaLoadResult => parseTopiocqa(JSON.stringify(records), 'inline.json');

  it.each([
    [{ Turn_no: 0 }, 'inline.json: conversation 3, record [0]: field "Turn_no": expected a positive integer, got 0'],
    [
      { Turn_no: 1.5 },
      'inline.json: conversation 3, record [0]: field "Turn_no": expected a positive integer, got 1.5',
    ],
    [{ is_nq: 'yes' }, 'inline.json: conversation 3, turn 1: field "is_nq": expected boolean, got string'],
    [{ Context: ['a', 7] }, 'inline.json: conversation 3, turn 1: field "Context[1]": expected string, got number'],
    [
      { Additional_answers: 5 },
      'inline.json: conversation 3, turn 1: field "Additional_answers": expected list or object, got number',
    ],
    [{ Gold_passage: 'x' }, 'inline.json: conversation 3, turn 1: field "Gold_passage": expected object, got string'],
    [{ Question: ' \u00a0 ' }, 'inline.json: conversation 3, turn 1: field "Question": empty question'],
    [
      { Answer: null, Topic: 4 },
      'inline.json: conversation 3, turn 1: field "Answer": expected string, got null (and 1 more problem in this record)',
    ],
  ])('reports %j', (overrides, message) => {
    expect(() => parse([record(overrides)])).toThrow(message);
  });

  it('reports a record that is not an object', () => {
    expect(() => parse([record({}), 'oops'])).toThrow(
      'inline.json: record [1]: expected a turn record (object), got string',
    );
  });

  it('accepts Rationale, Additional_answers and Gold_passage as null, and strings in an Additional_answers list', () => {
    const result = parse([
      record({ Rationale: null, Additional_answers: null, Gold_passage: null }),
      record({ Turn_no: 2, Context: ['is the pier open?', 'Yes'], Additional_answers: ['yes it is', ''] }),
    ]);
    expect(result.conversations[0]!.turns[0]!.additionalAnswers).toBeUndefined();
    expect(result.conversations[0]!.turns[1]!.additionalAnswers).toEqual(['yes it is']);
  });

  it('notes an empty answer that is not the final turn', () => {
    const result = parse([record({ Answer: '' }), record({ Turn_no: 2, Context: ['is the pier open?', ''] })]);
    expect(result.conversations[0]!.turns[0]).toMatchObject({ answer: null, answerable: true });
    expect(result.warnings).toContain('1 turns with an empty answer: answer null (0 final turns, 1 earlier turns)');
  });

  it('strips a byte-order mark', () => {
    const result = parseTopiocqa(`\uFEFF${JSON.stringify([record({})])}`, 'bom.json');
    expect(result.conversations[0]!.id).toBe('bom_0003');
  });
});

describe('options', () => {
  it('resolves defaults once, deriving the id prefix from the file name', () => {
    expect(resolveTopiocqaOptions('/data/topiocqa_dev.json')).toEqual({
      idPrefix: 'topiocqa_dev',
      unanswerable: 'keep',
      onInvalid: 'throw',
      limit: undefined,
      controlCharacters: 'remove',
      maximumUtteranceCharacters: 2000,
      maximumTurnsPerConversation: 100,
      maximumFileBytes: 256_000_000,
    });
    expect(resolveTopiocqaOptions('/data/topiocqa dev.v2.json').idPrefix).toBe('topiocqa_dev_v2');
  });

  it.each([0, -1, 2.5, Number.NaN])('rejects limit %s', (limit) => {
    expect(() => resolveTopiocqaOptions('a.json', { limit })).toThrow(RangeError);
  });

  it('rejects an empty id prefix', () => {
    expect(() => resolveTopiocqaOptions('a.json', { idPrefix: '' })).toThrow(RangeError);
  });
});

describe('loadTopiocqa with a file written at test time', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'topiocqa-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('pads conversation numbers to four digits', async () => {
    const file = path.join(dir, 'topiocqa_train.json');
    const turn = {
      Conversation_no: 1234,
      Turn_no: 1,
      Question: 'is the museum free?',
      Answer: 'On Sundays',
      Topic: 'Town Museum',
      Topic_section: 'Introduction',
      is_nq: true,
      Context: [],
    };
    await writeFile(file, JSON.stringify([turn, { ...turn, Conversation_no: 7 }]));
    const result = await loadTopiocqa(file);
    expect(result.conversations.map((c) => c.id)).toEqual(['topiocqa_train_0007', 'topiocqa_train_1234']);
  });
});
