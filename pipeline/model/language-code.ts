/**
 * A language is named by its BCP-47 tag (RFC 5646: `en`, `ja`, `zh`, `zh-Hans`, `pt-BR`, `yue`), never by
 * a closed list in the code: what the pipeline knows about a language (script, segmentation, voices,
 * timing statistics) is data, looked up by this code.
 */
import { z } from 'zod';

/**
 * The shape of a BCP-47 language tag as the pipeline accepts it: a 2–3 letter ISO 639 primary language
 * subtag (lower case), then optional subtags of 2–8 letters or digits (script `Hans`, region `BR`,
 * variant), joined by `-`. The same text names dataset folders (`data/{lang}/...`), so nothing else is allowed.
 */
export const LANGUAGE_CODE_PATTERN = /^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;

/** zod schema of a language code (see {@link LANGUAGE_CODE_PATTERN}). */
export const languageCodeSchema = z
  .string()
  .regex(LANGUAGE_CODE_PATTERN, 'a BCP-47 language tag such as en, ja, zh, zh-Hans or pt-BR');

/** A language that a per-language table has no entry for (a language pack lacks a field, or none exists). */
export class UnknownLanguageError extends Error {
  override name = 'UnknownLanguageError';
}

/**
 * The entry of `language` in a table keyed by language code.
 * @param what what the table holds, for the message (e.g. `speech-rate bounds`)
 * @throws UnknownLanguageError naming the language and `what` when the table has no entry
 */
export function entryOfLanguage<T>(table: Readonly<Record<string, T>>, language: string, what: string): T {
  const entry = Object.hasOwn(table, language) ? table[language] : undefined;
  if (entry === undefined)
    throw new UnknownLanguageError(`no ${what} for language ${language} (known: ${Object.keys(table).join(', ')})`);
  return entry;
}
