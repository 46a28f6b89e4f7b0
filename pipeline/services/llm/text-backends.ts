/**
 * The text backends of a build, made once from `config.llm`: the spoken-style rewrite (always) and
 * the translation (when `llm.translate` names a backend).
 */
import { createDialogueTextBackend } from './backend-settings.ts';
import type { DialogueTextBackend } from './dialogue-text-backend.ts';
import type { RetryEvent } from './retrying-model.ts';

/** The backends of a build: rewrite always, translate when configured. */
export interface DialogueTextBackends {
  rewrite: DialogueTextBackend;
  translate: DialogueTextBackend | null;
}

/** The settings of one text backend (./backend-settings.ts). */
type TextBackendSettings = Parameters<typeof createDialogueTextBackend>[0];

/** What the text backends are made from: a build config's `llm` and `baseDirectory` (pipeline/config.ts). */
export interface TextBackendsConfig {
  /** Relative paths (replay files, prompt templates) are resolved against it. */
  baseDirectory: string;
  llm: { rewrite: TextBackendSettings; translate: TextBackendSettings | { backend: 'none' } };
}

/**
 * Build the text backends named by `config.llm` (paths already resolved by the config loader).
 * @param onRetry called before each retry of a remote call (for progress lines)
 * @throws as createDialogueTextBackend (./backend-settings.ts): malformed settings, prompt templates that
 *   cannot be loaded, an endpoint configured twice with different throughput
 */
export async function createTextBackends(
  config: TextBackendsConfig,
  onRetry?: (event: RetryEvent) => void,
): Promise<DialogueTextBackends> {
  const environment = { baseDirectory: config.baseDirectory, ...(onRetry ? { onRetry } : {}) };
  return {
    rewrite: createDialogueTextBackend(config.llm.rewrite, environment),
    translate:
      config.llm.translate.backend === 'none' ? null : createDialogueTextBackend(config.llm.translate, environment),
  };
}
