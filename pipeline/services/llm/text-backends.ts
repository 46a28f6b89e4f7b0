/**
 * The text backends of a build, made once from `config.llm`: the spoken-style rewrite (always) and
 * the translation (when `llm.translate` names a backend).
 */
import type { BuildConfig } from '../../config.ts';
import { createDialogueTextBackend } from './backend-settings.ts';
import type { DialogueTextBackend } from './dialogue-text-backend.ts';
import type { RetryEvent } from './retrying-model.ts';

/** The backends of a build: rewrite always, translate when configured. */
export interface DialogueTextBackends {
  rewrite: DialogueTextBackend;
  translate: DialogueTextBackend | null;
}

/**
 * Build the text backends named by `config.llm` (paths already resolved by the config loader).
 * @param onRetry called before each retry of a remote call (for progress lines)
 * @throws as createDialogueTextBackend (./backend-settings.ts): malformed settings, prompt templates that
 *   cannot be loaded, an endpoint configured twice with different throughput
 */
export async function createTextBackends(config: BuildConfig, onRetry?: (event: RetryEvent) => void): Promise<DialogueTextBackends> {
  const environment = { baseDirectory: config.baseDirectory, ...(onRetry ? { onRetry } : {}) };
  return {
    rewrite: createDialogueTextBackend(config.llm.rewrite, environment),
    translate: config.llm.translate.backend === 'none' ? null : createDialogueTextBackend(config.llm.translate, environment),
  };
}
