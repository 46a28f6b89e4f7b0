/**
 * The text-transform layer over a {@link LanguageModel}: build the request for a whole conversation
 * (prompt template + turns as JSON), call the model, extract the JSON, validate the turns.
 *
 * Shaped for the repair/quarantine step of a later issue: request building, parsing and validation are
 * separate exported functions, and failures are {@link DialogueTextError}s that carry the raw text and a
 * per-turn problem list (what a repair prompt needs).
 */
import { z } from 'zod';
import type { Language, TextTurn } from '../../model/types.ts';
import { fillPromptTemplate, loadPromptTemplate, type PromptTemplate } from '../../prompts/prompt-template.ts';
import { DialogueTextError, UnfinishedGenerationError, UnsupportedTaskError, type DialogueTextProblem } from './errors.ts';
import { extractJsonObject } from './json-extraction.ts';
import type { GenerationRequest, GenerationResult, JsonSchema, LanguageModel } from './language-model.ts';
import { findSpeakableTextProblems, type SpeakableTextOptions } from './text-checks.ts';

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
} as const satisfies { rewrite: string; translate: Partial<Record<Language, string>> };

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
      parsed.error.issues.map((issue) => ({ message: `${issue.path.join('.') || 'reply'}: ${issue.message}` })),
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

/** Everything {@link rewriteConversation} and {@link translateConversation} need besides the model. */
export interface DialogueTextOptions {
  settings: GenerationSettings;
  prompts?: DialogueTextPrompts;
  validation?: DialogueTextValidationOptions;
}

/**
 * Rewrites a written conversation into spoken English with a language model.
 *
 * @param model the model to call.
 * @param input dialogue id, language (`en`), turns (with `answerable: false` for unanswerable ones).
 * @param options generation settings, templates, validation options.
 * @returns one spoken turn per input turn; null answers stay null.
 * @throws UnsupportedTaskError for a language other than `en`; whatever the model throws
 *   (LanguageModelError subclasses); UnfinishedGenerationError; DialogueTextError when the reply is
 *   unparseable or invalid.
 */
export async function rewriteConversation(
  model: LanguageModel,
  input: RewriteConversationInput,
  options: DialogueTextOptions,
): Promise<TextTurn[]> {
  const request = buildRewriteRequest(input, options.settings, options.prompts);
  const result = await model.generate(request);
  assertFinished(result, input.dialogueId, 'rewrite-spoken');
  return parseDialogueResponse(
    result.text,
    { dialogueId: input.dialogueId, task: 'rewrite-spoken', language: input.language, turns: input.turns },
    options.validation,
  );
}

/**
 * Translates a spoken conversation with a language model.
 *
 * @param model the model to call.
 * @param input dialogue id, source and target language, turns.
 * @param options generation settings, templates, validation options (allowed Latin words).
 * @returns one translated turn per input turn; null answers stay null.
 * @throws UnsupportedTaskError for an unsupported language pair; whatever the model throws;
 *   UnfinishedGenerationError; DialogueTextError when the reply is unparseable or invalid (wrong turn
 *   count, digits, untranslated English, …).
 */
export async function translateConversation(
  model: LanguageModel,
  input: TranslateConversationInput,
  options: DialogueTextOptions,
): Promise<TextTurn[]> {
  const request = buildTranslateRequest(input, options.settings, options.prompts);
  const result = await model.generate(request);
  assertFinished(result, input.dialogueId, 'translate');
  return parseDialogueResponse(
    result.text,
    { dialogueId: input.dialogueId, task: 'translate', language: input.targetLanguage, turns: input.turns },
    options.validation,
  );
}

function tidy(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
