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
 * {@link DialogueTextError} or {@link UnfinishedGenerationError}.
 * Every step goes through the model, so a recording of a run (RecordingModel) replays it exactly.
 */
import { z } from 'zod';
import type { Language, TextTurn } from '../../model/types.ts';
import { fillPromptTemplate, loadPromptTemplate, type PromptTemplate } from '../../prompts/prompt-template.ts';
import {
  describeProblem,
  DialogueTextError,
  QuarantinedDialogueError,
  UnfinishedGenerationError,
  UnsupportedTaskError,
  type DialogueTextProblem,
  type QuarantineCause,
} from './errors.ts';
import { extractJsonObject } from './json-extraction.ts';
import type { GenerationRequest, GenerationResult, JsonSchema, LanguageModel } from './language-model.ts';
import { findSpeakableTextProblems, type SpeakableTextOptions } from '../../text/text-checks.ts';
import { describeIssues } from '../../model/validation.ts';

/** The two text tasks. */
export type DialogueTextTask = 'rewrite-spoken' | 'translate';

/** A turn to rewrite: a {@link TextTurn} plus whether the source marked its answer unanswerable. */
export interface RewriteTurn {
  turnNumber: number;
  question: string;
  /** null when the source had no answer (stays null); ignored when `answerable` is false. */
  answer: string | null;
  /** false when the source marked the answer unanswerable: the rewrite says "I don't know". Default true. */
  answerable?: boolean;
}

/** Input of a rewrite. */
export interface RewriteConversationInput {
  dialogueId: string;
  /** Language of the source and of the rewrite (only `en` is supported). */
  language: Language;
  turns: readonly RewriteTurn[];
}

/** Input of a translation. */
export interface TranslateConversationInput {
  dialogueId: string;
  sourceLanguage: Language;
  targetLanguage: Language;
  turns: readonly TextTurn[];
}

/** The generation parameters that, with the prompt, make up a request. */
export interface GenerationSettings {
  /** Provider model name, e.g. `gemma-4-31b-it`; for the demo recordings `hand-written-demo`. */
  model: string;
  temperature: number;
  seed: number;
  /** Send a response JSON schema (JSON mode). Off by default: Gemma's JSON mode is unconfirmed. */
  structuredOutput: boolean;
}

/** Which template each task uses. */
export interface DialogueTextPrompts {
  rewrite: PromptTemplate;
  /** Per target language. */
  translate: Partial<Record<Language, PromptTemplate>>;
}

/** Template ids in use; bump here when a `.v2.md` is added. */
export const PROMPT_IDS = {
  rewrite: 'rewrite-spoken.v1',
  translate: { ja: 'translate.v1' },
  repair: 'repair-dialogue.v1',
} as const satisfies { rewrite: string; translate: Partial<Record<Language, string>>; repair: string };

/**
 * Loads the default templates ({@link PROMPT_IDS}).
 *
 * @returns the templates.
 * @throws Error when a template file is missing or malformed.
 */
export function defaultDialogueTextPrompts(): DialogueTextPrompts {
  return {
    rewrite: loadPromptTemplate(PROMPT_IDS.rewrite),
    translate: { ja: loadPromptTemplate(PROMPT_IDS.translate.ja) },
  };
}

/** Options of the validation (allowed Latin words in Japanese). */
export type DialogueTextValidationOptions = SpeakableTextOptions;

const responseTurnSchema = z.object({ question: z.string(), answer: z.string().nullable() });
const responseSchema = z.object({ turns: z.array(responseTurnSchema) });

/**
 * The JSON schema sent in JSON mode for a conversation of `turnCount` turns.
 *
 * @param turnCount exact number of turns the reply must hold.
 * @returns a draft 2020-12 JSON schema.
 */
export function dialogueResponseJsonSchema(turnCount: number): JsonSchema {
  return z.toJSONSchema(
    z.object({ turns: z.array(responseTurnSchema).min(turnCount).max(turnCount) }),
  ) as JsonSchema;
}

/**
 * Builds the rewrite request. The turns are sent as JSON: `{"turn", "question", "answer"}`, with
 * `"answerable": false` (and no answer) for unanswerable turns and `"answer": null` for turns without one.
 *
 * @param input the conversation.
 * @param settings model name, temperature, seed, JSON mode.
 * @param prompts templates; defaults to {@link defaultDialogueTextPrompts}.
 * @returns the request (with a trace naming the dialogue).
 * @throws UnsupportedTaskError when `input.language` is not `en`.
 */
export function buildRewriteRequest(
  input: RewriteConversationInput,
  settings: GenerationSettings,
  prompts: DialogueTextPrompts = defaultDialogueTextPrompts(),
): GenerationRequest {
  if (input.language !== 'en') {
    throw new UnsupportedTaskError(
      `dialogue ${input.dialogueId}: no spoken-style rewrite prompt for language ${input.language} (only en)`,
      { backendId: 'language-model', task: 'rewrite-spoken' },
    );
  }
  const turns = input.turns.map((turn) =>
    turn.answerable === false
      ? { turn: turn.turnNumber, question: turn.question, answerable: false }
      : { turn: turn.turnNumber, question: turn.question, answer: turn.answer },
  );
  return assembleRequest(prompts.rewrite, turns, settings, { dialogueId: input.dialogueId, task: 'rewrite-spoken' });
}

/**
 * Builds the translation request. The turns are sent as JSON `{"turn", "question", "answer"}`.
 *
 * @param input the conversation in the source language.
 * @param settings model name, temperature, seed, JSON mode.
 * @param prompts templates; defaults to {@link defaultDialogueTextPrompts}.
 * @returns the request (with a trace naming the dialogue).
 * @throws UnsupportedTaskError when source is not `en` or there is no template for the target language.
 */
export function buildTranslateRequest(
  input: TranslateConversationInput,
  settings: GenerationSettings,
  prompts: DialogueTextPrompts = defaultDialogueTextPrompts(),
): GenerationRequest {
  const template = input.sourceLanguage === 'en' ? prompts.translate[input.targetLanguage] : undefined;
  if (template === undefined) {
    throw new UnsupportedTaskError(
      `dialogue ${input.dialogueId}: no translation prompt from ${input.sourceLanguage} to ${input.targetLanguage}`,
      { backendId: 'language-model', task: 'translate' },
    );
  }
  const turns = input.turns.map((turn) => ({ turn: turn.turnNumber, question: turn.question, answer: turn.answer }));
  return assembleRequest(template, turns, settings, { dialogueId: input.dialogueId, task: 'translate' });
}

function assembleRequest(
  template: PromptTemplate,
  turns: readonly object[],
  settings: GenerationSettings,
  trace: { dialogueId: string; task: DialogueTextTask },
): GenerationRequest {
  const filled = fillPromptTemplate(template, {
    turnCount: String(turns.length),
    dialogueJson: JSON.stringify({ turns }, null, 2),
  });
  const request: GenerationRequest = {
    model: settings.model,
    system: filled.system,
    prompt: filled.prompt,
    temperature: settings.temperature,
    seed: settings.seed,
    trace: { ...trace, promptVersion: template.id },
  };
  if (settings.structuredOutput) request.responseSchema = dialogueResponseJsonSchema(turns.length);
  return request;
}

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
 * non-empty strings, and that each line is speakable in the language ({@link findSpeakableTextProblems}).
 * Turns whose input answer was null (and answerable) get a null answer whatever the reply says.
 * Strings are trimmed and inner whitespace collapsed.
 *
 * @param text the model's reply.
 * @param expected the input it answers.
 * @param options allowed Latin words for Japanese.
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
    throw new DialogueTextError({ dialogueId: expected.dialogueId, task: expected.task, kind, problems, responseText: text });
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
    const question = tidy(reply.question);
    for (const message of findSpeakableTextProblems(question, expected.language, options)) {
      problems.push({ turnNumber, field: 'question', message });
    }
    const keepsNull = inputTurn.answer === null && inputTurn.answerable !== false;
    if (keepsNull) return { turnNumber, question, answer: null };
    if (reply.answer === null) {
      problems.push({ turnNumber, field: 'answer', message: 'is null but the input has an answer' });
      return { turnNumber, question, answer: null };
    }
    const answer = tidy(reply.answer);
    for (const message of findSpeakableTextProblems(answer, expected.language, options)) {
      problems.push({ turnNumber, field: 'answer', message });
    }
    return { turnNumber, question, answer };
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

/** The longest part of a previous reply quoted in a repair request, in characters. */
export const REPAIR_QUOTE_LIMIT = 12_000;

/**
 * Builds the repair request for a failed reply: same model, temperature, seed and response schema;
 * the system text is the task's, the prompt repeats the task's prompt, quotes the reply (cut at
 * {@link REPAIR_QUOTE_LIMIT} characters) and lists each problem on its own line.
 *
 * @param original the request that got the reply.
 * @param previousReply the reply's text.
 * @param problems what is wrong with it (from a {@link DialogueTextError}).
 * @param turnCount how many turns the reply must hold.
 * @param template the repair template; default `repair-dialogue.v1`.
 * @returns the request; its trace's promptVersion is `<task template>+<repair template>`.
 * @throws Error when the template cannot be loaded or has other placeholders.
 */
export function buildRepairRequest(
  original: GenerationRequest,
  previousReply: string,
  problems: readonly DialogueTextProblem[],
  turnCount: number,
  template: PromptTemplate = loadPromptTemplate(PROMPT_IDS.repair),
): GenerationRequest {
  const quoted = previousReply.length > REPAIR_QUOTE_LIMIT ? `${previousReply.slice(0, REPAIR_QUOTE_LIMIT)}\n… (cut)` : previousReply;
  const filled = fillPromptTemplate(template, {
    taskSystem: original.system ?? '',
    taskPrompt: original.prompt,
    previousReply: quoted,
    problems: problems.map((problem) => `- ${describeProblem(problem)}`).join('\n'),
    turnCount: String(turnCount),
  });
  const request: GenerationRequest = {
    model: original.model,
    system: filled.system,
    prompt: filled.prompt,
    temperature: original.temperature,
    seed: original.seed,
    trace: { ...original.trace, promptVersion: `${original.trace?.promptVersion ?? '?'}+${template.id}` },
  };
  if (original.responseSchema !== undefined) request.responseSchema = original.responseSchema;
  return request;
}

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
    throw new QuarantinedDialogueError({ dialogueId: plan.dialogueId, task: plan.task, quarantineCause, reason: `${where}: ${reason}`, cause });
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
      const why = turns.length < 2 ? 'a single turn cannot be split' : `already split ${depth} times (maximumSplitDepth ${recovery.maximumSplitDepth})`;
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
      result = await model.generate(buildRepairRequest(request, result.text, error.problems, turns.length, recovery.repairPrompt));
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
  if (options.recovery !== undefined) return produceDialogueTurns(model, plan, turns, options.recovery, options.validation, 0);
  const result = await model.generate(plan.build(turns));
  assertFinished(result, plan.dialogueId, plan.task);
  return parseDialogueResponse(result.text, { dialogueId: plan.dialogueId, task: plan.task, language: plan.language, turns }, options.validation);
}

function tidy(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
