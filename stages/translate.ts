/**
 * Stage: translate. Translates the spoken English turns of one conversation into the target language
 * (Japanese) with a {@link DialogueTextBackend}. For English targets the runner uses the spoken text as
 * final text and does not call this stage.
 *
 * Pure apart from the backend call: the lead's stage runner owns caching; it hashes
 * {@link translateFingerprint} into the stage parameters.
 */
import type { Language, TextTurn } from '../pipeline/model/types.ts';
import { backendFingerprint, producedByLabel, type DialogueTextBackend } from '../pipeline/services/llm/dialogue-text-backend.ts';
import type { TextStageOutput } from './rewrite-spoken.ts';

export type { TextStageOutput } from './rewrite-spoken.ts';

/** Per-dialogue context of the translation. */
export interface TranslateDialogueContext {
  dialogueId: string;
  /** Default `en`. */
  sourceLanguage?: Language;
  targetLanguage: Language;
}

/**
 * Translates one spoken conversation.
 *
 * @param spokenTurns the spoken-style turns (output of rewrite-spoken); null answers stay null.
 * @param backend the text backend (the rules backend refuses).
 * @param context dialogue id, source language (default `en`), target language.
 * @returns the translated turns, one per input turn, and the backend's provenance and fingerprint.
 * @throws Error when there are no turns or source and target language are the same; the backend's
 *   errors (UnsupportedTaskError from the rules backend, NoRecordedResponseError,
 *   UnfinishedGenerationError, DialogueTextError for wrong turn count / digits / untranslated English …).
 */
export async function translateDialogue(
  spokenTurns: readonly TextTurn[],
  backend: DialogueTextBackend,
  context: TranslateDialogueContext,
): Promise<TextStageOutput> {
  const sourceLanguage = context.sourceLanguage ?? 'en';
  if (spokenTurns.length === 0) throw new Error(`dialogue ${context.dialogueId}: no turns to translate`);
  if (sourceLanguage === context.targetLanguage) {
    throw new Error(`dialogue ${context.dialogueId}: source and target language are both ${sourceLanguage}; use the spoken text as is`);
  }
  const turns = await backend.translate({
    dialogueId: context.dialogueId,
    sourceLanguage,
    targetLanguage: context.targetLanguage,
    turns: spokenTurns,
  });
  const description = backend.describe('translate', context.targetLanguage);
  return {
    turns,
    producedBy: producedByLabel(description),
    fingerprint: backendFingerprint(backend, 'translate', context.targetLanguage),
    description,
  };
}

/**
 * The cache-key string of the translate stage for a backend and target language.
 *
 * @param backend the text backend.
 * @param targetLanguage the target language.
 * @returns {@link backendFingerprint} for `translate`.
 * @throws UnsupportedTaskError for the rules backend.
 */
export function translateFingerprint(backend: DialogueTextBackend, targetLanguage: Language): string {
  return backendFingerprint(backend, 'translate', targetLanguage);
}
