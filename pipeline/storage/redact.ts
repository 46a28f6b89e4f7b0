/**
 * Secret redaction: every configured API key value is replaced by the name of the environment
 * variable holding it (`$GEMINI_API_KEY`) in every message, log line, summary, metadata file and
 * recorded-response file duplexsynth writes. Some gateways echo the key in an error body (a 401
 * `Incorrect API key provided: sk-…`); without this it would reach stderr and `summary.json`.
 *
 * Keys are registered process-wide when read (`readApiKey` in pipeline/services/llm/backend-settings.ts)
 * and, for a build, up front from the configuration (`registerConfiguredSecrets` in pipeline/run/build-guards.ts). The sinks
 * call {@link redactSecrets}: `writeAtomic` (every text file), the build log, the CLI's error line, the
 * recorded-response writer and the LLM clients' errors ({@link redactErrorInPlace}).
 *
 * Values shorter than {@link MINIMUM_SECRET_LENGTH} characters are not registered: replacing a
 * three-letter "key" everywhere would mangle ordinary text, and no real API key is that short.
 */

/**
 * The variables the Gemini backend reads without `apiKeyVariable` (DEFAULT_GEMINI_API_KEY_VARIABLES of
 * pipeline/services/llm/gemini-model.ts, repeated so this module, which every file write imports,
 * does not load the Gemini SDK; redact.test.ts checks they agree).
 */
export const GEMINI_DEFAULT_KEY_VARIABLES: readonly string[] = ['GEMINI_API_KEY', 'GOOGLE_API_KEY'];

/** Shortest value treated as a secret, characters. */
export const MINIMUM_SECRET_LENGTH = 8;

/** Secret text (and its escaped forms) -> replacement. */
const replacements = new Map<string, string>();
/** Registered forms, longest first, so a key that contains another is replaced whole. */
let ordered: [string, string][] = [];

/**
 * Register a secret value read from `variableName`, so every later {@link redactSecrets} replaces it
 * (and its JSON-escaped and URL-encoded forms) by `$variableName`.
 * @param value the key (trimmed); ignored when undefined or shorter than {@link MINIMUM_SECRET_LENGTH}
 * @param variableName the environment variable it came from
 */
export function registerSecret(value: string | undefined, variableName: string): void {
  const secret = value?.trim();
  if (secret === undefined || secret.length < MINIMUM_SECRET_LENGTH) return;
  const replacement = `$${variableName}`;
  for (const form of [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)])
    replacements.set(form, replacement);
  ordered = [...replacements.entries()].sort(([a], [b]) => b.length - a.length);
}

/** Forget every registered secret (for tests). */
export function clearRegisteredSecrets(): void {
  replacements.clear();
  ordered = [];
}

/** `text` with every registered secret replaced by its variable name (`$NAME`). */
export function redactSecrets(text: string): string {
  if (ordered.length === 0) return text;
  let result = text;
  for (const [secret, replacement] of ordered)
    if (result.includes(secret)) result = result.split(secret).join(replacement);
  return result;
}

/**
 * Redact an error where it is made, so retry events, dialogue failure reasons and the build report
 * never carry a key: its message, stack, `responseBody` and its causes (up to 5 deep) are rewritten.
 * @returns the same error object
 */
export function redactErrorInPlace<T>(error: T): T {
  if (ordered.length === 0) return error;
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const target = current as Error & { responseBody?: unknown };
    for (const field of ['message', 'stack', 'responseBody'] as const) {
      const value = target[field];
      if (typeof value !== 'string') continue;
      const redacted = redactSecrets(value);
      if (redacted === value) continue;
      try {
        Object.defineProperty(target, field, {
          value: redacted,
          configurable: true,
          writable: true,
          enumerable: field === 'responseBody',
        });
      } catch {
        // a frozen or exotic error (DOMException's message is a getter on its prototype): left as it is
      }
    }
    current = target.cause;
  }
  return error;
}
