/**
 * The build's `prepare-text` stage for one dialogue and one language: the spoken-style rewrite of the
 * written source (stage `rewrite-spoken`), then, for languages other than English, the translation
 * (stage `translate`). Each result is cached by its own stage (a content hash of its input turns and
 * the backend's fingerprint: backend, model, prompt version and template hash, generation settings).
 */
import type { DialogueText, Language, SourceConversation, TextTurn } from '../model/types.ts';
import type { ContentCache } from '../storage/content-cache.ts';
import type { Stage } from '../run/stage.ts';
import type { DialogueTextBackends } from '../services/llm/text-backends.ts';
import { rewriteSpokenStage } from '../../stages/rewrite-spoken.ts';
import { translateStage } from '../../stages/translate.ts';

/** Input of {@link prepareTextStage}. */
export interface PrepareTextInput {
  conversation: SourceConversation;
  language: Language;
}

/** Parameters of {@link prepareTextStage}: the build's text backends (pipeline/services/llm/text-backends.ts). */
export interface PrepareTextParameters {
  backends: DialogueTextBackends;
}

/** The rewrite's input: the source turns as the corpus has them. */
function rewriteInput(conversation: SourceConversation) {
  return {
    dialogueId: conversation.id,
    turns: conversation.turns.map((turn) => ({
      turnNumber: turn.turnNumber,
      question: turn.question,
      answer: turn.answer,
      answerable: turn.answerable,
    })),
    ...(conversation.language !== undefined && conversation.language !== 'en'
      ? { language: conversation.language }
      : {}),
  };
}

/**
 * Spoken text of one dialogue in `language`.
 * @throws Error when a translation is needed and no backend is configured; whatever the backends
 *   throw (a replay miss, invalid model output), which the runner records as the dialogue's failure
 */
export async function prepareDialogueText(
  conversation: SourceConversation,
  language: Language,
  backends: DialogueTextBackends,
  cache: ContentCache,
): Promise<DialogueText> {
  const context = { cache };
  const source: TextTurn[] = conversation.turns.map((turn) => ({
    turnNumber: turn.turnNumber,
    question: turn.question,
    answer: turn.answer,
  }));
  const spoken = await rewriteSpokenStage.run(rewriteInput(conversation), { backend: backends.rewrite }, context);
  // the corpus's own language needs no translation
  if (language === (conversation.language ?? 'en')) {
    return {
      id: conversation.id,
      language,
      source,
      spoken: spoken.turns,
      final: spoken.turns,
      producedBy: { rewrite: spoken.producedBy },
    };
  }
  const translator = backends.translate;
  if (!translator)
    throw new Error(`${conversation.id}: no translation backend configured for ${language} (llm.translate)`);
  const translated = await translateStage.run(
    { dialogueId: conversation.id, turns: spoken.turns },
    { backend: translator, targetLanguage: language },
    context,
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

/**
 * Stage `prepare-text`: {@link prepareDialogueText}. Its cache keys are the rewrite's (the
 * translation's key holds the rewritten turns, known only once the rewrite ran).
 */
export const prepareTextStage: Stage<PrepareTextInput, PrepareTextParameters, DialogueText> = {
  name: 'prepare-text',
  inputs: ['conversation', 'language'],
  parameters: ['backends'],
  cacheStages: [...rewriteSpokenStage.cacheStages, ...translateStage.cacheStages],
  cacheKeys: (input, parameters) =>
    rewriteSpokenStage.cacheKeys(rewriteInput(input.conversation), { backend: parameters.backends.rewrite }),
  run: (input, parameters, context) =>
    prepareDialogueText(input.conversation, input.language, parameters.backends, context.cache),
};
