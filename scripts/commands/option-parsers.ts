/** Option value parsers shared by the `duplexsynth` commands (commander `argParser`s). */
import { InvalidArgumentError } from 'commander';

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
  if (!Number.isSafeInteger(parsed) || parsed < 0) throw new InvalidArgumentError('expected a non-negative integer below 2^53');
  return parsed;
}
