/**
 * The text-transform layer over a {@link LanguageModel}: build the request for a whole conversation
 * (prompt template + turns as JSON), call the model, extract the JSON (whole reply, fenced block, or
 * last balanced object), validate the turns with zod and the speakability checks.
 *
 * With {@link DialogueTextRecovery} (what the configured backends use):
 * - an unparseable or invalid reply gets ONE repair request (template `repair-dialogue.v1`) that repeats
 *   the task, quotes the reply and lists the problems;
 * - a reply cut at the output token limit is not resent as is: the conversation is split into halves
 *   that are processed separately (recursively, up to `maximumSplitDepth` halvings);
 * - whatever still fails is quarantined: {@link QuarantinedDialogueError}, message `quarantined: <reason>`.
 * Without it (the default of the plain functions) the first failure is thrown as a
 * {@link DialogueTextError} or `UnfinishedGenerationError` (errors.ts).
 * Every step goes through the model, so a recording of a run (RecordingModel) replays it exactly.
 *
 * The requests (tasks, inputs, prompts, reply schema): dialogue-requests.ts; reading a reply:
 * dialogue-response.ts (both re-exported).
 */
import type { Language, TextTurn } from '../../model/types.ts';
import type { PromptTemplate } from '../../prompts/prompt-template.ts';
import { describeProblem, DialogueTextError, QuarantinedDialogueError, type QuarantineCause } from './errors.ts';
import type { GenerationRequest, LanguageModel } from './language-model.ts';
import {
  buildRepairRequest,
  buildRewriteRequest,
  buildTranslateRequest,
  type DialogueTextPrompts,
  type DialogueTextTask,
  type DialogueTextValidationOptions,
  type GenerationSettings,
  type RewriteConversationInput,
  type RewriteTurn,
  type TranslateConversationInput,
} from './dialogue-requests.ts';
import { assertFinished, parseDialogueResponse, type ExpectedDialogue } from './dialogue-response.ts';
import { loadLanguageIdentification } from '../../text/language-identification.ts';

export {
  buildRepairRequest,
  buildRewriteRequest,
  buildTranslateRequest,
  defaultDialogueTextPrompts,
  dialogueResponseJsonSchema,
  PROMPT_IDS,
  REPAIR_QUOTE_LIMIT,
  translationTemplateOf,
  type DialogueTextPrompts,
  type DialogueTextTask,
  type DialogueTextValidationOptions,
  type GenerationSettings,
  type RewriteConversationInput,
  type RewriteTurn,
  type TranslateConversationInput,
} from './dialogue-requests.ts';
export { assertFinished, parseDialogueResponse, type ExpectedDialogue } from './dialogue-response.ts';

/** The repair / split / quarantine steps (see the file header). */
export interface DialogueTextRecovery {
  /** Send one repair request when a reply is unparseable or invalid. */
  repair: boolean;
  /** How many times a conversation cut at MAX_TOKENS may be halved (0 = never); one turn is never split. */
  maximumSplitDepth: number;
  /** Template of the repair request; default `repair-dialogue.v1` ({@link PROMPT_IDS}). */
  repairPrompt?: PromptTemplate;
}

/** One repair request, halving at most twice (down to quarters of the conversation). */
export const DEFAULT_DIALOGUE_TEXT_RECOVERY: DialogueTextRecovery = { repair: true, maximumSplitDepth: 2 };

/** What {@link produceDialogueTurns} needs for one task. */
interface TaskPlan<Turn extends RewriteTurn> {
  dialogueId: string;
  task: DialogueTextTask;
  /** Language of the reply. */
  language: Language;
  build(turns: readonly Turn[]): GenerationRequest;
}

/**
 * Runs a task with recovery (see the file header) over `turns`.
 *
 * @throws QuarantinedDialogueError when the reply stays unusable; whatever the model throws.
 */
async function produceDialogueTurns<Turn extends RewriteTurn>(
  model: LanguageModel,
  plan: TaskPlan<Turn>,
  turns: readonly Turn[],
  recovery: DialogueTextRecovery,
  validation: DialogueTextValidationOptions | undefined,
  depth: number,
): Promise<TextTurn[]> {
  const request = plan.build(turns);
  const expected: ExpectedDialogue = { dialogueId: plan.dialogueId, task: plan.task, language: plan.language, turns };
  const part = depth === 0 ? '' : `, turns ${turns[0]?.turnNumber ?? '?'}-${turns.at(-1)?.turnNumber ?? '?'}`;
  const where = `dialogue ${plan.dialogueId} (${plan.task}${part})`;
  const quarantine = (quarantineCause: QuarantineCause, reason: string, cause?: unknown): never => {
    throw new QuarantinedDialogueError({
      dialogueId: plan.dialogueId,
      task: plan.task,
      quarantineCause,
      reason: `${where}: ${reason}`,
      cause,
    });
  };

  let result = await model.generate(request);
  let repaired = false;
  for (;;) {
    const onRepair = repaired ? ' on the repair request' : '';
    if (result.finishReason === 'max-tokens') {
      if (turns.length >= 2 && depth < recovery.maximumSplitDepth) {
        const middle = Math.ceil(turns.length / 2);
        const first = await produceDialogueTurns(model, plan, turns.slice(0, middle), recovery, validation, depth + 1);
        const second = await produceDialogueTurns(model, plan, turns.slice(middle), recovery, validation, depth + 1);
        return [...first, ...second];
      }
      const why =
        turns.length < 2
          ? 'a single turn cannot be split'
          : `already split ${depth} times (maximumSplitDepth ${recovery.maximumSplitDepth})`;
      return quarantine('max-tokens', `the reply${onRepair} was cut at the output token limit (MAX_TOKENS) and ${why}`);
    }
    if (result.finishReason !== 'stop') {
      return quarantine('finish-reason', `the generation${onRepair} ended with finish reason "${result.finishReason}"`);
    }
    try {
      return parseDialogueResponse(result.text, expected, validation);
    } catch (error) {
      if (!(error instanceof DialogueTextError)) throw error;
      const listed = error.problems.map(describeProblem).join('; ');
      if (repaired || !recovery.repair) {
        const state = error.kind === 'unparseable' ? 'could not be parsed' : 'is invalid';
        const after = repaired ? ' after one repair request' : '';
        return quarantine(error.kind, `the reply ${state}${after}: ${listed}`, error);
      }
      repaired = true;
      result = await model.generate(
        buildRepairRequest(request, result.text, error.problems, turns.length, recovery.repairPrompt),
      );
    }
  }
}

/** Everything {@link rewriteConversation} and {@link translateConversation} need besides the model. */
export interface DialogueTextOptions {
  settings: GenerationSettings;
  prompts?: DialogueTextPrompts;
  validation?: DialogueTextValidationOptions;
  /** Repair, split and quarantine; undefined = throw the first failure as is. */
  recovery?: DialogueTextRecovery;
}

/**
 * Rewrites a written conversation into spoken English with a language model.
 *
 * @param model the model to call.
 * @param input dialogue id, language (`en`), turns (with `answerable: false` for unanswerable ones).
 * @param options generation settings, templates, validation options, recovery.
 * @returns one spoken turn per input turn; null answers stay null.
 * @throws UnsupportedTaskError for a language other than `en`; whatever the model throws
 *   (LanguageModelError subclasses, e.g. LanguageModelCallError after the retries); with `recovery`:
 *   QuarantinedDialogueError when the reply stays unusable after repair / splitting; without it:
 *   UnfinishedGenerationError, or DialogueTextError when the reply is unparseable or invalid.
 */
export async function rewriteConversation(
  model: LanguageModel,
  input: RewriteConversationInput,
  options: DialogueTextOptions,
): Promise<TextTurn[]> {
  const plan: TaskPlan<RewriteTurn> = {
    dialogueId: input.dialogueId,
    task: 'rewrite-spoken',
    language: input.language,
    build: (turns) => buildRewriteRequest({ ...input, turns }, options.settings, options.prompts),
  };
  return runTask(model, plan, input.turns, options);
}

/**
 * Translates a spoken conversation with a language model.
 *
 * @param model the model to call.
 * @param input dialogue id, source and target language, turns.
 * @param options generation settings, templates, validation options (allowed Latin words), recovery.
 * @returns one translated turn per input turn; null answers stay null.
 * @throws UnsupportedTaskError for an unsupported language pair; whatever the model throws; with
 *   `recovery`: QuarantinedDialogueError when the reply stays unusable after repair / splitting;
 *   without it: UnfinishedGenerationError, or DialogueTextError when the reply is unparseable or
 *   invalid (wrong turn count, digits, untranslated English, …).
 */
export async function translateConversation(
  model: LanguageModel,
  input: TranslateConversationInput,
  options: DialogueTextOptions,
): Promise<TextTurn[]> {
  const plan: TaskPlan<TextTurn> = {
    dialogueId: input.dialogueId,
    task: 'translate',
    language: input.targetLanguage,
    build: (turns) => buildTranslateRequest({ ...input, turns }, options.settings, options.prompts),
  };
  return runTask(model, plan, input.turns, options);
}

/**
 * One task over a whole conversation: with `options.recovery`, through the repair/split/quarantine
 * steps; without it, one request whose reply must be finished, parseable and valid.
 */
async function runTask<Turn extends RewriteTurn>(
  model: LanguageModel,
  plan: TaskPlan<Turn>,
  turns: readonly Turn[],
  options: DialogueTextOptions,
): Promise<TextTurn[]> {
  // the reply check identifies each line's language (synchronously): its detector is loaded first, once
  if (options.validation?.languageIdentification?.enabled !== false) await loadLanguageIdentification();
  if (options.recovery !== undefined)
    return produceDialogueTurns(model, plan, turns, options.recovery, options.validation, 0);
  const result = await model.generate(plan.build(turns));
  assertFinished(result, plan.dialogueId, plan.task);
  return parseDialogueResponse(
    result.text,
    { dialogueId: plan.dialogueId, task: plan.task, language: plan.language, turns },
    options.validation,
  );
}
