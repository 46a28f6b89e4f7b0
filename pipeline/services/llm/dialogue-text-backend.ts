/**
 * The stage-level seam: a {@link DialogueTextBackend} rewrites a conversation into spoken style and
 * translates it. Two implementations: {@link LanguageModelTextBackend} here (prompt + model + parse +
 * validate) and `RulesTextBackend` (./rules-backend.ts, offline English normaliser, cannot translate).
 *
 * {@link backendFingerprint} gives the string the stage runner hashes into its cache key: it changes
 * whenever the produced text could change (backend kind, model name, prompt version and content,
 * temperature, seed, JSON mode, the recovery steps and repair prompt; for rules, the rules version).
 */
import type { Language, TextTurn } from '../../model/types.ts';
import { loadPromptTemplate } from '../../prompts/prompt-template.ts';
import {
  defaultDialogueTextPrompts,
  PROMPT_IDS,
  translationTemplateOf,
  rewriteConversation,
  translateConversation,
  type DialogueTextPrompts,
  type DialogueTextRecovery,
  type DialogueTextTask,
  type DialogueTextValidationOptions,
  type GenerationSettings,
  type RewriteConversationInput,
  type TranslateConversationInput,
} from './dialogue-text.ts';
import type { LanguageModel } from './language-model.ts';

/** What produced (or would produce) a text: everything that can change it, plus the transport. */
export interface BackendDescription {
  /** Backend kind: `rules` or `language-model`. */
  backend: string;
  /** For `language-model`: the {@link LanguageModel} id (`replay`, `gemini`, …). Not in the fingerprint. */
  transport?: string;
  /** Provider model name. */
  model?: string;
  /** Prompt template id, e.g. `rewrite-spoken.v2`. */
  promptVersion?: string;
  /** sha256 of the template file (first 12 hex characters). */
  promptSha256?: string;
  temperature?: number;
  seed?: number;
  structuredOutput?: boolean;
  /**
   * The recovery steps when on, e.g. `repair=repair-dialogue.v1#1a2b3c4d5e6f,split-depth=2`
   * (`repair=off` without repair); absent when failures are thrown as they come.
   */
  recovery?: string;
  /** For `rules`: version of the rule set. */
  rulesVersion?: number;
  /**
   * For a translation by the template shared by every language (`translate-spoken.v1`, which names the
   * language inside): the target language, so that translations into two languages never share a
   * cache key. Absent for a language with a template of its own (ja: `translate.v1`).
   */
  targetLanguage?: Language;
}

/** Rewrites and translates whole conversations. */
export interface DialogueTextBackend {
  /** `rules` or `language-model(<transport>)`. */
  readonly id: string;
  /**
   * Rewrites written turns into spoken style, one output turn per input turn; answers that are null
   * (and answerable) stay null; `answerable: false` turns get an "I don't know" answer.
   */
  rewrite(input: RewriteConversationInput): Promise<TextTurn[]>;
  /** Translates spoken turns, one output turn per input turn; null answers stay null. */
  translate(input: TranslateConversationInput): Promise<TextTurn[]>;
  /**
   * Describes what produces the output of `task` (for `translate`, towards `targetLanguage`).
   * Throws when the backend cannot do the task.
   */
  describe(task: DialogueTextTask, targetLanguage?: Language): BackendDescription;
}

/**
 * The cache-key string of a backend for a task, e.g.
 * `language-model|model=gemma-4-31b-it|prompt=rewrite-spoken.v2#1a2b3c4d5e6f|temperature=0|seed=1234|structured-output=false`
 * or `rules|version=1`. The transport (replay vs. a live client) is left out: a replay of a recording
 * gives the text the recorded model gave.
 *
 * @param backend the backend.
 * @param task `rewrite-spoken` or `translate`.
 * @param targetLanguage for `translate`.
 * @returns a stable string.
 * @throws UnsupportedTaskError when the backend cannot do the task (rules: translate).
 */
export function backendFingerprint(
  backend: DialogueTextBackend,
  task: DialogueTextTask,
  targetLanguage?: Language,
): string {
  return fingerprintOf(backend.describe(task, targetLanguage));
}

/**
 * The fingerprint string of a description (see {@link backendFingerprint}).
 *
 * @param description a backend description.
 * @returns a stable string without the transport.
 */
export function fingerprintOf(description: BackendDescription): string {
  const parts = [description.backend];
  if (description.rulesVersion !== undefined) parts.push(`version=${description.rulesVersion}`);
  if (description.model !== undefined) parts.push(`model=${description.model}`);
  if (description.promptVersion !== undefined)
    parts.push(`prompt=${description.promptVersion}#${description.promptSha256 ?? ''}`);
  if (description.temperature !== undefined) parts.push(`temperature=${description.temperature}`);
  if (description.seed !== undefined) parts.push(`seed=${description.seed}`);
  if (description.structuredOutput !== undefined) parts.push(`structured-output=${description.structuredOutput}`);
  if (description.recovery !== undefined) parts.push(`recovery=${description.recovery}`);
  if (description.targetLanguage !== undefined) parts.push(`target=${description.targetLanguage}`);
  return parts.join('|');
}

/**
 * A human-readable provenance label, e.g. `language-model(replay) hand-written-demo rewrite-spoken.v2`
 * or `rules v1`; for `DialogueText.producedBy`.
 *
 * @param description a backend description.
 * @returns the label.
 */
export function producedByLabel(description: BackendDescription): string {
  if (description.backend === 'rules') return `rules v${description.rulesVersion ?? '?'}`;
  const backend =
    description.transport !== undefined ? `${description.backend}(${description.transport})` : description.backend;
  return [backend, description.model, description.promptVersion].filter((part) => part !== undefined).join(' ');
}

/** Options of a {@link LanguageModelTextBackend}. */
export interface LanguageModelTextBackendOptions {
  settings: GenerationSettings;
  /** Templates; default {@link defaultDialogueTextPrompts}. */
  prompts?: DialogueTextPrompts;
  validation?: DialogueTextValidationOptions;
  /**
   * Repair, split and quarantine (./dialogue-text.ts); undefined = failures are thrown as they come
   * (DialogueTextError, UnfinishedGenerationError). Backends built from settings always set it.
   */
  recovery?: DialogueTextRecovery;
}

/** A {@link DialogueTextBackend} over a {@link LanguageModel}: prompt, call, parse, validate (and recover). */
export class LanguageModelTextBackend implements DialogueTextBackend {
  readonly id: string;
  private readonly prompts: DialogueTextPrompts;

  /**
   * @param model the model (replay, recording wrapper, fake, or a real client).
   * @param options generation settings, templates, validation options.
   * @throws Error when the default templates cannot be loaded.
   */
  constructor(
    readonly model: LanguageModel,
    private readonly options: LanguageModelTextBackendOptions,
  ) {
    this.id = `language-model(${model.id})`;
    this.prompts = options.prompts ?? defaultDialogueTextPrompts();
    this.recovery =
      options.recovery === undefined
        ? undefined
        : { ...options.recovery, repairPrompt: options.recovery.repairPrompt ?? loadPromptTemplate(PROMPT_IDS.repair) };
  }

  private readonly recovery: DialogueTextRecovery | undefined;

  /**
   * Rewrites with the model; see `rewriteConversation` (./dialogue-text.ts) for what is thrown.
   */
  rewrite(input: RewriteConversationInput): Promise<TextTurn[]> {
    return rewriteConversation(this.model, input, { ...this.options, prompts: this.prompts, recovery: this.recovery });
  }

  /**
   * Translates with the model; see `translateConversation` (./dialogue-text.ts) for what is thrown.
   */
  translate(input: TranslateConversationInput): Promise<TextTurn[]> {
    return translateConversation(this.model, input, {
      ...this.options,
      prompts: this.prompts,
      recovery: this.recovery,
    });
  }

  /**
   * Describes the model, prompt and parameters used for `task`.
   *
   * @throws Error when `task` is `translate` without a target language or without a template for it.
   */
  describe(task: DialogueTextTask, targetLanguage?: Language): BackendDescription {
    const template =
      task === 'rewrite-spoken'
        ? this.prompts.rewrite
        : targetLanguage !== undefined
          ? translationTemplateOf(this.prompts, targetLanguage)
          : undefined;
    if (template === undefined) {
      throw new Error(
        `language-model backend: no ${task} prompt${targetLanguage !== undefined ? ` for ${targetLanguage}` : ' (target language missing)'}`,
      );
    }
    const { model, temperature, seed, structuredOutput } = this.options.settings;
    return {
      backend: 'language-model',
      transport: this.model.id,
      model,
      promptVersion: template.id,
      promptSha256: template.sha256.slice(0, 12),
      temperature,
      seed,
      structuredOutput,
      ...(this.recovery !== undefined ? { recovery: describeRecovery(this.recovery) } : {}),
      // the shared template names the language only inside the request: the language goes into the fingerprint
      ...(task === 'translate' && targetLanguage !== undefined && this.prompts.translate[targetLanguage] === undefined
        ? { targetLanguage }
        : {}),
    };
  }
}

/**
 * The fingerprint text of recovery settings, e.g. `repair=repair-dialogue.v1#1a2b3c4d5e6f,split-depth=2`.
 *
 * @param recovery the settings (with the repair template resolved).
 * @returns the text.
 */
export function describeRecovery(recovery: DialogueTextRecovery): string {
  const template = recovery.repairPrompt;
  const repair = !recovery.repair
    ? 'off'
    : template !== undefined
      ? `${template.id}#${template.sha256.slice(0, 12)}`
      : PROMPT_IDS.repair;
  return `repair=${repair},split-depth=${recovery.maximumSplitDepth}`;
}
