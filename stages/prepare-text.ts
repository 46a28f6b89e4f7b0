/**
 * The text half of the pipeline for one dialogue and one language: spoken-style rewrite of the
 * written source (stage `rewrite-spoken`), then, for languages other than English, translation
 * (stage `translate`). Each result is cached by a content hash of its input turns and the backend's
 * fingerprint (backend, model, prompt version and template hash, generation settings).
 */
import type { BuildConfig } from '../pipeline/config.ts';
import type { DialogueText, Language, SourceConversation, TextTurn } from '../pipeline/model/types.ts';
import type { ContentCache } from '../pipeline/storage/content-cache.ts';
import { createDialogueTextBackend } from '../pipeline/services/llm/backend-settings.ts';
import type { DialogueTextBackend } from '../pipeline/services/llm/dialogue-text-backend.ts';
import type { RetryEvent } from '../pipeline/services/llm/retrying-model.ts';
import { rewriteSpoken, rewriteSpokenFingerprint, type TextStageOutput } from './rewrite-spoken.ts';
import { translateDialogue, translateFingerprint } from './translate.ts';

/** The backends of a build: rewrite always, translate when configured. */
export interface DialogueTextBackends {
  rewrite: DialogueTextBackend;
  translate: DialogueTextBackend | null;
}

/**
 * Build the text backends named by `config.llm` (paths already resolved by the config loader).
 * @param onRetry called before each retry of a remote call (for progress lines)
 */
export async function createTextBackends(config: BuildConfig, onRetry?: (event: RetryEvent) => void): Promise<DialogueTextBackends> {
  const environment = { baseDirectory: config.baseDirectory, ...(onRetry ? { onRetry } : {}) };
  return {
    rewrite: createDialogueTextBackend(config.llm.rewrite, environment),
    translate: config.llm.translate.backend === 'none' ? null : createDialogueTextBackend(config.llm.translate, environment),
  };
}

/**
 * Spoken text of one dialogue in `language`.
 * @throws ConfigError-like Error when a translation is needed and no backend is configured; whatever
 *   the backends throw (a replay miss, invalid model output), which the runner records as the
 *   dialogue's failure
 */
export async function prepareDialogueText(
  conversation: SourceConversation,
  language: Language,
  backends: DialogueTextBackends,
  cache: ContentCache,
): Promise<DialogueText> {
  const source: TextTurn[] = conversation.turns.map((turn) => ({ turnNumber: turn.turnNumber, question: turn.question, answer: turn.answer }));
  const rewriteInput = conversation.turns.map((turn) => ({ turnNumber: turn.turnNumber, question: turn.question, answer: turn.answer, answerable: turn.answerable }));
  const spoken = await cache.json<TextStageOutput>('rewrite-spoken', { fingerprint: rewriteSpokenFingerprint(backends.rewrite), dialogueId: conversation.id, turns: rewriteInput }, () =>
    rewriteSpoken(rewriteInput, backends.rewrite, { dialogueId: conversation.id, language: 'en' }),
  );
  if (language === 'en') {
    return { id: conversation.id, language, source, spoken: spoken.turns, final: spoken.turns, producedBy: { rewrite: spoken.producedBy } };
  }
  const translator = backends.translate;
  if (!translator) throw new Error(`${conversation.id}: no translation backend configured for ${language} (llm.translate)`);
  const translated = await cache.json<TextStageOutput>(
    'translate',
    { fingerprint: translateFingerprint(translator, language), dialogueId: conversation.id, turns: spoken.turns },
    () => translateDialogue(spoken.turns, translator, { dialogueId: conversation.id, sourceLanguage: 'en', targetLanguage: language }),
  );
  return {
    id: conversation.id,
    language,
    source,
    spoken: spoken.turns,
    final: translated.turns,
    producedBy: { rewrite: spoken.producedBy, translate: translated.producedBy },
  };
}
