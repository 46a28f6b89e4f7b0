/** Secret redaction: registered API keys in every form they are written in. */
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_GEMINI_API_KEY_VARIABLES } from '../services/llm/gemini-model.ts';
import {
  GEMINI_DEFAULT_KEY_VARIABLES,
  clearRegisteredSecrets,
  redactErrorInPlace,
  redactSecrets,
  registerSecret,
} from './redact.ts';

afterAll(() => clearRegisteredSecrets());

describe('redaction', () => {
  it('replaces a registered key, and its JSON-escaped and URL-encoded forms, by the variable name; short values are not treated as keys', () => {
    registerSecret('abc', 'SHORT');
    registerSecret('k/y+"quoted"-secret', 'QUOTED');
    expect(redactSecrets('x abc y')).toBe('x abc y');
    expect(
      redactSecrets(
        `raw k/y+"quoted"-secret, json ${JSON.stringify('k/y+"quoted"-secret')}, url ${encodeURIComponent('k/y+"quoted"-secret')}`,
      ),
    ).toBe('raw $QUOTED, json "$QUOTED", url $QUOTED');
    const error = new Error('401: k/y+"quoted"-secret', { cause: new Error('inner k/y+"quoted"-secret') });
    redactErrorInPlace(error);
    expect(error.message).toBe('401: $QUOTED');
    expect((error.cause as Error).message).toBe('inner $QUOTED');
    expect(error.stack).not.toContain('quoted"-secret');
  });

  it("knows the Gemini backend's default key variables", () => {
    expect(GEMINI_DEFAULT_KEY_VARIABLES).toEqual(DEFAULT_GEMINI_API_KEY_VARIABLES);
  });
});
