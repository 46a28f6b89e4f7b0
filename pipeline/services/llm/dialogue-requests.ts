/**
 * The requests of the text-transform layer (./dialogue-text.ts): the tasks and their inputs, the
 * prompt templates, the reply's zod and JSON schema, and the request of a rewrite, a translation or
 * a repair (prompt template + turns as JSON).
 */
import { z } from 'zod';
import type { Language, TextTurn } from '../../model/types.ts';
import { languagePackOf } from '../../model/language-pack.ts';
import { fillPromptTemplate, loadPromptTemplate, type PromptTemplate } from '../../prompts/prompt-template.ts';
import { describeProblem, UnsupportedTaskError, type DialogueTextProblem } from './errors.ts';
import type { GenerationRequest, JsonSchema } from './language-model.ts';
import type { SpeakableTextOptions } from '../../text/text-checks.ts';
import type { LanguageIdentificationSettings } from '../../text/language-identification.ts';

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
  /** For a target language without a template of its own: `{{targetLanguage}}` is its name (its language pack's). */
  translateAnyLanguage?: PromptTemplate;
}

/**
 * The translation template towards `targetLanguage`: its own, else the any-language one.
 * @returns undefined when there is neither
 */
export function translationTemplateOf(
  prompts: DialogueTextPrompts,
  targetLanguage: Language,
): PromptTemplate | undefined {
  return prompts.translate[targetLanguage] ?? prompts.translateAnyLanguage;
}

/** Template ids in use; bump here when a `.v2.md` is added. */
export const PROMPT_IDS = {
  rewrite: 'rewrite-spoken.v2',
  translate: { ja: 'translate.v1' },
  translateAnyLanguage: 'translate-spoken.v1',
  repair: 'repair-dialogue.v1',
} as const satisfies {
  rewrite: string;
  translate: Partial<Record<Language, string>>;
  translateAnyLanguage: string;
  repair: string;
};

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
    translateAnyLanguage: loadPromptTemplate(PROMPT_IDS.translateAnyLanguage),
  };
}

/**
 * Options of the validation: allowed Latin words in Japanese, and the thresholds of the language
 * identification of each line (unset = `DEFAULT_LANGUAGE_IDENTIFICATION`).
 */
export type DialogueTextValidationOptions = SpeakableTextOptions & {
  languageIdentification?: LanguageIdentificationSettings;
};

const responseTurnSchema = z.object({ question: z.string(), answer: z.string().nullable() });
/** The reply: one question and answer per turn, in order. */
export const responseSchema = z.object({ turns: z.array(responseTurnSchema) });

/**
 * The JSON schema sent in JSON mode for a conversation of `turnCount` turns.
 *
 * @param turnCount exact number of turns the reply must hold.
 * @returns a draft 2020-12 JSON schema.
 */
export function dialogueResponseJsonSchema(turnCount: number): JsonSchema {
  return z.toJSONSchema(z.object({ turns: z.array(responseTurnSchema).min(turnCount).max(turnCount) })) as JsonSchema;
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
  // a translation into the language it is written in is no translation: refused, not sent
  const template =
    input.sourceLanguage === 'en' && input.targetLanguage !== input.sourceLanguage
      ? translationTemplateOf(prompts, input.targetLanguage)
      : undefined;
  if (template === undefined) {
    throw new UnsupportedTaskError(
      `dialogue ${input.dialogueId}: no translation prompt from ${input.sourceLanguage} to ${input.targetLanguage}`,
      { backendId: 'language-model', task: 'translate' },
    );
  }
  const turns = input.turns.map((turn) => ({ turn: turn.turnNumber, question: turn.question, answer: turn.answer }));
  const language: Record<string, string> = template.placeholders.includes('targetLanguage')
    ? { targetLanguage: languagePackOf(input.targetLanguage).name }
    : {};
  return assembleRequest(template, turns, settings, { dialogueId: input.dialogueId, task: 'translate' }, language);
}

function assembleRequest(
  template: PromptTemplate,
  turns: readonly object[],
  settings: GenerationSettings,
  trace: { dialogueId: string; task: DialogueTextTask },
  extra: Readonly<Record<string, string>> = {},
): GenerationRequest {
  const filled = fillPromptTemplate(template, {
    ...extra,
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
  const quoted =
    previousReply.length > REPAIR_QUOTE_LIMIT
      ? `${previousReply.slice(0, REPAIR_QUOTE_LIMIT)}\n… (cut)`
      : previousReply;
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
