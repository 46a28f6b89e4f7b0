/**
 * The `rules` backend: an honest offline English spoken-style rewrite without any model. Questions and
 * answers are normalised (./spoken-english.ts) and made into whole utterances with simple templates
 * (./spoken-turns.ts). It cannot translate.
 */
import type { TextTurn } from '../../model/types.ts';
import type { DialogueTextTask, RewriteConversationInput, TranslateConversationInput } from './dialogue-text.ts';
import type { BackendDescription, DialogueTextBackend } from './dialogue-text-backend.ts';
import { DialogueTextError, UnsupportedTaskError, type DialogueTextProblem } from './errors.ts';
import { spokenAnswer, spokenQuestion, unanswerableReply } from '../../text/spoken-turns.ts';
import { findSpeakableTextProblems } from '../../text/text-checks.ts';
import { spellNumbers } from '../../text/spoken-numbers.ts';
import { languagePackOf, languagePackSource } from '../../model/language-pack.ts';

/** Bump when a rule change alters output, so cached rewrites are redone. */
export const RULES_VERSION = 1;

/** The message of the refusal to translate. */
export const RULES_CANNOT_TRANSLATE =
  'the rules backend cannot translate; configure llm.translate with a replay file or a real LLM backend ' +
  '(gemini or openai-compatible)';

/** Offline English spoken-style rewrite; see the file header. */
export class RulesTextBackend implements DialogueTextBackend {
  readonly id = 'rules';

  /**
   * Rewrites each turn: question normalised and ended with "?"; answer normalised and made a full
   * sentence; `answerable: false` → an apology ("I'm sorry, I don't know that." and variants); a null
   * answer stays null.
   *
   * @param input dialogue id, language (must be `en`), turns.
   * @returns one spoken turn per input turn.
   * @throws UnsupportedTaskError when the language is not `en`; DialogueTextError when a turn is empty
   *   or the result still holds something unspeakable (a rule gap), naming the dialogue and turn.
   */
  async rewrite(input: RewriteConversationInput): Promise<TextTurn[]> {
    if (input.language !== 'en') return keepWrittenText(input);
    const problems: DialogueTextProblem[] = [];
    const turns = input.turns.map((turn): TextTurn => {
      const question = attempt(() => spokenQuestion(turn.question), turn.turnNumber, 'question', problems);
      let answer: string | null = null;
      if (turn.answerable === false) answer = unanswerableReply(turn.turnNumber);
      else if (turn.answer !== null)
        answer = attempt(() => spokenAnswer(turn.question, turn.answer ?? ''), turn.turnNumber, 'answer', problems);
      if (question !== '') {
        for (const message of findSpeakableTextProblems(question, 'en'))
          problems.push({ turnNumber: turn.turnNumber, field: 'question', message });
      }
      if (answer !== null && answer !== '') {
        for (const message of findSpeakableTextProblems(answer, 'en'))
          problems.push({ turnNumber: turn.turnNumber, field: 'answer', message });
      }
      return { turnNumber: turn.turnNumber, question, answer };
    });
    if (problems.length > 0) {
      throw new DialogueTextError({ dialogueId: input.dialogueId, task: 'rewrite-spoken', kind: 'invalid', problems });
    }
    return turns;
  }

  /**
   * Always refuses.
   *
   * @throws UnsupportedTaskError with {@link RULES_CANNOT_TRANSLATE}.
   */
  async translate(input: TranslateConversationInput): Promise<TextTurn[]> {
    throw new UnsupportedTaskError(`dialogue ${input.dialogueId}: ${RULES_CANNOT_TRANSLATE}`, {
      backendId: this.id,
      task: 'translate',
    });
  }

  /**
   * @returns `{backend: 'rules', rulesVersion}` for `rewrite-spoken`.
   * @throws UnsupportedTaskError for `translate`.
   */
  describe(task: DialogueTextTask): BackendDescription {
    if (task === 'translate') throw new UnsupportedTaskError(RULES_CANNOT_TRANSLATE, { backendId: this.id, task });
    return { backend: 'rules', rulesVersion: RULES_VERSION };
  }
}

function attempt(
  produce: () => string,
  turnNumber: number,
  field: 'question' | 'answer',
  problems: DialogueTextProblem[],
): string {
  try {
    return produce();
  } catch (error) {
    problems.push({ turnNumber, field, message: (error as Error).message });
    return '';
  }
}

/**
 * The rules backend on a corpus in another language than English (a user's own QA corpus in the
 * TopiOCQA layout, `corpus.language`): there are no spoken-style rules for it, so the text is kept as
 * written (an unanswerable turn keeps its answer), its numbers, years and units written as words by
 * the number library of the language's pack (`numbers: {library, locale}`, ../../text/spoken-numbers.ts),
 * and every question and answer must then be speakable in the language's pack: no digits, its script.
 * A pack whose `numbers` names no library (`language-model`) keeps the digits, and the message says an
 * LLM rewrite must write them.
 * @throws DialogueTextError naming the dialogue, turn and field of each problem (e.g. digits left:
 *   write them as words, or use a language-model rewrite)
 */
function keepWrittenText(input: RewriteConversationInput): TextTurn[] {
  const pack = languagePackOf(input.language);
  const spell = typeof pack.numbers === 'string' ? (text: string) => text : (text: string) => spellNumbers(text, pack);
  const unspoken =
    typeof pack.numbers === 'string'
      ? `the rules backend has no spoken-style rules for ${input.language} and no number library (${languagePackSource(pack)}: numbers: ${pack.numbers}): write numbers as words in the corpus, or use an LLM rewrite (llm.rewrite)`
      : `the rules backend has no spoken-style rules for ${input.language}: the written text is spoken as is`;
  const problems: DialogueTextProblem[] = [];
  const turns = input.turns.map((turn): TextTurn => {
    const question = spell(turn.question.trim());
    const answer = turn.answer === null ? null : spell(turn.answer.trim());
    for (const [field, text] of [
      ['question', question],
      ['answer', answer],
    ] as const) {
      if (text === null) continue;
      for (const message of findSpeakableTextProblems(text, input.language)) {
        problems.push({ turnNumber: turn.turnNumber, field, message: `${message} (${unspoken})` });
      }
    }
    return { turnNumber: turn.turnNumber, question, answer };
  });
  if (problems.length > 0)
    throw new DialogueTextError({ dialogueId: input.dialogueId, task: 'rewrite-spoken', kind: 'invalid', problems });
  return turns;
}
