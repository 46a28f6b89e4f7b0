/**
 * Stage: rewrite-spoken. Turns the written TopiOCQA turns of one conversation into spoken-style English
 * with a {@link DialogueTextBackend} (rules, or a language model via replay / a real client).
 *
 * {@link rewriteSpoken} is pure apart from the backend call; {@link rewriteSpokenStage} puts the
 * content cache in front of it, keyed by {@link rewriteSpokenFingerprint}, the dialogue id and the turns.
 */
import type { Language, TextTurn } from '../pipeline/model/types.ts';
import {
  backendFingerprint,
  producedByLabel,
  type BackendDescription,
  type DialogueTextBackend,
} from '../pipeline/services/llm/dialogue-text-backend.ts';
import type { RewriteTurn } from '../pipeline/services/llm/dialogue-text.ts';
import { cachedJson, type Stage, type StageCacheKey } from '../pipeline/run/stage.ts';
import { languagePackOf } from '../pipeline/model/language-pack.ts';

/** The output of a text stage and what produced it. */
export interface TextStageOutput {
  turns: TextTurn[];
  /** Human-readable provenance for `DialogueText.producedBy`, e.g. `rules v1`. */
  producedBy: string;
  /** Cache-key string ({@link backendFingerprint}). */
  fingerprint: string;
  description: BackendDescription;
}

/** Per-dialogue context of the rewrite. */
export interface RewriteSpokenContext {
  dialogueId: string;
  /** Language of the source conversation; default `en` (the only one supported). */
  language?: Language;
}

/**
 * Rewrites one conversation into spoken style.
 *
 * @param conversationTurns the source turns (a `SourceTurn[]` fits): `answer` null when the corpus has
 *   none (stays null), `answerable: false` for unanswerable turns (become "I don't know" answers; the
 *   answer text is then ignored, so the loader may keep the sentinel or null).
 * @param backend the text backend.
 * @param context dialogue id (named in every error) and language.
 * @returns the spoken turns, one per input turn, and the backend's provenance and fingerprint.
 * @throws Error when there are no turns; the backend's errors (LanguageModelError subclasses:
 *   UnsupportedTaskError, NoRecordedResponseError, UnfinishedGenerationError, DialogueTextError …).
 */
export async function rewriteSpoken(
  conversationTurns: readonly RewriteTurn[],
  backend: DialogueTextBackend,
  context: RewriteSpokenContext,
): Promise<TextStageOutput> {
  if (conversationTurns.length === 0) throw new Error(`dialogue ${context.dialogueId}: no turns to rewrite`);
  const turns = await backend.rewrite({
    dialogueId: context.dialogueId,
    language: context.language ?? 'en',
    turns: conversationTurns.map((turn) => ({
      turnNumber: turn.turnNumber,
      question: turn.question,
      answer: turn.answer,
      answerable: turn.answerable ?? true,
    })),
  });
  const description = backend.describe('rewrite-spoken');
  return {
    turns,
    producedBy: producedByLabel(description),
    fingerprint: backendFingerprint(backend, 'rewrite-spoken'),
    description,
  };
}

/**
 * The cache-key string of the rewrite stage for a backend.
 *
 * @param backend the text backend.
 * @returns {@link backendFingerprint} for `rewrite-spoken`.
 */
export function rewriteSpokenFingerprint(backend: DialogueTextBackend): string {
  return backendFingerprint(backend, 'rewrite-spoken');
}

/** Input of {@link rewriteSpokenStage}: one conversation's source turns. */
export interface RewriteSpokenInput {
  dialogueId: string;
  /** The source turns as the corpus has them (`SourceTurn` fields `turnNumber`, `question`, `answer`, `answerable`). */
  turns: readonly RewriteTurn[];
  /** Language of the corpus (`corpus.language`); absent = English. */
  language?: Language;
}

/** Parameters of {@link rewriteSpokenStage}: the dataset's rewrite backend. */
export interface RewriteSpokenParameters {
  backend: DialogueTextBackend;
}

/** The cache entry of one rewrite: `{fingerprint, dialogueId, turns}` under `rewrite-spoken`. */
function rewriteCacheKey(input: RewriteSpokenInput, parameters: RewriteSpokenParameters): StageCacheKey {
  // the language enters the key only when it is not English, so English entries keep keys without it
  const language = input.language !== undefined && input.language !== 'en' ? { language: input.language } : {};
  // the rules backend spells a non-English corpus's numbers by its pack's `numbers` (library, locale,
  // years, units, decimalWord), so a changed pack redoes the rewrite
  const numbers =
    language.language !== undefined && parameters.backend.describe('rewrite-spoken').backend === 'rules'
      ? { numbers: languagePackOf(language.language).numbers }
      : {};
  return {
    stage: 'rewrite-spoken',
    keyMaterial: {
      fingerprint: rewriteSpokenFingerprint(parameters.backend),
      dialogueId: input.dialogueId,
      turns: input.turns,
      ...language,
      ...numbers,
    },
  };
}

/**
 * Stage `rewrite-spoken`: {@link rewriteSpoken} of one English conversation, cached under the backend's
 * fingerprint, the dialogue id and the source turns.
 * @throws as {@link rewriteSpoken}
 */
export const rewriteSpokenStage: Stage<RewriteSpokenInput, RewriteSpokenParameters, TextStageOutput> = {
  name: 'rewrite-spoken',
  inputs: ['dialogueId', 'turns', 'language'],
  parameters: ['backend'],
  cacheStages: ['rewrite-spoken'],
  cacheKeys: async (input, parameters) => [rewriteCacheKey(input, parameters)],
  run: (input, parameters, context) =>
    cachedJson(context.cache, rewriteCacheKey(input, parameters), () =>
      rewriteSpoken(input.turns, parameters.backend, {
        dialogueId: input.dialogueId,
        language: input.language ?? 'en',
      }),
    ),
};
