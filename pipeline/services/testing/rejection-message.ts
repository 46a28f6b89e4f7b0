/** Test helper: the message of a promise's rejection, for the service clients' failure-message tests. */
import { expect } from 'vitest';

/**
 * The message of what `promise` rejects with; fails the test when it resolves or rejects with a non-Error.
 * @returns the Error's message
 */
export async function rejectionMessage(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Error);
  return (error as Error).message;
}
