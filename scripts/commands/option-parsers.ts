/** Option value parsers shared by the `duplexsynth` commands (commander `argParser`s). */
import { InvalidArgumentError } from 'commander';
import { LANGUAGE_CODE_PATTERN } from '../../pipeline/model/language-code.ts';

/** A number > 0. @throws InvalidArgumentError otherwise (commander prints it with the usage) */
export function positiveNumber(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new InvalidArgumentError('expected a positive number');
  return parsed;
}

/** An integer > 0. @throws InvalidArgumentError otherwise */
export function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed <= 0) throw new InvalidArgumentError('expected a positive integer');
  return parsed;
}

/** An integer >= 0 and below 2^53 (`1e20` is an integer to JavaScript but not exact). @throws InvalidArgumentError otherwise */
export function nonNegativeInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 0)
    throw new InvalidArgumentError('expected a non-negative integer below 2^53');
  return parsed;
}

/**
 * A language code: a BCP-47 tag such as `en`, `ja`, `zh`, `zh-Hans` (pipeline/model/language-code.ts).
 * Whether the pipeline knows the language is decided later, by its language pack.
 * @throws InvalidArgumentError for anything else
 */
export function languageCode(value: string): string {
  if (!LANGUAGE_CODE_PATTERN.test(value))
    throw new InvalidArgumentError(`"${value}" is not a language code (a BCP-47 tag such as en, ja, zh, de)`);
  return value;
}

/** Several language codes (a variadic option's values, one at a time). @throws InvalidArgumentError as {@link languageCode} */
export function languageCodes(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), languageCode(value)];
}

/**
 * Seconds between DNSMOS windows (`quality.dnsmos.hopSeconds`): from one 16 kHz sample (1/16000 s) to
 * an hour, as the config schema allows. @throws InvalidArgumentError otherwise
 */
export function dnsmosHop(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 1 / 16000 || parsed > 3600)
    throw new InvalidArgumentError(
      'expected seconds from 1/16000 (one sample) to 3600, e.g. 1 (the reference) or 9.01',
    );
  return parsed;
}
