/**
 * Stage: translate. Translates the spoken English turns of one conversation into the target language
 * (Japanese) with a {@link DialogueTextBackend}. For English targets the runner uses the spoken text as
 * final text and does not call this stage.
 *
 * {@link translateDialogue} is pure apart from the backend call; {@link translateStage} puts the
 * content cache in front of it, keyed by {@link translateFingerprint}, the dialogue id and the turns.
 */
import type { Language, TextTurn } from '../pipeline/model/types.ts';
import {
  backendFingerprint,
  producedByLabel,
  type DialogueTextBackend,
} from '../pipeline/services/llm/dialogue-text-backend.ts';
import type { TextStageOutput } from './rewrite-spoken.ts';
import { cachedJson, type Stage, type StageCacheKey } from '../pipeline/run/stage.ts';

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
    throw new Error(
      `dialogue ${context.dialogueId}: source and target language are both ${sourceLanguage}; use the spoken text as is`,
    );
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

/** Input of {@link translateStage}: one conversation's spoken English turns. */
export interface TranslateInput {
  dialogueId: string;
  /** The spoken-style turns (the `rewrite-spoken` stage's output turns). */
  turns: readonly TextTurn[];
}

/** Parameters of {@link translateStage}: the dataset's language and translation backend. */
export interface TranslateParameters {
  backend: DialogueTextBackend;
  targetLanguage: Language;
}

/** The cache entry of one translation: `{fingerprint, dialogueId, turns}` under `translate`. */
function translateCacheKey(input: TranslateInput, parameters: TranslateParameters): StageCacheKey {
  return {
    stage: 'translate',
    keyMaterial: {
      fingerprint: translateFingerprint(parameters.backend, parameters.targetLanguage),
      dialogueId: input.dialogueId,
      turns: input.turns,
    },
  };
}

/**
 * Stage `translate`: {@link translateDialogue} from English, cached under the backend's fingerprint for
 * the target language, the dialogue id and the spoken turns.
 * @throws as {@link translateDialogue}; UnsupportedTaskError from the rules backend already when the key is made
 */
export const translateStage: Stage<TranslateInput, TranslateParameters, TextStageOutput> = {
  name: 'translate',
  inputs: ['dialogueId', 'turns'],
  parameters: ['backend', 'targetLanguage'],
  cacheStages: ['translate'],
  cacheKeys: async (input, parameters) => [translateCacheKey(input, parameters)],
  run: (input, parameters, context) =>
    cachedJson(context.cache, translateCacheKey(input, parameters), () =>
      translateDialogue(input.turns, parameters.backend, {
        dialogueId: input.dialogueId,
        sourceLanguage: 'en',
        targetLanguage: parameters.targetLanguage,
      }),
    ),
};
