/**
 * Reading what a dialogue text request asks and writing replies that pass validation, for the
 * loopback servers' responders (tests, the lead's end-to-end build test, `npm run bench`).
 *
 * - {@link readDialogueRequest} finds the task (rewrite, translate, repair) and the input turns in a
 *   prompt as the text layer builds it (./../dialogue-text.ts), whether the system text was sent
 *   separately or put before the prompt.
 * - {@link validDialogueReply} answers it correctly for any input: the rewrite uses the offline rules
 *   (../spoken-turns.ts), the Japanese "translation" is a fixed polite sentence per turn in kana and
 *   kanji numerals (not a translation, but it passes every check).
 */
import { balancedObjectSpans } from '../json-extraction.ts';
import { spokenAnswer, spokenQuestion, unanswerableReply } from '../../../text/spoken-turns.ts';

/** The task a prompt asks for. */
export type DialogueRequestTask = 'rewrite-spoken' | 'translate';

/** One input turn as the prompt's JSON holds it. */
export interface PromptTurn {
  turn: number;
  question: string;
  /** Absent for unanswerable rewrite turns. */
  answer?: string | null;
  answerable?: boolean;
}

/** What a dialogue text request asks. */
export interface DialogueRequest {
  task: DialogueRequestTask;
  /** True for the repair request (it repeats the task and quotes the previous reply). */
  isRepair: boolean;
  turns: PromptTurn[];
}

/**
 * Reads the task and input turns from a request's texts.
 *
 * @param system the system text, or undefined when it was put before the prompt.
 * @param prompt the user prompt.
 * @returns the request, or undefined when the texts are not a dialogue text request.
 */
export function readDialogueRequest(system: string | undefined, prompt: string): DialogueRequest | undefined {
  const text = `${system ?? ''}\n${prompt}`;
  const task: DialogueRequestTask | undefined = /Translate this conversation/.test(text)
    ? 'translate'
    : /Rewrite this conversation/.test(text)
      ? 'rewrite-spoken'
      : undefined;
  if (task === undefined) return undefined;
  for (const span of balancedObjectSpans(prompt)) {
    try {
      const value = JSON.parse(prompt.slice(span.start, span.end)) as { turns?: unknown };
      if (
        Array.isArray(value.turns) &&
        value.turns.length > 0 &&
        value.turns.every((turn) => typeof (turn as PromptTurn).turn === 'number')
      ) {
        return {
          task,
          isRepair: /Your previous reply to this request was/.test(prompt),
          turns: value.turns as PromptTurn[],
        };
      }
    } catch {
      // not JSON: keep looking
    }
  }
  return undefined;
}

/** One reply turn. */
export interface ReplyTurn {
  question: string;
  answer: string | null;
}

/**
 * Correct reply turns for a request (see the file header).
 *
 * @param request what the prompt asks.
 * @returns one reply turn per input turn.
 * @throws Error when an English question is empty (the rules rewrite refuses it).
 */
export function validReplyTurns(request: DialogueRequest): ReplyTurn[] {
  return request.turns.map((turn) => {
    if (request.task === 'rewrite-spoken') {
      const question = spokenQuestion(turn.question);
      if (turn.answerable === false) return { question, answer: unanswerableReply(turn.turn) };
      if (turn.answer === null || turn.answer === undefined) return { question, answer: null };
      return { question, answer: spokenAnswer(turn.question, turn.answer) };
    }
    const number = kanjiNumeral(turn.turn);
    return {
      question: `${number}番目の質問について教えていただけますか？`,
      answer:
        turn.answer === null || turn.answer === undefined ? null : `はい、${number}番目の質問の答えはこちらです。`,
    };
  });
}

/**
 * The correct reply text for a request: `{"turns": [...]}` as compact JSON.
 *
 * @param request what the prompt asks.
 * @returns the JSON text.
 * @throws Error as {@link validReplyTurns}.
 */
export function validDialogueReply(request: DialogueRequest): string {
  return JSON.stringify({ turns: validReplyTurns(request) });
}

/**
 * Writes 1..9999 in kanji numerals (十, 百, 千 without a leading 一), e.g. 21 → 二十一.
 *
 * @param value a positive integer below 10000.
 * @returns the numeral.
 * @throws RangeError outside 1..9999.
 */
export function kanjiNumeral(value: number): string {
  if (!Number.isInteger(value) || value < 1 || value > 9999)
    throw new RangeError(`kanjiNumeral: ${value} is outside 1..9999`);
  const digits = ['', '一', '二', '三', '四', '五', '六', '七', '八', '九'];
  const units: Array<[number, string]> = [
    [1000, '千'],
    [100, '百'],
    [10, '十'],
  ];
  let rest = value;
  let text = '';
  for (const [size, unit] of units) {
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count === 1 ? '' : digits[count]}${unit}`;
    rest %= size;
  }
  return text + (digits[rest] ?? '');
}
