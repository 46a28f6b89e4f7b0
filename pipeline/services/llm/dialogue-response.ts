/**
 * Reading a reply of the text-transform layer (./dialogue-text.ts): the JSON extracted and checked
 * against the reply schema, the turn count and the speakability checks, and the check that the model
 * finished (not cut at the output token limit).
 */
import type { Language, TextTurn } from '../../model/types.ts';
import { DialogueTextError, UnfinishedGenerationError, type DialogueTextProblem } from './errors.ts';
import { extractJsonObject } from './json-extraction.ts';
import type { GenerationResult } from './language-model.ts';
import { findSpeakableTextProblems } from '../../text/text-checks.ts';
import { identifyWrongLanguage } from '../../text/language-identification.ts';
import { languagePackOf } from '../../model/language-pack.ts';
import { pausePointOf } from '../../text/turn-hold-split.ts';
import { describeIssues } from '../../model/validation.ts';
import {
  responseSchema,
  type DialogueTextTask,
  type DialogueTextValidationOptions,
  type RewriteTurn,
} from './dialogue-requests.ts';

/** What a parsed response is checked against. */
export interface ExpectedDialogue {
  dialogueId: string;
  task: DialogueTextTask;
  /** Language the response must be in. */
  language: Language;
  /** The input turns, in order: the response must have as many; a null input answer stays null. */
  turns: readonly RewriteTurn[];
}

/**
 * Parses and validates a reply: extracts the JSON object, checks the shape with zod, the turn count,
 * non-empty strings, that each line is speakable in the language ({@link findSpeakableTextProblems}) and
 * that no line is identified as another language (../../text/language-identification.ts; lines too
 * short to identify pass).
 * Turns whose input answer was null (and answerable) get a null answer whatever the reply says.
 * Strings are trimmed and inner whitespace collapsed. A rewrite's question loses its pause mark ` | `,
 * kept as the turn's `pausePoint` (more than one mark, or one at an end, is a problem).
 *
 * @param text the model's reply.
 * @param expected the input it answers.
 * @param options allowed Latin words for Japanese, language identification thresholds.
 * @returns the turns with the input's turn numbers.
 * @throws DialogueTextError (`unparseable` when no JSON object or the wrong shape, `invalid` when the
 *   turns fail a check), naming the dialogue and each failing turn.
 */
export function parseDialogueResponse(
  text: string,
  expected: ExpectedDialogue,
  options: DialogueTextValidationOptions = {},
): TextTurn[] {
  const fail = (kind: 'unparseable' | 'invalid', problems: DialogueTextProblem[]): never => {
    throw new DialogueTextError({
      dialogueId: expected.dialogueId,
      task: expected.task,
      kind,
      problems,
      responseText: text,
    });
  };
  const extraction = extractJsonObject(text);
  if (!extraction.found) return fail('unparseable', [{ message: extraction.reason }]);
  const parsed = responseSchema.safeParse(extraction.value);
  if (!parsed.success) {
    return fail(
      'unparseable',
      parsed.error.issues.map((issue) => ({ message: describeIssues([issue], { root: 'reply' }) })),
    );
  }
  const replyTurns = parsed.data.turns;
  if (replyTurns.length !== expected.turns.length) {
    return fail('invalid', [{ message: `expected ${expected.turns.length} turns, got ${replyTurns.length}` }]);
  }

  const problems: DialogueTextProblem[] = [];
  const turns = expected.turns.map((inputTurn, index): TextTurn => {
    const reply = replyTurns[index] ?? { question: '', answer: null };
    const turnNumber = inputTurn.turnNumber;
    // a rewrite's question may mark one pause point (rewrite-spoken.v2 rule 11); it is read and removed
    const marked =
      expected.task === 'rewrite-spoken' ? pausePointOf(tidy(reply.question)) : { text: tidy(reply.question) };
    const question = marked.text;
    const mark = 'pausePoint' in marked && marked.pausePoint !== undefined ? { pausePoint: marked.pausePoint } : {};
    if ('problem' in marked && marked.problem !== undefined)
      problems.push({ turnNumber, field: 'question', message: marked.problem });
    for (const message of findSpeakableTextProblems(question, expected.language, options)) {
      problems.push({ turnNumber, field: 'question', message });
    }
    const questionLanguage = wrongLanguageProblem(question, expected.language, options);
    if (questionLanguage !== undefined) problems.push({ turnNumber, field: 'question', message: questionLanguage });
    const keepsNull = inputTurn.answer === null && inputTurn.answerable !== false;
    if (keepsNull) return { turnNumber, question, answer: null, ...mark };
    if (reply.answer === null) {
      problems.push({ turnNumber, field: 'answer', message: 'is null but the input has an answer' });
      return { turnNumber, question, answer: null, ...mark };
    }
    const answer = tidy(reply.answer);
    for (const message of findSpeakableTextProblems(answer, expected.language, options)) {
      problems.push({ turnNumber, field: 'answer', message });
    }
    const answerLanguage = wrongLanguageProblem(answer, expected.language, options);
    if (answerLanguage !== undefined) problems.push({ turnNumber, field: 'answer', message: answerLanguage });
    return { turnNumber, question, answer, ...mark };
  });
  if (problems.length > 0) fail('invalid', problems);
  return turns;
}

/**
 * Checks that the model finished normally.
 *
 * @param result the generation result.
 * @param dialogueId for the message.
 * @param task for the message.
 * @throws UnfinishedGenerationError when `finishReason` is not `stop` (cut at max tokens, safety, other).
 */
export function assertFinished(result: GenerationResult, dialogueId: string, task: DialogueTextTask): void {
  if (result.finishReason !== 'stop') {
    throw new UnfinishedGenerationError(
      `dialogue ${dialogueId}: the ${task} generation ended with finish reason "${result.finishReason}"; ` +
        'the text is incomplete (do not resend the same request blindly)',
      { finishReason: result.finishReason, dialogueId },
    );
  }
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' });

/**
 * The problem message of a line identified as another language than `language`, e.g.
 * `is in French (fr), not English (en): language identification confidence 0.53 over 32 letters`.
 */
function wrongLanguageProblem(
  text: string,
  language: Language,
  options: DialogueTextValidationOptions,
): string | undefined {
  const wrong = identifyWrongLanguage(text, language, options.languageIdentification);
  if (wrong === undefined) return undefined;
  const detectedName = languageNames.of(wrong.detected) ?? wrong.detected;
  return (
    `is in ${detectedName} (${wrong.detected}), not ${languagePackOf(language).name} (${language}): ` +
    `language identification confidence ${wrong.confidence} over ${wrong.letters} letters`
  );
}

function tidy(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
